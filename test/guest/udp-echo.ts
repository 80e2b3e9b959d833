// A UDP echo server for the test guest, whose busybox has no UDP server (its nc has no -u): a
// 372-byte static x86-64 Linux ELF, made here from its machine code, written into the guest by a
// user-data script (base64) and started there as `udp-echo PORT`. It binds 0.0.0.0:PORT, prints
// QVIRT-UDP-ECHO-READY on stdout, then sends every datagram back to its sender.
//
// The code, as `as` assembles it (AT&T syntax); one string per instruction below:
//   _start: mov 16(%rsp),%rsi; xor %ebx,%ebx            # argv[1] → decimal port in ebx
//   1: movzbl (%rsi),%eax; test %al,%al; jz 2f; sub $48,%eax; imul $10,%ebx,%ebx; add %eax,%ebx; inc %rsi; jmp 1b
//   2: socket(AF_INET, SOCK_DGRAM, 0) → r12d (exit 1 on failure)
//      sub $65600,%rsp: sockaddr at 0..15 (AF_INET, htons(port), 0.0.0.0), peer at 16..31, its length at 32, buffer at 64
//      bind(fd, &sockaddr, 16) (exit 1 on failure); write(1, ready, 21)
//   3: recvfrom(fd, buf, 65536, 0, &peer, &len); sendto(fd, buf, n, 0, &peer, 16); jmp 3b
//   9: exit(1)
//   ready: .ascii "QVIRT-UDP-ECHO-READY\n"
import { Buffer } from 'node:buffer';

const CODE = [
  '488b742410', '31db', // argv[1], port = 0
  '0fb606', '84c0', '740d', '83e830', '6bdb0a', '01c3', '48ffc6', 'ebec', // port = port*10 + digit
  'b829000000', 'bf02000000', 'be02000000', '31d2', '0f05', '85c0', '0f88a5000000', '4189c4', // socket
  '4881ec40000100', 'c7042400000000', '48c744240800000000', '66c704240200', '86df', '66895c2402', // sockaddr_in
  'b831000000', '4489e7', '4889e6', 'ba10000000', '0f05', '85c0', '7568', // bind
  'b801000000', 'bf01000000', '488d3563000000', 'ba15000000', '0f05', // write(1, ready)
  'c744242010000000', 'b82d000000', '4489e7', '488d742440', 'ba00000100', '4531d2', '4c8d442410', '4c8d4c2420', '0f05', '4885c0', '78d2', // recvfrom
  '4889c2', 'b82c000000', '4489e7', '488d742440', '4531d2', '4c8d442410', '41b910000000', '0f05', 'ebb0', // sendto, loop
  'b83c000000', 'bf01000000', '0f05', // exit(1)
].join('');
export const UDP_ECHO_READY = 'QVIRT-UDP-ECHO-READY';

const BASE = 0x400000;
const EHDR = 64;
const PHDR = 56;

/** The ELF: header, one loadable read+execute segment holding everything, the code at the entry point. */
export function udpEchoElf(): Buffer {
  const body = Buffer.concat([Buffer.from(CODE, 'hex'), Buffer.from(`${UDP_ECHO_READY}\n`, 'latin1')]);
  const size = EHDR + PHDR + body.length;
  const h = Buffer.alloc(EHDR + PHDR);
  h.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0); // \x7fELF, 64-bit, little-endian, version 1, System V
  h.writeUInt16LE(2, 16); // ET_EXEC
  h.writeUInt16LE(0x3e, 18); // x86-64
  h.writeUInt32LE(1, 20);
  h.writeBigUInt64LE(BigInt(BASE + EHDR + PHDR), 24); // entry
  h.writeBigUInt64LE(BigInt(EHDR), 32); // program headers
  h.writeUInt16LE(EHDR, 52);
  h.writeUInt16LE(PHDR, 54);
  h.writeUInt16LE(1, 56);
  h.writeUInt32LE(1, EHDR); // PT_LOAD
  h.writeUInt32LE(5, EHDR + 4); // R + X
  h.writeBigUInt64LE(0n, EHDR + 8); // from file offset 0
  h.writeBigUInt64LE(BigInt(BASE), EHDR + 16);
  h.writeBigUInt64LE(BigInt(BASE), EHDR + 24);
  h.writeBigUInt64LE(BigInt(size), EHDR + 32);
  h.writeBigUInt64LE(BigInt(size), EHDR + 40);
  h.writeBigUInt64LE(0x1000n, EHDR + 48);
  return Buffer.concat([h, body]);
}

/** A user-data line that writes the server into the guest and starts it on `port`, its output on the console. */
export function udpEchoUserData(port: number): string {
  return `echo ${udpEchoElf().toString('base64')} | base64 -d > /tmp/udp-echo; chmod +x /tmp/udp-echo; /tmp/udp-echo ${port} </dev/null >/dev/console 2>&1 &`;
}

/** A user-data line: a persistent TCP echo server on `port` (busybox nc, cat for each connection). */
export function tcpEchoUserData(port: number): string {
  return `nc -ll -p ${port} -e /bin/cat </dev/null >/dev/null 2>&1 &`;
}

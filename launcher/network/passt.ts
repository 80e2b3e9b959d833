// The passt binding (KubeVirt's passtBinding): the launcher runs Debian's `passt` in the pod's
// network namespace, unprivileged, and QEMU connects to it over a unix socket
// (`-netdev stream,server=off,addr.type=unix`, QEMU ≥ 7.2). passt gives the guest the pod's
// address, routes and DNS itself (DHCP/NDP) and forwards the interface's `ports` to the guest:
// listed TCP/UDP ports, or all of them when none are listed (KubeVirt's generatePasstPortForward).
// On a migration target passt gets the guest's addresses from its first pod (`--address`, ...:
// src/net/passt-guest-addresses.ts): the guest kept them, the target pod has its own.
//
// Which passt: `passt` on PATH. The launcher image ships passt built from Debian's newer source
// package (scripts/passt/build.sh), and the local pod runner puts that build first on launchers'
// PATH: Debian 12's own passt (0.0~git20230309) never completes the guest's TCP handshake when the
// outside client does not send first, and segfaults on the first TCP connection with --debug
// (scripts/passt/build.sh says why). Nothing here depends on the version.
import { readFileSync } from 'node:fs';
import { startSocketHelper, type SocketHelper } from '../process/socket-helper.ts';
import type { PasstGuestAddresses } from '../../src/net/passt-guest-addresses.ts';
import type { Interface } from '../../src/api/types.ts';
import type { Logger } from '../../src/log/logger.ts';

export const PASST_BINARY = 'passt';

/**
 * passt binds one socket per forwarded port and protocol: "all" needs about 131 000 file
 * descriptors. Under a lower hard limit it forwards the ports that fit (1..N) instead.
 */
export function allPortsSpec(nofileLimit: number): string {
  const perProto = Math.floor((nofileLimit - 1024) / 2);
  return perProto >= 65535 ? 'all' : `1-${Math.max(1, perProto)}`;
}

/**
 * The guest addresses as passt's options: `--address` (IPv4 and IPv6), `--netmask` and `--gateway`
 * (IPv4). Without them passt takes the pod's own; with them DHCP/NDP hand out these and passt
 * delivers forwarded connections to them from the start (its addr_seen starts at `--address`).
 */
export function passtAddressArgs(guest: PasstGuestAddresses | undefined): string[] {
  const out: string[] = [];
  if (guest?.ipv4) {
    const [address, prefix] = guest.ipv4.split('/') as [string, string];
    out.push('--address', address, '--netmask', prefix);
    if (guest.gateway4) out.push('--gateway', guest.gateway4);
  }
  if (guest?.ipv6) out.push('--address', guest.ipv6);
  return out;
}

/** passt's argv for interface `iface`, with the guest's recorded addresses on a migration target (pure). */
export function passtArgs(iface: Interface, socket: string, nofileLimit: number, field: string, guest?: PasstGuestAddresses): string[] {
  const tcp: number[] = [];
  const udp: number[] = [];
  (iface.ports ?? []).forEach((p, i) => {
    const proto = (p.protocol || 'TCP').toUpperCase();
    if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535) throw new Error(`${field}.ports[${i}].port: ${p.port} is not a port number`);
    if (proto === 'TCP') tcp.push(p.port);
    else if (proto === 'UDP') udp.push(p.port);
    else throw new Error(`${field}.ports[${i}].protocol: ${p.protocol} is not supported by passt (TCP or UDP)`);
  });
  const all = tcp.length === 0 && udp.length === 0;
  return [
    '--foreground', '--quiet', '--socket', socket,
    ...passtAddressArgs(guest),
    '--tcp-ports', all ? allPortsSpec(nofileLimit) : tcp.length ? tcp.join(',') : 'none',
    '--udp-ports', all ? allPortsSpec(nofileLimit) : udp.length ? udp.join(',') : 'none',
  ];
}

/** The hard RLIMIT_NOFILE of this process (Node has no getrlimit). */
export function nofileHardLimit(): number {
  try {
    const m = /^Max open files\s+\S+\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m?.[1] === 'unlimited' ? 1 << 20 : Number(m?.[1] ?? 1024);
  } catch { return 1024; }
}

export interface PasstProcess extends SocketHelper {
  readonly socket: string;
}

/** passt's complaint, on every line it would log, that the pod has no syslog: noise in an error. */
const withoutSyslogNoise = (stderr: string) => stderr.replace(/Failed to send \d+ bytes to syslog\n?/g, '');

/** Starts passt and waits until its socket exists (QEMU connects to it at start). */
export async function startPasst(iface: Interface, socket: string, field: string, log: Logger, guest?: PasstGuestAddresses, binary = PASST_BINARY): Promise<PasstProcess> {
  const args = passtArgs(iface, socket, nofileHardLimit(), field, guest);
  const helper = await startSocketHelper({
    binary, args, socket, field, waitMs: 5000, log, logFields: { iface: iface.name, args },
    said: withoutSyslogNoise,
    spawnHint: "(is Debian's passt installed?)",
    timeoutHint: '(a root launcher\'s passt runs as nobody, which must be able to reach that directory)',
  });
  return { ...helper, socket };
}

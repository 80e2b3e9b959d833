// The native migration relay's command lines and what its log lines mean (socat 1.7.4, Debian 12),
// pure. Two socat hops carry a migration stream (see socat-relay.ts): on the target node a TLS (or
// TCP) listener per channel kind whose forked children forward to the target QEMU's unix socket; on
// the source node one process per QEMU connection, from the accepted unix socket (fd 3) to the
// target. Each side checks the other's certificate: the handlers' CA (verify=1) and the handler's
// common name (commonname=, which socat checks against the peer's CN on both ends).

/** The bytes socat moves per read/write (its default is 8 KiB: ~8 times the system calls). */
export const SOCAT_BUFFER_BYTES = 1024 * 1024;

/** The target listeners' accept backlog: socat's default (5) drops the SYNs of 9 channels arriving at once (1 s retransmit). */
export const SOCAT_LISTEN_BACKLOG = 128;

/** How often a gated multifd channel retries its unix connect while the main channel is not in yet, and for how long. */
export const GATE_RETRY_INTERVAL_S = 0.001;
export const GATE_RETRY_MAX_S = 60;

export class SocatArgumentError extends Error {
  override readonly name = 'SocatArgumentError';
}

/** The certificate files socat reads (written 0600 into a private directory, socat-relay.ts). */
export interface SocatTlsFiles {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  /** The common name the peer's certificate must carry. */
  readonly peerCommonName: string;
}

// socat splits addresses at ':' and options at ','; quoting differs between versions. Paths and
// names are checked instead of escaped: the handler makes them, and anything else is a bug worth a
// clear error rather than a socat that listens somewhere else.
const SAFE_PATH = /^[A-Za-z0-9._/+=@-]+$/;
const SAFE_NAME = /^[A-Za-z0-9._:+=@-]+$/;

function checked(value: string, what: string, pattern: RegExp): string {
  if (!pattern.test(value)) throw new SocatArgumentError(`socat relay: ${what} ${JSON.stringify(value)} has characters socat would parse (allowed: ${pattern.source})`);
  return value;
}

function tlsOptions(t: SocatTlsFiles): string {
  return [
    `cert=${checked(t.cert, 'certificate path', SAFE_PATH)}`,
    `key=${checked(t.key, 'key path', SAFE_PATH)}`,
    `cafile=${checked(t.ca, 'CA path', SAFE_PATH)}`,
    'verify=1',
    `commonname=${checked(t.peerCommonName, 'peer common name', SAFE_NAME)}`,
    'min-version=TLS1.2', // 1.7.4.4's spelling (its man page's min-proto-version is unknown to it)
  ].join(',');
}

const isIpv6 = (address: string) => address.includes(':');

function checkedAddress(address: string, what: string): string {
  if (!/^[0-9A-Fa-f.:]+$/.test(address)) throw new SocatArgumentError(`socat relay: ${what} ${JSON.stringify(address)} is not an IP address`);
  return address;
}

/**
 * A target listener: TLS (or TCP) on `address`, a port the kernel picks (socat logs it), each
 * connection in a forked child that connects to `forwardTo`. `gated`: the path may not exist yet
 * (the multifd channels' gate): retry until it does.
 */
export function targetListenerArgs(o: { address: string; forwardTo: string; tls: SocatTlsFiles | undefined; gated: boolean }): string[] {
  const address = checkedAddress(o.address, 'listen address');
  const listen = [
    o.tls ? 'OPENSSL-LISTEN:0' : 'TCP-LISTEN:0',
    `bind=${isIpv6(address) ? `[${address}]` : address}`,
    ...(isIpv6(address) ? ['pf=ip6'] : []),
    'reuseaddr', 'fork', `backlog=${SOCAT_LISTEN_BACKLOG}`, 'nodelay',
    ...(o.tls ? [tlsOptions(o.tls)] : []),
  ].join(',');
  const forward = [
    `UNIX-CONNECT:${checked(o.forwardTo, 'forward socket', SAFE_PATH)}`,
    ...(o.gated ? [`retry=${Math.round(GATE_RETRY_MAX_S / GATE_RETRY_INTERVAL_S)}`, `interval=${GATE_RETRY_INTERVAL_S}`] : []),
  ].join(',');
  return ['-d', '-d', '-b', String(SOCAT_BUFFER_BYTES), listen, forward];
}

/** A source channel: the QEMU connection the handler accepted (fd 3) → TLS (or TCP) to the target. */
export function sourceChannelArgs(o: { host: string; port: number; tls: SocatTlsFiles | undefined }): string[] {
  if (!Number.isInteger(o.port) || o.port <= 0 || o.port > 65535) throw new SocatArgumentError(`socat relay: target port ${o.port} is not a TCP port`);
  const host = checkedAddress(o.host, 'target address');
  const where = `${isIpv6(host) ? `[${host}]` : host}:${o.port}`;
  const connect = [o.tls ? `OPENSSL:${where}` : `TCP:${where}`, 'nodelay', ...(o.tls ? [tlsOptions(o.tls)] : [])].join(',');
  return ['-d', '-d', '-b', String(SOCAT_BUFFER_BYTES), 'FD:3', connect];
}

/** What one line of socat's `-d -d` log says, as far as the relay cares. */
export type SocatEvent =
  /** The listener is up on this port (the master's line). */
  | { readonly kind: 'listening'; readonly pid: number; readonly port: number }
  /** A connection's far side is connected: `unix` (target child → QEMU) or `tcp` (source → target). */
  | { readonly kind: 'connected'; readonly pid: number; readonly to: 'unix' | 'tcp' }
  /** Both sides are up and bytes flow. */
  | { readonly kind: 'transfer'; readonly pid: number }
  /** The peer's certificate was refused (wrong CA or common name) or the handshake failed. */
  | { readonly kind: 'rejected'; readonly pid: number; readonly message: string }
  | { readonly kind: 'error'; readonly pid: number; readonly message: string }
  | { readonly kind: 'other' };

const LINE = /socat\[(\d+)\] ([DINWEF]) (.*)$/;

export function parseSocatLine(line: string): SocatEvent {
  const m = LINE.exec(line.trimEnd());
  if (!m) return { kind: 'other' };
  const pid = Number(m[1]);
  const level = m[2]!;
  const msg = m[3]!;
  if (level === 'E' || level === 'F') {
    const tlsRefusal = /commonName does not match|certificate verify failed|SSL_accept|SSL_connect|no certificate|unknown ca|bad certificate|handshake failure/i.test(msg);
    return tlsRefusal ? { kind: 'rejected', pid, message: msg } : { kind: 'error', pid, message: msg };
  }
  const listening = /^listening on AF=\d+ .*:(\d+)$/.exec(msg);
  if (listening) return { kind: 'listening', pid, port: Number(listening[1]) };
  const connected = /^successfully connected from local address AF=(\d+)/.exec(msg);
  if (connected) return { kind: 'connected', pid, to: connected[1] === '1' ? 'unix' : 'tcp' };
  if (msg.startsWith('starting data transfer loop')) return { kind: 'transfer', pid };
  return { kind: 'other' };
}

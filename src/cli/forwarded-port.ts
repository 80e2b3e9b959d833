// The port arguments of `port-forward`: `[protocol/]localPort[:targetPort]`, read as virtctl reads
// them (pkg/virtctl/portforward/ports.go): the protocol before the first '/', tcp by default; the
// ports split on ':' with empty fields dropped (":80" is 80:80); the target port defaults to the
// local one. Unlike virtctl, the protocol is case-insensitive (its --help says "TCP (default) and
// UDP"), an unknown one is refused here rather than after listening, and ports are range-checked.
// Local port 0 asks for a free port. Pure.
import { UsageError } from '../flags/flags.ts';

export type ForwardProtocol = 'tcp' | 'udp';

export interface ForwardedPort {
  readonly local: number;
  readonly remote: number;
  readonly protocol: ForwardProtocol;
}

const SYNTAX = '[protocol/]localPort[:targetPort], e.g. 8080, 8080:80, udp/5353:53';

/** Go's strconv.Atoi on a port: an optional sign and decimal digits. */
function portNumber(text: string, arg: string, which: 'local' | 'target'): number {
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`invalid ${which} port "${text}" in "${arg}": not a number (${SYNTAX})`);
  const n = Number(text);
  const min = which === 'local' ? 0 : 1;
  if (!(n >= min && n <= 65535)) throw new UsageError(`invalid ${which} port ${n} in "${arg}": must be ${min}..65535${which === 'local' ? ' (0: a free port)' : ''}`);
  return n;
}

export function parsePort(arg: string): ForwardedPort {
  let rest = arg;
  let protocol = 'tcp';
  const slash = arg.split('/');
  if (slash.length > 1) {
    protocol = slash[0]!.toLowerCase();
    rest = slash[1]!;
  }
  if (protocol !== 'tcp' && protocol !== 'udp') throw new UsageError(`unknown protocol: ${slash[0]} in "${arg}": use tcp (the default) or udp`);
  const ports = rest.split(':').filter((p) => p !== '');
  if (ports.length < 1) throw new UsageError(`invalid port "${arg}", missing local and/or remote port (${SYNTAX})`);
  const local = portNumber(ports[0]!, arg, 'local');
  const remote = ports.length > 1 ? portNumber(ports[1]!, arg, 'target') : local;
  if (remote === 0) throw new UsageError(`invalid port "${arg}": local port 0 (a free port) needs a target port, e.g. 0:${protocol === 'udp' ? 53 : 22}`);
  return { local, remote, protocol };
}

export function parsePorts(args: readonly string[]): ForwardedPort[] {
  return args.map(parsePort);
}

/** The subresource path of a forwarded port: `portforward/PORT/PROTOCOL` (kubecli buildPortForwardResourcePath). */
export function portForwardSubresource(remote: number, protocol: ForwardProtocol): `portforward/${number}/${ForwardProtocol}` {
  return `portforward/${remote}/${protocol}`;
}

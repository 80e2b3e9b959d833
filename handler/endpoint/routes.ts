// The handler endpoint's URL space (briefs/handler-endpoint-contract.md), as pure decisions:
// which subresource a request names, whether its method fits, and where the endpoint is reached.
import { isIP } from 'node:net';

export const SubresourceKind = { Command: 'command', Info: 'info', Stream: 'stream', Qmp: 'qmp', Usage: 'usage', Screenshot: 'screenshot' } as const;
export type SubresourceKind = (typeof SubresourceKind)[keyof typeof SubresourceKind];

/** Every subresource the endpoint serves, what kind it is and the method it takes. */
export const SUBRESOURCES: Readonly<Record<string, { kind: SubresourceKind; method: 'PUT' | 'GET' | 'POST' }>> = {
  pause: { kind: 'command', method: 'PUT' },
  unpause: { kind: 'command', method: 'PUT' },
  freeze: { kind: 'command', method: 'PUT' },
  unfreeze: { kind: 'command', method: 'PUT' },
  reset: { kind: 'command', method: 'PUT' },
  softreboot: { kind: 'command', method: 'PUT' },
  guestosinfo: { kind: 'info', method: 'GET' },
  userlist: { kind: 'info', method: 'GET' },
  filesystemlist: { kind: 'info', method: 'GET' },
  console: { kind: 'stream', method: 'GET' },
  vnc: { kind: 'stream', method: 'GET' },
  // The display as a PNG (KubeVirt's virt-handler route of the same path).
  'vnc/screenshot': { kind: 'screenshot', method: 'GET' },
  // portforward/PORT[/PROTOCOL]: the only subresource with parameters in its path.
  portforward: { kind: 'stream', method: 'GET' },
  qmp: { kind: 'qmp', method: 'POST' },
  // qvirt's: one reading of the VMI's CPU, memory and I/O figures (`qvirt top`, src/api/vmi-usage.ts).
  usage: { kind: 'usage', method: 'GET' },
};

import { HANDLER_STREAM_PROTOCOL } from '../../src/api/constants.ts';

/** The Upgrade protocol the streams speak (KubeVirt's plain byte-stream subprotocol name). */
export const STREAM_PROTOCOL = HANDLER_STREAM_PROTOCOL;

export const PortForwardProtocol = { TCP: 'tcp', UDP: 'udp' } as const;
export type PortForwardProtocol = (typeof PortForwardProtocol)[keyof typeof PortForwardProtocol];

/** The guest port a `portforward/PORT[/PROTOCOL]` request asks for (protocol tcp unless given). */
export interface PortForwardRequest {
  readonly port: number;
  readonly protocol: PortForwardProtocol;
}

export interface Route {
  readonly namespace: string;
  readonly name: string;
  readonly subresource: string;
  readonly kind: SubresourceKind;
  /** Only for `portforward`. */
  readonly portForward?: PortForwardRequest;
}

export type RouteResult = { ok: true; route: Route } | { ok: false; code: 404 | 405 | 400; message: string };

const PATH = /^\/v1\/namespaces\/([^/]+)\/virtualmachineinstances\/([^/]+)\/([^/]+)((?:\/[^/]+)*)$/;
const PORT = /^[1-9][0-9]{0,4}$/;
const PORT_FORWARD_FORM = 'portforward/PORT or portforward/PORT/PROTOCOL (PORT 1..65535, PROTOCOL tcp or udp)';

/** `portforward`'s path parameters (the segments after it) → port and protocol, or what is wrong with them. Pure. */
export function parsePortForward(params: readonly string[]): { ok: true; request: PortForwardRequest } | { ok: false; code: 404 | 400; message: string } {
  if (params.length === 0 || params.length > 2) {
    return { ok: false, code: 404, message: `portforward${params.map((p) => `/${p}`).join('')}: no such subresource; expected ${PORT_FORWARD_FORM}` };
  }
  const [port, protocol = PortForwardProtocol.TCP] = params as [string, string?];
  const full = `portforward/${params.join('/')}`;
  const n = PORT.test(port) ? Number(port) : NaN;
  if (!(n >= 1 && n <= 65535)) return { ok: false, code: 400, message: `${full}: port "${port}" is not a port number (1..65535)` };
  if (protocol !== PortForwardProtocol.TCP && protocol !== PortForwardProtocol.UDP) {
    return { ok: false, code: 400, message: `${full}: protocol "${protocol}" is not tcp or udp` };
  }
  return { ok: true, request: { port: n, protocol } };
}
const DNS_LABEL = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Which subresource `method path` asks for; `upgrade` is the request's Upgrade header, if any. Pure. */
export function routeOf(method: string, path: string, upgrade?: string): RouteResult {
  const m = PATH.exec(path);
  if (!m) return { ok: false, code: 404, message: `${path}: not a subresource path (/v1/namespaces/NS/virtualmachineinstances/NAME/SUBRESOURCE)` };
  let namespace: string, name: string;
  try {
    namespace = decodeURIComponent(m[1]!);
    name = decodeURIComponent(m[2]!);
  } catch {
    return { ok: false, code: 400, message: `${path}: bad percent-encoding` };
  }
  let subresource = m[3]!;
  let params = m[4] ? m[4].slice(1).split('/') : [];
  if (!DNS_LABEL.test(namespace) || !DNS_LABEL.test(name)) return { ok: false, code: 400, message: `${path}: namespace and name must be DNS names` };
  const full = [subresource, ...params].join('/');
  // A subresource whose name has two segments (vnc/screenshot).
  if (params.length > 0 && SUBRESOURCES[full]) {
    subresource = full;
    params = [];
  }
  const spec = SUBRESOURCES[subresource];
  if (!spec || (params.length > 0 && subresource !== 'portforward')) return { ok: false, code: 404, message: `unknown subresource "${full}" (one of ${Object.keys(SUBRESOURCES).join(', ')})` };
  let portForward: PortForwardRequest | undefined;
  if (subresource === 'portforward') {
    const pf = parsePortForward(params);
    if (!pf.ok) return pf;
    portForward = pf.request;
  }
  if (method !== spec.method) return { ok: false, code: 405, message: `${full} takes ${spec.method}, not ${method}` };
  if (spec.kind === 'stream' && upgrade?.toLowerCase() !== STREAM_PROTOCOL) {
    return { ok: false, code: 400, message: `${full} is a byte stream: send Connection: Upgrade and Upgrade: ${STREAM_PROTOCOL}` };
  }
  return { ok: true, route: { namespace, name, subresource, kind: spec.kind, ...(portForward ? { portForward } : {}) } };
}

/** `HOST:PORT` (IPv6 in brackets) → parts; the flag is named in the error. Pure. */
export function parseListen(listen: string, flag = '--listen'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen);
  const host = m ? (m[1] ?? m[2] ?? '') : '';
  const port = m ? Number(m[3]) : NaN;
  if (!m || !host || port > 65535) throw new Error(`${flag} ${listen}: expected HOST:PORT (e.g. 0.0.0.0:8186, 127.0.0.1:0)`);
  return { host, port };
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);

/**
 * The host clients reach the endpoint at: the explicit choice, else the listen host unless it is
 * a wildcard, else the pod's IP (Downward API `POD_IP`), else this machine's first non-internal
 * IPv4 address. Pure (the machine's addresses are an input).
 */
export function advertisedHost(listenHost: string, explicit: string | undefined, podIp: string | undefined, addresses: readonly string[]): string {
  if (explicit) return explicit;
  if (!WILDCARDS.has(listenHost)) return listenHost;
  if (podIp) return podIp;
  return addresses.find((a) => isIP(a) === 4) ?? '127.0.0.1';
}

/** `https://HOST:PORT` with IPv6 hosts in brackets. */
export function endpointUrl(host: string, port: number): string {
  return `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

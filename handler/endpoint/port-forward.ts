// The handler endpoint's `portforward/PORT[/PROTOCOL]` (KubeVirt: virtctl port-forward, ssh, scp):
// the connection to the guest's port, made before the `101 Switching Protocols` so a refused port
// is an HTTP error, and then joined to the client's byte stream.
//
// How the guest is reached (port-forward-target.ts decides):
// - Pod network (masquerade, bridge, passt): as KubeVirt's virt-api does, a TCP connection or a
//   connected UDP socket to `status.interfaces[0].ipAddress:PORT` (the pod IP), from the node
//   agent's own network namespace: on a node the pod IPs are routed to their pods (local mode: the
//   pod bridge is on the host). The binding delivers it to the guest exactly as it delivers any
//   other client's traffic (masquerade: only the interface's `ports` when it lists some; passt: the
//   listed ports), so port-forward reaches what a Service would reach, no more.
// - QEMU user-mode networking (local mode without a pod network): the guest has no reachable
//   address; QEMU adds a host forward for the connection (usernet-forward.ts) on 127.0.0.1, which
//   the node agent shares with the launcher there (pods share the host's network). A launcher in a
//   network namespace of its own with user-mode networking (the binding was not set up) is refused
//   with what to change: its 127.0.0.1 is not ours.
//
// TCP is a plain byte pipe. UDP datagrams travel in frames (src/net/datagram-frames.ts): each
// frame from the client is one datagram to the guest's port, each datagram back one frame.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, isIPv6, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { DatagramDeframer, frameDatagram } from '../../src/net/datagram-frames.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { PortForwardTarget } from './port-forward-target.ts';
import { acceptedState, UsernetForwards, type HostForward, type Hmp } from './usernet-forward.ts';

/** A port-forward that cannot be set up: the HTTP status and what failed. */
export class PortForwardError extends Error {
  override name = 'PortForwardError';
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** How long a connection to the guest may take to be made (KubeVirt's dial has the OS's). */
const CONNECT_TIMEOUT_MS = 15_000;

/** The guest side of a port-forward, ready to be joined to the client's stream. */
export interface GuestLink {
  /** Pipes the client's stream (and `head`, bytes that came with the request) to the guest and back; either end closing closes both. */
  join(client: Duplex, head: Buffer): void;
  /** Closes the guest side (and removes a user-mode forward). */
  close(): void;
}

export interface OpenOptions {
  readonly target: Exclude<PortForwardTarget, { kind: 'refuse' }>;
  /** `namespace/name` of the VMI, for messages and the user-mode forwards' queue. */
  readonly vmiRef: string;
  /** Whether the launcher pod has a network namespace of its own (only asked for user-mode networking). */
  readonly launcherHasOwnNetns: () => Promise<boolean>;
  /** HMP in the VMI's QEMU (user-mode networking). */
  readonly hmp: Hmp;
  readonly forwards: UsernetForwards;
  readonly log: Logger;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tcpConnect(host: string, port: number, what: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port });
    const timer = setTimeout(() => { s.destroy(); reject(new PortForwardError(504, `${what}: no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)); }, CONNECT_TIMEOUT_MS);
    s.once('connect', () => { clearTimeout(timer); s.removeAllListeners('error'); resolve(s); });
    s.once('error', (err: NodeJS.ErrnoException) => { clearTimeout(timer); reject(new PortForwardError(502, `${what}: ${err.code ?? err.message}`)); });
  });
}

function tcpLink(s: Socket, onClose?: () => void): GuestLink {
  let closed = false;
  const close = () => { if (!closed) { closed = true; s.destroy(); onClose?.(); } };
  s.on('error', () => close());
  return {
    join(client, head) {
      if (head.length) s.write(head);
      client.pipe(s).pipe(client);
      client.once('close', close);
      client.once('error', close);
      // The guest's side closed: what it sent still reaches the client (pipe ended it), then the stream closes.
      s.once('close', (hadError) => {
        close();
        if (hadError || client.writableFinished) client.destroy();
        else { client.end(); client.once('finish', () => client.destroy()); }
      });
    },
    close,
  };
}

function udpLink(sock: UdpSocket, log: Logger, onClose?: () => void): GuestLink {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try { sock.close(); } catch { /* already closed */ }
    onClose?.();
  };
  return {
    join(client, head) {
      const frames = new DatagramDeframer();
      const fromClient = (chunk: Buffer) => {
        for (const d of frames.push(chunk)) {
          sock.send(d, (err) => { if (err) { log.info({ err: err.message }, 'port-forward: a datagram could not be sent to the guest; closing'); client.destroy(); } });
        }
      };
      sock.on('message', (msg) => { if (!client.destroyed) client.write(frameDatagram(msg)); });
      // A connected UDP socket learns of an ICMP port unreachable as an error: the session ends, as KubeVirt's does.
      sock.on('error', (err) => { log.info({ err: err.message }, 'port-forward: the guest\'s UDP port answered with an error; closing'); client.destroy(); });
      if (head.length) fromClient(head);
      client.on('data', fromClient);
      client.once('end', () => client.end());
      client.once('close', close);
      client.once('error', close);
    },
    close,
  };
}

function udpConnect(host: string, port: number, bindAddress?: string): Promise<UdpSocket> {
  return new Promise((resolve, reject) => {
    const sock = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    sock.once('error', (err) => { try { sock.close(); } catch { /* closed */ } reject(new PortForwardError(502, `udp ${host}:${port}: ${err.message}`)); });
    const go = () => sock.connect(port, host, () => { sock.removeAllListeners('error'); resolve(sock); });
    if (bindAddress) sock.bind(0, bindAddress, go);
    else go();
  });
}

/** Connects to the guest's port as `o.target` says; throws PortForwardError with the HTTP status to answer. */
export async function openGuestLink(o: OpenOptions): Promise<GuestLink> {
  const t = o.target;
  const what = `${t.protocol} port ${t.port} of VMI ${o.vmiRef}`;
  if (t.kind === 'dial') {
    const at = `${isIPv6(t.host) ? `[${t.host}]` : t.host}:${t.port}`;
    if (t.protocol === 'udp') return udpLink(await udpConnect(t.host, t.port), o.log);
    return tcpLink(await tcpConnect(t.host, t.port, `${what}: cannot connect to ${at}`));
  }
  // QEMU user-mode networking.
  if (await o.launcherHasOwnNetns()) {
    throw new PortForwardError(400, `${what}: interface ${t.interfaceName ?? '(first)'} uses QEMU user-mode networking inside the launcher pod's own network namespace, which the node agent cannot reach; give the interface a masquerade, bridge or passt binding on the pod network`);
  }
  let fwd: HostForward;
  try {
    fwd = await o.forwards.add(o.vmiRef, o.hmp, t.interfaceName, t.protocol, t.port);
  } catch (err) {
    throw new PortForwardError(502, `${what}: cannot add a host forward to the user-mode network: ${(err as Error).message}`);
  }
  const remove = () => {
    UsernetForwards.remove(o.hmp, fwd).catch((err: unknown) => o.log.warn({ err: (err as Error).message, hostPort: fwd.hostPort }, 'port-forward: removing the host forward failed'));
  };
  if (t.protocol === 'udp') {
    try {
      return udpLink(await udpConnect('127.0.0.1', fwd.hostPort, '127.0.0.1'), o.log, remove);
    } catch (err) {
      remove();
      throw err;
    }
  }
  let s: Socket | undefined;
  try {
    s = await tcpConnect('127.0.0.1', fwd.hostPort, `${what}: cannot connect to the host forward 127.0.0.1:${fwd.hostPort}`);
    // slirp accepted the connection at once; it is made to the guest only now. Wait until it is
    // established (or slirp closes ours: the guest refused), so a closed port is an HTTP error.
    let gone = false;
    s.once('close', () => { gone = true; });
    s.on('error', () => { gone = true; });
    // Each look is an audited passthrough call in the launcher's log: look often at first, then less.
    const deadline = Date.now() + CONNECT_TIMEOUT_MS;
    for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
      if (gone) throw new PortForwardError(502, `${what}: the guest refused the connection (nothing listens on port ${t.port}?)`);
      const state = acceptedState(await UsernetForwards.usernet(o.hmp), fwd.netdev, fwd.hostPort);
      if (state === 'ESTABLISHED') break;
      if (Date.now() > deadline) throw new PortForwardError(504, `${what}: the guest did not answer within ${CONNECT_TIMEOUT_MS / 1000} s (last state ${state ?? 'none'})`);
      await sleep(pause);
    }
    s.removeAllListeners('error');
    return tcpLink(s);
  } catch (err) {
    s?.destroy();
    throw err instanceof PortForwardError ? err : new PortForwardError(502, `${what}: ${(err as Error).message}`);
  } finally {
    // An established connection outlives its forward: nothing else may come in through it.
    remove();
  }
}

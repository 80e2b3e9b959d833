// Port-forward through the handler endpoint as the CLI opens it (src/kube/handler-endpoint.ts:
// VMI → Node → endpoint, the user's own credentials), and echo checks over the stream: bytes both
// ways for TCP, framed datagrams both ways for UDP.
import type { Duplex } from 'node:stream';
import { HandlerEndpoint } from '../../src/kube/handler-endpoint.ts';
import type { ClusterContext } from '../../src/cli/kube-context.ts';
import type { LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { DatagramDeframer, frameDatagram } from '../../src/net/datagram-frames.ts';
import { within } from './within.ts';

export function localContext(local: LocalMode): ClusterContext {
  return { client: local.client, namespace: 'default', source: { from: 'flag', path: local.kubeconfig }, server: local.url };
}

export async function endpointOf(local: LocalMode, name: string): Promise<HandlerEndpoint> {
  const vmi = await local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name);
  return HandlerEndpoint.forVmi(localContext(local), vmi);
}

/** Opens `sub`, retrying while the guest's server is not up yet (the endpoint answers an error then). */
export async function openUntil(ep: HandlerEndpoint, sub: Parameters<HandlerEndpoint['stream']>[0], timeoutMs = 120_000): Promise<Duplex> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await ep.stream(sub);
    } catch (err) {
      if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms opening ${sub}: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Reads from `s` until `n` bytes came; resolves with them. */
export function readBytes(s: Duplex, n: number, timeoutMs: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let got = 0;
  let on: (d: Buffer) => void = () => undefined;
  const p = new Promise<Buffer>((resolve, reject) => {
    on = (d: Buffer) => { chunks.push(d); got += d.length; if (got >= n) resolve(Buffer.concat(chunks)); };
    s.on('data', on);
    s.once('close', () => reject(new Error(`${what}: the stream closed after ${got} of ${n} bytes`)));
  });
  return within(p, timeoutMs, `${what} (${n} bytes; ${got} so far)`).finally(() => s.off('data', on));
}

/** Writes `payload` to a TCP echo through the stream and expects it back, byte for byte. */
export async function tcpEcho(s: Duplex, payload: Buffer, timeoutMs = 60_000): Promise<Buffer> {
  const back = readBytes(s, payload.length, timeoutMs, 'the echo of what was written');
  s.write(payload);
  return back;
}

/** Resolves when the stream has closed (bounded). */
export function closed(s: Duplex, timeoutMs: number, what: string): Promise<void> {
  if (s.destroyed && s.closed) return Promise.resolve();
  return within(new Promise<void>((r) => s.once('close', () => r())), timeoutMs, what);
}

/**
 * Sends each datagram as a frame and waits for its echo, resending every 2 s while none comes (UDP
 * may lose a datagram; the echo server answers each copy). Resolves with every datagram received,
 * in order (duplicates of resent ones included), once each sent one has come back.
 */
export async function udpEcho(s: Duplex, datagrams: readonly Buffer[], timeoutMs = 60_000): Promise<Buffer[]> {
  const frames = new DatagramDeframer();
  const got: Buffer[] = [];
  let wake: () => void = () => undefined;
  const on = (d: Buffer) => { got.push(...frames.push(d)); wake(); };
  s.on('data', on);
  const end = Date.now() + timeoutMs;
  try {
    for (const d of datagrams) {
      while (!got.some((g) => g.equals(d))) {
        if (s.destroyed) throw new Error(`udp echo: the stream closed before the echo of a ${d.length}-byte datagram`);
        if (Date.now() > end) throw new Error(`udp echo: no echo of a ${d.length}-byte datagram within ${timeoutMs} ms`);
        s.write(frameDatagram(d));
        await new Promise<void>((r) => { const t = setTimeout(r, 2000); wake = () => { if (got.some((g) => g.equals(d))) { clearTimeout(t); r(); } }; });
      }
    }
    return got;
  } finally {
    s.off('data', on);
  }
}

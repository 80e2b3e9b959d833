// A slow network in front of a test server: a TCP proxy on loopback that forwards each connection
// to `targetPort` and lets the answers through at `bytesPerSecond` per connection (TLS passes
// through untouched). Tests use it to see a registry pull while it runs. `close()` ends every
// connection and the listener.
import { connect, createServer, type Socket } from 'node:net';

export interface ThrottleProxy {
  readonly port: number;
  close(): Promise<void>;
}

export async function startThrottleProxy(targetPort: number, bytesPerSecond: number): Promise<ThrottleProxy> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); };
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    track(client);
    track(upstream);
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    // The upstream's end is passed on once what it sent has gone through.
    let upstreamDone = false;
    upstream.on('close', () => { upstreamDone = true; });
    client.pipe(upstream);
    // Answers: a slice of the budget every 50 ms.
    const tick = 50;
    const slice = Math.max(1, Math.floor((bytesPerSecond * tick) / 1000));
    let queue: Buffer[] = [];
    let queued = 0;
    upstream.on('data', (d: Buffer) => {
      queue.push(d);
      queued += d.length;
      if (queued > slice * 20) upstream.pause();
    });
    const timer = setInterval(() => {
      let budget = slice;
      const out: Buffer[] = [];
      while (budget > 0 && queue.length) {
        const b = queue[0]!;
        if (b.length <= budget) { out.push(b); queue.shift(); budget -= b.length; queued -= b.length; } else { out.push(b.subarray(0, budget)); queue[0] = b.subarray(budget); queued -= budget; budget = 0; }
      }
      if (out.length && !client.destroyed) client.write(Buffer.concat(out));
      if (queued <= slice * 20 && upstream.isPaused()) upstream.resume();
      if (upstreamDone && queue.length === 0) { clearInterval(timer); client.end(); }
    }, tick);
    client.on('close', () => { clearInterval(timer); queue = []; });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

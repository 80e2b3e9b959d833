// A TCP port free on an address right now: for a direct migration's target QEMU in a pod that shares
// its node's network (no port of its own to take, as KubeVirt's 49152 in a pod's own namespace).
// The kernel picks it (bind to port 0), the socket is closed and QEMU binds it next; a port taken in
// between fails migrate-incoming, and the target's sync is retried with another.
import { createServer } from 'node:net';

export function freePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: address, port: 0, exclusive: true }, () => {
      const a = server.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error(`no free port on ${address}`))));
    });
  });
}

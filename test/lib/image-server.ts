// Disk images served over HTTP and HTTPS on loopback for the DataVolume tests and benchmark: the
// test makes the files, this serves them — HTTPS with a CA of its own, basic auth where asked, an
// optional rate (bytes per second) to make a transfer last, and `/cut/<file>` answering with the
// whole Content-Length but closing the connection halfway through.
import { createReadStream, statSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { issueCertificate } from '../../src/pki/x509.ts';

export interface ImageServer {
  readonly httpUrl: string;
  readonly httpsUrl: string;
  /** The CA (PEM) the HTTPS server's certificate is signed by. */
  readonly caPem: string;
  /** Bytes per second for paths under /slow/ (0: no limit). */
  slowRate: number;
  readonly requests: string[];
  close(): Promise<void>;
}

export async function startImageServer(dir: string, opts: { user?: string; password?: string } = {}): Promise<ImageServer> {
  const now = new Date(Date.now() - 60_000);
  const span = { notBefore: now, notAfter: new Date(now.getTime() + 864e5) };
  const ca = issueCertificate({ subject: { commonName: 'qvirt-test-image-ca' }, ...span, ca: true });
  const leaf = issueCertificate({ subject: { commonName: '127.0.0.1' }, ...span, usages: ['serverAuth'], hosts: ['127.0.0.1', 'localhost'] }, ca);
  const state = { slowRate: 0, requests: [] as string[] };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    state.requests.push(url.pathname);
    let path = url.pathname;
    let cut = false;
    let slow = false;
    if (path.startsWith('/auth/')) {
      const want = `Basic ${Buffer.from(`${opts.user}:${opts.password}`).toString('base64')}`;
      if (req.headers.authorization !== want) { res.writeHead(401, { 'www-authenticate': 'Basic realm="images"' }).end('unauthorized'); return; }
      path = path.slice('/auth'.length);
    }
    if (path.startsWith('/cut/')) { cut = true; path = path.slice('/cut'.length); }
    if (path.startsWith('/slow/')) { slow = true; path = path.slice('/slow'.length); }
    const file = join(dir, path.replace(/^\/+/, '').replace(/\.\./g, ''));
    let size: number;
    try { size = statSync(file).size; } catch { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
    res.writeHead(200, { 'content-length': String(size), 'content-type': 'application/octet-stream' });
    const limit = cut ? Math.floor(size / 2) : size;
    const stream = createReadStream(file, { start: 0, end: limit - 1, highWaterMark: 256 * 1024 });
    if (slow && state.slowRate > 0) {
      stream.on('data', (c) => { stream.pause(); res.write(c, () => setTimeout(() => stream.resume(), (c.length / state.slowRate) * 1000)); });
      stream.on('end', () => res.end());
    } else {
      stream.on('data', (c) => { if (!res.write(c)) { stream.pause(); res.once('drain', () => stream.resume()); } });
      stream.on('end', () => { if (cut) res.socket?.destroy(); else res.end(); });
    }
    stream.on('error', () => res.destroy());
  };
  const http: Server = createHttpServer(handler);
  const https: Server = createHttpsServer({ key: leaf.keyPem, cert: leaf.certPem }, handler);
  await Promise.all([http, https].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
  const port = (s: Server) => (s.address() as AddressInfo).port;
  return {
    httpUrl: `http://127.0.0.1:${port(http)}`,
    httpsUrl: `https://127.0.0.1:${port(https)}`,
    caPem: ca.certPem,
    get slowRate() { return state.slowRate; },
    set slowRate(v: number) { state.slowRate = v; },
    requests: state.requests,
    close: async () => {
      for (const s of [http, https]) { s.closeAllConnections(); await new Promise<void>((r) => s.close(() => r())); }
    },
  };
}

// The local node's kubelet endpoint (the part the API server proxies to): HTTPS, clients must
// present a certificate signed by the cluster CA (kube-apiserver's kubelet client certificate),
// and `GET /containerLogs/{namespace}/{pod}/{container}` with kubelet's query parameters —
// follow, previous, timestamps, tailLines, sinceSeconds/sinceTime, limitBytes — read from the
// CRI logs the pod runner keeps. Errors are kubelet's: 400 with a plain-text reason.
import { open, readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../../log/logger.ts';
import { parseCriRecord, parseLogQuery, recordSelected, renderRecord, selectLog, truncateBytes, type LogOptions } from './cri-log.ts';
import type { ContainerLogPaths, LogCollector } from './log-collector.ts';
import { logInstance } from './log-instance.ts';
import type { ContainerRuntime } from './status.ts';

/** What the pod runner tells the endpoint about a container of a pod it runs. */
export interface ContainerLogSource {
  /** undefined when no such pod runs on this node. */
  find(namespace: string, pod: string, container: string): {
    readonly rt: ContainerRuntime | undefined;
    paths(instance: number): ContainerLogPaths;
    /** The collector of a running instance (follow ends when it ends). */
    collector(instance: number): LogCollector | undefined;
  } | undefined;
}

export interface KubeletServerOptions {
  readonly host: string;
  /** 0 or absent: any free port. */
  readonly port?: number;
  readonly tls: { readonly key: string; readonly cert: string; readonly ca: string };
  readonly source: ContainerLogSource;
  readonly log: Logger;
}

export interface KubeletServer {
  readonly port: number;
  stop(): Promise<void>;
}

class HttpError extends Error {
  readonly code: number;
  constructor(code: number, message: string) { super(message); this.code = code; }
}

function plain(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent) { res.end(); return; }
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** The complete records of `buf` (up to its last newline) and how many bytes they take. */
function completeLines(buf: Buffer): { text: string; bytes: number } {
  const nl = buf.lastIndexOf(0x0a);
  if (nl < 0) return { text: '', bytes: 0 };
  return { text: buf.subarray(0, nl + 1).toString('utf8'), bytes: nl + 1 };
}

async function readFrom(path: string, offset: number): Promise<Buffer> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return Buffer.alloc(0);
  try {
    const { size } = await fh.stat();
    if (size <= offset) return Buffer.alloc(0);
    const buf = Buffer.allocUnsafe(size - offset);
    const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
    return buf.subarray(0, bytesRead);
  } finally { await fh.close(); }
}

export async function startKubeletServer(o: KubeletServerOptions): Promise<KubeletServer> {
  const { log, source } = o;
  const following = new Set<ServerResponse>();

  async function containerLogs(res: ServerResponse, ns: string, podName: string, container: string, q: URLSearchParams): Promise<void> {
    let opts: ReturnType<typeof parseLogQuery>;
    try { opts = parseLogQuery(q, Date.now()); } catch (err) { throw new HttpError(400, (err as Error).message); }
    const found = source.find(ns, podName, container);
    if (!found) throw new HttpError(404, `pod "${ns}/${podName}" not found on this node`);
    const which = logInstance(podName, container, found.rt, opts.previous);
    if (!which.ok) throw new HttpError(400, which.message);
    const paths = found.paths(which.instance);
    const live = opts.previous ? undefined : found.collector(which.instance);
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    if (!opts.follow || !live || live.ended) {
      const text = await readFile(paths.cri, 'utf8').catch(() => '');
      res.end(selectLog(text, opts));
      return;
    }
    // Follow: what is there now (with tailLines), then each append until the instance ends.
    following.add(res);
    let written = 0;
    let offset = 0;
    let closed = false;
    const send = (s: string): boolean => {
      if (!s) return true;
      const limited = opts.limitBytes !== undefined ? truncateBytes(s, opts.limitBytes - written) : s;
      if (limited) res.write(limited);
      written += Buffer.byteLength(limited);
      return opts.limitBytes === undefined || written < opts.limitBytes;
    };
    const first = completeLines(await readFrom(paths.cri, 0));
    offset = first.bytes;
    const { limitBytes: _l, ...noLimit } = opts;
    let more = send(selectLog(first.text, noLimit as LogOptions));
    let reading = Promise.resolve();
    const finish = () => {
      if (closed) return;
      closed = true;
      live.off('append', onAppend);
      live.off('end', onEnd);
      following.delete(res);
      if (!res.writableEnded) res.end();
    };
    const pump = async () => {
      if (closed || !more) return;
      const next = completeLines(await readFrom(paths.cri, offset));
      offset += next.bytes;
      for (const line of next.text.split('\n')) {
        const r = line ? parseCriRecord(line) : undefined;
        if (!r || !recordSelected(r, opts)) continue;
        if (!(more = send(renderRecord(r, opts.timestamps ?? false)))) break;
      }
      if (!more) finish();
    };
    const onAppend = () => { reading = reading.then(pump).catch(() => finish()); };
    const onEnd = () => { reading = reading.then(pump).catch(() => undefined).then(finish); };
    live.on('append', onAppend);
    live.on('end', onEnd);
    res.on('close', finish);
    if (!more) finish();
    else onAppend(); // anything appended between the first read and subscribing
    if (live.ended) onEnd();
  }

  const server: Server = createServer({ key: o.tls.key, cert: o.tls.cert, ca: o.tls.ca, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    void (async () => {
      if (url.pathname === '/healthz') return plain(res, 200, 'ok');
      if (!(req.socket as TLSSocket).authorized) throw new HttpError(401, 'Unauthorized');
      const segs = url.pathname.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
      if (segs[0] === 'containerLogs' && segs.length === 4) {
        if (req.method !== 'GET') throw new HttpError(405, `method ${req.method ?? ''} not allowed`);
        return containerLogs(res, segs[1]!, segs[2]!, segs[3]!, url.searchParams);
      }
      throw new HttpError(404, `${url.pathname} not found`);
    })().catch((err: unknown) => {
      const code = err instanceof HttpError ? err.code : 500;
      if (code === 500) log.error({ err, url: req.url }, 'kubelet endpoint request failed');
      else log.debug({ url: req.url, code, message: (err as Error).message }, 'kubelet endpoint request refused');
      plain(res, code, (err as Error).message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  log.info({ host: o.host, port }, 'kubelet endpoint listening');
  return {
    port,
    stop: async () => {
      for (const res of following) res.end();
      await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
    },
  };
}

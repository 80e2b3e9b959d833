// The migration proxy's data path, run in a worker thread (one per listener): the listening
// socket, and for each connection the two sockets piped into each other. A migration moves the
// guest's memory through here — ~100 MiB for an idle 256 MiB guest, TLS-encrypted on the source
// node and decrypted on the target — and on the node agent's main thread that work queued behind
// (and stalled) informers, reconciles and gRPC, and on a node that is both source and target (local
// mode) the two ends took turns on one core. In a worker each end has its own thread, like the
// goroutines of KubeVirt's migration proxy.
//
// relayWorkerMain runs from its source text (`new Worker(code, { eval: true })`) so that it works
// the same from the .ts tree and from the one-file CLI bundle: it must stay self-contained — no
// imports, no outside names; node modules come from process.getBuiltinModule.
import type { ConnectionOptions, TlsOptions } from 'node:tls';

/** What a relay worker does (its workerData). */
export interface RelaySpec {
  /** target: listen on `address:0` (TLS or TCP) → `unixPath`; source: listen on `unixPath` → `host:port`. */
  readonly role: 'source' | 'target';
  /** target: the address to listen on. */
  readonly address?: string;
  /** target: where to forward; source: where to listen (short enough for a unix socket). */
  readonly unixPath: string;
  /** source: the target listener. */
  readonly host?: string;
  readonly port?: number;
  /** source: the target's port for every connection after the first (a socat target's multifd port). */
  readonly multifdPort?: number | undefined;
  /** TLS options without functions (structured-cloneable); undefined: plain TCP. */
  readonly tls?: TlsOptions | ConnectionOptions | undefined;
  /** The common name a TLS peer must present (tls.ts HANDLER_CERT_CN). */
  readonly peerCommonName: string;
}

/** Worker → parent. */
export type RelayEvent =
  | { readonly kind: 'listening'; readonly port: number }
  | { readonly kind: 'listen-failed'; readonly message: string }
  | { readonly kind: 'connection' }
  | { readonly kind: 'rejected'; readonly reason: string }
  | { readonly kind: 'tls-error'; readonly message: string }
  | { readonly kind: 'connection-failed'; readonly message: string }
  | { readonly kind: 'closed' };

/** Parent → worker: close the listener and every connection, then exit (the worker spells it literally). */
export const RELAY_CLOSE = 'close';

/** The worker's body. Self-contained (see above). */
export function relayWorkerMain(): void {
  const { parentPort, workerData } = process.getBuiltinModule('node:worker_threads');
  const net = process.getBuiltinModule('node:net');
  const tls = process.getBuiltinModule('node:tls');
  const spec = workerData as RelaySpec;
  const post = (ev: RelayEvent) => parentPort?.postMessage(ev);
  const sockets = new Set<import('node:net').Socket>();
  const identityError = (cn: unknown) => (cn === spec.peerCommonName ? undefined : `peer certificate CN ${JSON.stringify(cn ?? '')} is not ${spec.peerCommonName}`);

  const pipeBoth = (a: import('node:net').Socket, b: import('node:net').Socket) => {
    sockets.add(a).add(b);
    // No Nagle (Go's default in KubeVirt's proxy): a TLS record (≤ 16 KiB) is smaller than a
    // loopback segment, so Nagle held each one back until the previous was acknowledged, and the
    // stream's last bytes — the device state the target resumes from — waited for a delayed ACK.
    a.setNoDelay(true);
    b.setNoDelay(true);
    // pipe() half-closes the other side when one side ends, after everything was written: the end
    // of a migration stream must reach QEMU whole. Only an error tears both down at once.
    a.pipe(b);
    b.pipe(a);
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      post({ kind: 'connection-failed', message: err.message });
      a.destroy();
      b.destroy();
    };
    a.on('error', fail).on('close', () => sockets.delete(a));
    b.on('error', fail).on('close', () => sockets.delete(b));
  };

  let server: import('node:net').Server;
  if (spec.role === 'target') {
    // QEMU 7.2 takes the first connection it accepts for the main migration channel and the rest
    // for multifd channels, so connections reach it in the order they reached this listener —
    // which is the order the source QEMU opened them — not in the order their TLS handshakes
    // happen to finish. A connection whose handshake fails or is turned away gives up its turn.
    let accepted = 0;
    let nextTurn = 0;
    const turns = new Map<number, (() => void) | null>();
    const seqOf = new Map<string, number>();
    const keyOf = (s: import('node:net').Socket) => `${s.remoteAddress}:${s.remotePort}`;
    const take = (seq: number | undefined, go: (() => void) | null) => {
      if (seq === undefined || seq < nextTurn || turns.has(seq)) return;
      turns.set(seq, go);
      while (turns.has(nextTurn)) {
        const next = turns.get(nextTurn);
        turns.delete(nextTurn);
        nextTurn++;
        next?.();
      }
    };
    // QEMU listens with a backlog of its multifd channel count, one less than the connections a
    // migration opens (main + multifd), and a unix connect to a full backlog fails at once (EAGAIN)
    // where TCP would retry. So connect one at a time — the next once the previous is queued, which
    // also keeps the order — and retry EAGAIN briefly while QEMU's main loop accepts.
    let queue: Promise<void> = Promise.resolve();
    const connectToQemu = () => new Promise<import('node:net').Socket | undefined>((resolve) => {
      let attempts = 0;
      const attempt = () => {
        const s = net.connect(spec.unixPath);
        const onError = (err: NodeJS.ErrnoException) => {
          s.destroy();
          if (err.code === 'EAGAIN' && ++attempts < 250) {
            setTimeout(attempt, 20);
            return;
          }
          post({ kind: 'connection-failed', message: `connecting to ${spec.unixPath}: ${err.message}` });
          resolve(undefined);
        };
        s.once('error', onError);
        s.once('connect', () => {
          s.off('error', onError);
          resolve(s);
        });
      };
      attempt();
    });
    const onConn = (inbound: import('node:net').Socket) => {
      const seq = seqOf.get(keyOf(inbound));
      // until its turn (pipeBoth handles errors from then on)
      const early = (err: Error) => post({ kind: 'connection-failed', message: err.message });
      inbound.on('error', early);
      if (spec.tls) {
        const why = identityError((inbound as import('node:tls').TLSSocket).getPeerCertificate()?.subject?.CN);
        if (why) {
          post({ kind: 'rejected', reason: why });
          inbound.destroy();
          take(seq, null);
          return;
        }
      }
      const forward = () => {
        queue = queue.then(() => connectToQemu()).then((outbound) => {
          inbound.off('error', early);
          if (!outbound) {
            inbound.destroy();
            return;
          }
          if (inbound.destroyed) {
            outbound.destroy();
            return;
          }
          post({ kind: 'connection' });
          pipeBoth(inbound, outbound);
        });
      };
      // plain TCP: this is the accept itself, in order
      if (seq === undefined) forward();
      else take(seq, forward);
    };
    server = spec.tls ? tls.createServer({ ...(spec.tls as TlsOptions), handshakeTimeout: 10_000 }, onConn) : net.createServer(onConn);
    if (spec.tls) {
      server.on('connection', (raw: import('node:net').Socket) => {
        const seq = accepted++;
        const key = keyOf(raw);
        seqOf.set(key, seq);
        // a handshake that failed, timed out or was cut off: the next connection's turn
        raw.once('close', () => { seqOf.delete(key); take(seq, null); });
      });
    }
    server.on('tlsClientError', (err: Error) => post({ kind: 'tls-error', message: err.message }));
  } else {
    // QEMU's first connection is its main channel: to the target's main port; the rest to its
    // multifd port when it has one (a socat target, socat-relay.ts), else to the same port.
    let opened = 0;
    server = net.createServer((inbound) => {
      post({ kind: 'connection' });
      const port = opened++ === 0 ? spec.port : (spec.multifdPort ?? spec.port);
      const outbound = spec.tls
        ? tls.connect({
          ...(spec.tls as ConnectionOptions),
          host: spec.host,
          port,
          // Handlers are addressed by IP; identity is the CA plus the handler CN, as in KubeVirt.
          checkServerIdentity: (_host, cert) => {
            const why = identityError(cert?.subject?.CN);
            return why ? new Error(why) : undefined;
          },
        })
        : net.connect({ host: spec.host ?? '', port: port ?? 0 });
      pipeBoth(inbound, outbound);
    });
  }
  server.on('error', (err) => post({ kind: 'listen-failed', message: err.message }));
  const onListening = () => {
    const a = server.address();
    post({ kind: 'listening', port: typeof a === 'object' && a ? a.port : 0 });
  };
  if (spec.role === 'target') server.listen(0, spec.address, onListening);
  else server.listen(spec.unixPath, onListening);

  parentPort?.on('message', (m) => {
    if (m !== 'close') return; // RELAY_CLOSE
    for (const s of sockets) s.destroy();
    sockets.clear();
    server.close(() => {
      post({ kind: 'closed' });
      parentPort?.close();
    });
  });
}

/**
 * virt-api's validating webhooks for a real kube-apiserver: an HTTPS server that takes the
 * AdmissionReview v1 kube-apiserver POSTs on virt-api's paths (`/virtualmachines-validate`, ...),
 * runs the same admitters as the embedded server's plugins, and answers with the review's
 * response. The migration-create and eviction webhooks look up the cluster (api-webhooks.ts); a
 * lookup that fails is a 500, which kube-apiserver treats per the webhook's failurePolicy. The serving certificate can be replaced while it runs (rotation).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ClusterConfig } from '../api/cluster-config.ts';
import type { UserInfo } from '../kube/user-info.ts';
import { admissionReviewResponse, AdmissionReviewError, parseAdmissionReview } from './admission-review.ts';
import { errorDenial } from './response.ts';
import { kubeVirtObjectWebhooks, OBJECT_WEBHOOK_RULES, type ObjectWebhook } from './object-webhooks.ts';
import { isKubeVirtServiceAccount } from './kubevirt-webhooks.ts';
import type { ApiWebhook } from './api-webhooks.ts';
import { VM_WEBHOOK } from './vms-admitter.ts';
import { parseVirtualMachine } from '../api/parse.ts';
import type { VirtualMachine } from '../api/types.ts';
import type { InstancetypeSource } from '../api/instancetype/find.ts';

/** kube-apiserver's own limit on a request body is 3 MiB; a review carries the object twice. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface WebhookServerOptions {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly key: string;
  readonly cert: string;
  /** The cluster configuration in force (the KubeVirt CR's). */
  readonly config: () => ClusterConfig;
  readonly isKubeVirt?: (user: UserInfo | undefined) => boolean;
  /** The webhooks that look things up in the cluster (migration create, launcher eviction: api-webhooks.ts). */
  readonly apiWebhooks?: readonly ApiWebhook[];
  /** Reads the instance types, preferences and revisions a VM names, for the VM admitter (absent: none exist). */
  readonly instancetypes?: (vm: VirtualMachine) => Promise<InstancetypeSource>;
  /**
   * What else the server serves (virt-api's aggregated subresources, behind an APIService): every
   * request that is not a webhook path, and every Upgrade request.
   */
  readonly aggregated?: {
    handle(req: IncomingMessage, res: ServerResponse): void;
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  };
  /** PEM of the CA client certificates are verified against (the aggregation layer's front proxy); none: not asked for. */
  readonly clientCa?: string;
  /** GET /metrics (virt-controller's, controller/metrics): the handler authenticates and authorizes the scraper itself. */
  readonly metrics?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** How often a port another process holds is tried again (default 5 s). */
  readonly listenRetryMs?: number;
  readonly log: Logger;
}

export interface WebhookServer {
  readonly port: number;
  /** Serve with a new certificate from now on (connections already open keep theirs). */
  setCertificate(key: string, cert: string): void;
  /** Verify client certificates against this CA from now on. */
  setClientCa(ca: string | undefined): void;
  close(): Promise<void>;
}

class HttpError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (type !== 'application/json') throw new HttpError(415, `contentType=${type || '(none)'}, expect application/json`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `the request body is not JSON: ${(err as Error).message}`);
  }
}

type Webhook = ObjectWebhook | ApiWebhook;
const expected = (w: Webhook): string => ('expects' in w ? w.expects : OBJECT_WEBHOOK_RULES[w.name as keyof typeof OBJECT_WEBHOOK_RULES]?.resource ?? w.name);

/** One review through one webhook: the response object to send. */
export async function reviewThrough(webhook: Webhook, body: unknown, config: ClusterConfig, instancetypes?: WebhookServerOptions['instancetypes']): Promise<Record<string, unknown>> {
  const { uid, attributes } = parseAdmissionReview(body);
  if (!attributes) return admissionReviewResponse(uid, undefined);
  // As virt-api's admitters check `ValidateRequestResource`: a misrouted review is an error, not an admission.
  if (!webhook.matches(attributes)) return admissionReviewResponse(uid, errorDenial(`expect resource to be '${expected(webhook)}'`));
  if ('expects' in webhook) return admissionReviewResponse(uid, await webhook.admit(attributes, config));
  // The VM admitter reads what the VM names first (KubeVirt's admitter GETs them).
  const vm = webhook.name === VM_WEBHOOK && instancetypes ? parseVirtualMachine(attributes.object).value : undefined;
  return admissionReviewResponse(uid, webhook.admit(attributes, config, vm ? await instancetypes!(vm) : undefined));
}

export async function startWebhookServer(o: WebhookServerOptions): Promise<WebhookServer> {
  const all: Webhook[] = [...kubeVirtObjectWebhooks(o.isKubeVirt ?? isKubeVirtServiceAccount), ...(o.apiWebhooks ?? [])];
  const webhooks = new Map(all.map((w) => [w.path, w]));
  const log = o.log;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'https://webhook').pathname;
    if (path === '/healthz' || path === '/readyz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      return;
    }
    if (path === '/metrics' && o.metrics) return o.metrics(req, res);
    const webhook = webhooks.get(path);
    if (!webhook && o.aggregated) return o.aggregated.handle(req, res);
    if (!webhook) throw new HttpError(404, `no webhook is served on ${path}`);
    if (req.method !== 'POST') throw new HttpError(405, `${req.method ?? ''} is not allowed; POST an AdmissionReview`);
    const body = await readJson(req);
    let review: Record<string, unknown>;
    try {
      review = await reviewThrough(webhook, body, o.config(), o.instancetypes);
    } catch (err) {
      if (err instanceof AdmissionReviewError) throw new HttpError(400, `${webhook.name}: ${err.message}`);
      throw err;
    }
    const response = review.response as { uid: string; allowed: boolean; status?: { code: number; message: string } };
    if (!response.allowed) log.info({ webhook: webhook.name, uid: response.uid, code: response.status?.code, message: response.status?.message }, 'admission denied');
    const text = JSON.stringify(review);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
  }
  let tls = { key: o.key, cert: o.cert, ...(o.clientCa ? { ca: o.clientCa } : {}) };
  const server: Server = createServer({ ...tls, ...(o.aggregated ? { requestCert: true, rejectUnauthorized: false } : {}) }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const code = err instanceof HttpError ? err.code : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (code === 500) log.error({ err, url: req.url }, 'webhook request failed');
      else log.debug({ url: req.url, code, message }, 'webhook request refused');
      if (!res.headersSent) res.writeHead(code, { 'Content-Type': 'text/plain' });
      res.end(message);
    });
  });
  if (o.aggregated) {
    const aggregated = o.aggregated;
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => aggregated.upgrade(req, socket, head));
  }
  // Each attempt removes the listener of the outcome that did not happen: a 'listening' callback
  // left behind by every failed attempt piled up (MaxListenersExceededWarning after 10 retries).
  const listen = () => new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => { server.off('listening', listening); reject(err); };
    const listening = () => { server.off('error', failed); resolve(); };
    server.once('error', failed).once('listening', listening);
    server.listen(o.port, o.host ?? '0.0.0.0');
  });
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  try {
    await listen();
  } catch (err) {
    // Pods sharing the host's network (qvirt's local pod runner runs both controller replicas so)
    // find the port taken: keep trying, the other replica serves meanwhile.
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || o.port === 0) throw err;
    const retryMs = o.listenRetryMs ?? 5000;
    log.warn({ port: o.port }, `the webhook port is in use; retrying every ${retryMs / 1000} s`);
    const again = () => { retry = setTimeout(() => { if (!closed) listen().then(() => log.info({ port: o.port }, 'validating webhooks served'), again); }, retryMs); retry.unref(); };
    again();
  }
  const address = server.address() as AddressInfo | null;
  const port = address?.port ?? o.port;
  if (address) log.info({ port, paths: [...webhooks.keys()] }, 'validating webhooks served');
  return {
    port,
    setCertificate: (key, cert) => { tls = { ...tls, key, cert }; server.setSecureContext(tls); },
    setClientCa: (ca) => {
      const { ca: _old, ...rest } = tls as typeof tls & { ca?: string };
      tls = { ...rest, ...(ca ? { ca } : {}) };
      server.setSecureContext(tls);
    },
    close: () => new Promise<void>((resolve) => {
      closed = true;
      clearTimeout(retry);
      if (!server.listening) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

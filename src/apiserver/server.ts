// HTTP framing of the Kubernetes API: routes paths to discovery or to REST verbs on a resource,
// reads bodies by content type, answers in JSON (or as a meta.k8s.io Table for `kubectl get`),
// streams watches as chunked JSON lines, and turns every failure into a `Status`.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import yaml from 'js-yaml';
import { authenticate, userOfToken, type TokenUser, type User } from './auth.ts';
import { parseServiceProxyPath, type ServiceProxy } from './service-proxy.ts';
import { evictPod } from './eviction.ts';
import { allowAllAuthorizer, SUBJECT_ACCESS_REVIEWS_PATH, subjectAccessReview, TOKEN_REVIEWS_PATH, tokenReview, type Authorizer } from './reviews.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, legacyGroups, openApiV3Doc, openApiV3Index, SERVER_VERSION } from './discovery.ts';
import { AGGREGATED_DISCOVERY_JSON, aggregatedDiscovery, wantsAggregatedDiscovery } from './aggregated-discovery.ts';
import { ApiError, badRequest, CauseTypes, expired, internalError, invalid, methodNotAllowed, pathNotFound, StatusReasons, unauthorized, unsupportedMediaType } from './errors.ts';
import { PatchTypes, type PatchType } from './patch.ts';
import { decodeKubernetesProtobuf, ProtobufError } from './protobuf.ts';
import { parseSelectors, type DeleteOptions, type PropagationPolicy, type Rest, type WriteOptions } from './rest.ts';
import { apiVersionFor, storageVersion, type ResourceDef } from './resources.ts';
import { metaOf, type Obj, type StoreEvent } from './store.ts';
import { toTable, type IncludeObject } from './table.ts';
import { podLogLocation, proxyPodLog, type KubeletClientTls } from './pod-log.ts';
import { asVersion, eventLine, matchesFilter, watchDecision, type WatchHub, type WatchFilter } from './watch.ts';
import { jsonOf } from './store.ts';
import { aggregatedFor, aggregatedGroupDoc, type AggregatedApi } from './aggregated-api.ts';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';

export interface HandlerOptions {
  rest: Rest;
  hub: WatchHub;
  log: Logger;
  /** Accepted bearer tokens; client certificates are checked by TLS. */
  tokens: readonly string[];
  /** Refuse unauthenticated requests (401). */
  requireAuth: boolean;
  /** Bearer tokens of users other than the admin. */
  users?: readonly TokenUser[];
  /** What SubjectAccessReviews answer (default: everyone authenticated is allowed). */
  authorize?: Authorizer;
  /** host:port clients reach the server at (for /api's serverAddressByClientCIDRs). */
  serverAddress: () => string;
  /** How often watches with allowWatchBookmarks get a BOOKMARK (default 60 s). */
  bookmarkIntervalMs?: number;
  /** Default watch timeout when the client sends none (default 1800 s). */
  defaultWatchTimeoutSeconds?: number;
  /** How pods/log reaches kubelets: the CA their serving certificates chain to and the client certificate. */
  kubeletClient?: KubeletClientTls;
  /** Groups served by in-process backends (aggregated-api.ts). */
  aggregated?: readonly AggregatedApi[];
  /** Services whose proxy subresource an in-process backend answers (service-proxy.ts). */
  serviceProxies?: readonly ServiceProxy[];
}

const MAX_BODY = 3 * 1024 * 1024;
const MAX_WATCH_BACKLOG = 32 * 1024 * 1024;
const PUBLIC_PATHS = new Set(['/healthz', '/readyz', '/livez', '/version']);
/** Resources whose DELETE answers with the deleted object rather than a Status (ReturnDeletedObject in kube-apiserver). */
const RETURNS_DELETED_OBJECT: ReadonlySet<string> = new Set(['/pods', '/services', '/serviceaccounts', '/persistentvolumeclaims', '/namespaces']);

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new ApiError(413, StatusReasons.RequestEntityTooLarge, 'Request entity too large: limit is 3145728'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function parseBody(buf: Buffer, type: string): unknown {
  if (type === 'application/vnd.kubernetes.protobuf') {
    try {
      return decodeKubernetesProtobuf(buf);
    } catch (e) {
      if (e instanceof ProtobufError) throw new ApiError(415, StatusReasons.UnsupportedMediaType, e.message);
      throw e;
    }
  }
  if (type.includes('protobuf') || type.includes('cbor')) throw unsupportedMediaType(type);
  const text = buf.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    if (type === 'application/yaml' || type === 'application/apply-patch+yaml' || type === 'text/yaml') return yaml.load(text, { schema: yaml.CORE_SCHEMA });
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`the request body could not be decoded as ${type || 'JSON'}: ${(e as Error).message}`);
  }
}

const warningHeader = (w: string): string => `299 - ${JSON.stringify(w)}`;

function send(res: ServerResponse, code: number, body: unknown, warnings?: string[], contentType = 'application/json'): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string | string[]> = { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': 'no-cache, private' };
  // writeHead's headers replace those set before: keep a request's earlier warnings (a deprecated version's).
  if (warnings?.length) headers.Warning = [...[res.getHeader('Warning') ?? []].flat().map(String), ...warnings.map(warningHeader)];
  res.writeHead(code, headers);
  res.end(text);
}

function wantsTable(req: IncomingMessage): boolean {
  const a = req.headers.accept ?? '';
  return /as=Table/.test(a) && /g=meta\.k8s\.io/.test(a);
}

interface Route {
  r: ResourceDef;
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  watchPath: boolean;
}

const bool = (v: string | null): boolean => v === 'true' || v === '1';

export function makeHandler(o: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { rest, hub, log } = o;
  const registry = rest.registry;

  function resolve(segs: string[]): Route | object | undefined {
    // segs after /api or /apis
    let group: string;
    let version: string;
    let rest_: string[];
    if (segs[0] === 'api') {
      if (segs.length === 1) return apiVersions(o.serverAddress());
      version = segs[1]!;
      group = '';
      if (segs.length === 2) {
        const d = apiResourceList(registry, '', version);
        if (!d) throw pathNotFound();
        return d;
      }
      rest_ = segs.slice(2);
    } else {
      if (segs.length === 1) return apiGroupList(registry);
      group = segs[1]!;
      if (segs.length === 2) {
        const d = apiGroup(registry, group);
        if (!d) throw pathNotFound();
        return d;
      }
      version = segs[2]!;
      if (segs.length === 3) {
        const d = apiResourceList(registry, group, version);
        if (!d) throw pathNotFound();
        return d;
      }
      rest_ = segs.slice(3);
    }
    let watchPath = false;
    if (rest_[0] === 'watch') {
      watchPath = true;
      rest_ = rest_.slice(1);
    }
    let namespace: string | undefined;
    // /namespaces/{ns}/{plural}... unless it is the namespaces resource itself.
    if (rest_[0] === 'namespaces' && rest_.length >= 3 && !(group === '' && (rest_.length === 3 && (rest_[2] === 'status' || rest_[2] === 'finalize')))) {
      namespace = rest_[1]!;
      rest_ = rest_.slice(2);
    }
    const plural = rest_[0]!;
    const r = registry.lookup(group, version, plural);
    if (!r) throw pathNotFound();
    if (namespace !== undefined && !r.namespaced) throw pathNotFound();
    if (rest_.length > 3) throw pathNotFound();
    return { r, version, namespace, name: rest_[1], subresource: rest_[2], watchPath };
  }

  function writeOptions(q: URLSearchParams, warnings: string[], req: IncomingMessage): WriteOptions {
    const dry = q.getAll('dryRun');
    if (dry.some((d) => d !== 'All')) throw badRequest(`dryRun: Unsupported value: "${dry.find((d) => d !== 'All')}": supported values: "All"`);
    return { dryRun: dry.includes('All'), fieldValidation: q.get('fieldValidation') ?? undefined, warnings, fieldManager: q.get('fieldManager') ?? undefined, userAgent: req.headers['user-agent'] };
  }

  function serve(rt: Route, obj: Obj): Obj {
    return asVersion(obj, apiVersionFor(rt.r.group, rt.version));
  }

  function respondObject(rt: Route, req: IncomingMessage, res: ServerResponse, code: number, obj: Obj, q: URLSearchParams, warnings?: string[]): void {
    if (wantsTable(req) && rt.subresource === undefined) {
      send(res, code, toTable(rt.r, rt.version, [serve(rt, obj)], { include: (q.get('includeObject') as IncludeObject | null) ?? 'Metadata', noHeaders: false, resourceVersion: String(metaOf(obj).resourceVersion ?? '') }), warnings);
      return;
    }
    const served = serve(rt, obj);
    send(res, code, rt.version === storageVersion(rt.r) ? jsonOf(served) : served, warnings);
  }

  function list(rt: Route, req: IncomingMessage, res: ServerResponse, q: URLSearchParams): void {
    const limit = q.get('limit');
    const result = rest.list(rt.r, rt.namespace, {
      labelSelector: q.get('labelSelector') ?? undefined,
      fieldSelector: q.get('fieldSelector') ?? undefined,
      limit: limit ? Number(limit) : undefined,
      continueToken: q.get('continue') ?? undefined,
      resourceVersion: q.get('resourceVersion') ?? undefined,
      resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
    });
    const apiVersion = apiVersionFor(rt.r.group, rt.version);
    if (wantsTable(req)) {
      send(res, 200, toTable(rt.r, rt.version, result.items.map((i) => asVersion(i, apiVersion)), {
        include: (q.get('includeObject') as IncludeObject | null) ?? 'Metadata',
        resourceVersion: result.resourceVersion,
        ...(result.continueToken ? { continueToken: result.continueToken } : {}),
      }));
      return;
    }
    const meta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
    if (result.continueToken) meta.continue = result.continueToken;
    if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
    // Built-in lists carry items without kind/apiVersion, as kube-apiserver's typed lists do.
    const items = rt.r.builtin
      ? result.items.map((i) => {
        const s = jsonOf(i);
        const prefix = `{"apiVersion":${JSON.stringify(i.apiVersion)},"kind":${JSON.stringify(i.kind)},`;
        return s.startsWith(prefix) ? `{${s.slice(prefix.length)}` : s;
      })
      : result.items.map((i) => (rt.version === storageVersion(rt.r) ? jsonOf(i) : JSON.stringify(asVersion(i, apiVersion))));
    const text = `{"kind":${JSON.stringify(rt.r.listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(meta)},"items":[${items.join(',')}]}`;
    send(res, 200, text);
  }

  function watch(rt: Route, req: IncomingMessage, res: ServerResponse, q: URLSearchParams): void {
    const sel = parseSelectors(rt.r, q.get('labelSelector') ?? undefined, q.get('fieldSelector') ?? undefined);
    let fields = sel.fields;
    if (rt.name !== undefined) {
      // /watch/namespaces/ns/pods/name: a watch of one object.
      fields = [...fields, { field: 'metadata.name', op: '=', value: rt.name }];
    }
    const filter: WatchFilter = { namespace: rt.namespace, labels: sel.labels, fields, fieldGetter: rt.r.fieldGetter };
    const apiVersion = apiVersionFor(rt.r.group, rt.version);
    const servedVersion = rt.version === storageVersion(rt.r) ? undefined : apiVersion;
    const table = wantsTable(req);
    const include = (q.get('includeObject') as IncludeObject | null) ?? 'Metadata';
    const encode = (type: string, obj: Obj): string => table
      ? `${JSON.stringify({ type, object: toTable(rt.r, rt.version, [asVersion(obj, apiVersion)], { include, noHeaders: true }) })}\n`
      : eventLine(type as 'ADDED', obj, servedVersion);
    const bookmarks = bool(q.get('allowWatchBookmarks'));
    const rvParam = q.get('resourceVersion') ?? '';
    const sendInitial = q.get('sendInitialEvents');
    const resource = rest.key(rt.r);
    const store = rest.store;

    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    let lastRv = store.resourceVersion;
    const bookmark = (annotations?: Record<string, string>): string => {
      const metadata: Record<string, unknown> = { resourceVersion: String(lastRv) };
      if (annotations) metadata.annotations = annotations;
      return `${JSON.stringify({ type: 'BOOKMARK', object: { kind: rt.r.kind, apiVersion, metadata } })}\n`;
    };

    let buffered = '';
    let flushScheduled = false;
    const write = (s: string): void => {
      buffered += s;
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(() => {
          flushScheduled = false;
          if (buffered && !res.writableEnded) res.write(buffered);
          buffered = '';
          // A watcher that does not read is cut off (as kube-apiserver drops slow watchers); it re-watches.
          if (res.writableLength > MAX_WATCH_BACKLOG) {
            log.warn({ resource, backlog: res.writableLength }, 'closing a watch whose client is not reading');
            end();
          }
        });
      }
    };

    let initial: string[] = [];
    if (rvParam === '' || rvParam === '0' || sendInitial === 'true') {
      if (sendInitial !== 'false') for (const obj of store.list(resource, filter.namespace)) if (matchesFilter(filter, obj)) initial.push(encode('ADDED', obj));
      if (sendInitial === 'true' && bookmarks) initial.push(bookmark({ 'k8s.io/initial-events-end': 'true' }));
    } else {
      const from = Number(rvParam);
      if (!Number.isInteger(from) || from < 0) {
        res.end(`${JSON.stringify({ type: 'ERROR', object: badRequest(`invalid resource version: ${rvParam}`).toStatus() })}\n`);
        return;
      }
      const events = store.eventsSince(resource, from);
      if (!events) {
        const st = expired(`too old resource version: ${from} (${store.oldestResourceVersion + 1})`).toStatus();
        res.end(`${JSON.stringify({ type: 'ERROR', object: st })}\n`);
        return;
      }
      for (const e of events) {
        const t = watchDecision(filter, e);
        if (t) initial.push(encode(t, e.obj));
      }
    }
    if (initial.length) write(initial.join(''));
    initial = [];

    const stop = hub.add({
      resource,
      filter,
      send: (type, e: StoreEvent) => {
        lastRv = e.rv;
        write(encode(type, e.obj));
      },
    });
    const timeoutS = q.get('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : (o.defaultWatchTimeoutSeconds ?? 1800);
    const timers: NodeJS.Timeout[] = [];
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      stop();
      for (const t of timers) clearTimeout(t);
      if (!res.writableEnded) {
        if (buffered) res.write(buffered);
        buffered = '';
        res.end();
      }
    };
    timers.push(setTimeout(() => {
      if (bookmarks) {
        lastRv = Math.max(lastRv, store.resourceVersion);
        write(bookmark());
      }
      setImmediate(end);
    }, Math.max(0, timeoutS) * 1000));
    if (bookmarks) {
      const iv = setInterval(() => {
        lastRv = Math.max(lastRv, store.resourceVersion);
        write(bookmark());
      }, o.bookmarkIntervalMs ?? 60_000);
      timers.push(iv as unknown as NodeJS.Timeout);
    }
    req.on('close', end);
    res.on('close', end);
    res.on('error', end);
  }

  function deleteOptions(body: unknown, q: URLSearchParams): DeleteOptions {
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const opts: DeleteOptions = {};
    const pp = (b.propagationPolicy as string | undefined) ?? q.get('propagationPolicy') ?? undefined;
    if (pp !== undefined && pp !== null) opts.propagationPolicy = pp as PropagationPolicy;
    const gp = b.gracePeriodSeconds ?? q.get('gracePeriodSeconds') ?? undefined;
    if (gp !== undefined && gp !== null) opts.gracePeriodSeconds = Number(gp);
    if (b.preconditions && typeof b.preconditions === 'object') opts.preconditions = b.preconditions as DeleteOptions['preconditions'];
    const od = b.orphanDependents ?? q.get('orphanDependents') ?? undefined;
    if (od !== undefined && od !== null) opts.orphanDependents = od === true || od === 'true';
    const dry = [...(Array.isArray(b.dryRun) ? (b.dryRun as string[]) : []), ...q.getAll('dryRun')];
    opts.dryRun = dry.includes('All');
    return opts;
  }

  async function resourceRequest(rt: Route, req: IncomingMessage, res: ServerResponse, q: URLSearchParams, user: User | undefined): Promise<void> {
    const method = req.method ?? 'GET';
    const { r, version } = rt;
    const ns = r.namespaced ? (rt.namespace ?? '') : '';
    const warnings: string[] = [];
    // A deprecated version warns on every request, as kube-apiserver's handler for custom resources does.
    const deprecated = r.deprecations?.get(version);
    if (deprecated !== undefined) res.setHeader('Warning', warningHeader(deprecated));
    const isWatch = rt.watchPath || bool(q.get('watch'));
    if (rt.name === undefined) {
      // collection
      if (method === 'GET') return isWatch ? watch(rt, req, res, q) : list(rt, req, res, q);
      if (method === 'POST') {
        if (r.namespaced && rt.namespace === undefined) throw methodNotAllowed('POST');
        const body = parseBody(await readBody(req), mediaType(req));
        const obj = rest.create(r, version, ns, body, { ...writeOptions(q, warnings, req), request: { user } });
        return respondObject(rt, req, res, 201, obj, q, warnings);
      }
      if (method === 'DELETE') {
        const body = parseBody(await readBody(req), 'application/json');
        const items = rest.deleteCollection(r, rt.namespace, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined }, deleteOptions(body, q));
        const apiVersion = apiVersionFor(r.group, version);
        return send(res, 200, { kind: r.listKind, apiVersion, metadata: { resourceVersion: String(rest.store.resourceVersion) }, items: items.map((i) => asVersion(i, apiVersion)) });
      }
      throw methodNotAllowed(method);
    }
    if (r.namespaced && rt.namespace === undefined) throw pathNotFound();
    const name = rt.name;
    if (isWatch && method === 'GET' && rt.subresource === undefined) return watch(rt, req, res, q);
    const sub = rt.subresource;
    if (sub === 'binding' && r.group === '' && r.plural === 'pods') {
      if (method !== 'POST') throw methodNotAllowed(method);
      return send(res, 201, rest.bindPod(ns, name, parseBody(await readBody(req), mediaType(req)), writeOptions(q, warnings, req)), warnings);
    }
    if (sub === 'eviction' && r.group === '' && r.plural === 'pods') {
      if (method !== 'POST') throw methodNotAllowed(method);
      return send(res, 201, evictPod(rest, ns, name, parseBody(await readBody(req), mediaType(req)), { dryRun: writeOptions(q, warnings, req).dryRun ?? false, user }), warnings);
    }
    if (sub === 'log' && r.group === '' && r.plural === 'pods') {
      if (method !== 'GET') throw methodNotAllowed(method);
      const pod = rest.get(r, ns, name);
      const nodeName = String(((pod.spec ?? {}) as Obj).nodeName ?? '');
      const nodes = registry.get('', 'nodes')!;
      const node = nodeName ? (() => { try { return rest.get(nodes, '', nodeName); } catch { return undefined; } })() : undefined;
      const location = podLogLocation(pod, node, q);
      if (!location) {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '0' });
        res.end();
        return;
      }
      return proxyPodLog(location, o.kubeletClient ?? {}, res, name);
    }
    if (sub !== undefined && sub !== 'status' && sub !== 'scale') throw pathNotFound();
    if (sub === 'status' && !r.statusSubresource) throw pathNotFound();
    if (sub === 'scale') {
      if (!r.scale) throw pathNotFound();
      if (method === 'GET') return send(res, 200, rest.getScale(r, ns, name));
      if (method === 'PUT') return send(res, 200, rest.updateScale(r, ns, name, parseBody(await readBody(req), mediaType(req)), writeOptions(q, warnings, req)), warnings);
      if (method === 'PATCH') {
        const type = mediaType(req) as PatchType;
        if (![PatchTypes.merge, PatchTypes.json, PatchTypes.strategic].includes(type as 'application/merge-patch+json')) throw unsupportedMediaType(type);
        return send(res, 200, rest.patchScale(r, ns, name, type, parseBody(await readBody(req), 'application/json'), writeOptions(q, warnings, req)), warnings);
      }
      throw methodNotAllowed(method);
    }
    const part = sub === 'status' ? 'status' : 'main';
    switch (method) {
      case 'GET':
        return respondObject(rt, req, res, 200, rest.get(r, ns, name), q);
      case 'PUT': {
        const body = parseBody(await readBody(req), mediaType(req));
        return respondObject(rt, req, res, 200, rest.update(r, version, ns, name, body, part, { ...writeOptions(q, warnings, req), request: { user } }), q, warnings);
      }
      case 'PATCH': {
        const type = mediaType(req);
        if (!Object.values(PatchTypes).includes(type as PatchType)) throw unsupportedMediaType(type);
        const body = parseBody(await readBody(req), type);
        if (body === undefined) throw badRequest('the patch body is empty');
        if (type === PatchTypes.apply && !q.get('fieldManager')) {
          throw invalid('PatchOptions', 'meta.k8s.io', '', [{ type: CauseTypes.FieldValueRequired, field: 'fieldManager', detail: 'is required for apply patch' }]);
        }
        // Admitted as an update (a server-side apply that creates the object: as a create).
        const { obj, created } = rest.patch(r, version, ns, name, type as PatchType, body, part, { ...writeOptions(q, warnings, req), request: { user }, force: bool(q.get('force')) });
        return respondObject(rt, req, res, created ? 201 : 200, obj, q, warnings);
      }
      case 'DELETE': {
        if (sub !== undefined) throw methodNotAllowed(method);
        const body = parseBody(await readBody(req), 'application/json');
        const opts = deleteOptions(body, q);
        const { obj, deleted } = rest.delete(r, ns, name, opts);
        // kube-apiserver answers 202 only for an object kept and orphanDependents=false, and for an
        // object gone at once a Status, except the resources whose registry returns the deleted object.
        if (deleted && !RETURNS_DELETED_OBJECT.has(rest.key(r))) {
          const m = metaOf(obj);
          return send(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: m.name, ...(r.group ? { group: r.group } : {}), kind: r.plural, uid: m.uid } });
        }
        return respondObject(rt, req, res, !deleted && opts.orphanDependents === false ? 202 : 200, obj, q);
      }
    }
    throw methodNotAllowed(method);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://apiserver');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    let user: User | undefined;
    if (o.requireAuth && !PUBLIC_PATHS.has(path)) {
      user = authenticate(req, o.tokens, o.users);
      if (!user) throw unauthorized();
    }
    if (path === '/healthz' || path === '/readyz' || path === '/livez' || path.startsWith('/healthz/') || path.startsWith('/readyz/') || path.startsWith('/livez/')) {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if (path === '/version') return send(res, 200, SERVER_VERSION);
    if (path === '/openapi/v2') {
      // An empty Swagger 2.0 document (no paths, no definitions): kubectl reads OpenAPI v3 (see
      // discovery.ts) and only falls back to v2 for kinds the server does not serve, where an empty
      // document lets it report "no matches for kind" instead of failing to download OpenAPI.
      if ((req.headers.accept ?? '').includes('protobuf')) {
        const body = Buffer.concat([Buffer.from([0x0a, 3]), Buffer.from('2.0')]); // Document{swagger: "2.0"}
        res.writeHead(200, { 'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'Content-Length': String(body.length) });
        res.end(body);
        return;
      }
      return send(res, 200, { swagger: '2.0', info: { title: 'Kubernetes', version: SERVER_VERSION.gitVersion }, paths: {}, definitions: {} });
    }
    if (path === '/openapi/v3') return send(res, 200, openApiV3Index(registry));
    if (path.startsWith('/openapi/v3/')) {
      const m = /^\/openapi\/v3\/(?:api\/([^/]+)|apis\/([^/]+)\/([^/]+))$/.exec(path);
      const doc = m ? (m[1] ? openApiV3Doc(registry, '', m[1]) : openApiV3Doc(registry, m[2]!, m[3]!)) : undefined;
      if (!doc) throw pathNotFound();
      return send(res, 200, doc);
    }
    if (path === TOKEN_REVIEWS_PATH || path === SUBJECT_ACCESS_REVIEWS_PATH) {
      if (req.method !== 'POST') throw methodNotAllowed(req.method ?? '');
      const body = parseBody(await readBody(req), mediaType(req));
      return send(res, 201, path === TOKEN_REVIEWS_PATH ? tokenReview(body, (t) => userOfToken(t, o.tokens, o.users)) : subjectAccessReview(body, o.authorize ?? allowAllAuthorizer));
    }
    const proxied = o.serviceProxies?.length ? parseServiceProxyPath(path) : undefined;
    const proxy = proxied && o.serviceProxies!.find((p) => p.namespace === proxied.namespace && p.name === proxied.name);
    if (proxied && proxy) {
      const allowed = (o.authorize ?? allowAllAuthorizer)({ user: user?.name ?? 'system:anonymous', groups: [...(user?.groups ?? [])], resourceAttributes: { namespace: proxied.namespace, verb: (req.method ?? 'GET').toLowerCase() === 'get' ? 'get' : 'create', resource: 'services', subresource: 'proxy', name: proxied.name, version: 'v1' } });
      if (!allowed.allowed) throw new ApiError(403, StatusReasons.Forbidden, `services "${proxied.name}" is forbidden: User "${user?.name ?? 'system:anonymous'}" cannot get resource "services/proxy" in API group "" in the namespace "${proxied.namespace}"`);
      return proxy.handle(req, res, proxied.path, user);
    }
    const agg = aggregatedFor(o.aggregated ?? [], path);
    if (agg) {
      if (path === `/apis/${agg.group}`) {
        if (req.method !== 'GET') throw methodNotAllowed(req.method ?? '');
        return send(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...aggregatedGroupDoc(agg) });
      }
      return agg.handle(req, res, user);
    }
    if ((path === '/api' || path === '/apis') && req.method === 'GET' && wantsAggregatedDiscovery(req.headers.accept)) {
      const doc = path === '/api'
        ? aggregatedDiscovery(legacyGroups(registry, (g) => g === ''))
        : aggregatedDiscovery([
          ...legacyGroups(registry, (g) => g !== ''),
          ...(o.aggregated ?? []).map((a) => ({ name: a.group, versions: a.versions.map((version) => ({ version, resources: a.resources(version) })) })),
        ]);
      // As kube-apiserver: an ETag of the document, and 304 to a client that has it.
      const text = JSON.stringify(doc);
      const etag = `"${createHash('sha512').update(text).digest('hex').toUpperCase()}"`;
      res.setHeader('Vary', 'Accept');
      res.setHeader('ETag', etag);
      if (req.headers['if-none-match'] === etag) { res.writeHead(304); res.end(); return; }
      return send(res, 200, text, undefined, AGGREGATED_DISCOVERY_JSON);
    }
    if (path === '/apis' && o.aggregated?.length) {
      if (req.method !== 'GET') throw methodNotAllowed(req.method ?? '');
      const list = apiGroupList(registry) as { groups: object[] };
      return send(res, 200, { ...list, groups: [...list.groups, ...o.aggregated.map(aggregatedGroupDoc)] });
    }
    const segs = path.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
    if (segs[0] !== 'api' && segs[0] !== 'apis') {
      if (path === '/') return send(res, 200, { paths: ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v3', '/readyz', '/version'] });
      throw pathNotFound();
    }
    const route = resolve(segs);
    if (route === undefined) throw pathNotFound();
    if (!('r' in route)) {
      if (req.method !== 'GET') throw methodNotAllowed(req.method ?? '');
      return send(res, 200, route);
    }
    await resourceRequest(route as Route, req, res, url.searchParams, user);
  }

  return (req, res) => {
    const started = Date.now();
    handle(req, res).then(
      () => log.trace({ method: req.method, url: req.url, code: res.statusCode, ms: Date.now() - started }, 'request'),
      (e: unknown) => {
        let err: ApiError;
        if (e instanceof ApiError) err = e;
        else {
          log.error({ err: e, method: req.method, url: req.url }, 'request failed');
          err = internalError((e as Error).message ?? String(e));
        }
        log.debug({ method: req.method, url: req.url, code: err.code, reason: err.reason, message: err.message }, 'request refused');
        if (res.headersSent) {
          res.end();
          return;
        }
        send(res, err.code, err.toStatus());
      },
    );
  };
}

/**
 * The server's answer to Upgrade requests: those under an aggregated group go to its backend with
 * the authenticated user; anything else is refused (the embedded server streams nothing itself).
 */
export function makeUpgradeHandler(o: HandlerOptions): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const refuse = (socket: Duplex, err: ApiError) => {
    const body = JSON.stringify(err.toStatus());
    socket.end(`HTTP/1.1 ${err.code} ${STATUS_CODES[err.code] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  };
  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const path = new URL(req.url ?? '/', 'http://apiserver').pathname;
    let user: User | undefined;
    if (o.requireAuth) {
      user = authenticate(req, o.tokens, o.users);
      if (!user) return refuse(socket, unauthorized());
    }
    const agg = aggregatedFor(o.aggregated ?? [], path);
    if (!agg) return refuse(socket, badRequest(`${path}: the server does not upgrade this request`));
    agg.upgrade(req, socket, head, user).catch((err: unknown) => {
      o.log.error({ err, url: req.url }, 'upgrade request failed');
      if (!socket.destroyed) refuse(socket, internalError((err as Error).message ?? String(err)));
    });
  };
}

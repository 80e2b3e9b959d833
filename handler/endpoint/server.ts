// The handler's subresource endpoint (briefs/handler-endpoint-contract.md): what virtctl reaches
// through virt-api → virt-handler in KubeVirt (§5.1), served by the handler itself because qvirt
// has no virt-api. Always HTTPS with the handler's own CA (pki.ts); every request carries
// the caller's own Kubernetes credentials (auth.ts: TokenReview or a client certificate,
// then a SubjectAccessReview). The handler advertises itself on its Node (`qvirt.io/handler-endpoint`,
// `qvirt.io/handler-ca`), so a client goes VMI status.nodeName → Node → endpoint.
//
//   PUT  pause|unpause|freeze|unfreeze|reset|softreboot      → the launcher's Cmd server
//   GET  guestosinfo|userlist|filesystemlist                  → the launcher's guest-agent queries
//   GET  console|vnc  (Upgrade: plain.kubevirt.io)            → raw bytes to the serial / VNC socket
//   GET  vnc/screenshot                                       → the launcher's GetScreenshot: the display as a PNG
//   GET  portforward/PORT[/tcp|udp]  (Upgrade: plain.kubevirt.io) → raw bytes to the guest's port; UDP as
//        length-prefixed datagrams (port-forward.ts: the pod IP as KubeVirt's virt-api dials it, or a
//        QEMU host forward for user-mode networking)
//   POST qmp {"execute","arguments","unsafe"}                  → the launcher's QMP passthrough (audited)
//   GET  usage → one reading of the VMI's CPU, memory and I/O counters (qvirt top; get on the VMI itself)
//   GET  /metrics → KubeVirt's virt-handler metrics in Prometheus' text format (handler/metrics/);
//        read-only, the caller needs `get` on the non-resource URL /metrics (as kube-rbac-proxy asks)
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import { ConsoleFile, HANDLER_CA_ANNOTATION, HANDLER_ENDPOINT_ANNOTATION, VMIPhase } from '../../src/api/constants.ts';
import { LifeCycle } from '../../src/api/domain/lifecycle.ts';
import { pausedCondition } from '../status.ts';
import { passthroughDecision, qmpArgumentsProblem } from '../../src/api/qmp-allow-list.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { parseDuration } from '../../src/flags/flags.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { forObject, type Logger } from '../../src/log/logger.ts';
import { QmpPassthroughClient } from '../../src/proto/launcher-client.ts';
import type { HandlerController } from '../controller.ts';
import { AuthUnavailableError, EndpointAuth, describeAccess, subresourceAccess, type EndpointUser } from './auth.ts';
import { ensureEndpointPki } from './pki.ts';
import { EXPOSITION_CONTENT_TYPE } from '../../src/metrics/exposition.ts';
import { NodeAgentMetrics } from '../metrics/node-agent-metrics.ts';
import { parseDomainStats } from '../metrics/domain-stats.ts';
import { usageSample } from '../metrics/usage.ts';
import type { VmiUsageSample } from '../../src/api/vmi-usage.ts';
import { advertisedHost, endpointUrl, parseListen, routeOf, STREAM_PROTOCOL, type Route } from './routes.ts';
import type { LauncherEntry } from '../launcher/domain-cache.ts';
import { shortSocketPath } from '../launcher/sockets.ts';
import { podNetns } from '../network/setup.ts';
import { openGuestLink, PortForwardError } from './port-forward.ts';
import { portForwardTarget } from './port-forward-target.ts';
import { StreamSessions } from './stream-sessions.ts';
import { UsernetForwards } from './usernet-forward.ts';

export interface EndpointOptions {
  readonly controller: HandlerController;
  readonly client: KubeClient;
  readonly nodeName: string;
  /** HOST:PORT to listen on (port 0 picks a free one). */
  readonly listen: string;
  /** The host clients reach the endpoint at (see advertisedHost for the default). */
  readonly advertise?: string | undefined;
  /** The endpoint's PKI lives in `<stateDir>/endpoint-pki`. */
  readonly stateDir: string;
  readonly log: Logger;
  /** How long authentication and authorization answers are reused (default 10 s). */
  readonly authCacheMs?: number;
}

export interface Endpoint {
  /** `https://HOST:PORT`, as advertised on the Node. */
  readonly url: string;
  readonly port: number;
  /** PEM of the CA that signed the serving certificate. */
  readonly caCert: string;
  close(): Promise<void>;
}

/** A failed request: the HTTP status and a message that says what failed and why. */
class EndpointError extends Error {
  override name = 'EndpointError';
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

const MAX_BODY = 64 * 1024;

/** Where Prometheus scrapes the node agent (KubeVirt's virt-handler serves its metrics there too). */
export const METRICS_PATH = '/metrics';

function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new EndpointError(413, `request body over ${MAX_BODY} bytes`);
    // A declared length over the limit is refused unread; an undeclared (chunked) one when it crosses
    // the limit. Either way reading stops, but the socket stays up until the 413 is written (destroying
    // it here left the client with a reset connection instead of the answer); the answer closes it.
    if (Number(req.headers['content-length']) > MAX_BODY) { req.pause(); return reject(tooLarge()); }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) { req.off('data', onData); req.pause(); reject(tooLarge()); return; }
      chunks.push(c);
    };
    req.on('data', onData);
    // The client went away mid-body: its fault, not the node agent's (no answer can reach it anyway).
    req.on('error', (err) => reject(new EndpointError(400, `request body: not received whole: ${err.message}`)));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (!text) return resolve(undefined);
      try {
        const v: unknown = JSON.parse(text);
        if (!v || typeof v !== 'object' || Array.isArray(v)) return reject(new EndpointError(400, 'request body: must be a JSON object'));
        resolve(v as Record<string, unknown>);
      } catch (err) {
        reject(new EndpointError(400, `request body: not JSON: ${(err as Error).message}`));
      }
    });
  });
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A binary answer (a screenshot) with its media type. */
function sendBinary(res: ServerResponse, body: { mime: string; data: Buffer }): void {
  res.writeHead(200, { 'content-type': body.mime, 'content-length': body.data.length });
  res.end(body.data);
}

/** An HTTP error answer on a socket that asked for an Upgrade. */
function refuseUpgrade(socket: Duplex, code: number, message: string): void {
  const body = JSON.stringify({ message });
  socket.end(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

const ok = (r: { success: boolean; message: string }, what: string) => {
  if (!r.success) throw new EndpointError(500, `${what}: ${r.message || 'the launcher refused'}`);
  return {};
};

export async function startEndpoint(o: EndpointOptions): Promise<Endpoint> {
  const { host, port } = parseListen(o.listen);
  const addresses = Object.values(networkInterfaces()).flat().filter((a) => a && !a.internal).map((a) => a!.address);
  const advertised = advertisedHost(host, o.advertise, process.env.POD_IP, addresses);
  const pki = ensureEndpointPki(join(o.stateDir, 'endpoint-pki'), advertised);
  const auth = new EndpointAuth({ client: o.client, log: o.log, ...(o.authCacheMs !== undefined ? { cacheMs: o.authCacheMs } : {}) });
  const clientCa = await auth.loadClientCa();
  const log = o.log.child({ part: 'endpoint' });
  let ready = false;
  void o.controller.informer.hasSynced.then(() => { ready = true; });
  const metrics = new NodeAgentMetrics({
    view: { vmis: () => o.controller.informer.list(), launcherOf: (ns, name) => o.controller.launcherOf(ns, name), ready: () => ready },
    log: log.child({ part: 'metrics' }),
  });

  /** The caller of a request, or why there is none (401/503). */
  const authenticate = async (req: IncomingMessage): Promise<EndpointUser> => {
    let user: EndpointUser | undefined;
    try {
      user = await auth.authenticate(req);
    } catch (err) {
      if (err instanceof AuthUnavailableError) throw new EndpointError(503, `cannot authenticate the request: ${err.message}`);
      throw err;
    }
    if (!user) throw new EndpointError(401, 'Unauthorized: send the bearer token of your kubeconfig (Authorization: Bearer ...) or a client certificate signed by the cluster\'s client CA');
    return user;
  };

  /** GET /metrics: authenticated, authorized as a non-resource URL, then one scrape. */
  const serveMetrics = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new EndpointError(405, `${METRICS_PATH} is read-only: use GET`);
    const user = await authenticate(req);
    let d;
    try {
      d = await auth.authorizeNonResource(user, METRICS_PATH, 'get');
    } catch (err) {
      if (err instanceof AuthUnavailableError) throw new EndpointError(503, `cannot authorize the request: ${err.message}`);
      throw err;
    }
    if (!d.allowed) throw new EndpointError(403, `user "${user.name}" cannot get the non-resource URL ${METRICS_PATH}${d.reason ? `: ${d.reason}` : ''}`);
    const text = await metrics.scrape();
    res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  };

  /** Authenticates and authorizes a request for a route; returns the caller and the VMI's launcher. */
  const admit = async (req: IncomingMessage, route: Route, unsafe = false, authenticated?: EndpointUser): Promise<{ user: EndpointUser; vmi: VirtualMachineInstance; entry: LauncherEntry }> => {
    const user = authenticated ?? await authenticate(req);
    // KubeVirt's roles grant virtualmachineinstances/portforward with verb get (an attach, like console).
    const access = route.subresource === 'portforward' ? { verb: 'get' as const, subresource: route.subresource } : subresourceAccess(route.subresource, unsafe);
    let d;
    try {
      d = await auth.authorize(user, access, route.namespace, route.name);
    } catch (err) {
      if (err instanceof AuthUnavailableError) throw new EndpointError(503, `cannot authorize the request: ${err.message}`);
      throw err;
    }
    if (!d.allowed) {
      throw new EndpointError(403, `user "${user.name}" cannot ${describeAccess(access)} in namespace "${route.namespace}"${d.reason ? `: ${d.reason}` : ''}`);
    }
    const vmi = o.controller.informer.get(`${route.namespace}/${route.name}`);
    const entry = o.controller.launcherOf(route.namespace, route.name);
    if (!vmi || !entry || vmi.status?.phase !== VMIPhase.Running) throw new EndpointError(404, `VMI ${route.namespace}/${route.name} is not running on node ${o.nodeName}`);
    return { user, vmi, entry };
  };

  const command = async (route: Route, req: IncomingMessage, vmi: VirtualMachineInstance, entry: LauncherEntry): Promise<unknown> => {
    const c = entry.client;
    const status = entry.domain?.Status.Status;
    const ref = `VMI ${route.namespace}/${route.name}`;
    switch (route.subresource) {
      case 'pause':
        // Already paused as the VMI's Paused condition says (by its user, or on an I/O error): what
        // KubeVirt's virt-api answers 409 for. A domain paused for another reason (QEMU's -S start
        // not yet continued, as the node agent last heard it) is paused: the launcher runs this after
        // the start (its commands are serialised) and stops a running guest.
        if (pausedCondition(entry.domain)) throw new EndpointError(409, `${ref} is already paused`);
        return ok(await c.pauseVirtualMachine(vmi), 'pause');
      case 'unpause':
        if (status !== LifeCycle.Paused) throw new EndpointError(409, `${ref} is not paused`);
        return ok(await c.unpauseVirtualMachine(vmi), 'unpause');
      case 'freeze': {
        const body = await readJson(req);
        let seconds = 0;
        if (body?.unfreezeTimeout !== undefined) {
          if (typeof body.unfreezeTimeout !== 'string') throw new EndpointError(400, 'unfreezeTimeout: must be a duration string such as "5m"');
          try { seconds = parseDuration(body.unfreezeTimeout, 'unfreezeTimeout'); } catch { throw new EndpointError(400, `unfreezeTimeout: "${body.unfreezeTimeout}" is not a duration (examples: 30s, 5m)`); }
        }
        return ok(await c.freezeVirtualMachine(vmi, Math.round(seconds)), 'freeze');
      }
      case 'unfreeze': return ok(await c.unfreezeVirtualMachine(vmi), 'unfreeze');
      case 'reset': return ok(await c.resetVirtualMachine(vmi), 'reset');
      case 'softreboot': return ok(await c.softRebootVirtualMachine(vmi), 'softreboot');
      default: throw new EndpointError(404, `unknown command ${route.subresource}`);
    }
  };

  const info = async (route: Route, vmi: VirtualMachineInstance, entry: LauncherEntry): Promise<unknown> => {
    const agent = vmi.status?.conditions?.some((cnd) => cnd.type === 'AgentConnected' && cnd.status === 'True');
    if (!agent) throw new EndpointError(409, `VMI ${route.namespace}/${route.name} does not have the guest agent connected`);
    const c = entry.client;
    const [r, json] = route.subresource === 'guestosinfo'
      ? await c.getGuestInfo().then((x) => [x, x.guestInfoResponse] as const)
      : route.subresource === 'userlist'
        ? await c.getUsers().then((x) => [x, x.guestUserListResponse] as const)
        : await c.getFilesystems().then((x) => [x, x.guestFilesystemsResponse] as const);
    if (r.response && !r.response.success) throw new EndpointError(500, `${route.subresource}: ${r.response.message}`);
    return JSON.parse(json || '{}') as unknown;
  };

  /**
   * The display as the launcher's GetScreenshot took it (a PNG). Whether the VMI has a display is the
   * launcher's to say (virt-api has refused a VMI without one before it asks).
   */
  const screenshot = async (vmi: VirtualMachineInstance, entry: LauncherEntry): Promise<{ mime: string; data: Buffer }> => {
    const r = await entry.client.getScreenshot(vmi, { timeoutMs: 40_000 });
    if (r.response && !r.response.success) throw new EndpointError(500, `vnc/screenshot: ${r.response.message}`);
    return { mime: r.mime || 'application/octet-stream', data: r.data };
  };

  /** One reading of the VMI's figures: the launcher's GetDomainStats, as a /metrics scrape asks for it. */
  const usage = async (route: Route, entry: LauncherEntry): Promise<VmiUsageSample> => {
    const r = await entry.client.getDomainStats({ timeoutMs: 10_000 });
    if (r.response && !r.response.success) throw new EndpointError(503, `usage of VMI ${route.namespace}/${route.name}: ${r.response.message || 'the launcher refused'}`);
    if (!r.domainStats) throw new EndpointError(503, `usage of VMI ${route.namespace}/${route.name}: the launcher has no domain`);
    return usageSample(parseDomainStats(r.domainStats), Date.now());
  };

  const qmp = async (route: Route, req: IncomingMessage, log0: Logger): Promise<unknown> => {
    // Who asks is known before the body is read (an anonymous caller gets 401 with its body unread);
    // what they may do depends on the body ("unsafe"), so authorization comes after it.
    const caller = await authenticate(req);
    const body = await readJson(req);
    if (!body || typeof body.execute !== 'string' || !body.execute) throw new EndpointError(400, 'execute: Required: the QMP command to run, e.g. {"execute":"query-status"}');
    if (body.arguments !== undefined && (!body.arguments || typeof body.arguments !== 'object' || Array.isArray(body.arguments))) throw new EndpointError(400, 'arguments: must be a JSON object');
    const argsProblem = qmpArgumentsProblem(body.arguments);
    if (argsProblem) throw new EndpointError(400, argsProblem);
    if (body.unsafe !== undefined && typeof body.unsafe !== 'boolean') throw new EndpointError(400, 'unsafe: must be true or false');
    const unsafe = body.unsafe === true;
    const command = body.execute;
    const { user, vmi, entry } = await admit(req, route, unsafe, caller);
    const audit = forObject(log0, { namespace: route.namespace, name: route.name, uid: vmi.metadata?.uid }).child({ user: user.name, command, unsafe });
    const decision = passthroughDecision(command, unsafe, body.arguments as Record<string, unknown> | undefined);
    if (!decision.allowed) {
      audit.info({ outcome: 'refused', reason: decision.reason }, 'qmp call');
      throw new EndpointError(403, `${decision.reason}${unsafe ? '' : ' ("unsafe":true, which needs update on virtualmachineinstances/qmp-unsafe)'}`);
    }
    const client = new QmpPassthroughClient(await shortSocketPath(entry.paths.socket, o.controller.o.stateDir), { timeoutMs: 35_000 });
    try {
      const r = await client.execute(command, body.arguments as Record<string, unknown> | undefined, { unsafe, caller: `handler-endpoint:${user.name}`, timeoutSeconds: 30 });
      audit.info({ outcome: r.refused ? 'refused' : r.success ? 'ok' : r.errorClass ? 'qmp-error' : 'failed' }, 'qmp call');
      if (r.refused) throw new EndpointError(403, r.message);
      if (r.success) return { return: JSON.parse(r.returnJson || '{}') as unknown };
      if (r.errorClass) return { error: { class: r.errorClass, desc: r.message } };
      throw new EndpointError(503, `qmp ${command}: ${r.message}`);
    } finally {
      client.close();
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    if (path === METRICS_PATH) return serveMetrics(req, res);
    const route = routeOf(req.method ?? '', path);
    if (!route.ok) throw new EndpointError(route.code, route.message);
    const r = route.route;
    if (r.kind === 'stream') throw new EndpointError(400, `${r.subresource} is a byte stream: send Connection: Upgrade and Upgrade: ${STREAM_PROTOCOL}`);
    if (r.kind === 'qmp') return send(res, 200, await qmp(r, req, log));
    const { user, vmi, entry } = await admit(req, r);
    forObject(log, { namespace: r.namespace, name: r.name, uid: vmi.metadata?.uid }).info({ user: user.name, subresource: r.subresource }, 'subresource request');
    if (r.kind === 'screenshot') return sendBinary(res, await screenshot(vmi, entry));
    send(res, 200, r.kind === 'command' ? await command(r, req, vmi, entry) : r.kind === 'usage' ? await usage(r, entry) : await info(r, vmi, entry));
  };

  /** Attached console / VNC streams, one of each per VMI; closed with the endpoint. */
  const sessions = new StreamSessions();
  /** Port-forward streams (any number per VMI, as in KubeVirt); closed with the endpoint. */
  const tunnels = new Set<Duplex>();
  const forwards = new UsernetForwards();

  const portForward = async (req: IncomingMessage, socket: Duplex, head: Buffer, r: Route) => {
    const { user, vmi, entry } = await admit(req, r);
    const pf = r.portForward!;
    const target = portForwardTarget(vmi, pf);
    if (target.kind === 'refuse') throw new EndpointError(target.code, target.message);
    const vlog = forObject(log, { namespace: r.namespace, name: r.name, uid: vmi.metadata?.uid }).child({ user: user.name, subresource: 'portforward', port: pf.port, protocol: pf.protocol });
    const hmp = async (commandLine: string): Promise<string> => {
      const client = new QmpPassthroughClient(await shortSocketPath(entry.paths.socket, o.controller.o.stateDir), { timeoutMs: 15_000 });
      try {
        const res = await client.execute('human-monitor-command', { 'command-line': commandLine }, { unsafe: true, caller: `handler-endpoint:portforward:${user.name}`, timeoutSeconds: 10 });
        if (!res.success) throw new Error(`${commandLine}: ${res.message || res.errorClass || 'the launcher refused'}`);
        const out: unknown = JSON.parse(res.returnJson || '""');
        return typeof out === 'string' ? out : '';
      } finally {
        client.close();
      }
    };
    let link;
    try {
      link = await openGuestLink({
        target, vmiRef: `${r.namespace}/${r.name}`, hmp, forwards, log: vlog,
        launcherHasOwnNetns: async () => (await podNetns(entry.paths.podDir)) !== undefined,
      });
    } catch (err) {
      if (err instanceof PortForwardError) throw new EndpointError(err.code, err.message);
      throw err;
    }
    if (socket.destroyed) { link.close(); return; }
    vlog.info({ via: target.kind === 'dial' ? target.host : 'user-mode host forward' }, 'port-forward attached');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n\r\n`);
    tunnels.add(socket);
    socket.once('close', () => tunnels.delete(socket));
    link.join(socket, head);
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const route = routeOf(req.method ?? '', new URL(req.url ?? '/', 'https://x').pathname, req.headers.upgrade);
    if (!route.ok) return refuseUpgrade(socket, route.code, route.message);
    const r = route.route;
    if (r.kind !== 'stream') return refuseUpgrade(socket, 400, `${r.subresource} is not a byte stream`);
    if (r.subresource === 'portforward') return portForward(req, socket, head, r);
    const { user, vmi, entry } = await admit(req, r);
    const sessionKey = StreamSessions.key(vmi.metadata?.uid ?? `${r.namespace}/${r.name}`, r.subresource);
    const preserve = new URL(req.url ?? '/', 'https://x').searchParams.get('preserveSession') === 'true';
    if (r.subresource === 'vnc' && preserve && sessions.inUse(sessionKey)) throw new EndpointError(503, 'Active VNC connection. Request denied.');
    const file = r.subresource === 'vnc' ? ConsoleFile.VNC : ConsoleFile.Serial;
    const path = await shortSocketPath(join(entry.paths.privateVmiDir, file), o.controller.o.stateDir);
    const target = connect(path);
    let connected = false;
    // The previous session of this VMI's console / VNC ends here, before QEMU sees the new client.
    sessions.take(sessionKey, socket);
    target.once('error', (err) => {
      if (!connected) refuseUpgrade(socket, 503, `${r.subresource} of VMI ${r.namespace}/${r.name}: cannot connect to ${file}: ${err.message}`);
      else socket.destroy();
    });
    target.once('close', () => { if (connected) socket.destroy(); });
    target.once('connect', () => {
      connected = true;
      forObject(log, { namespace: r.namespace, name: r.name, uid: vmi.metadata?.uid }).info({ user: user.name, subresource: r.subresource }, 'stream attached');
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${STREAM_PROTOCOL}\r\n\r\n`);
      if (head.length) target.write(head);
      socket.pipe(target).pipe(socket);
    });
    socket.once('close', () => target.destroy());
    socket.once('error', () => target.destroy());
  };

  const server: Server = createServer({
    key: pki.key, cert: pki.cert,
    // Client certificates are optional and checked against the cluster's client CA.
    requestCert: clientCa !== undefined, rejectUnauthorized: false, ...(clientCa ? { ca: clientCa } : {}),
  }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const code = err instanceof EndpointError ? err.code : 500;
      if (code >= 500) log.warn({ url: req.url, err: (err as Error).message }, 'subresource request failed');
      // The rest of an oversized body is never read: the connection ends with the answer.
      if (code === 413) res.setHeader('connection', 'close');
      if (!res.headersSent) send(res, code, { message: (err as Error).message });
      else res.end();
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    onUpgrade(req, socket, head).catch((err: unknown) => {
      const code = err instanceof EndpointError ? err.code : 500;
      if (code >= 500) log.warn({ url: req.url, err: (err as Error).message }, 'stream request failed');
      refuseUpgrade(socket, code, (err as Error).message);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`subresource endpoint: cannot listen on ${o.listen} (--listen): ${err.message}`)));
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  const url = endpointUrl(advertised, bound);
  await o.client.patch(Resources.nodes, undefined, o.nodeName, { metadata: { annotations: { [HANDLER_ENDPOINT_ANNOTATION]: url, [HANDLER_CA_ANNOTATION]: Buffer.from(pki.caCert).toString('base64') } } }, 'strategic');
  log.info({ url, listen: o.listen, clientCertificates: clientCa !== undefined }, 'subresource endpoint listening');
  return {
    url, port: bound, caCert: pki.caCert,
    close: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
      sessions.closeAll();
      for (const t of tunnels) t.destroy();
      tunnels.clear();
    }),
  };
}

// KubeVirt's virt-api subresource routes (`subresources.kubevirt.io`, pkg/virt-api/rest), served for
// KubeVirt's own virtctl and anything else built on that API. One app, two front doors:
//   - a real cluster: behind an APIService, kube-apiserver proxies the user's request with the
//     user's identity in request headers (aggregated-server.ts authenticates the proxy);
//   - the local mode: the embedded API server serves the group itself and hands the request here
//     with the user it authenticated.
// Either way the caller's identity is authorized with a SubjectAccessReview on the subresource, as
// virt-api's authorizer does, before anything happens. Then, as virt-api:
//   VM start/stop/restart     → test-guarded JSON patches of the VM (lifecycle.ts), 202
//   VM migrate                → a VirtualMachineInstanceMigration, 202
//   VM/VMI add/removevolume   → the volume request patch (volumes.ts), 202
//   VM memorydump/removememorydump → the VM's status.memoryDumpRequest (memory-dump.ts), 202
//   VM expand-spec, expand-vm-spec → the VM with its instance type and preference expanded into the
//                               template (src/api/instancetype/expand.ts), 200
//   VMI pause/unpause/freeze/unfreeze/reset/softreboot → the node agent of the VMI's node, 200
//   VMI guestosinfo/userlist/filesystemlist            → the node agent, its JSON answer
//   VMI vnc/screenshot        → the node agent's PNG (the launcher's GetScreenshot), as it came
//   VM/VMI evacuate/cancel    → the VMI's evacuation mark removed (test-guarded JSON patch), 200
//   VM/VMI objectgraph        → the objects it depends on (src/api/object-graph.ts; feature gate ObjectGraph), 200
//   VMI console/vnc, VM/VMI portforward (websocket, plain.kubevirt.io) → the node agent's byte stream
// The node agent is reached as virt-api reaches virt-handler: with virt-api's own credentials
// (this process's client); the node agent authorizes those in turn.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { WebSocketServer, createWebSocketStream, type WebSocket } from 'ws';
import pkg from '../../package.json' with { type: 'json' };
import { HANDLER_STREAM_PROTOCOL, LAUNCHER_POD_SELECTOR, VMIConditionType, VMIPhase } from '../api/constants.ts';
import { hasVmiCondition } from '../api/vmi-conditions.ts';
import type { AddVolumeOptions, RemoveVolumeOptions, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineVolumeRequest } from '../api/types.ts';
import { VolumeRequestError } from '../api/volume-requests.ts';
import { HandlerEndpoint, type ClusterAccess } from '../kube/handler-endpoint.ts';
import { isFailedPatchTest, isNotFound, KubeApiError, type KubeClient, type KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { forObject, type Logger } from '../log/logger.ts';
import { planRestart, planStart, planStop, type LifecyclePlan, type PatchStep } from './lifecycle.ts';
import { serverVersion } from '../version/server-version.ts';
import * as E from './status-error.ts';
import { StatusError, KubeVirtResource } from './status-error.ts';
import { accessOf, apiGroup, apiGroupList, apiResourceList, needsAuthorization, routeOf, type ResourceAttributes, type SubresourceRoute } from './subresource-routes.ts';
import { checkVmiSubresource, type VmiSubresource } from './vmi-preconditions.ts';
import { memoryDumpClaimName, planMemoryDump, planRemoveMemoryDump, MemoryDumpMessages, type MemoryDumpClaim, type MemoryDumpPlan } from './memory-dump.ts';
import { volumeRequestPatch, type VolumeTarget } from './volumes.ts';
import { DatagramDeframer, frameDatagram } from '../net/datagram-frames.ts';
import { defaultClusterConfig, FeatureGate, isFeatureGateEnabled, type ClusterConfig } from '../api/cluster-config.ts';
import type { LabelSelector } from '../api/label-selector.ts';
import { evacuateCancelPatch, evacuateCancelRefusal, evacuationNodeOf, type TaintedNode } from '../api/eviction.ts';
import { launcherPodOf, virtualMachineInstanceObjectGraph, virtualMachineObjectGraph, type ObjectGraphOptions } from '../api/object-graph.ts';
import { DefaultingError } from '../api/defaults.ts';
import { formatFieldError } from '../api/field-error.ts';
import { parseVirtualMachine } from '../api/parse.ts';
import { ConflictsError } from '../api/instancetype/conflict.ts';
import { expandVirtualMachine } from '../api/instancetype/expand.ts';
import { findInstancetypeSpec, findPreferenceSpec, InstancetypeFindError } from '../api/instancetype/find.ts';
import { fetchInstancetypeSource } from '../kube/instancetype-source.ts';

/** Who is calling, as authenticated by the front door. */
export interface RequestUser {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface AccessVerdict { readonly allowed: boolean; readonly reason?: string }

export interface SubresourceApiOptions {
  /** virt-api's own client: reads VMs and VMIs, sends patches, creates migrations, calls node agents. */
  readonly client: KubeClient;
  /** The cluster configuration in force (expand-spec defaults the template with it); default: KubeVirt's defaults. */
  readonly config?: () => ClusterConfig;
  /** A SubjectAccessReview for the caller. */
  readonly authorize: (user: RequestUser, attrs: ResourceAttributes) => Promise<AccessVerdict>;
  readonly log: Logger;
}

export interface SubresourceApi {
  /** Serves one plain HTTP request of the group (never rejects: errors are written as a Status). */
  handle(req: IncomingMessage, res: ServerResponse, user: RequestUser | undefined): Promise<void>;
  /** Serves one Upgrade request of the group: a websocket bridged to the node agent's stream. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, user: RequestUser | undefined): Promise<void>;
  close(): void;
}

const MAX_BODY = 1024 * 1024;
const UNMARSHAL = 'Can not unmarshal Request body to struct, error: ';
const VERSION = serverVersion(pkg.version);

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) { reject(new StatusError(413, 'RequestEntityTooLarge', `the request body is larger than ${MAX_BODY} bytes`)); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('error', reject);
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      if (!text) return resolve(undefined);
      try { resolve(JSON.parse(text)); } catch (err) { reject(E.badRequest(`${UNMARSHAL}${(err as Error).message}`)); }
    });
  });
}

/** The API server's own message of a failed call (its Status), without the client's method and path. */
function kubeMessage(err: unknown): string {
  if (err instanceof KubeApiError) {
    const m = (err.status as { message?: unknown } | undefined)?.message;
    if (typeof m === 'string' && m) return m;
  }
  return (err as Error)?.message ?? String(err);
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A request body that must be an object (or absent); `field: reason` otherwise. */
function objectBody(v: unknown, what: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw E.badRequest(`${UNMARSHAL}${what}: must be a JSON object`);
  return v;
}

/** `dryRun: ["All"]` as metav1 options carry it. */
function dryRunOf(body: Record<string, unknown>): boolean {
  const d = body.dryRun;
  if (d === undefined || d === null) return false;
  if (!Array.isArray(d) || d.some((x) => typeof x !== 'string')) throw E.badRequest(`${UNMARSHAL}dryRun: must be a list of strings, e.g. ["All"]`);
  if (d.some((x) => x !== 'All')) throw E.badRequest(`dryRun: unsupported value(s) ${JSON.stringify(d)}: only "All" is supported`);
  return d.length > 0;
}

function optionalInt(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw E.badRequest(`${UNMARSHAL}${field}: must be an integer`);
  return v;
}

function send(res: ServerResponse, code: number, body?: unknown): void {
  if (body === undefined) { res.writeHead(code, { 'Content-Length': '0' }).end(); return; }
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

/** A binary answer (a screenshot) with the media type it came with. */
function sendBinary(res: ServerResponse, body: { contentType: string; data: Buffer }): void {
  res.writeHead(200, { 'Content-Type': body.contentType || 'application/octet-stream', 'Content-Length': body.data.length }).end(body.data);
}

/** An HTTP error answer on a socket that asked for an Upgrade (virtctl reads the Status from it). */
export function refuseUpgrade(socket: Duplex, err: StatusError): void {
  const body = JSON.stringify(err.toStatus());
  if (socket.destroyed) return;
  socket.end(`HTTP/1.1 ${err.code} ${STATUS_CODES[err.code] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** A StatusError for anything thrown while serving. */
function asStatus(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  return E.internalError((err as Error)?.message ?? String(err));
}

type SubRoute = Extract<SubresourceRoute, { kind: 'subresource' }>;

export function subresourceApi(o: SubresourceApiOptions): SubresourceApi {
  const log = o.log;
  const client = o.client;
  const config = o.config ?? defaultClusterConfig;
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    // virtctl asks for plain.kubevirt.io (binary frames carry the stream's bytes).
    handleProtocols: (protocols) => (protocols.has(HANDLER_STREAM_PROTOCOL) ? HANDLER_STREAM_PROTOCOL : false),
  });

  const ctxFor = (namespace: string): ClusterAccess => ({ client, namespace, server: client.kc.getCurrentCluster()?.server ?? '' });

  async function getVm(ns: string, name: string): Promise<VirtualMachine> {
    try {
      return await client.get<VirtualMachine & KubeObject>(Resources.virtualMachines, ns, name);
    } catch (err) {
      if (isNotFound(err)) throw E.notFound(KubeVirtResource.VirtualMachine, name);
      throw E.internalError(`unable to retrieve vm [${name}]: ${kubeMessage(err)}`);
    }
  }
  async function findVmi(ns: string, name: string): Promise<VirtualMachineInstance | undefined> {
    try {
      return await client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, ns, name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw E.internalError(`unable to retrieve vmi [${name}]: ${kubeMessage(err)}`);
    }
  }
  async function getVmi(ns: string, name: string): Promise<VirtualMachineInstance> {
    const vmi = await findVmi(ns, name);
    if (!vmi) throw E.notFound(KubeVirtResource.VirtualMachineInstance, name);
    return vmi;
  }
  /** FetchVirtualMachineInstanceForVM: the VM must exist and have started its VMI. */
  async function vmiOfVm(ns: string, name: string): Promise<VirtualMachineInstance> {
    const vm = await getVm(ns, name);
    if (!vm.status?.created) throw E.conflict(KubeVirtResource.VirtualMachine, name, 'VMI is not started');
    const vmi = await getVmi(ns, name);
    if (!vmi.metadata?.ownerReferences?.some((ref) => ref.uid === vm.metadata?.uid)) throw E.internalError(`unable to retrieve vmi [${name}] for vm: it is not the VM's`);
    return vmi;
  }

  /** Sends a lifecycle plan's patches (VM, VM status, VMI), as virt-api does; a failed `test` is a Conflict. */
  async function applyPlan(ns: string, name: string, plan: LifecyclePlan, dryRun: boolean, vmi: VirtualMachineInstance | undefined): Promise<void> {
    if (plan.kind === 'refused') {
      throw plan.code === 409 ? E.conflict(KubeVirtResource.VirtualMachine, name, plan.message) : plan.code === 400 ? E.badRequest(plan.message) : E.internalError(plan.message);
    }
    for (const step of plan.steps) await applyStep(ns, name, step, dryRun, vmi);
  }
  async function applyStep(ns: string, name: string, step: PatchStep, dryRun: boolean, vmi: VirtualMachineInstance | undefined): Promise<void> {
    try {
      if (step.target === 'vmi') await client.patch(Resources.virtualMachineInstances, ns, vmi?.metadata?.name ?? name, step.ops, 'json', undefined, { dryRun });
      else if (step.target === 'vm-status') await client.patch(Resources.virtualMachines, ns, name, step.ops, 'json', 'status', { dryRun });
      else await client.patch(Resources.virtualMachines, ns, name, step.ops, 'json', undefined, { dryRun });
    } catch (err) {
      if (isFailedPatchTest(err) || (err instanceof KubeApiError && err.code === 409)) {
        throw E.conflict(step.target === 'vmi' ? KubeVirtResource.VirtualMachineInstance : KubeVirtResource.VirtualMachine, name, `jsonpatch test operation does not apply: ${kubeMessage(err)}`);
      }
      throw E.internalError(kubeMessage(err));
    }
  }

  /** The node agent of the VMI's node, reached with virt-api's credentials. */
  async function nodeAgent(vmi: VirtualMachineInstance): Promise<HandlerEndpoint> {
    try {
      return await HandlerEndpoint.forVmi(ctxFor(vmi.metadata?.namespace ?? ''), vmi);
    } catch (err) {
      throw E.internalError(`Cannot prepare connection ${(err as Error).message}`);
    }
  }
  /** One call to the VMI's node agent; a failed call answers 500 with its message. */
  async function viaNodeAgent<T>(vmi: VirtualMachineInstance, call: (ep: HandlerEndpoint) => Promise<T>): Promise<T> {
    const ep = await nodeAgent(vmi);
    try {
      return await call(ep);
    } catch (err) {
      throw E.internalError((err as Error).message);
    }
  }
  const callNodeAgent = <T>(vmi: VirtualMachineInstance, method: 'GET' | 'PUT', sub: string, body?: unknown): Promise<T> =>
    viaNodeAgent(vmi, (ep) => ep.call<T>(method, sub, body));

  const vmiCheck = (sub: VmiSubresource, vmi: VirtualMachineInstance) => {
    const refusal = checkVmiSubresource(sub, vmi);
    if (!refusal) return;
    const name = vmi.metadata?.name ?? '';
    throw refusal.code === 409 ? E.conflict(KubeVirtResource.VirtualMachineInstance, name, refusal.message)
      : refusal.code === 403 ? E.forbidden(KubeVirtResource.VirtualMachineInstance, name, refusal.message)
        : E.badRequest(refusal.message);
  };

  /** guestosinfo/userlist/filesystemlist: Running, with the guest agent connected (GuestOSInfo's validate). */
  const agentCheck = (vmi: VirtualMachineInstance) => {
    const name = vmi.metadata?.name ?? '';
    if (vmi.status?.phase !== VMIPhase.Running) throw E.conflict(KubeVirtResource.VirtualMachineInstance, name, 'VMI is not running');
    if (!hasVmiCondition(vmi, VMIConditionType.AgentConnected)) throw E.conflict(KubeVirtResource.VirtualMachineInstance, name, 'VMI does not have guest agent connected');
  };

  async function volumeRequest(r: SubRoute, body: unknown): Promise<void> {
    if (body === undefined) throw E.badRequest('Request with no body, a new name is expected as the request body');
    const b = objectBody(body, 'body');
    const add = r.subresource === 'addvolume';
    if (typeof b.name !== 'string' || !b.name) throw E.badRequest(`${add ? 'AddVolumeOptions' : 'RemoveVolumeOptions'} requires name to be set`);
    if (add && !isObject(b.disk)) throw E.badRequest('AddVolumeOptions requires disk to not be nil');
    if (add && !isObject(b.volumeSource)) throw E.badRequest('AddVolumeOptions requires VolumeSource to not be nil');
    const dryRun = dryRunOf(b);
    let request: VirtualMachineVolumeRequest;
    if (add) {
      // As virt-api: the disk takes the request's name, and the volume source is hotpluggable.
      const opts = b as unknown as AddVolumeOptions;
      const source = opts.volumeSource as { dataVolume?: { hotpluggable?: boolean }; persistentVolumeClaim?: { hotpluggable?: boolean } };
      if (source.dataVolume) source.dataVolume.hotpluggable = true;
      else if (source.persistentVolumeClaim) source.persistentVolumeClaim.hotpluggable = true;
      request = { addVolumeOptions: { ...opts, disk: { ...opts.disk, name: opts.name } } };
    } else {
      request = { removeVolumeOptions: b as unknown as RemoveVolumeOptions };
    }
    let t: VolumeTarget;
    if (r.resource === 'virtualmachines') t = { kind: 'vm', vm: await getVm(r.namespace, r.name) };
    else t = { kind: 'vmi', vmi: await getVmi(r.namespace, r.name) };
    const kind = t.kind === 'vm' ? KubeVirtResource.VirtualMachine : KubeVirtResource.VirtualMachineInstance;
    let p;
    try {
      p = volumeRequestPatch(t, request);
    } catch (err) {
      if (err instanceof VolumeRequestError) throw /is owned by a VM/.test(err.message) ? E.badRequest(err.message) : E.conflict(kind, r.name, err.message);
      throw err;
    }
    try {
      // A VM's request goes into its status; a VMI's straight into its spec (volumes.ts).
      if (t.kind === 'vm') await client.patch(Resources.virtualMachines, r.namespace, r.name, p.ops, 'json', 'status', { dryRun });
      else await client.patch(Resources.virtualMachineInstances, r.namespace, r.name, p.ops, 'json', undefined, { dryRun });
    } catch (err) {
      if (err instanceof KubeApiError && err.code < 500) throw E.conflict(kind, r.name, kubeMessage(err));
      throw E.internalError(`unable to patch ${t.kind}: ${kubeMessage(err)}`);
    }
  }

  /** memorydump / removememorydump: the VM's status.memoryDumpRequest, test-guarded (memory-dump.ts). */
  async function memoryDumpRequest(r: SubRoute, req: IncomingMessage): Promise<void> {
    let plan: MemoryDumpPlan;
    if (r.subresource === 'memorydump') {
      const body = await readBody(req);
      if (body === undefined) throw E.badRequest(MemoryDumpMessages.noBody);
      const b = objectBody(body, 'VirtualMachineMemoryDumpRequest');
      if (b.claimName !== undefined && b.claimName !== null && typeof b.claimName !== 'string') throw E.badRequest(`${UNMARSHAL}claimName: must be a string`);
      const vm = await getVm(r.namespace, r.name);
      const claimName = memoryDumpClaimName(vm, typeof b.claimName === 'string' ? b.claimName : undefined);
      plan = planMemoryDump({
        vm,
        vmi: await findVmi(r.namespace, r.name),
        claim: claimName ? await findClaim(r.namespace, claimName) : undefined,
        claimName: typeof b.claimName === 'string' ? b.claimName : undefined,
      });
    } else {
      plan = planRemoveMemoryDump(await getVm(r.namespace, r.name));
    }
    if (!plan.ok) throw plan.error;
    try {
      await client.patch(Resources.virtualMachines, r.namespace, r.name, plan.ops, 'json', 'status');
    } catch (err) {
      if (isFailedPatchTest(err) || (err instanceof KubeApiError && err.code === 409)) throw E.conflict(KubeVirtResource.VirtualMachine, r.name, `jsonpatch test operation does not apply: ${kubeMessage(err)}`);
      if (err instanceof KubeApiError && err.code === 422) throw new StatusError(422, 'Invalid', kubeMessage(err));
      throw E.internalError(`unable to patch vm status: ${kubeMessage(err)}`);
    }
  }
  async function findClaim(ns: string, name: string): Promise<MemoryDumpClaim | undefined> {
    try {
      return await client.get<MemoryDumpClaim & KubeObject>(Resources.persistentVolumeClaims, ns, name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw E.internalError(`unable to retrieve pvc [${name}]: ${kubeMessage(err)}`);
    }
  }

  /**
   * handleObjectGraph's checks before the graph: the feature gate (400 without it), then the body,
   * `ObjectGraphOptions` (virtctl sends it on the GET; none is KubeVirt's defaults).
   */
  async function objectGraphRequest(req: IncomingMessage): Promise<ObjectGraphOptions> {
    if (!isFeatureGateEnabled(config(), FeatureGate.ObjectGraph)) throw E.badRequest('ObjectGraph feature gate not enabled: Unable to return object graph.');
    const b = objectBody(await readBody(req), 'ObjectGraphOptions');
    if (b.includeOptionalNodes !== undefined && b.includeOptionalNodes !== null && typeof b.includeOptionalNodes !== 'boolean') throw E.badRequest(`${UNMARSHAL}includeOptionalNodes: must be true or false`);
    const sel = b.labelSelector;
    if (sel !== undefined && sel !== null && (!isObject(sel) || (sel.matchLabels !== undefined && sel.matchLabels !== null && (!isObject(sel.matchLabels) || Object.values(sel.matchLabels).some((v) => typeof v !== 'string'))) || (sel.matchExpressions !== undefined && sel.matchExpressions !== null && !Array.isArray(sel.matchExpressions)))) {
      throw E.badRequest(`${UNMARSHAL}labelSelector: must be a label selector (matchLabels: names to strings, matchExpressions: a list)`);
    }
    return { ...(typeof b.includeOptionalNodes === 'boolean' ? { includeOptionalNodes: b.includeOptionalNodes } : {}), ...(isObject(sel) ? { labelSelector: sel as LabelSelector } : {}) };
  }
  /**
   * EvacuateCancelHandler: refused while the node carries the drain taint (which evacuates every VMI
   * on it); a VMI not marked is answered 200 as it is; else the mark is removed, if it still names the
   * node the caller saw (`EvacuateCancelOptions.evacuationNodeName`: newer virtctls send the VMI's node).
   */
  async function evacuateCancel(vmi: VirtualMachineInstance, body: unknown): Promise<void> {
    const taintKey = config().migrations.nodeDrainTaintKey;
    if (taintKey) {
      const nodeName = evacuationNodeOf(vmi);
      let node: KubeObject & TaintedNode;
      try {
        node = await client.get<KubeObject & TaintedNode>(Resources.nodes, undefined, nodeName);
      } catch (err) {
        throw E.internalError(kubeMessage(err));
      }
      const refusal = evacuateCancelRefusal(nodeName, node, taintKey);
      if (refusal) throw E.badRequest(refusal);
    }
    if (!vmi.status?.evacuationNodeName) return;
    const b = objectBody(body, 'EvacuateCancelOptions');
    if (b.evacuationNodeName !== undefined && b.evacuationNodeName !== null && typeof b.evacuationNodeName !== 'string') throw E.badRequest(`${UNMARSHAL}evacuationNodeName: must be a string`);
    const dryRun = dryRunOf(b);
    // virtctl v1.9.0 sends no node (KubeVirt's own virt-api then fails its test against ""; virtctl
    // sends the VMI's node since kubevirt/kubevirt 990aae3): none means the mark as read here.
    const expected = typeof b.evacuationNodeName === 'string' && b.evacuationNodeName !== '' ? b.evacuationNodeName : vmi.status.evacuationNodeName;
    try {
      await client.patch(Resources.virtualMachineInstances, vmi.metadata?.namespace, vmi.metadata?.name ?? '', evacuateCancelPatch(expected), 'json', undefined, { dryRun });
    } catch (err) {
      throw E.internalError(kubeMessage(err));
    }
  }
  /** The launcher pod of VMI `name` (getLauncherPodNode); a failed list is virt-api's own error (500). */
  async function launcherPodName(ns: string, name: string): Promise<string | undefined> {
    try {
      const pods = await client.list<KubeObject>(Resources.pods, { namespace: ns, labelSelector: LAUNCHER_POD_SELECTOR });
      return launcherPodOf(pods.items, name);
    } catch (err) {
      throw E.internalError(kubeMessage(err));
    }
  }

  /** The answer of one VM/VMI route (plain HTTP): status code and body. */
  async function serve(r: SubRoute, req: IncomingMessage): Promise<{ code: number; body?: unknown; binary?: { contentType: string; data: Buffer } }> {
    const ns = r.namespace;
    const name = r.name;
    if (r.support === 'unsupported') throw E.notImplemented(`${r.resource}/${r.subresource} is not supported by qvirt`);
    if (r.resource === 'virtualmachines') {
      switch (r.subresource) {
        case 'start': {
          const b = objectBody(await readBody(req), 'StartOptions');
          if (b.paused !== undefined && typeof b.paused !== 'boolean') throw E.badRequest(`${UNMARSHAL}paused: must be true or false`);
          const dryRun = dryRunOf(b);
          const vm = await getVm(ns, name);
          const vmi = await findVmi(ns, name);
          await applyPlan(ns, name, planStart(vm, vmi, { paused: b.paused === true }), dryRun, vmi);
          return { code: 202 };
        }
        case 'stop': {
          const b = objectBody(await readBody(req), 'StopOptions');
          const dryRun = dryRunOf(b);
          const gracePeriod = optionalInt(b, 'gracePeriod');
          const vm = await getVm(ns, name);
          const vmi = await findVmi(ns, name);
          await applyPlan(ns, name, planStop(vm, vmi, { gracePeriod }), dryRun, vmi);
          return { code: 202 };
        }
        case 'restart': {
          const b = objectBody(await readBody(req), 'RestartOptions');
          const dryRun = dryRunOf(b);
          const gracePeriodSeconds = optionalInt(b, 'gracePeriodSeconds');
          const vm = await getVm(ns, name);
          const vmi = await findVmi(ns, name);
          await applyPlan(ns, name, planRestart(vm, vmi, { gracePeriodSeconds }), dryRun, vmi);
          return { code: 202 };
        }
        case 'migrate': {
          const b = objectBody(await readBody(req), 'MigrateOptions');
          const dryRun = dryRunOf(b);
          const sel = b.addedNodeSelector;
          if (sel !== undefined && sel !== null && (!isObject(sel) || Object.values(sel).some((v) => typeof v !== 'string'))) throw E.badRequest(`${UNMARSHAL}addedNodeSelector: must map label names to strings`);
          await getVm(ns, name);
          const vmi = await getVmi(ns, name);
          if (vmi.status?.phase !== VMIPhase.Running) throw E.conflict(KubeVirtResource.VirtualMachine, name, 'VM is not running');
          const migration = {
            apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration',
            metadata: { generateName: 'kubevirt-migrate-vm-', namespace: ns },
            spec: { vmiName: name, ...(isObject(sel) && Object.keys(sel).length ? { addedNodeSelector: sel as Record<string, string> } : {}) },
          } as VirtualMachineInstanceMigration & KubeObject;
          try {
            await client.create(Resources.virtualMachineInstanceMigrations, migration, { dryRun });
          } catch (err) {
            throw E.internalError(kubeMessage(err));
          }
          return { code: 202 };
        }
        case 'addvolume':
        case 'removevolume':
          await volumeRequest(r, await readBody(req));
          return { code: 202 };
        case 'memorydump':
        case 'removememorydump':
          await memoryDumpRequest(r, req);
          return { code: 202 };
        case 'evacuate/cancel':
          await evacuateCancel(await vmiOfVm(ns, name), await readBody(req));
          return { code: 200 };
        case 'objectgraph': {
          const options = await objectGraphRequest(req);
          const vm = await getVm(ns, name);
          return { code: 200, body: virtualMachineObjectGraph(vm, await launcherPodName(ns, name), options) };
        }
        case 'expand-spec':
          // ExpandSpecVMRequestHandler: a failure to expand a stored VM is virt-api's own (500).
          return { code: 200, body: await expand(await getVm(ns, name), E.internalError) };
      }
      throw E.pathNotFound(`${r.resource}/${r.subresource}`);
    }
    switch (r.subresource) {
      case 'pause':
      case 'unpause': {
        const b = objectBody(await readBody(req), r.subresource === 'pause' ? 'PauseOptions' : 'UnpauseOptions');
        const dryRun = dryRunOf(b);
        if (r.subresource === 'unpause') {
          const vm = await getVm(ns, name).catch((err: unknown) => { if (err instanceof StatusError && err.code === 404) return undefined; throw err; });
          if (vm?.status?.snapshotInProgress) throw E.conflict(KubeVirtResource.VirtualMachine, name, 'VM snapshot is in progress');
        }
        const vmi = await getVmi(ns, name);
        vmiCheck(r.subresource, vmi);
        if (!dryRun) await callNodeAgent(vmi, 'PUT', r.subresource);
        return { code: 200 };
      }
      case 'freeze': {
        const b = objectBody(await readBody(req), 'FreezeUnfreezeTimeout');
        const vmi = await getVmi(ns, name);
        vmiCheck('freeze', vmi);
        // virtctl sends the timeout as a Go duration string ("5m0s"); the node agent takes the same.
        await callNodeAgent(vmi, 'PUT', 'freeze', b.unfreezeTimeout !== undefined ? { unfreezeTimeout: b.unfreezeTimeout } : undefined);
        return { code: 200 };
      }
      case 'unfreeze':
      case 'softreboot': {
        const vmi = await getVmi(ns, name);
        vmiCheck(r.subresource, vmi);
        await callNodeAgent(vmi, 'PUT', r.subresource);
        return { code: 200 };
      }
      case 'reset': {
        const vmi = await getVmi(ns, name);
        try {
          await callNodeAgent(vmi, 'PUT', 'reset');
        } catch (err) {
          if (vmi.status?.phase !== VMIPhase.Running) throw E.internalError(`Failed to reset non-running VMI with phase ${vmi.status?.phase ?? ''}: ${(err as Error).message}`);
          throw err;
        }
        return { code: 200 };
      }
      case 'guestosinfo':
      case 'userlist':
      case 'filesystemlist': {
        const vmi = await getVmi(ns, name);
        agentCheck(vmi);
        return { code: 200, body: await callNodeAgent(vmi, 'GET', r.subresource) };
      }
      case 'evacuate/cancel':
        await evacuateCancel(await getVmi(ns, name), await readBody(req));
        return { code: 200 };
      case 'vnc/screenshot': {
        // ScreenshotRequestHandler: the node agent's PNG, passed on as it is (virtctl's moveCursor is
        // not sent on: KubeVirt's virt-handler does not read it either).
        const vmi = await getVmi(ns, name);
        vmiCheck('vnc/screenshot', vmi);
        return { code: 200, binary: await viaNodeAgent(vmi, (ep) => ep.getBinary('vnc/screenshot')) };
      }
      case 'objectgraph': {
        const options = await objectGraphRequest(req);
        const vmi = await getVmi(ns, name);
        return { code: 200, body: virtualMachineInstanceObjectGraph(vmi, await launcherPodName(ns, name), options) };
      }
      case 'addvolume':
      case 'removevolume':
        await volumeRequest(r, await readBody(req));
        return { code: 202 };
    }
    if (r.stream) throw E.badRequest(`${r.subresource} is a websocket stream: connect with a websocket (subprotocol ${HANDLER_STREAM_PROTOCOL})`);
    throw E.pathNotFound(`${r.resource}/${r.subresource}`);
  }

  /** The VM with its instance type and preference expanded into the template (`expand.Expand`); `fail` makes the error's Status. */
  async function expand(vm: VirtualMachine, fail: (message: string) => StatusError): Promise<VirtualMachine> {
    if (!vm.spec.instancetype && !vm.spec.preference) return vm;
    let source;
    try {
      source = await fetchInstancetypeSource(client, vm);
    } catch (err) {
      throw E.internalError(kubeMessage(err));
    }
    try {
      return expandVirtualMachine(vm, findInstancetypeSpec(vm, source), findPreferenceSpec(vm, source), config());
    } catch (err) {
      if (err instanceof InstancetypeFindError || err instanceof ConflictsError || err instanceof DefaultingError) throw fail(err.message);
      throw err;
    }
  }

  /** ExpandSpecRequestHandler: a VirtualMachine in the body, in the request's namespace, expanded (failures: 400). */
  async function expandVmSpec(ns: string, body: unknown): Promise<VirtualMachine> {
    if (body === undefined) throw E.badRequest('empty request body');
    if (!isObject(body)) throw E.badRequest(`${UNMARSHAL}json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type map[string]interface {}`);
    const parsed = parseVirtualMachine(body);
    if (!parsed.value) throw E.badRequest('Object is not a valid VirtualMachine', parsed.errors.map(formatFieldError));
    const vm = parsed.value;
    const vmNs = vm.metadata?.namespace ?? '';
    if (vmNs !== '' && vmNs !== ns) throw E.badRequest(`VM namespace must be empty or ${ns}`);
    vm.metadata = { ...(vm.metadata ?? {}), namespace: ns };
    return expand(vm, E.badRequest);
  }

  /** Authorizes the caller for a route that needs it (403 with the reason otherwise). */
  async function authorize(route: SubresourceRoute, method: string, user: RequestUser | undefined): Promise<void> {
    if (!needsAuthorization(route)) return;
    if (!user) throw E.unauthorized('Unauthorized: the request carries no authenticated user');
    const attrs = accessOf(route, method)!;
    let verdict: AccessVerdict;
    try {
      verdict = await o.authorize(user, attrs);
    } catch (err) {
      throw E.internalError(`cannot authorize the request: ${(err as Error).message}`);
    }
    if (!verdict.allowed) {
      const sub = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
      throw E.forbiddenRequest(`User "${user.name}" cannot ${attrs.verb} resource "${sub}" in API group "${attrs.group}"${attrs.name ? ` ("${attrs.name}")` : ''} in the namespace "${attrs.namespace}"${verdict.reason ? `: ${verdict.reason}` : ''}`);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, user: RequestUser | undefined): Promise<void> {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'https://virt-api').pathname;
    try {
      const rr = routeOf(method, path);
      if (!rr.ok) throw new StatusError(rr.code, rr.code === 404 ? 'NotFound' : rr.code === 405 ? 'MethodNotAllowed' : 'BadRequest', rr.message);
      const route = rr.route;
      await authorize(route, method, user);
      switch (route.kind) {
        case 'group-list': return send(res, 200, apiGroupList());
        case 'group': return send(res, 200, apiGroup());
        case 'resource-list': return send(res, 200, apiResourceList(route.version));
        case 'version': return send(res, 200, VERSION);
        case 'healthz': return send(res, 200, 'ok');
        case 'guestfs': throw E.notImplemented('guestfs (libguestfs) is not supported by qvirt');
        case 'expand-vm-spec':
          return send(res, 200, await expandVmSpec(route.namespace, await readBody(req)));
        case 'subresource': {
          const out = await serve(route, req);
          forObject(log, { namespace: route.namespace, name: route.name }).info({ user: user?.name, subresource: `${route.resource}/${route.subresource}`, code: out.code }, 'subresource request');
          if (out.binary) return sendBinary(res, out.binary);
          return send(res, out.code, out.body);
        }
      }
    } catch (err) {
      const s = asStatus(err);
      if (s.code >= 500 && s.code !== 501) log.warn({ method, path, user: user?.name, err: s.message }, 'subresource request failed');
      else log.debug({ method, path, user: user?.name, code: s.code, message: s.message }, 'subresource request refused');
      if (!res.headersSent) send(res, s.code, s.toStatus());
      else res.end();
    }
  }

  /** Where a stream route goes on the node agent, after virt-api's checks. */
  async function streamTarget(r: SubRoute): Promise<{ vmi: VirtualMachineInstance; sub: string }> {
    if (r.support === 'unsupported') throw E.notImplemented(`${r.resource}/${r.subresource} is not supported by qvirt`);
    if (r.subresource === 'portforward') {
      const vmi = r.resource === 'virtualmachines' ? await vmiOfVm(r.namespace, r.name) : await getVmi(r.namespace, r.name);
      // validateVMIForPortForward; a VMI not running yet has no guest to dial.
      if (hasVmiCondition(vmi, VMIConditionType.Paused)) throw E.conflict(KubeVirtResource.VirtualMachineInstance, r.name, 'VMI is paused');
      if (vmi.status?.phase !== VMIPhase.Running) throw E.conflict(KubeVirtResource.VirtualMachineInstance, r.name, 'VMI is not running');
      return { vmi, sub: `portforward/${r.port}/${r.protocol}` };
    }
    const vmi = await getVmi(r.namespace, r.name);
    vmiCheck(r.subresource as VmiSubresource, vmi);
    return { vmi, sub: r.subresource };
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, user: RequestUser | undefined): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'https://virt-api');
    socket.on('error', () => socket.destroy());
    let target: Duplex;
    let r: SubRoute;
    try {
      const rr = routeOf(method, url.pathname);
      if (!rr.ok) throw new StatusError(rr.code, rr.code === 404 ? 'NotFound' : 'BadRequest', rr.message);
      if (rr.route.kind !== 'subresource' || !rr.route.stream) throw E.badRequest(`${url.pathname} is not a stream: send a plain HTTP request`);
      r = rr.route;
      if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') throw E.badRequest(`${r.subresource}: connect with a websocket (Upgrade: websocket, subprotocol ${HANDLER_STREAM_PROTOCOL})`);
      await authorize(r, method, user);
      const { vmi, sub } = await streamTarget(r);
      const ep = await nodeAgent(vmi);
      try {
        target = await ep.stream(sub as Parameters<HandlerEndpoint['stream']>[0]);
      } catch (err) {
        throw E.internalError((err as Error).message);
      }
      forObject(log, { namespace: r.namespace, name: r.name, uid: vmi.metadata?.uid }).info({ user: user?.name, subresource: sub }, 'stream attached');
    } catch (err) {
      const s = asStatus(err);
      if (s.code >= 500 && s.code !== 501) log.warn({ path: url.pathname, user: user?.name, err: s.message }, 'stream request failed');
      refuseUpgrade(socket, s);
      return;
    }
    if (socket.destroyed) { target.destroy(); return; }
    const udp = r.subresource === 'portforward' && r.protocol === 'udp';
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => (udp ? bridgeDatagrams(ws, target) : bridge(ws, target)));
  }

  return { handle, upgrade, close: () => wss.close() };
}

/**
 * Bytes both ways between a websocket (binary messages) and the node agent's stream. Each side's
 * end is passed on after what it sent (pipe's end: the websocket closes once its queued messages
 * are out — a guest that sends and closes loses nothing); an error or an abrupt close of either
 * side tears both down.
 */
function bridge(ws: WebSocket, target: Duplex): void {
  const stream = createWebSocketStream(ws);
  let aborted = false;
  const abort = () => {
    if (aborted) return;
    aborted = true;
    target.destroy();
    stream.destroy();
  };
  stream.on('error', abort);
  target.on('error', abort);
  // The node agent's stream closed without ending (reset): nothing more will come.
  target.on('close', () => { if (!target.readableEnded) abort(); });
  // The client went away: the node agent's stream has no reader left.
  stream.on('close', () => target.destroy());
  stream.pipe(target);
  // The node agent's stream ended: close the websocket with 1000 (normal closure, which virtctl
  // reads as EOF; the stream's own end closes without a code) once the bytes before it are out —
  // write callbacks run in order, so the empty write's comes after every earlier chunk's.
  target.pipe(stream, { end: false });
  target.on('end', () => { if (!aborted) stream.write(Buffer.alloc(0), () => { if (ws.readyState === ws.OPEN) ws.close(1000); }); });
}

/**
 * UDP port-forward: one datagram per websocket binary message (virtctl's framing), one 2-byte
 * length-prefixed frame per datagram on the node agent's byte stream (src/net/datagram-frames.ts).
 */
function bridgeDatagrams(ws: WebSocket, target: Duplex): void {
  const deframer = new DatagramDeframer();
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    target.destroy();
    if (ws.readyState === ws.OPEN) ws.close(1000);
  };
  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    if (!isBinary) return;
    const payload = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    try { target.write(frameDatagram(payload)); } catch { finish(); }
  });
  target.on('data', (chunk: Buffer) => { for (const d of deframer.push(chunk)) ws.send(d, { binary: true }); });
  ws.on('close', finish);
  ws.on('error', finish);
  target.on('close', finish);
  target.on('end', finish);
  target.on('error', finish);
}

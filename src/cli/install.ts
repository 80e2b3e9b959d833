// `qvirt install` / `qvirt uninstall`: put qvirt on (or take it off) the cluster of the current
// kubeconfig — the namespace, KubeVirt's CRDs, RBAC, the KubeVirt CR, virt-controller and
// virt-handler (src/deploy/manifests.ts) — with the image tags `npm run images` built
// (dist/images/images.json), then wait with progress until the components are ready / gone.
// Objects are created, or replaced when present (kubectl apply's outcome without its annotation).
import { existsSync, readFileSync } from 'node:fs';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { isAlreadyExists, isNotFound, KubeClient, loadKubeConfig, type KubeObject } from '../kube/client.ts';
import { Resources, type ResourceType } from '../kube/resource.ts';
import { Label, ResourceName, SUBRESOURCE_GROUP } from '../api/constants.ts';
import { quantityToNumber } from '../api/quantity.ts';
import { IMAGES_INDEX_FILE, IMAGES_OUT_DIR, imageRefsFrom, parseBuiltImages, type ImageRefs } from '../deploy/images.ts';
import { installObjects, INSTALL_NAMESPACE, Names } from '../deploy/manifests.ts';
import { crdEstablished, daemonSetReadiness, deploymentReadiness, type WorkloadStatus } from '../deploy/readiness.ts';
import { checkServerVersion, describeServerVersion, formatKubernetesVersion, KubernetesVersionError, MIN_KUBERNETES, type ServerVersionInfo } from '../deploy/kubernetes-versions.ts';
import { UserError } from '../kube/user-error.ts';
import { checkoutPath } from '../local/checkout.ts';


const installSpecs = {
  kubeconfig: { type: 'string', value: 'FILE', help: 'kubeconfig to use (default: $KUBECONFIG, ~/.kube/config)' },
  images: { type: 'string', value: 'FILE', help: `images.json written by npm run images (default: ${IMAGES_OUT_DIR}/${IMAGES_INDEX_FILE} if present, else the :latest tags)` },
  'use-emulation': { type: 'boolean', help: 'set the KubeVirt CR\'s developerConfiguration.useEmulation (nodes without KVM)' },
  wait: { type: 'boolean', help: 'wait until virt-controller and virt-handler are ready', default: true },
  timeout: { type: 'duration', value: 'DURATION', help: 'how long to wait for readiness', default: '300s' },
} as const;

const uninstallSpecs = {
  kubeconfig: { type: 'string', value: 'FILE', help: 'kubeconfig to use (default: $KUBECONFIG, ~/.kube/config)' },
  force: { type: 'boolean', help: 'uninstall even while VirtualMachineInstances exist (they are deleted with the CRDs)' },
  timeout: { type: 'duration', value: 'DURATION', help: 'how long to wait for everything to be gone', default: '300s' },
} as const;

const byKind: Record<string, ResourceType> = Object.fromEntries(Object.values(Resources).map((r) => [`${r.group ? `${r.group}/${r.version}` : r.version}/${r.kind}`, r]));

export function resourceOf(obj: KubeObject): ResourceType {
  const r = byKind[`${obj.apiVersion}/${obj.kind}`];
  if (!r) throw new Error(`no resource for ${obj.apiVersion} ${obj.kind} (${obj.metadata?.name})`);
  return r;
}

const describe = (o: KubeObject) => `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}`;

/** Creates the object, or replaces the stored one (keeping its resourceVersion and status). */
export async function createOrReplace(client: KubeClient, obj: KubeObject): Promise<'created' | 'configured'> {
  const r = resourceOf(obj);
  try {
    await client.create(r, obj);
    return 'created';
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  const cur = await client.get<KubeObject & { status?: unknown; spec?: { caBundle?: string } }>(r, obj.metadata?.namespace, obj.metadata!.name!);
  // An APIService keeps the CA bundle virt-controller set (the manifest has none), or it goes unavailable until the next check.
  const spec = (obj as { spec?: Record<string, unknown> }).spec;
  const kept = obj.kind === 'APIService' && cur.spec?.caBundle && spec && spec.caBundle === undefined ? { spec: { ...spec, caBundle: cur.spec.caBundle } } : {};
  await client.update(r, { ...obj, ...kept, metadata: { ...obj.metadata, resourceVersion: cur.metadata?.resourceVersion } });
  return 'configured';
}

/**
 * The KubeVirt CR holds what the operator configured since: an existing one is kept, and only a
 * setting given on this command line (--use-emulation) is merged into it.
 */
export async function createOrKeepKubeVirt(client: KubeClient, obj: KubeObject, useEmulation: boolean | undefined): Promise<'created' | 'configured' | 'unchanged'> {
  try {
    await client.create(Resources.kubeVirts, obj);
    return 'created';
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  if (useEmulation === undefined) return 'unchanged';
  await client.patch(Resources.kubeVirts, obj.metadata?.namespace, obj.metadata!.name!, { spec: { configuration: { developerConfiguration: { useEmulation } } } }, 'merge');
  return 'configured';
}

async function poll<T>(what: string, timeoutMs: number, f: () => Promise<{ done: boolean; line: string; value?: T }>, out: (s: string) => void): Promise<T | undefined> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const r = await f();
    if (r.line !== last) { out(`  ${r.line}\n`); last = r.line; }
    if (r.done) return r.value;
    if (Date.now() > end) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}: ${r.line}`);
    await new Promise((res) => setTimeout(res, 1000));
  }
}

export function loadImageRefs(file: string | undefined): { refs: ImageRefs; from: string } {
  const path = file ?? checkoutPath(IMAGES_OUT_DIR, IMAGES_INDEX_FILE);
  if (!existsSync(path)) {
    if (file) throw new UsageError(`--images ${file}: no such file`);
    return { refs: imageRefsFrom([]), from: 'default tags (no npm run images output)' };
  }
  let parsed: unknown;
  try { parsed = JSON.parse(readFileSync(path, 'utf8')); } catch (err) { throw new UsageError(`${path}: not JSON: ${(err as Error).message}`); }
  try { return { refs: imageRefsFrom(parseBuiltImages(parsed)), from: path }; } catch (err) { throw new UsageError(`${path}: ${(err as Error).message}`); }
}

export interface InstallOptions {
  readonly client: KubeClient;
  readonly images: ImageRefs;
  readonly useEmulation?: boolean;
  readonly wait?: boolean;
  readonly timeoutMs?: number;
  readonly out?: (s: string) => void;
}

export async function install(o: InstallOptions): Promise<void> {
  const out = o.out ?? ((s: string) => { process.stdout.write(s); });
  const timeoutMs = o.timeoutMs ?? 300_000;
  // Before anything is applied: an API server older than MIN_KUBERNETES refuses the CRDs halfway.
  const server = await o.client.request<ServerVersionInfo>('GET', '/version');
  checkServerVersion(server);
  out(`Kubernetes ${describeServerVersion(server)} (qvirt supports ${formatKubernetesVersion(MIN_KUBERNETES, false)} and newer)\n`);
  const objs = installObjects({ images: o.images, ...(o.useEmulation !== undefined ? { useEmulation: o.useEmulation } : {}) });
  for (const obj of objs) {
    if (obj.kind === 'KubeVirt') {
      // The KubeVirt kind is served once its CRD is Established.
      await poll('the KubeVirt CRD', timeoutMs, async () => {
        const crd = await o.client.get<WorkloadStatus & KubeObject>(Resources.customResourceDefinitions, undefined, 'kubevirts.kubevirt.io');
        return { done: crdEstablished(crd), line: `CustomResourceDefinition kubevirts.kubevirt.io: ${crdEstablished(crd) ? 'established' : 'waiting to be established'}` };
      }, () => {});
    }
    const what = obj.kind === 'KubeVirt' ? await createOrKeepKubeVirt(o.client, obj, o.useEmulation) : await createOrReplace(o.client, obj);
    out(`${describe(obj)} ${what}\n`);
  }
  if (o.wait === false) return;
  out(`waiting for the components (up to ${Math.round(timeoutMs / 1000)}s):\n`);
  await poll('virt-controller and virt-handler', timeoutMs, async () => {
    const d = await o.client.get<WorkloadStatus & KubeObject>(Resources.deployments, INSTALL_NAMESPACE, Names.ControllerDeployment);
    const ds = await o.client.get<WorkloadStatus & KubeObject>(Resources.daemonSets, INSTALL_NAMESPACE, Names.HandlerDaemonSet);
    const a = deploymentReadiness(d);
    const b = daemonSetReadiness(ds);
    return { done: a.ready && b.ready, line: `${a.progress}; ${b.progress}` };
  }, out);
  // Ready means serving: a node takes VMs, and a VirtualMachine write passes the webhooks (the API
  // server reaches virt-controller through its Service) — so the user's first `kubectl apply` works.
  // The devices a launcher pod requests (tun always, kvm unless the cluster emulates) must be
  // allocatable: the kubelet reports the device plugins' devices with its next node status.
  const cr = await o.client.get<KubeObject & { spec?: { configuration?: { developerConfiguration?: { useEmulation?: boolean } } } }>(Resources.kubeVirts, INSTALL_NAMESPACE, Names.KubeVirt);
  const devices = [ResourceName.Tun, ...(cr.spec?.configuration?.developerConfiguration?.useEmulation ? [] : [ResourceName.KVM])];
  await poll('a node that takes VMs', timeoutMs, async () => {
    const nodes = await o.client.list<KubeObject & { status?: { allocatable?: Record<string, string> } }>(Resources.nodes, { labelSelector: `${Label.NodeSchedulable}=true` });
    const ready = nodes.items.filter((n) => devices.every((d) => quantityToNumber(n.status?.allocatable?.[d] ?? '0') > 0));
    const line = ready.length ? `schedulable, ${devices.join(' and ')} allocatable: ${ready.map((n) => n.metadata?.name).join(', ')}`
      : nodes.items.length ? `labelled ${Label.NodeSchedulable}=true, waiting for ${devices.join(' and ')} to be allocatable (the device plugins' registration)` : `no node labelled ${Label.NodeSchedulable}=true yet (virt-handler's heartbeat)`;
    return { done: ready.length > 0, line };
  }, out);
  await poll('the admission webhooks', timeoutMs, async () => {
    try {
      await o.client.create(Resources.virtualMachines, webhookProbeVm(), { dryRun: true });
      return { done: true, line: 'admission webhooks: serving (a VirtualMachine dry-run passed them)' };
    } catch (err) {
      return { done: false, line: `admission webhooks: not serving yet: ${(err as Error).message.split('\n')[0]}` };
    }
  }, out);
  // virtctl's verbs go through virt-api's APIServices: kube-apiserver answers 503 until the
  // controller serves them with the CA bundle it set. An API server without an aggregation layer
  // does not know the group at all (404): nothing to wait for.
  await poll('virt-api\'s subresource API', timeoutMs, async () => {
    try {
      await o.client.request('GET', `/apis/${SUBRESOURCE_GROUP}/v1`);
      return { done: true, line: `${SUBRESOURCE_GROUP}: served (virtctl's VM verbs)` };
    } catch (err) {
      if (isNotFound(err)) return { done: true, line: `${SUBRESOURCE_GROUP}: this API server does not serve APIServices (no aggregation layer): virtctl's VM verbs will not work, qvirt's own do` };
      return { done: false, line: `${SUBRESOURCE_GROUP}: not served yet: ${(err as Error).message.split('\n')[0]}` };
    }
  }, out);
  out('qvirt is installed.\n');
}

/** A valid VirtualMachine, only ever created with dryRun: the webhooks see it, nothing is stored. */
function webhookProbeVm(): KubeObject {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine',
    metadata: { name: 'qvirt-install-probe', namespace: INSTALL_NAMESPACE },
    spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {}, memory: { guest: '64Mi' } } } } },
  } as KubeObject;
}

export interface UninstallOptions {
  readonly client: KubeClient;
  readonly force?: boolean;
  readonly timeoutMs?: number;
  readonly out?: (s: string) => void;
}

export class WorkloadsExistError extends Error {
  override name = 'WorkloadsExistError';
}

/** Removes everything install created, in reverse order, refusing while VMIs exist unless forced. */
export async function uninstall(o: UninstallOptions): Promise<void> {
  const out = o.out ?? ((s: string) => { process.stdout.write(s); });
  if (!o.force) {
    // KubeVirt's default uninstallStrategy, BlockUninstallIfWorkloadsExist.
    const vmis = await o.client.list<KubeObject>(Resources.virtualMachineInstances, {}).catch((err: unknown) => { if (isNotFound(err)) return { items: [] }; throw err; });
    if (vmis.items.length > 0) throw new WorkloadsExistError(`${vmis.items.length} VirtualMachineInstance(s) exist (${vmis.items.slice(0, 3).map((v) => `${v.metadata?.namespace}/${v.metadata?.name}`).join(', ')}): delete them first, or pass --force`);
  }
  const timeoutMs = o.timeoutMs ?? 300_000;
  if (o.force) await deleteWorkloads(o.client, Math.min(timeoutMs / 2, 60_000), out);
  const objs = installObjects().reverse();
  for (const obj of objs) {
    try {
      await o.client.delete(resourceOf(obj), obj.metadata?.namespace, obj.metadata!.name!, { propagationPolicy: 'Foreground' });
      out(`${describe(obj)} deleted\n`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  await poll('the objects to be gone', timeoutMs, async () => {
    const left: string[] = [];
    for (const obj of objs) {
      try { await o.client.get(resourceOf(obj), obj.metadata?.namespace, obj.metadata!.name!); left.push(describe(obj)); } catch (err) { if (!isNotFound(err)) throw err; }
    }
    return { done: left.length === 0, line: left.length ? `waiting for ${left.length} object(s) to go: ${left.slice(0, 3).join(', ')}${left.length > 3 ? ', ...' : ''}` : 'everything is gone' };
  }, out);
  out('qvirt is uninstalled.\n');
}

/** The kinds whose objects go before their CRDs (VMs first: they own VMIs). */
const WORKLOAD_RESOURCES = [Resources.virtualMachines, Resources.virtualMachineInstanceReplicaSets, Resources.virtualMachineInstanceMigrations, Resources.virtualMachineInstances];

/**
 * --force: deletes every VM, VMI ReplicaSet, migration and VMI while virt-controller still runs (it
 * removes its finalizers as the launcher pods go); whatever is still there after `waitMs` (no
 * controller running) has its finalizers removed, or the CRDs could never be deleted.
 */
async function deleteWorkloads(client: KubeClient, waitMs: number, out: (s: string) => void): Promise<void> {
  const listAll = async () => {
    const all: { r: ResourceType; o: KubeObject }[] = [];
    for (const r of WORKLOAD_RESOURCES) {
      const l = await client.list<KubeObject>(r, {}).catch((err: unknown) => { if (isNotFound(err)) return { items: [] as KubeObject[] }; throw err; });
      all.push(...l.items.map((o) => ({ r, o })));
    }
    return all;
  };
  const first = await listAll();
  for (const { r, o } of first) {
    await client.delete(r, o.metadata?.namespace, o.metadata!.name!).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
    out(`${r.kind} ${o.metadata?.namespace}/${o.metadata?.name} deleted\n`);
  }
  if (first.length === 0) return;
  const end = Date.now() + waitMs;
  let left = await listAll();
  while (left.length > 0 && Date.now() < end) {
    await new Promise((res) => setTimeout(res, 1000));
    left = await listAll();
  }
  for (const { r, o } of left) {
    out(`${r.kind} ${o.metadata?.namespace}/${o.metadata?.name}: still there after ${Math.round(waitMs / 1000)}s (is virt-controller running?); removing its finalizers\n`);
    await client.patch(r, o.metadata?.namespace, o.metadata!.name!, { metadata: { finalizers: null } }, 'merge').catch((err: unknown) => { if (!isNotFound(err)) throw err; });
  }
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(installSpecs, argv);
  if (help) {
    process.stdout.write(usage('qvirt install [flags]', 'Install qvirt on the current kubeconfig\'s cluster: namespace kubevirt, KubeVirt\'s CRDs, RBAC, the KubeVirt CR, virt-controller and virt-handler; wait until ready.', installSpecs));
    return 0;
  }
  if (args.length > 0) throw new UsageError(`qvirt install takes no arguments (got ${args.join(' ')})`);
  const { refs, from } = loadImageRefs(flags.images);
  process.stdout.write(`images (${from}): ${Object.values(refs).join(', ')}\n`);
  const client = new KubeClient(loadKubeConfig(flags.kubeconfig));
  client.userAgent = 'qvirt-install';
  try {
    await install({ client, images: refs, ...(flags['use-emulation'] !== undefined ? { useEmulation: flags['use-emulation'] } : {}), wait: flags.wait ?? true, timeoutMs: (flags.timeout ?? 300) * 1000 });
  } catch (err) {
    if (err instanceof KubernetesVersionError) throw new UserError(err.message);
    throw err;
  } finally {
    await client.close();
  }
  return 0;
}

export async function uninstallMain(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(uninstallSpecs, argv);
  if (help) {
    process.stdout.write(usage('qvirt uninstall [flags]', 'Remove what qvirt install created (refuses while VirtualMachineInstances exist, unless --force).', uninstallSpecs));
    return 0;
  }
  if (args.length > 0) throw new UsageError(`qvirt uninstall takes no arguments (got ${args.join(' ')})`);
  const client = new KubeClient(loadKubeConfig(flags.kubeconfig));
  client.userAgent = 'qvirt-install';
  try {
    await uninstall({ client, force: flags.force ?? false, timeoutMs: (flags.timeout ?? 300) * 1000 });
  } catch (err) {
    if (err instanceof WorkloadsExistError) throw new UsageError(err.message);
    throw err;
  } finally {
    await client.close();
  }
  return 0;
}

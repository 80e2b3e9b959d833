// The VirtualMachinePool controller's decisions (pkg/virt-controller/watch/pool/pool.go): VM names
// `<pool>-<index>` (the lowest free indexes), the per-VM indexed spec (dataVolumeTemplates and the
// claims naming them get `-<index>`; ConfigMap/Secret refs with nameGeneration), which VMs it owns,
// how many to create or which to delete (scale-in order by the sort policy, Random by default), the
// ControllerRevision that pins the spec a VM was made from, whether a VM or its VMI is outdated
// (opportunistic VM update, proactive VMI restart within maxUnavailable) and the status.
import { labelSelectorAsSelector as compileLabelSelector, selectorMatches, selectorString } from '../../src/api/label-selector.ts';
import { controllerOf } from '../pod-state.ts';
import { hasCondition, hasConditionWithStatus, removeCondition, updateCondition } from '../condition-list.ts';
import { toRFC3339Seconds } from '../vm/backoff.ts';
import type { OwnerReference, VirtualMachine, VirtualMachineInstance, VirtualMachineSpec } from '../../src/api/types.ts';
import type { NodeSelectorRequirement } from '../../src/api/kube.ts';
import type { LabelSelector } from '../../src/api/label-selector.ts';
import {
  POOL_API_VERSION,
  POOL_FINALIZER,
  POOL_REVISION_LABEL,
  VirtualMachinePoolResource,
  type VirtualMachinePool,
  type VirtualMachinePoolCondition,
  type VirtualMachinePoolSelectors,
  type VirtualMachinePoolSortPolicy,
  type VirtualMachinePoolSpec,
  type VirtualMachinePoolStatus,
} from '../../src/api/pool/types.ts';

/** Deep equality of JSON values regardless of key order (`equality.Semantic.DeepEqual` of decoded objects). */
export function sameJSON(a: unknown, b: unknown): boolean {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined).map((k) => [k, canon((v as Record<string, unknown>)[k])]));
    return v;
  };
  return JSON.stringify(canon(a ?? null)) === JSON.stringify(canon(b ?? null));
}

/** KubeVirt's burstReplicas: at most this many creations or deletions per round. */
export const POOL_BURST_REPLICAS = 250;

export const PoolReasons = {
  SuccessfulCreate: 'SuccessfulCreate',
  FailedCreate: 'FailedCreate',
  SuccessfulDelete: 'SuccessfulDelete',
  FailedDelete: 'FailedDelete',
  SuccessfulUpdate: 'SuccessfulUpdate',
  FailedUpdate: 'FailedUpdate',
  FailedScaleOut: 'FailedScaleOut',
  FailedScaleIn: 'FailedScaleIn',
  FailedRevisionPruning: 'FailedRevisionPruning',
  SuccessfulPaused: 'SuccessfulPaused',
  SuccessfulResume: 'SuccessfulResume',
} as const;

/** `generateVMName`. */
export const poolVMName = (base: string, index: number): string => `${base}-${index}`;

/** `indexFromName`: the number after the last dash (NaN when there is none). */
export function indexFromName(name: string): number {
  const last = name.split('-').at(-1) ?? '';
  return /^[+-]?\d+$/.test(last) ? Number(last) : NaN;
}

/** `calculateNewVMNames`: `count` names `<base>-<i>` with the lowest indexes no VM of the namespace has. */
export function newVMNames(count: number, base: string, exists: (name: string) => boolean): string[] {
  const out: string[] = [];
  let i = 0;
  while (out.length < count) {
    const name = poolVMName(base, i++);
    if (!exists(name)) out.push(name);
  }
  return out;
}

/** `poolOwnerRef`: controller reference with blockOwnerDeletion, pool.kubevirt.io/v1beta1. */
export function poolOwnerRef(pool: VirtualMachinePool): OwnerReference {
  return { apiVersion: POOL_API_VERSION, kind: VirtualMachinePoolResource.kind, name: pool.metadata?.name ?? '', uid: pool.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** `getRevisionName`: `<pool>-<generation>`. */
export const poolRevisionName = (pool: VirtualMachinePool): string => `${pool.metadata?.name ?? ''}-${pool.metadata?.generation ?? 0}`;

/**
 * `indexVMSpec`: the template's VM spec for index `idx` — every dataVolumeTemplate named
 * `<name>-<idx>` and the persistentVolumeClaim/dataVolume volumes naming one of them renamed alike;
 * with `nameGeneration`, ConfigMap and Secret volumes (and cloud-init secret refs) get `-<idx>` too.
 */
export function indexVMSpec(poolSpec: VirtualMachinePoolSpec, idx: number): VirtualMachineSpec {
  const spec = structuredClone(poolSpec.virtualMachineTemplate.spec);
  const suffix = `-${idx}`;
  const renamed = new Map<string, string>();
  for (const dv of spec.dataVolumeTemplates ?? []) {
    const name = dv.metadata?.name ?? '';
    renamed.set(name, name + suffix);
    dv.metadata = { ...(dv.metadata ?? {}), name: name + suffix };
  }
  const cm = poolSpec.nameGeneration?.appendIndexToConfigMapRefs === true;
  const secret = poolSpec.nameGeneration?.appendIndexToSecretRefs === true;
  for (const v of spec.template?.spec?.volumes ?? []) {
    if (v.persistentVolumeClaim) {
      const n = renamed.get(v.persistentVolumeClaim.claimName);
      if (n) v.persistentVolumeClaim.claimName = n;
    } else if (v.dataVolume) {
      const n = renamed.get(v.dataVolume.name);
      if (n) v.dataVolume.name = n;
    } else if (v.configMap && cm) {
      v.configMap.name = `${v.configMap.name ?? ''}${suffix}`;
    } else if (v.secret && secret) {
      v.secret.secretName = `${v.secret.secretName ?? ''}${suffix}`;
    } else if (v.cloudInitNoCloud && secret) {
      if (v.cloudInitNoCloud.secretRef) v.cloudInitNoCloud.secretRef.name += suffix;
      if (v.cloudInitNoCloud.networkDataSecretRef) v.cloudInitNoCloud.networkDataSecretRef.name += suffix;
    } else if (v.cloudInitConfigDrive && secret) {
      if (v.cloudInitConfigDrive.secretRef) v.cloudInitConfigDrive.secretRef.name += suffix;
      if (v.cloudInitConfigDrive.networkDataSecretRef) v.cloudInitConfigDrive.networkDataSecretRef.name += suffix;
    }
  }
  return spec;
}

/** The revision label on the VM and on its template (so the VMI carries it too). */
function withRevisionLabels(vm: VirtualMachine, revision: string): VirtualMachine {
  vm.metadata = { ...(vm.metadata ?? {}), labels: { ...(vm.metadata?.labels ?? {}), [POOL_REVISION_LABEL]: revision } };
  const t = vm.spec.template;
  t.metadata = { ...(t.metadata ?? {}), labels: { ...(t.metadata?.labels ?? {}), [POOL_REVISION_LABEL]: revision } };
  return vm;
}

/** The VM `scaleOut` creates: the template's labels and annotations, the indexed spec, the revision labels, the pool finalizer and owner reference. */
export function poolVM(pool: VirtualMachinePool, name: string, revision: string): VirtualMachine {
  const tm = pool.spec.virtualMachineTemplate.metadata;
  const vm: VirtualMachine = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name,
      ...(pool.metadata?.namespace !== undefined ? { namespace: pool.metadata.namespace } : {}),
      ...(tm?.labels ? { labels: { ...tm.labels } } : {}),
      ...(tm?.annotations ? { annotations: { ...tm.annotations } } : {}),
      finalizers: [POOL_FINALIZER],
      ownerReferences: [poolOwnerRef(pool)],
    },
    spec: indexVMSpec(pool.spec, indexFromName(name)),
  };
  return withRevisionLabels(vm, revision);
}

/**
 * `opportunisticUpdate` of one outdated VM: labels, annotations and spec from the pool's template
 * again (indexed), the new revision labels; the firmware UUID and serial the VM was given stay.
 */
export function updatedPoolVM(pool: VirtualMachinePool, vm: VirtualMachine, revision: string): VirtualMachine {
  const tm = pool.spec.virtualMachineTemplate.metadata;
  const next: VirtualMachine = structuredClone(vm);
  const md = { ...(next.metadata ?? {}) };
  if (tm?.labels) md.labels = { ...tm.labels };
  else delete md.labels;
  if (tm?.annotations) md.annotations = { ...tm.annotations };
  else delete md.annotations;
  next.metadata = md;
  next.spec = indexVMSpec(pool.spec, indexFromName(vm.metadata?.name ?? ''));
  const was = vm.spec.template?.spec?.domain?.firmware;
  if (was && next.spec.template?.spec) {
    const dom = next.spec.template.spec.domain;
    const fw = { ...(dom.firmware ?? {}) };
    if (was.uuid) fw.uuid = was.uuid;
    if (was.serial) fw.serial = was.serial;
    dom.firmware = fw;
  }
  return withRevisionLabels(next, revision);
}

/** Why the controller will not act on this pool (KubeVirt logs and does not requeue). */
export function invalidPoolSpec(pool: VirtualMachinePool): string | undefined {
  try {
    const sel = compileLabelSelector(pool.spec.selector);
    if (!selectorMatches(sel, pool.spec.virtualMachineTemplate?.metadata?.labels)) return 'Selector does not match template labels';
  } catch (e) {
    return `Invalid selector on pool: ${(e as Error).message}`;
  }
  return undefined;
}

export interface PoolClaim {
  readonly claimed: VirtualMachine[];
  readonly adopt: VirtualMachine[];
  readonly release: VirtualMachine[];
}

/** `ClaimVirtualMachines` (ControllerRefManager): owned+matching kept, owned+not matching released, matching orphans adopted. */
export function claimPoolVMs(pool: VirtualMachinePool, vms: readonly VirtualMachine[]): PoolClaim {
  const sel = compileLabelSelector(pool.spec.selector);
  const deleting = pool.metadata?.deletionTimestamp != null;
  const out: PoolClaim = { claimed: [], adopt: [], release: [] };
  for (const vm of vms) {
    const ref = controllerOf(vm.metadata);
    const owned = ref !== undefined && ref.uid === pool.metadata?.uid;
    const matched = selectorMatches(sel, vm.metadata?.labels);
    if (owned && matched) out.claimed.push(vm);
    else if (owned && !deleting) out.release.push(vm);
    else if (!ref && matched && !deleting && vm.metadata?.deletionTimestamp == null) {
      out.adopt.push(vm);
      out.claimed.push(vm);
    }
  }
  return out;
}

export const desiredPoolReplicas = (pool: VirtualMachinePool): number => pool.spec.replicas ?? 1;

const isUnmanagedScaleIn = (pool: VirtualMachinePool) => pool.spec.scaleInStrategy?.unmanaged !== undefined;
const isOpportunisticScaleIn = (pool: VirtualMachinePool) => pool.spec.scaleInStrategy?.opportunistic !== undefined;

/** `sortVMsBasedOnSortPolicy` (a copy). `rnd(n)` is an integer in [0, n) for Random. */
export function sortPoolVMs(vms: readonly VirtualMachine[], policy: VirtualMachinePoolSortPolicy | undefined, rnd: (n: number) => number): VirtualMachine[] {
  const out = [...vms];
  const ord = (vm: VirtualMachine) => { const i = indexFromName(vm.metadata?.name ?? ''); return Number.isNaN(i) ? 0 : i; };
  const created = (vm: VirtualMachine) => Date.parse(vm.metadata?.creationTimestamp ?? '') || 0;
  switch (policy) {
    case 'AscendingOrder': return out.sort((a, b) => ord(a) - ord(b));
    case 'DescendingOrder': return out.sort((a, b) => ord(b) - ord(a));
    case 'Newest': return out.sort((a, b) => created(b) - created(a));
    case 'Oldest': return out.sort((a, b) => created(a) - created(b));
    default:
      for (let i = out.length - 1; i > 0; i--) { const j = rnd(i + 1); [out[i], out[j]] = [out[j]!, out[i]!]; }
      return out;
  }
}

function nodeRequirementMatches(r: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'In': return has && (r.values ?? []).includes(v!);
    case 'NotIn': return !has || !(r.values ?? []).includes(v!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': return has && Number(v) > Number(r.values?.[0]);
    case 'Lt': return has && Number(v) < Number(r.values?.[0]);
    default: return false;
  }
}

/** `filterVMsBasedOnSelectors`: by the template's labels and its nodeSelector. */
export function filterPoolVMs(vms: readonly VirtualMachine[], selectors: VirtualMachinePoolSelectors | undefined): VirtualMachine[] {
  if (!selectors || (!selectors.labelSelector && !selectors.nodeSelectorRequirementMatcher)) return [...vms];
  const sel = selectors.labelSelector ? compileLabelSelector(selectors.labelSelector as LabelSelector) : undefined;
  return vms.filter((vm) => {
    if (sel && !selectorMatches(sel, vm.spec.template?.metadata?.labels)) return false;
    if (selectors.nodeSelectorRequirementMatcher && !selectors.nodeSelectorRequirementMatcher.every((r) => nodeRequirementMatches(r, vm.spec.template?.spec?.nodeSelector ?? {}))) return false;
    return true;
  });
}

export interface PoolScalePlan {
  /** claimed VMs − desired replicas (deleting VMs count). */
  readonly diff: number;
  /** Names of the VMs to create. */
  readonly create: string[];
  /** VMs to delete (proactive scale-in), in order. */
  readonly delete: VirtualMachine[];
  /** Deleting VMs whose pool finalizer is to be removed (opportunistic scale-in, diff 0). */
  readonly release: VirtualMachine[];
}

/**
 * `scale`: at most `burst` VMs created (the lowest free indexes) or deleted. Deleting picks among
 * the VMs not already being deleted (those count against the excess), in the scale-in sort policy's
 * order (`proactive.selectionPolicy.sortPolicy`, Random unless set), narrowed by its selectors; an
 * unmanaged or opportunistic scale-in deletes nothing. At the desired count, deleting VMs lose the
 * pool finalizer.
 */
export function planPoolScale(pool: VirtualMachinePool, vms: readonly VirtualMachine[], opts: { exists: (name: string) => boolean; rnd: (n: number) => number; burst?: number }): PoolScalePlan {
  const diff = vms.length - desiredPoolReplicas(pool);
  const none = { diff, create: [], delete: [], release: [] };
  if (diff === 0) {
    if (isUnmanagedScaleIn(pool)) return none;
    return { ...none, release: vms.filter((vm) => vm.metadata?.deletionTimestamp != null && (vm.metadata.finalizers ?? []).includes(POOL_FINALIZER)) };
  }
  const n = Math.min(Math.abs(diff), opts.burst ?? POOL_BURST_REPLICAS);
  if (diff < 0) return { ...none, create: newVMNames(n, pool.metadata?.name ?? '', opts.exists) };
  if (isUnmanagedScaleIn(pool) || isOpportunisticScaleIn(pool)) return none;
  const eligible = vms.filter((vm) => vm.metadata?.deletionTimestamp == null);
  let count = Math.min(n - (vms.length - eligible.length), eligible.length);
  if (count <= 0) return none;
  const proactive = pool.spec.scaleInStrategy?.proactive;
  let ordered = sortPoolVMs(eligible, proactive?.selectionPolicy?.sortPolicy, opts.rnd);
  if (proactive?.selectionPolicy?.selectors) ordered = filterPoolVMs(ordered, proactive.selectionPolicy.selectors);
  count = Math.min(count, ordered.length);
  return { ...none, delete: ordered.slice(0, count) };
}

/** `calculateMaxUnavailableInt`: spec.maxUnavailable (default 100%) of the replicas, at least 1. */
export function maxUnavailable(pool: VirtualMachinePool): number {
  const m = pool.spec.maxUnavailable ?? '100%';
  const total = desiredPoolReplicas(pool);
  let n: number;
  if (typeof m === 'string') {
    const pct = Number.parseInt(m.replace(/%$/, ''), 10);
    if (Number.isNaN(pct)) throw new Error(`invalid maxUnavailable percentage: ${m}`);
    n = Math.trunc((total * pct) / 100);
  } else n = m;
  return Math.max(1, n);
}

/** The pool spec a ControllerRevision of the pool holds (`data`), if it parses. */
export type RevisionLookup = (name: string) => VirtualMachinePoolSpec | undefined;

/** `isOutdatedVM`: no revision label, its revision missing, or a template other than the pool's. */
export function isOutdatedVM(pool: VirtualMachinePool, vm: VirtualMachine, revision: RevisionLookup): boolean {
  const name = vm.metadata?.labels?.[POOL_REVISION_LABEL];
  if (!name) return true;
  const old = revision(name);
  if (!old) return true;
  return !sameJSON(old.virtualMachineTemplate, pool.spec.virtualMachineTemplate);
}

export type VMIUpdate = 'restart' | 'label-patch' | 'no-update' | 'vm-delete';

/**
 * `isOutdatedVMI`: compares the pool revision the VM was made from with the one its VMI was started
 * from — no VM revision: nothing; no VMI revision (label or object): restart; different
 * dataVolumeTemplates: delete the VM; different VMI templates: restart; same: relabel the VMI.
 */
export function isOutdatedVMI(vm: VirtualMachine, vmi: VirtualMachineInstance, revision: RevisionLookup): VMIUpdate {
  const vmRev = vm.metadata?.labels?.[POOL_REVISION_LABEL];
  if (!vmRev) return 'no-update';
  const vmiRev = vmi.metadata?.labels?.[POOL_REVISION_LABEL];
  if (!vmiRev) return 'restart';
  if (vmRev === vmiRev) return 'no-update';
  const forVM = revision(vmRev);
  if (!forVM) return 'no-update';
  const forVMI = revision(vmiRev);
  if (!forVMI) return 'restart';
  const eq = sameJSON;
  if (!eq(forVM.virtualMachineTemplate.spec.dataVolumeTemplates, forVMI.virtualMachineTemplate.spec.dataVolumeTemplates)) return 'vm-delete';
  if (!eq(forVM.virtualMachineTemplate.spec.template, forVMI.virtualMachineTemplate.spec.template)) return 'restart';
  return 'label-patch';
}

/** `isVMIReady`: Running, not deleting, Ready=True. */
export function isPoolVMIReady(vmi: VirtualMachineInstance | undefined): boolean {
  return vmi !== undefined && vmi.metadata?.deletionTimestamp == null && vmi.status?.phase === 'Running' && hasConditionWithStatus(vmi.status?.conditions, 'Ready', 'True');
}

/**
 * `proactiveUpdate`'s picks: not-ready VMs first (their VMIs may be outdated from a failed update),
 * then the others in the update sort policy's order while fewer than maxUnavailable VMIs are
 * unavailable. `delayed` when the budget ran out with work left (KubeVirt requeues after 3 s).
 */
export function planProactiveUpdate(
  pool: VirtualMachinePool,
  upToDate: readonly VirtualMachine[],
  vmiOf: (vm: VirtualMachine) => VirtualMachineInstance | undefined,
  revision: RevisionLookup,
  rnd: (n: number) => number,
): { updates: { vm: VirtualMachine; vmi: VirtualMachineInstance; type: Exclude<VMIUpdate, 'no-update'> }[]; delayed: boolean } {
  const updates: { vm: VirtualMachine; vmi: VirtualMachineInstance; type: Exclude<VMIUpdate, 'no-update'> }[] = [];
  const seen = new Set<string>();
  for (const vm of upToDate) {
    if (hasConditionWithStatus(vm.status?.conditions, 'Ready', 'True')) continue;
    const vmi = vmiOf(vm);
    if (!vmi || vmi.metadata?.deletionTimestamp != null) continue;
    const type = isOutdatedVMI(vm, vmi, revision);
    if (type !== 'no-update') { updates.push({ vm, vmi, type }); seen.add(vm.metadata?.name ?? ''); }
  }
  let budget = maxUnavailable(pool) - upToDate.filter((vm) => !isPoolVMIReady(vmiOf(vm))).length;
  const proactive = pool.spec.updateStrategy?.proactive;
  const ordered = proactive ? sortPoolVMs(upToDate, proactive.selectionPolicy?.sortPolicy, rnd) : [...upToDate];
  for (const vm of ordered) {
    if (seen.has(vm.metadata?.name ?? '')) continue;
    const vmi = vmiOf(vm);
    if (!vmi) continue;
    const type = isOutdatedVMI(vm, vmi, revision);
    if (type === 'no-update') continue;
    if (budget <= 0) return { updates, delayed: true };
    updates.push({ vm, vmi, type });
    budget--;
  }
  return { updates, delayed: false };
}

/** The VMs the update strategy considers: all, or those its proactive selectors pick; none when unmanaged. */
export function updateCandidates(pool: VirtualMachinePool, vms: readonly VirtualMachine[]): VirtualMachine[] {
  const u = pool.spec.updateStrategy;
  if (u?.unmanaged !== undefined) return [];
  return u?.proactive?.selectionPolicy?.selectors ? filterPoolVMs(vms, u.proactive.selectionPolicy.selectors) : [...vms];
}

/** Revisions of the pool no VM or VMI of it names (`pruneUnusedRevisions`). */
export function unusedRevisions(revisionNames: readonly string[], vms: readonly VirtualMachine[], vmiOf: (vm: VirtualMachine) => VirtualMachineInstance | undefined): string[] {
  const used = new Set<string>();
  for (const vm of vms) {
    const a = vm.metadata?.labels?.[POOL_REVISION_LABEL];
    if (a) used.add(a);
    const b = vmiOf(vm)?.metadata?.labels?.[POOL_REVISION_LABEL];
    if (b) used.add(b);
  }
  return revisionNames.filter((n) => !used.has(n));
}

export interface PoolSyncError { readonly reason: string; readonly message: string }

/**
 * `updateStatus`: replicas = claimed VMs, readyReplicas = those with Ready=True, labelSelector,
 * ReplicaFailure while a sync fails (added once, removed when it succeeds), ReplicaPaused while paused.
 */
export function poolStatus(pool: VirtualMachinePool, vms: readonly VirtualMachine[], syncError: PoolSyncError | undefined, now: Date): { status: VirtualMachinePoolStatus; changed: boolean; events: { type: 'Normal' | 'Warning'; reason: string; message: string }[] } {
  const cur = pool.status ?? {};
  const status: VirtualMachinePoolStatus = structuredClone(cur);
  const events: { type: 'Normal' | 'Warning'; reason: string; message: string }[] = [];
  status.labelSelector = selectorString(compileLabelSelector(pool.spec.selector));
  const t = toRFC3339Seconds(now);
  let conds: VirtualMachinePoolCondition[] = status.conditions ?? [];
  if (syncError && !hasCondition(conds, 'ReplicaFailure')) {
    conds = updateCondition(conds, { type: 'ReplicaFailure', status: 'True', reason: syncError.reason, message: syncError.message, lastTransitionTime: t });
    events.push({ type: 'Warning', reason: syncError.reason, message: syncError.message });
  } else if (!syncError && hasCondition(conds, 'ReplicaFailure')) conds = removeCondition(conds, 'ReplicaFailure');
  if (pool.spec.paused === true && !hasCondition(conds, 'ReplicaPaused')) {
    conds = updateCondition(conds, { type: 'ReplicaPaused', status: 'True', reason: PoolReasons.SuccessfulPaused, message: 'Pool controller is paused', lastTransitionTime: t });
    events.push({ type: 'Normal', reason: PoolReasons.SuccessfulPaused, message: 'Pool is paused' });
  } else if (pool.spec.paused !== true && hasCondition(conds, 'ReplicaPaused')) {
    conds = removeCondition(conds, 'ReplicaPaused');
    events.push({ type: 'Normal', reason: PoolReasons.SuccessfulResume, message: 'Pool is unpaused' });
  }
  if (conds.length) status.conditions = conds;
  else delete status.conditions;
  status.replicas = vms.length;
  status.readyReplicas = vms.filter((vm) => hasConditionWithStatus(vm.status?.conditions, 'Ready', 'True')).length;
  const changed = JSON.stringify(status) !== JSON.stringify(cur);
  return { status, changed, events };
}

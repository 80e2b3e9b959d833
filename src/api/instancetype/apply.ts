/**
 * KubeVirt's `pkg/instancetype/apply` (`ApplyToVMI`): the instance type's sizing written into a
 * VMI spec — node selector, scheduler, CPU (guest vCPUs laid out as sockets, cores or threads per the
 * preference's preferredCPUTopology; model, dedicated placement, NUMA, realtime, max sockets),
 * memory (guest, overcommit as a lower memory request, hugepages, max guest), IO threads and their
 * policy, launch security, GPUs, host devices and annotations — refusing every field the template
 * sets itself (a conflict at its path); then, with no conflict, the preference's defaults
 * (`./preference.ts`). Pure: the spec and metadata passed in are changed in place, as in KubeVirt;
 * `applyToVMISpec` works on copies.
 */
import type { ObjectMeta } from '../kube.ts';
import { quantityFromValue, quantityValue, formatQuantity, parseQuantity } from '../quantity.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec } from '../types.ts';
import { setReferenceAnnotations } from './annotations.ts';
import { conflictAt, conflictPaths, type Conflict } from './conflict.ts';
import { InstancetypeMessages, PreferredCPUTopologies as T, SpreadAcrossValues, THREADS_PER_CORE } from './constants.ts';
import { applyPreferenceToVMI, preferredTopology, spreadOptions } from './preference.ts';
import type { VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from './types.ts';

const clone = <T>(v: T): T => structuredClone(v);
const has = (list: Record<string, string> | undefined, key: string) => list !== undefined && Object.prototype.hasOwnProperty.call(list, key);

function validateCPU(base: string, it: VirtualMachineInstancetypeSpec, spec: VirtualMachineInstanceSpec): Conflict[] {
  const out: Conflict[] = [];
  const cpu = spec.domain.cpu ?? {};
  const res = spec.domain.resources;
  if (has(res?.requests, 'cpu')) out.push(conflictAt(base, 'domain', 'resources', 'requests', 'cpu'));
  if (has(res?.limits, 'cpu')) out.push(conflictAt(base, 'domain', 'resources', 'limits', 'cpu'));
  if (cpu.sockets) out.push(conflictAt(base, 'domain', 'cpu', 'sockets'));
  if (cpu.cores) out.push(conflictAt(base, 'domain', 'cpu', 'cores'));
  if (cpu.threads) out.push(conflictAt(base, 'domain', 'cpu', 'threads'));
  if (cpu.model && it.cpu.model !== undefined) out.push(conflictAt(base, 'domain', 'cpu', 'model'));
  if (cpu.dedicatedCpuPlacement && it.cpu.dedicatedCPUPlacement !== undefined) out.push(conflictAt(base, 'domain', 'cpu', 'dedicatedCPUPlacement'));
  if (cpu.isolateEmulatorThread && it.cpu.isolateEmulatorThread !== undefined) out.push(conflictAt(base, 'domain', 'cpu', 'isolateEmulatorThread'));
  if (cpu.numa !== undefined && it.cpu.numa !== undefined) out.push(conflictAt(base, 'domain', 'cpu', 'numa'));
  if (cpu.realtime !== undefined && it.cpu.realtime !== undefined) out.push(conflictAt(base, 'domain', 'cpu', 'realtime'));
  return out;
}

/** `applyGuestCPUTopology`: the vCPUs as sockets (default), cores, threads, or spread. */
export function guestCPUTopology(vCPUs: number, preference: VirtualMachinePreferenceSpec | undefined): { sockets: number; cores: number; threads: number } {
  const t = { sockets: 1, cores: 1, threads: 1 };
  if (vCPUs === 1) return t;
  switch (preferredTopology(preference)) {
    case T.DeprecatedPreferCores: case T.Cores:
      t.cores = vCPUs;
      break;
    case T.DeprecatedPreferSockets: case T.DeprecatedPreferAny: case T.Sockets: case T.Any:
      t.sockets = vCPUs;
      break;
    case T.DeprecatedPreferThreads: case T.Threads:
      t.threads = vCPUs;
      break;
    case T.DeprecatedPreferSpread: case T.Spread: {
      const { ratio, across } = spreadOptions(preference);
      // Go's unsigned division (the admitter refuses what does not divide).
      const div = (a: number, b: number) => (b === 0 ? 0 : Math.floor(a / b));
      if (across === SpreadAcrossValues.SocketsCores) {
        t.cores = ratio;
        t.sockets = div(vCPUs, ratio);
      } else if (across === SpreadAcrossValues.CoresThreads) {
        t.threads = ratio;
        t.cores = div(vCPUs, ratio);
      } else if (across === SpreadAcrossValues.SocketsCoresThreads) {
        t.threads = THREADS_PER_CORE;
        t.cores = ratio;
        t.sockets = div(div(vCPUs, THREADS_PER_CORE), ratio);
      }
      break;
    }
  }
  return t;
}

function applyCPU(base: string, it: VirtualMachineInstancetypeSpec, preference: VirtualMachinePreferenceSpec | undefined, spec: VirtualMachineInstanceSpec): Conflict[] {
  const cpu = (spec.domain.cpu ??= {});
  const conflicts = validateCPU(base, it, spec);
  if (conflicts.length) return conflicts;
  if (it.cpu.model !== undefined) cpu.model = it.cpu.model;
  if (it.cpu.dedicatedCPUPlacement !== undefined) cpu.dedicatedCpuPlacement = it.cpu.dedicatedCPUPlacement;
  if (it.cpu.isolateEmulatorThread !== undefined) cpu.isolateEmulatorThread = it.cpu.isolateEmulatorThread;
  if (it.cpu.numa !== undefined) cpu.numa = clone(it.cpu.numa);
  if (it.cpu.realtime !== undefined) cpu.realtime = clone(it.cpu.realtime);
  if (it.cpu.maxSockets !== undefined) cpu.maxSockets = it.cpu.maxSockets;
  Object.assign(cpu, guestCPUTopology(it.cpu.guest, preference));
  return [];
}

/**
 * The memory request an overcommit leaves: `int64(float32(guest) * (1 - float32(percent)/100))`,
 * computed in float32 as KubeVirt does, in the guest's own format.
 */
export function overcommittedMemoryRequest(guest: string, percent: number): string {
  const f = Math.fround;
  const bytes = Math.trunc(f(f(Number(quantityValue(guest))) * f(1 - f(f(percent) / 100))));
  return formatQuantity(quantityFromValue(BigInt(bytes), parseQuantity(guest).format));
}

function applyMemory(base: string, it: VirtualMachineInstancetypeSpec, spec: VirtualMachineInstanceSpec): Conflict[] {
  const mem = (spec.domain.memory ??= {});
  const res = spec.domain.resources;
  // validateMemory: the first conflict only.
  if (mem.guest !== undefined) return [conflictAt(base, 'domain', 'memory', 'guest')];
  if (mem.hugepages !== undefined && it.memory.hugepages !== undefined) return [conflictAt(base, 'domain', 'memory', 'hugepages')];
  if (mem.maxGuest !== undefined && it.memory.maxGuest !== undefined) return [conflictAt(base, 'domain', 'memory', 'maxGuest')];
  if (has(res?.requests, 'memory')) return [conflictAt(base, 'domain', 'resources', 'requests', 'memory')];
  if (has(res?.limits, 'memory')) return [conflictAt(base, 'domain', 'resources', 'limits', 'memory')];
  mem.guest = it.memory.guest;
  const overcommit = it.memory.overcommitPercent ?? 0;
  if (overcommit > 0) {
    const r = (spec.domain.resources ??= {});
    r.requests = { ...(r.requests ?? {}), memory: overcommittedMemoryRequest(it.memory.guest, overcommit) };
  }
  if (it.memory.hugepages !== undefined) mem.hugepages = clone(it.memory.hugepages);
  if (it.memory.maxGuest !== undefined) mem.maxGuest = it.memory.maxGuest;
  return [];
}

function applyInstancetypeAnnotations(annotations: Record<string, string> | undefined, meta: ObjectMeta): Conflict[] {
  if (!annotations || Object.keys(annotations).length === 0) return [];
  const target = (meta.annotations ??= {});
  const out: Conflict[] = [];
  // Go ranges a map in random order; sorted here so a refusal reads the same every time.
  for (const [k, v] of Object.entries(annotations ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (k in target) {
      if (target[k] !== v) out.push(conflictAt('annotations', k));
      continue;
    }
    target[k] = v;
  }
  return out;
}

/**
 * `vmiApplier.ApplyToVMI`: conflicts are reported at `field` + their path (`spec` for a VMI,
 * `spec.template.spec` for a VM's template); with any, nothing of the preference is applied.
 */
export function applyToVMI(
  field: string,
  instancetype: VirtualMachineInstancetypeSpec | undefined,
  preference: VirtualMachinePreferenceSpec | undefined,
  spec: VirtualMachineInstanceSpec,
  meta: ObjectMeta,
): Conflict[] {
  if (!instancetype && !preference) return [];
  if (instancetype) {
    const it = instancetype;
    const conflicts: Conflict[] = [];
    if (it.nodeSelector !== undefined) {
      if (spec.nodeSelector !== undefined) conflicts.push(conflictAt(field, 'nodeSelector'));
      else spec.nodeSelector = { ...it.nodeSelector };
    }
    if (it.schedulerName) {
      if (spec.schedulerName) conflicts.push(conflictAt(field, 'schedulerName'));
      else spec.schedulerName = it.schedulerName;
    }
    conflicts.push(...applyCPU(field, it, preference, spec));
    conflicts.push(...applyMemory(field, it, spec));
    if (it.ioThreads?.supplementalPoolThreadCount !== undefined) {
      if (spec.domain.ioThreads?.supplementalPoolThreadCount !== undefined) conflicts.push(conflictAt(field, 'domain', 'ioThreads', 'supplementalPoolThreadCount'));
      else spec.domain.ioThreads = { ...(spec.domain.ioThreads ?? {}), supplementalPoolThreadCount: it.ioThreads.supplementalPoolThreadCount };
    }
    if (it.ioThreadsPolicy !== undefined) {
      if (spec.domain.ioThreadsPolicy !== undefined) conflicts.push(conflictAt(field, 'domain', 'ioThreadsPolicy'));
      else spec.domain.ioThreadsPolicy = it.ioThreadsPolicy;
    }
    if (it.launchSecurity !== undefined) {
      if (spec.domain.launchSecurity !== undefined) conflicts.push(conflictAt(field, 'domain', 'launchSecurity'));
      else spec.domain.launchSecurity = clone(it.launchSecurity);
    }
    if (it.gpus?.length) {
      if (spec.domain.devices.gpus?.length) conflicts.push(conflictAt(field, 'domain', 'devices', 'gpus'));
      else spec.domain.devices.gpus = clone(it.gpus);
    }
    if (it.hostDevices?.length) {
      if (spec.domain.devices.hostDevices?.length) conflicts.push(conflictAt(field, 'domain', 'devices', 'hostDevices'));
      else spec.domain.devices.hostDevices = clone(it.hostDevices);
    }
    conflicts.push(...applyInstancetypeAnnotations(it.annotations, meta));
    if (conflicts.length) return conflicts;
  }
  applyPreferenceToVMI(preference, spec, meta);
  return [];
}

/** `applyToVMI` on copies: the spec and metadata that result, or the conflicts. */
export function applyToVMISpec(
  field: string,
  instancetype: VirtualMachineInstancetypeSpec | undefined,
  preference: VirtualMachinePreferenceSpec | undefined,
  spec: VirtualMachineInstanceSpec,
  meta: ObjectMeta | undefined,
): { spec: VirtualMachineInstanceSpec; metadata: ObjectMeta; conflicts: Conflict[] } {
  const s = clone(spec);
  const m = clone(meta ?? {});
  const conflicts = applyToVMI(field, instancetype, preference, s, m);
  return { spec: s, metadata: m, conflicts };
}

/** The VM controller's ApplyToVMI failed: KubeVirt's "VMI conflicts with instancetype spec in fields: [...]". */
export class InstancetypeApplyError extends Error {
  override name = 'InstancetypeApplyError';
  readonly conflicts: readonly Conflict[];
  constructor(conflicts: readonly Conflict[]) {
    super(InstancetypeMessages.vmiConflicts(conflictPaths(conflicts)));
    this.conflicts = conflicts;
  }
}

/**
 * The VM controller's `ApplyToVMI` on the VMI it is about to create: the reference annotations,
 * then the instance type and preference (conflicts at `spec.…`). Changes `vmi` in place; throws
 * `InstancetypeApplyError`.
 */
export function applyToNewVMI(
  vm: VirtualMachine,
  vmi: VirtualMachineInstance,
  instancetype: VirtualMachineInstancetypeSpec | undefined,
  preference: VirtualMachinePreferenceSpec | undefined,
): void {
  if (!instancetype && !preference) return;
  const meta = (vmi.metadata ??= {});
  setReferenceAnnotations(vm, meta);
  const conflicts = applyToVMI('spec', instancetype, preference, vmi.spec, meta);
  if (conflicts.length) throw new InstancetypeApplyError(conflicts);
}

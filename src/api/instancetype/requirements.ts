/**
 * What a preference demands of the VM, as the VM admitter checks it: the spread topology the
 * instance type's vCPUs must divide into (`preference/validation/cpu.go CheckSpreadCPUTopology`),
 * and the preference's requirements — vCPUs, memory and architecture — met by the instance type or,
 * without one, by the (defaulted) template (`preference/requirements`). Pure.
 */
import { compareQuantity, formatQuantity, parseQuantity } from '../quantity.ts';
import type { VirtualMachineInstanceSpec } from '../types.ts';
import { conflictAt, type Conflict } from './conflict.ts';
import { INSTANCETYPE_CPU_GUEST_PATH, InstancetypeMessages as M, PreferredCPUTopologies as T, SpreadAcrossValues, THREADS_PER_CORE } from './constants.ts';
import { preferredTopology, spreadOptions } from './preference.ts';
import type { VirtualMachineInstancetypeSpec, VirtualMachinePreferenceSpec } from './types.ts';

/** `CheckSpreadCPUTopology`: a spread preference whose ratio does not divide the instance type's vCPUs. */
export function checkSpreadCPUTopology(instancetype: VirtualMachineInstancetypeSpec | undefined, preference: VirtualMachinePreferenceSpec | undefined): Conflict | undefined {
  const topology = preferredTopology(preference);
  if (!instancetype || (topology !== T.Spread && topology !== T.DeprecatedPreferSpread)) return undefined;
  const { ratio, across } = spreadOptions(preference);
  const guest = instancetype.cpu.guest;
  const rem = (a: number, b: number) => (b === 0 ? a : a % b);
  switch (across) {
    case SpreadAcrossValues.SocketsCores:
      if (rem(guest, ratio) > 0) return { path: INSTANCETYPE_CPU_GUEST_PATH, message: M.spreadSocketsCores(guest, ratio) };
      break;
    case SpreadAcrossValues.CoresThreads:
      if (rem(guest, ratio) > 0) return { path: INSTANCETYPE_CPU_GUEST_PATH, message: M.spreadCoresThreads(guest, ratio) };
      break;
    case SpreadAcrossValues.SocketsCoresThreads:
      if (guest % THREADS_PER_CORE > 0 || rem(Math.floor(guest / THREADS_PER_CORE), ratio) > 0) {
        return { path: INSTANCETYPE_CPU_GUEST_PATH, message: M.spreadSocketsCoresThreads(guest, THREADS_PER_CORE, ratio) };
      }
      break;
  }
  return undefined;
}

/** A requirement not met: the conflicting fields and KubeVirt's error. */
export interface RequirementFailure {
  readonly conflicts: readonly Conflict[];
  readonly message: string;
}

const CPU_BASE = 'spec.template.spec.domain.cpu';

function checkCPU(it: VirtualMachineInstancetypeSpec | undefined, p: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): RequirementFailure | undefined {
  const want = p.requirements!.cpu!.guest;
  if (it) {
    return it.cpu.guest < want ? { conflicts: [conflictAt('spec', 'instancetype')], message: M.insufficientInstancetypeCPU(it.cpu.guest, want) } : undefined;
  }
  const cpu = spec.domain.cpu;
  if (!cpu) return { conflicts: [conflictAt(CPU_BASE)], message: M.noVMCPU(want) };
  const sockets = cpu.sockets ?? 0;
  const cores = cpu.cores ?? 0;
  const threads = cpu.threads ?? 0;
  const fail = (have: number, as: string, ...fields: string[]): RequirementFailure | undefined =>
    have < want ? { conflicts: fields.map((f) => conflictAt(CPU_BASE, f)), message: M.insufficientVMCPU(have, want, as) } : undefined;
  switch (preferredTopology(p)) {
    case T.DeprecatedPreferThreads: case T.Threads:
      return fail(threads, 'threads', 'threads');
    case T.DeprecatedPreferCores: case T.Cores:
      return fail(cores, 'cores', 'cores');
    case T.DeprecatedPreferSockets: case T.Sockets:
      return fail(sockets, 'sockets', 'sockets');
    case T.DeprecatedPreferSpread: case T.Spread: {
      const { across } = spreadOptions(p);
      if (across === SpreadAcrossValues.SocketsCores) return fail(sockets * cores, across, 'sockets', 'cores');
      if (across === SpreadAcrossValues.CoresThreads) return fail(cores * threads, across, 'cores', 'threads');
      if (across === SpreadAcrossValues.SocketsCoresThreads) return fail(sockets * cores * threads, across, 'sockets', 'cores', 'threads');
      return fail(0, across);
    }
    case T.DeprecatedPreferAny: case T.Any:
      return fail(cores * sockets * threads, 'cores, sockets and threads', 'cores', 'sockets', 'threads');
  }
  return undefined;
}

function checkMemory(it: VirtualMachineInstancetypeSpec | undefined, p: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): RequirementFailure | undefined {
  const want = p.requirements!.memory!.guest;
  let conflict = conflictAt('spec', 'template', 'spec', 'domain', 'memory');
  let message = M.insufficientVMMemory;
  let provided = '0Mi';
  if (it) {
    conflict = conflictAt('spec', 'instancetype');
    message = M.insufficientInstancetypeMemory;
    provided = it.memory.guest;
  }
  if (spec.domain.memory?.guest !== undefined) provided = spec.domain.memory.guest;
  if (compareQuantity(provided, want) < 0) return { conflicts: [conflict], message: message(formatQuantity(parseQuantity(provided)), formatQuantity(parseQuantity(want))) };
  return undefined;
}

/** `requirements.Check` on the VM's template after the instance type, preference and defaults were applied. */
export function checkPreferenceRequirements(
  instancetype: VirtualMachineInstancetypeSpec | undefined,
  preference: VirtualMachinePreferenceSpec | undefined,
  spec: VirtualMachineInstanceSpec,
): RequirementFailure | undefined {
  const r = preference?.requirements;
  if (!preference || !r) return undefined;
  if (r.cpu) {
    const f = checkCPU(instancetype, preference, spec);
    if (f) return f;
  }
  if (r.memory) {
    const f = checkMemory(instancetype, preference, spec);
    if (f) return f;
  }
  if (r.architecture !== undefined && spec.architecture !== r.architecture) {
    return { conflicts: [conflictAt('spec', 'template', 'spec', 'architecture')], message: M.requiredArchitecture(r.architecture, spec.architecture ?? '') };
  }
  return undefined;
}

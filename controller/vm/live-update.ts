// KubeVirt's LiveUpdate rollout for CPU sockets and guest memory (watch/vm handleCPUChangeRequest,
// handleMemoryHotplugRequest): a change of the VM template that the running VMI can take is patched
// into the VMI (test-guarded) with the HotVCPUChange / HotMemoryChange condition; one it cannot take
// sets the VM's RestartRequired condition with KubeVirt's message. Pure.
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import { hasVmiConditionWithStatus } from '../../src/api/vmi-conditions.ts';
import type { JsonPatchOp } from '../../src/api/volume-requests.ts';
import { quantityToNumber } from '../../src/api/quantity.ts';

export const RestartRequiredMessages = {
  socketsAboveMax: 'CPU sockets updated in template spec to a value higher than what\'s available',
  socketsReduced: 'Reduction of CPU socket count requires a restart',
  memoryFailed: 'memory updated in template spec. Memory-hotplug failed and is not available for this VM configuration',
  memoryNotAvailable: 'memory updated in template spec. Memory-hotplug is not available for this VM configuration',
  memoryBelowBoot: 'memory updated in template spec to a value lower than what the VM started with',
  memoryAboveMax: 'memory updated in template spec to a value higher than what\'s available',
  /** vmRolloutStrategy Stage: nothing is live-updatable. */
  nonLiveUpdatable: 'a non-live-updatable field was changed in the template spec',
} as const;

export interface LiveUpdatePlan {
  vmiPatch?: JsonPatchOp[];
  /** Set RestartRequired on the VM with this message. */
  restartRequired?: string;
  /** Not now (another change in progress): try again later. */
  error?: string;
}

const bytes = (q: string | number | undefined): number | undefined => {
  if (q === undefined) return undefined;
  try { return quantityToNumber(q); } catch { return undefined; }
};


/** `liveUpdate`: the cluster's vmRolloutStrategy is LiveUpdate (else, Stage, every change waits for a restart). */
export function planLiveUpdate(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, now: string, liveUpdate = true): LiveUpdatePlan {
  const tpl = vm.spec.template?.spec;
  if (!tpl || !vmi || vmi.metadata?.deletionTimestamp != null || vmi.status?.phase !== 'Running') return {};
  if (!liveUpdate) {
    const cpuChanged = tpl.domain.cpu?.sockets !== undefined && tpl.domain.cpu.sockets !== vmi.spec.domain.cpu?.sockets;
    const memChanged = tpl.domain.memory?.guest !== undefined && bytes(tpl.domain.memory.guest) !== bytes(vmi.spec.domain.memory?.guest);
    return cpuChanged || memChanged ? { restartRequired: RestartRequiredMessages.nonLiveUpdatable } : {};
  }
  const ops: JsonPatchOp[] = [];
  const conditions = [...(vmi.status?.conditions ?? [])];

  // CPU sockets.
  const want = tpl.domain.cpu?.sockets;
  const have = vmi.spec.domain.cpu?.sockets;
  if (want !== undefined && have !== undefined && want !== have) {
    if (hasVmiConditionWithStatus(vmi, 'HotVCPUChange')) return { error: 'another CPU hotplug is in progress' };
    const max = vmi.spec.domain.cpu?.maxSockets ?? have;
    if (want > max) return { restartRequired: RestartRequiredMessages.socketsAboveMax };
    if (want < have) return { restartRequired: RestartRequiredMessages.socketsReduced };
    ops.push({ op: 'test', path: '/spec/domain/cpu/sockets', value: have }, { op: 'replace', path: '/spec/domain/cpu/sockets', value: want });
    conditions.push({ type: 'HotVCPUChange', status: 'True', lastTransitionTime: now });
  }

  // Guest memory.
  const wantMem = tpl.domain.memory?.guest;
  const haveMem = vmi.spec.domain.memory?.guest;
  if (wantMem !== undefined && haveMem !== undefined && bytes(wantMem) !== bytes(haveMem)) {
    if (hasVmiConditionWithStatus(vmi, 'HotMemoryChange', 'False')) return { restartRequired: RestartRequiredMessages.memoryFailed };
    const maxGuest = vmi.spec.domain.memory?.maxGuest;
    if (maxGuest === undefined) return { restartRequired: RestartRequiredMessages.memoryNotAvailable };
    if (hasVmiConditionWithStatus(vmi, 'HotMemoryChange')) return { error: 'another memory hotplug is in progress' };
    const atBoot = bytes(vmi.status?.memory?.guestAtBoot ?? haveMem);
    const w = bytes(wantMem) ?? 0;
    if (atBoot !== undefined && w < atBoot) return { restartRequired: RestartRequiredMessages.memoryBelowBoot };
    if (w > (bytes(maxGuest) ?? 0)) return { restartRequired: RestartRequiredMessages.memoryAboveMax };
    ops.push({ op: 'test', path: '/spec/domain/memory/guest', value: haveMem }, { op: 'replace', path: '/spec/domain/memory/guest', value: wantMem });
    conditions.push({ type: 'HotMemoryChange', status: 'True', lastTransitionTime: now });
  }

  if (ops.length === 0) return {};
  const statusOps: JsonPatchOp[] = vmi.status?.conditions
    ? [{ op: 'test', path: '/status/conditions', value: vmi.status.conditions }, { op: 'replace', path: '/status/conditions', value: conditions }]
    : [{ op: 'add', path: '/status/conditions', value: conditions }];
  return { vmiPatch: [...ops, ...statusOps] };
}

// What KubeVirt's VMI mutating webhook does to a VMI being created: the namespace's matching presets
// merged in, then the defaults (spec, runtime user, finalizer, phase Pending). qvirt runs no mutating
// webhook: the VM controller applies it to the VMI it creates (one write, as KubeVirt's create through
// its webhook), and the VMI controller to a VMI it sees without a phase (made by anyone else).
import { randomUUID } from 'node:crypto';
import { defaultNewVirtualMachineInstance } from '../../src/api/defaults.ts';
import { applyPresets, PresetConflictError } from '../../src/api/preset/apply.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { ControllerContext } from '../context.ts';

export interface MutatedVMI {
  readonly vmi: VirtualMachineInstance;
  /** The presets merged in (names). */
  readonly applied: readonly string[];
  /** What the preset merge noted (a preset field the VMI already set). */
  readonly notes: readonly string[];
}

/**
 * The mutated copy of a new VMI. Throws `DefaultingError` where KubeVirt's webhook would deny the VMI,
 * and `PresetConflictError` when two matching presets conflict — unless `onPresetConflict` is given:
 * then it is told and no preset is merged (the VMI controller, which records it on the VMI).
 */
export function mutateNewVMI(ctx: Pick<ControllerContext, 'config' | 'now' | 'vmiPresets'>, vmi: VirtualMachineInstance, onPresetConflict?: (err: PresetConflictError) => void): MutatedVMI {
  const presets = ctx.vmiPresets?.list().filter((p) => p.metadata?.namespace === vmi.metadata?.namespace) ?? [];
  let r: { vmi: VirtualMachineInstance; applied: readonly string[]; notes: readonly string[] } = { vmi, applied: [], notes: [] };
  try {
    if (presets.length) r = applyPresets(vmi, presets);
  } catch (err) {
    if (!(err instanceof PresetConflictError) || !onPresetConflict) throw err;
    onPresetConflict(err);
  }
  return { vmi: defaultNewVirtualMachineInstance(r.vmi, { config: ctx.config, now: ctx.now, randomUUID }), applied: r.applied, notes: r.notes };
}

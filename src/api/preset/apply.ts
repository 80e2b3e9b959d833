/**
 * virt-api's VMI mutator's presets (`mutators/preset.go`), pure: the presets of the VMI's namespace
 * whose selector matches its labels; their domains must not conflict with each other; each is
 * merged into the VMI's domain where the VMI leaves the field unset (resource requests, cpu,
 * firmware, clock offset and timers, features, watchdog, ioThreadsPolicy) and, when it took, named
 * in the annotation `virtualmachinepreset.kubevirt.io/<name>: kubevirt.io/v1`. A VMI annotated
 * `virtualmachineinstancepresets.admission.kubevirt.io/exclude: "true"` gets none.
 */
import { labelSelectorMatches } from '../label-selector.ts';
import { canonicalQuantity } from '../quantity.ts';
import type { DomainSpec, VirtualMachineInstance } from '../types.ts';
import { PRESET_ANNOTATION_VALUE, PRESET_DEPRECATION_WARNING, PRESET_EXCLUSION_ANNOTATION, presetAnnotation, type VirtualMachineInstancePreset } from './types.ts';

type Domain = Partial<DomainSpec>;

function canon(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined).map((k) => [k, canon((v as Record<string, unknown>)[k])]));
  return v;
}
const same = (a: unknown, b: unknown): boolean => JSON.stringify(canon(a ?? null)) === JSON.stringify(canon(b ?? null));
/** Go's %v of a value, near enough for the messages (`{4 0 0 ...}` is not reproduced): its JSON. */
const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const qty = (v: string | number): string => { try { return canonicalQuantity(v); } catch { return String(v); } };
const clockOffset = (c: Domain['clock']) => (c ? { ...(c.utc !== undefined ? { utc: c.utc } : {}), ...(c.timezone !== undefined ? { timezone: c.timezone } : {}) } : undefined);

/** `checkMergeConflicts`: the fields both set, differently. */
export function presetMergeConflicts(preset: Domain, vmi: Domain): string[] {
  const out: string[] = [];
  for (const [k, p] of Object.entries(preset.resources?.requests ?? {})) {
    const v = vmi.resources?.requests?.[k];
    if (v !== undefined && qty(p) !== qty(v)) out.push(`spec.resources.requests[${k}]: ${show(p)} != ${show(v)}`);
  }
  if (preset.cpu && vmi.cpu && !same(preset.cpu, vmi.cpu)) out.push(`spec.cpu: ${show(preset.cpu)} != ${show(vmi.cpu)}`);
  if (preset.firmware && vmi.firmware && !same(preset.firmware, vmi.firmware)) out.push(`spec.firmware: ${show(preset.firmware)} != ${show(vmi.firmware)}`);
  if (preset.clock && vmi.clock) {
    if (!same(clockOffset(preset.clock), clockOffset(vmi.clock))) out.push(`spec.clock.clockoffset: ${show(clockOffset(preset.clock))} != ${show(clockOffset(vmi.clock))}`);
    if (preset.clock.timer && vmi.clock.timer && !same(preset.clock.timer, vmi.clock.timer)) out.push(`spec.clock.timer: ${show(preset.clock.timer)} != ${show(vmi.clock.timer)}`);
  }
  if (preset.features && vmi.features && !same(preset.features, vmi.features)) out.push(`spec.features: ${show(preset.features)} != ${show(vmi.features)}`);
  if (preset.devices?.watchdog && vmi.devices?.watchdog && !same(preset.devices.watchdog, vmi.devices.watchdog)) out.push(`spec.devices.watchdog: ${show(preset.devices.watchdog)} != ${show(vmi.devices.watchdog)}`);
  if (preset.ioThreadsPolicy && vmi.ioThreadsPolicy && preset.ioThreadsPolicy !== vmi.ioThreadsPolicy) out.push(`spec.ioThreadsPolicy: ${preset.ioThreadsPolicy} != ${vmi.ioThreadsPolicy}`);
  return out;
}

/** Go's `utilerrors.NewAggregate(...).Error()`: one message alone, several in brackets. */
const aggregate = (msgs: readonly string[]): string => (msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`);

/** `mergeDomainSpec`: fills what the VMI leaves unset (into `vmi`); whether the preset took, and its conflicts. */
export function mergePresetDomain(preset: Domain, vmi: DomainSpec): { applied: boolean; conflicts: string[] } {
  const conflicts = presetMergeConflicts(preset, vmi);
  let applied = false;
  const reqs = preset.resources?.requests;
  if (reqs && Object.keys(reqs).length > 0) {
    vmi.resources ??= {};
    if (!vmi.resources.requests) vmi.resources.requests = { ...reqs };
    if (same(Object.fromEntries(Object.entries(vmi.resources.requests).map(([k, v]) => [k, qty(v)])), Object.fromEntries(Object.entries(reqs).map(([k, v]) => [k, qty(v)])))) applied = true;
  }
  if (preset.cpu) {
    vmi.cpu ??= structuredClone(preset.cpu);
    if (same(vmi.cpu, preset.cpu)) applied = true;
  }
  if (preset.firmware) {
    vmi.firmware ??= structuredClone(preset.firmware);
    if (same(vmi.firmware, preset.firmware)) applied = true;
  }
  if (preset.clock) {
    vmi.clock ??= structuredClone(clockOffset(preset.clock)) as DomainSpec['clock'];
    if (same(vmi.clock, preset.clock)) applied = true;
    if (preset.clock.timer) {
      vmi.clock!.timer ??= structuredClone(preset.clock.timer);
      if (same(vmi.clock!.timer, preset.clock.timer)) applied = true;
    }
  }
  if (preset.features) {
    vmi.features ??= structuredClone(preset.features);
    if (same(vmi.features, preset.features)) applied = true;
  }
  if (preset.devices?.watchdog) {
    vmi.devices.watchdog ??= structuredClone(preset.devices.watchdog);
    if (same(vmi.devices.watchdog, preset.devices.watchdog)) applied = true;
  }
  if (preset.ioThreadsPolicy) {
    vmi.ioThreadsPolicy ??= preset.ioThreadsPolicy;
    if (vmi.ioThreadsPolicy === preset.ioThreadsPolicy) applied = true;
  }
  return { applied, conflicts };
}

export class PresetConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PresetConflictError';
  }
}

export interface PresetsResult {
  readonly vmi: VirtualMachineInstance;
  /** The presets merged into it (each named in an annotation). */
  readonly applied: string[];
  /** Presets that matched but set only fields the VMI already had otherwise, or partly: KubeVirt logs these. */
  readonly notes: string[];
  /** The VMI mutator's deprecation warning when a preset was applied. */
  readonly warnings: string[];
}

/**
 * `applyPresets` for a VMI being created, given the presets of its namespace (in list order).
 * Throws `PresetConflictError` with KubeVirt's message when two matching presets conflict — virt-api
 * refuses the VMI with it (422).
 */
export function applyPresets(vmi: VirtualMachineInstance, presets: readonly VirtualMachineInstancePreset[]): PresetsResult {
  if (vmi.metadata?.annotations?.[PRESET_EXCLUSION_ANNOTATION] === 'true') return { vmi, applied: [], notes: [], warnings: [] };
  const matching = presets.filter((p) => labelSelectorMatches(p.spec.selector, vmi.metadata?.labels ?? {}));
  if (matching.length === 0) return { vmi, applied: [], notes: [], warnings: [] };
  const errors: string[] = [];
  matching.forEach((p, i) => {
    for (const visited of matching.slice(0, i)) {
      const c = presetMergeConflicts(p.spec.domain ?? {}, visited.spec.domain ?? {});
      if (c.length) errors.push(`presets '${p.metadata?.name ?? ''}' and '${visited.metadata?.name ?? ''}' conflict: ${aggregate(c)}`);
    }
  });
  if (errors.length) throw new PresetConflictError(`VirtualMachinePresets cannot be applied due to conflicts: ${aggregate(errors)}`);
  const next: VirtualMachineInstance = structuredClone(vmi);
  const applied: string[] = [];
  const notes: string[] = [];
  for (const p of matching) {
    const name = p.metadata?.name ?? '';
    const r = mergePresetDomain(p.spec.domain ?? {}, next.spec.domain);
    if (r.applied) {
      if (r.conflicts.length) notes.push(`Some settings were not applied for VirtualMachineInstancePreset '${name}': ${aggregate(r.conflicts)}`);
      next.metadata = { ...(next.metadata ?? {}), annotations: { ...(next.metadata?.annotations ?? {}), [presetAnnotation(name)]: PRESET_ANNOTATION_VALUE } };
      applied.push(name);
    } else notes.push(`Unable to apply VirtualMachineInstancePreset '${name}': ${r.conflicts.length ? aggregate(r.conflicts) : '<nil>'}`);
  }
  return { vmi: next, applied, notes, warnings: applied.length ? [PRESET_DEPRECATION_WARNING] : [] };
}

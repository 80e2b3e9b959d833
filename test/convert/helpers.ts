// Small builders for the converter's table tests: a defaulted VMI with overrides, its context,
// and helpers to find things in an argv.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { convertVMI, type ConvertContext, type LaunchPlan, type ResolvedVolume } from '../../launcher/convert/index.ts';
import { PlanBuilder } from '../../launcher/convert/builder.ts';
import { defaultedVMI, fixtureContext } from './fixtures.ts';

/** A minimal defaulted VMI (one pod interface, no disks) edited by `edit`. */
export function vmi(edit: (v: VirtualMachineInstance) => void = () => {}): VirtualMachineInstance {
  const v = defaultedVMI({ name: 'testvmi', devices: { disks: [] }, spec: { volumes: [] } });
  edit(v);
  return v;
}

/** A context with the given prepared volumes (paths under /data). */
export function ctx(volumes: Record<string, Partial<ResolvedVolume>> = {}, extra: Partial<ConvertContext> = {}): ConvertContext {
  const c = fixtureContext({ name: 't', vmi: vmi(), images: {} }, '', extra);
  for (const [name, v] of Object.entries(volumes)) c.volumes[name] = { path: `/data/${name}.img`, format: 'raw', ...v };
  return c;
}

export function convert(v: VirtualMachineInstance, c: ConvertContext = ctx()): LaunchPlan {
  return convertVMI(v, c);
}

/** Values following every occurrence of `opt` in argv. */
export function optValues(plan: LaunchPlan, opt: string): string[] {
  const out: string[] = [];
  plan.argv.forEach((a, i) => { if (a === opt && plan.argv[i + 1] !== undefined) out.push(plan.argv[i + 1] as string); });
  return out;
}

export function optValue(plan: LaunchPlan, opt: string): string | undefined {
  return optValues(plan, opt)[0];
}

/** Parsed -device JSON objects. */
export function devices(plan: LaunchPlan): Array<Record<string, unknown>> {
  return optValues(plan, '-device').map((d) => JSON.parse(d) as Record<string, unknown>);
}

export function device(plan: LaunchPlan, id: string): Record<string, unknown> | undefined {
  return devices(plan).find((d) => d['id'] === id);
}

/** Parsed -blockdev JSON objects. */
export function blockdevs(plan: LaunchPlan): Array<Record<string, unknown>> {
  return optValues(plan, '-blockdev').map((d) => JSON.parse(d) as Record<string, unknown>);
}

/** machine options as a map. */
export function machineOpts(plan: LaunchPlan): Record<string, string> {
  const [type, ...rest] = (optValue(plan, '-machine') ?? '').split(',');
  return Object.fromEntries([['type', type ?? ''], ...rest.map((kv) => kv.split('=') as [string, string])]);
}

export function cpuFlags(plan: LaunchPlan): string[] {
  return (optValue(plan, '-cpu') ?? '').split(',');
}

export const builder = (): PlanBuilder => new PlanBuilder();

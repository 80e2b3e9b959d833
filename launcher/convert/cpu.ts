// vCPU topology (`-smp`, with KubeVirt's maxSockets CPU hotplug) and the guest CPU model
// (`-cpu`), with the TCG mapping of qemu-qmp.md §2.5.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext } from './plan.ts';
import { quantityCeil } from './quantity.ts';

export interface CpuTopology {
  sockets: number;
  cores: number;
  threads: number;
  /** Sockets QEMU is started with room for (maxSockets, else sockets). */
  maxSockets: number;
}

/** vcpu.GetCPUTopology + CPUDomainConfigurator.configureCPUTopology. */
export function cpuTopology(vmi: VirtualMachineInstance): CpuTopology {
  const cpu = vmi.spec.domain.cpu;
  let sockets = cpu?.sockets || 1;
  const cores = cpu?.cores || 1;
  const threads = cpu?.threads || 1;
  if (!cpu || (!cpu.cores && !cpu.sockets && !cpu.threads)) {
    const res = vmi.spec.domain.resources;
    const limit = res?.limits?.['cpu'];
    const request = res?.requests?.['cpu'];
    if (limit !== undefined) sockets = Math.max(1, quantityCeil(limit, 'spec.domain.resources.limits.cpu'));
    else if (request !== undefined) sockets = Math.max(1, quantityCeil(request, 'spec.domain.resources.requests.cpu'));
  }
  const maxSockets = cpu?.maxSockets ? cpu.maxSockets : sockets;
  if (maxSockets < sockets) {
    throw new ConversionError('spec.domain.cpu.maxSockets', `maxSockets (${maxSockets}) is lower than sockets (${sockets})`);
  }
  return { sockets, cores, threads, maxSockets };
}

export const vcpuCount = (t: CpuTopology): number => t.sockets * t.cores * t.threads;

const HOST_MODEL = 'host-model';
const HOST_PASSTHROUGH = 'host-passthrough';

/** The -cpu model (without flags) for the accelerator in use. */
export function cpuModel(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): string {
  const model = vmi.spec.domain.cpu?.model || HOST_MODEL;
  const kvm = ctx.accelerator === 'kvm';
  if (model === HOST_MODEL || model === HOST_PASSTHROUGH) {
    if (kvm) return 'host,migratable=on';
    if (model === HOST_PASSTHROUGH) {
      b.warn(`spec.domain.cpu.model=host-passthrough needs KVM; emulating with -cpu max under TCG`);
    }
    return 'max';
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(model)) {
    throw new ConversionError('spec.domain.cpu.model', `"${model}" is not a CPU model name`);
  }
  return model;
}

/** Feature policies → QEMU flags (libvirt: require/force → on, disable/forbid → off). */
export function cpuFeatureFlags(vmi: VirtualMachineInstance, b: PlanBuilder): string[] {
  const cpu = vmi.spec.domain.cpu;
  const out: string[] = [];
  const named = cpu?.model !== undefined && cpu.model !== '' && cpu.model !== HOST_MODEL && cpu.model !== HOST_PASSTHROUGH;
  (cpu?.features ?? []).forEach((f, i) => {
    const field = `spec.domain.cpu.features[${i}]`;
    if (!/^[a-z0-9][a-z0-9_.-]*$/i.test(f.name)) throw new ConversionError(`${field}.name`, `"${f.name}" is not a CPU feature name`);
    const policy = f.policy || 'require';
    switch (policy) {
      case 'require':
      case 'force':
        out.push(`${f.name}=on`);
        break;
      case 'disable':
      case 'forbid':
        out.push(`${f.name}=off`);
        break;
      case 'optional':
        b.warn(`${field}: policy "optional" has no QEMU equivalent; "${f.name}" is left to the CPU model`);
        break;
      default:
        throw new ConversionError(`${field}.policy`, `unknown policy "${policy}" (force, require, optional, disable, forbid)`);
    }
  });
  // CPUDomainConfigurator: named models get mpx disabled unless the user chose otherwise.
  if (named && !(cpu?.features ?? []).some((f) => f.name === 'mpx')) out.push('mpx=off');
  return out;
}

export function configureCpu(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): CpuTopology {
  const t = cpuTopology(vmi);
  const current = vcpuCount(t);
  const max = t.maxSockets * t.cores * t.threads;
  const smp = [`${current}`];
  if (max !== current) smp.push(`maxcpus=${max}`);
  smp.push(`sockets=${t.maxSockets}`, 'dies=1', 'clusters=1', `cores=${t.cores}`, `threads=${t.threads}`);
  b.arg('-smp', smp.join(','));
  b.cpuModel = cpuModel(vmi, ctx, b);
  for (const flag of cpuFeatureFlags(vmi, b)) b.cpu(flag);
  const cpu = vmi.spec.domain.cpu;
  if (cpu?.dedicatedCpuPlacement) b.warn('spec.domain.cpu.dedicatedCpuPlacement: vCPU pinning is not applied by qvirt yet');
  if (cpu?.isolateEmulatorThread) b.warn('spec.domain.cpu.isolateEmulatorThread: emulator thread pinning is not applied by qvirt yet');
  if (cpu?.numa?.guestMappingPassthrough) {
    throw new ConversionError('spec.domain.cpu.numa.guestMappingPassthrough', 'guest NUMA passthrough is not supported by qvirt yet');
  }
  if (cpu?.realtime) throw new ConversionError('spec.domain.cpu.realtime', 'realtime vCPU tuning is not supported by qvirt yet');
  return t;
}

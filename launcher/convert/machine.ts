// Machine-wide options: machine type and accelerator, -name, the fixed libvirt-style process
// options (-nodefaults, -no-shutdown, -sandbox, ...), and `spec.domain.features` (ACPI, SMM,
// Hyper-V enlightenments, kvm.hidden, pvspinlock), which QEMU expresses as machine options or
// -cpu flags.
import type { VirtualMachineInstance, FeatureState } from '../../src/api/types.ts';
import type { PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext } from './plan.ts';
import { SANDBOX } from './constants.ts';

const FEATURES = 'spec.domain.features';

/** `-machine` type: the VMI's `q35` alias becomes the versioned name QEMU reports (pc-q35-7.2). */
export function machineType(vmi: VirtualMachineInstance, ctx: ConvertContext): string {
  const requested = vmi.spec.domain.machine?.type ?? 'q35';
  if (requested === 'q35' || requested === '') return ctx.qemu.machine;
  if (requested.startsWith('pc-q35-')) return requested;
  throw new ConversionError('spec.domain.machine.type', `machine type "${requested}" is not supported by qvirt: only q35 (pc-q35-*) is`);
}

/** `-name guest=<namespace>_<name>`: libvirt's domain name, which KubeVirt uses everywhere. */
export function domainName(vmi: VirtualMachineInstance): string {
  return `${vmi.metadata?.namespace ?? 'default'}_${vmi.metadata?.name ?? ''}`;
}

const enabled = (f: FeatureState | undefined, dflt = true): boolean => (f ? f.enabled ?? dflt : false);

/** The process-level options every qvirt QEMU gets, and the machine's base options. */
export function configureMachine(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): void {
  const arch = vmi.spec.architecture;
  if (arch !== undefined && arch !== '' && arch !== 'amd64') {
    throw new ConversionError('spec.architecture', `architecture "${arch}" is not supported by qvirt: only amd64 is`);
  }
  b.machine('type', machineType(vmi, ctx));
  b.machine('usb', 'off');
  b.machine('dump-guest-core', 'off');
  const memLock = vmi.spec.domain.memory?.reservedOverhead?.memLock;
  b.arg('-overcommit', `mem-lock=${memLock === 'true' || memLock === 'Required' ? 'on' : 'off'}`);
  b.arg('-no-user-config', '-nodefaults', '-no-shutdown');
  if (vmi.spec.domain.rebootPolicy === 'Terminate') b.arg('-no-reboot');
  b.arg('-sandbox', SANDBOX, '-msg', 'timestamp=on');
  if (ctx.incomingMigration) b.arg('-incoming', 'defer');
}

/** `spec.domain.features` → machine options and -cpu flags. Call after the CPU model is known. */
export function configureFeatures(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): void {
  const f = vmi.spec.domain.features;
  const kvm = ctx.accelerator === 'kvm';
  // Defaulting always sets `features: {}`; ACPI is on unless explicitly disabled.
  if (f?.acpi?.enabled === false) b.machine('acpi', 'off');
  // KubeVirt always writes <vmport state="off"/> on amd64.
  b.machine('vmport', 'off');
  if (f?.smm) b.machine('smm', enabled(f.smm) ? 'on' : 'off');
  if (f?.apic) {
    if (f.apic.enabled === false) b.warn(`${FEATURES}.apic.enabled=false: q35 always has an APIC; ignored`);
    if (f.apic.endOfInterrupt !== undefined) b.cpu(`kvm-pv-eoi=${f.apic.endOfInterrupt ? 'on' : 'off'}`);
  }
  if (f?.kvm?.hidden) b.cpu('kvm=off');
  if (f?.pvspinlock) b.cpu(`kvm-pv-unhalt=${enabled(f.pvspinlock) ? 'on' : 'off'}`);

  const hv = hypervFlags(vmi);
  if (hv.length > 0) {
    if (kvm) for (const flag of hv) b.cpu(flag);
    else b.warn(`${FEATURES}.hyperv: Hyper-V enlightenments need KVM; ignored under TCG (${hv.join(',')})`);
  }
}

/** libvirt's <hyperv> → QEMU hv-* -cpu flags (qemu_command.c qemuBuildCpuCommandLine). */
export function hypervFlags(vmi: VirtualMachineInstance): string[] {
  const f = vmi.spec.domain.features;
  const out: string[] = [];
  if (!f) return out;
  const h = f.hyperv;
  if (!h) {
    if (f.hypervPassthrough?.enabled) out.push('hv-passthrough=on');
    return out;
  }
  const flag = (name: string, s: FeatureState | undefined): void => {
    if (s) out.push(`${name}=${enabled(s) ? 'on' : 'off'}`);
  };
  flag('hv-relaxed', h.relaxed);
  flag('hv-vapic', h.vapic);
  if (h.spinlocks) {
    if (enabled(h.spinlocks)) out.push(`hv-spinlocks=0x${(h.spinlocks.spinlocks ?? 4096).toString(16)}`);
  }
  flag('hv-vpindex', h.vpindex);
  flag('hv-runtime', h.runtime);
  flag('hv-synic', h.synic);
  if (h.synictimer) {
    flag('hv-stimer', h.synictimer);
    flag('hv-stimer-direct', h.synictimer.direct);
  }
  flag('hv-reset', h.reset);
  if (h.vendorid && enabled(h.vendorid) && h.vendorid.vendorid) out.push(`hv-vendor-id=${h.vendorid.vendorid}`);
  flag('hv-frequencies', h.frequencies);
  flag('hv-reenlightenment', h.reenlightenment);
  if (h.tlbflush) {
    flag('hv-tlbflush', h.tlbflush);
    flag('hv-tlbflush-direct', h.tlbflush.direct);
    flag('hv-tlbflush-ext', h.tlbflush.extended);
  }
  flag('hv-ipi', h.ipi);
  flag('hv-evmcs', h.evmcs);
  return out;
}

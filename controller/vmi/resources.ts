// The compute container's resource requests and limits (pkg/virt-controller/services/
// renderresources.go + the predicates of template.go), in KubeVirt's order:
//   1. ephemeral-storage request (and limit, if set) += 50M;
//   2. device-plugin resources into the limits: kvm (unless emulation), tun (any interface or pod
//      interface auto-attached), vhost-net (a virtio interface and no emulation), vhost-vsock;
//   3. no memory request → the memory limit, else guest memory × 100 / memoryOvercommit;
//   4. CPU: dedicated → request = limit = vCPUs (+IOThreads, +emulator thread), memory limit :=
//      request; shared → request = (vCPUs + IOThreads) / cpuAllocationRatio ("100m" for 1 vCPU);
//   5. hugepages → hugepages-<size> request = limit, memory = rest + overhead; else memory
//      request (unless overcommitGuestOverhead) and limit (if any) += overhead;
//   6. GPUs / host devices / SEV: one of each named device resource.
// What the VMI asked for explicitly wins over what was calculated.
import { Annotation, ResourceName } from '../../src/api/constants.ts';
import { EPHEMERAL_STORAGE_OVERHEAD } from '../constants.ts';
import { addQuantity, formatQuantity, parseQuantity, quantityFromValue, quantityValue, subQuantity, type ParsedQuantity } from '../../src/api/quantity.ts';
import { vcpusFromTopology, type MemoryOverhead } from './overhead.ts';
import type { ContainerResources } from '../pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { RenderConfig } from './render-config.ts';

type Quantities = Map<string, ParsedQuantity>;

const toList = (m: Quantities): Record<string, string> => Object.fromEntries([...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, formatQuantity(v)]));
const fromList = (l: Record<string, string> | undefined): Quantities => new Map(Object.entries(l ?? {}).map(([k, v]) => [k, parseQuantity(v)]));
const isZero = (x: ParsedQuantity | undefined) => x === undefined || x.nanos === 0n;

/** An interface without a model, or model virtio, gets a vhost-net backend. */
export function hasVirtioInterface(vmi: VirtualMachineInstance): boolean {
  return (vmi.spec.domain.devices.interfaces ?? []).some((i) => i.model === undefined || i.model === '' || i.model === 'virtio');
}

/** Any interface, or the pod interface auto-attached (the default), needs /dev/net/tun. */
export function requiresTunDevice(vmi: VirtualMachineInstance): boolean {
  const d = vmi.spec.domain.devices;
  return (d.interfaces?.length ?? 0) > 0 || d.autoattachPodInterface === undefined || d.autoattachPodInterface === true;
}

/** The device-plugin resources the compute container needs (extended resources: limits only). */
export function virtualizationResources(vmi: VirtualMachineInstance, cfg: Pick<RenderConfig, 'useEmulation' | 'hypervisor'>): Record<string, string> {
  const res: Record<string, string> = {};
  if (requiresTunDevice(vmi)) res[ResourceName.Tun] = '1';
  if (hasVirtioInterface(vmi) && !cfg.useEmulation) res[ResourceName.VhostNet] = '1';
  if (!cfg.useEmulation) res[`devices.kubevirt.io/${cfg.hypervisor}`] = '1';
  if (vmi.spec.domain.devices.autoattachVSOCK === true) res[ResourceName.VhostVsock] = '1';
  return res;
}

/** `%g` of a float the way Go prints it for the magnitudes that occur here (no exponent). */
function goFloat(v: number): string {
  return String(v);
}

/** The CPU request of a shared-CPU VMI: `(vcpus + ioThreads) / ratio`, `"100m"` style below one core. */
export function cpuRequestForRatio(totalCPUs: number, cpuAllocationRatio: number): string | undefined {
  if (totalCPUs === 0 || cpuAllocationRatio <= 0) return undefined;
  const val = totalCPUs / cpuAllocationRatio;
  return val < 1 ? `${goFloat(val * 1000)}m` : goFloat(val);
}

export interface ResourceOptions {
  /** Namespace quota forces CPU limits (`autoCPULimitNamespaceLabelSelector` / `limits.cpu` quota). */
  readonly autoCPULimits?: boolean;
  /** Namespace quota forces memory limits: limit = request × ratio (default 2). */
  readonly autoMemoryLimitsRatio?: number | undefined;
}

function supplementalIOThreads(vmi: VirtualMachineInstance): number {
  const d = vmi.spec.domain;
  return d.ioThreadsPolicy === 'supplementalPool' ? (d.ioThreads?.supplementalPoolThreadCount ?? 0) : 0;
}

function bump(m: Quantities, name: string): void {
  const cur = m.get(name);
  m.set(name, cur ? addQuantity(cur, '1') : parseQuantity('1'));
}

/** The compute container's `resources`, given the memory overhead computed for the VMI. */
export function renderComputeResources(vmi: VirtualMachineInstance, cfg: RenderConfig, overhead: MemoryOverhead, opts: ResourceOptions = {}): ContainerResources {
  const domain = vmi.spec.domain;
  const vmLimits = fromList(domain.resources?.limits);
  const vmRequests = fromList(domain.resources?.requests);
  const calcLimits: Quantities = new Map();
  const calcRequests: Quantities = new Map();

  // 1. ephemeral storage for the launcher's writable layer
  const eph = parseQuantity(EPHEMERAL_STORAGE_OVERHEAD);
  const ephReq = vmRequests.get('ephemeral-storage');
  vmRequests.set('ephemeral-storage', ephReq ? addQuantity(ephReq, eph) : eph);
  const ephLim = vmLimits.get('ephemeral-storage');
  if (ephLim) vmLimits.set('ephemeral-storage', addQuantity(ephLim, eph));

  // 2. device plugins
  for (const [k, v] of Object.entries(virtualizationResources(vmi, cfg))) vmLimits.set(k, parseQuantity(v));

  // 3. memory request from the guest size when none was given
  if (isZero(vmRequests.get('memory'))) {
    const limit = vmLimits.get('memory');
    if (!isZero(limit)) vmRequests.set('memory', limit!);
    else {
      let memory: ParsedQuantity | undefined;
      if (domain.memory?.guest !== undefined) memory = parseQuantity(domain.memory.guest);
      else if (domain.memory?.hugepages?.pageSize !== undefined) memory = parseQuantity(domain.memory.hugepages.pageSize);
      if (memory && quantityValue(memory) > 0n) {
        vmRequests.set('memory', cfg.memoryOvercommit === 100 ? memory : quantityFromValue((quantityValue(memory) * 100n) / BigInt(cfg.memoryOvercommit), memory.format));
      }
    }
  }

  // 4. CPU
  const ioThreads = supplementalIOThreads(vmi);
  if (domain.cpu?.dedicatedCpuPlacement === true) {
    const vcpus = vcpusFromTopology(domain.cpu);
    if (vcpus !== 0) {
      vmLimits.set('cpu', quantityFromValue(vcpus + ioThreads));
      vmRequests.set('cpu', quantityFromValue(vcpus + ioThreads));
    } else {
      const l = vmLimits.get('cpu');
      if (l) vmLimits.set('cpu', addQuantity(l, String(ioThreads)));
      const r = vmRequests.get('cpu');
      if (r) vmRequests.set('cpu', addQuantity(r, String(ioThreads)));
    }
    if (domain.cpu.isolateEmulatorThread) {
      const limits = vmLimits.get('cpu') ?? parseQuantity('0');
      let emulator = 1;
      if (vmi.metadata?.annotations?.[Annotation.EmulatorThreadCompleteToEvenParity] !== undefined && (Number(quantityValue(limits)) + ioThreads) % 2 === 0) emulator = 2;
      vmLimits.set('cpu', addQuantity(limits, String(emulator)));
      const r = vmRequests.get('cpu');
      if (r) vmRequests.set('cpu', addQuantity(r, String(emulator)));
    }
    const memReq = vmRequests.get('memory');
    if (memReq) vmLimits.set('memory', memReq);
  } else {
    const vcpus = domain.cpu ? vcpusFromTopology(domain.cpu) : 1;
    const request = cpuRequestForRatio(vcpus + ioThreads, cfg.cpuAllocationRatio);
    if (request !== undefined) {
      calcRequests.set('cpu', parseQuantity(request));
      if (opts.autoCPULimits && !vmLimits.has('cpu')) calcLimits.set('cpu', quantityFromValue(vcpus + ioThreads, 'DecimalSI'));
    }
  }

  // 5. memory overhead
  const hugepages = domain.memory?.hugepages;
  if (hugepages) {
    const name = `hugepages-${hugepages.pageSize}`;
    let hpReq = vmRequests.get('memory') ?? parseQuantity('0');
    const guest = domain.memory?.guest !== undefined ? parseQuantity(domain.memory.guest) : undefined;
    if (guest && quantityValue(hpReq) > quantityValue(guest)) hpReq = guest;
    calcRequests.set(name, hpReq);
    calcLimits.set(name, hpReq);
    let reqDiff = parseQuantity('0k');
    let limDiff = parseQuantity('0k');
    if (guest) {
      const req = vmRequests.get('memory');
      const lim = vmLimits.get('memory');
      if (req && quantityValue(req) > quantityValue(guest)) reqDiff = subQuantity(addQuantity(reqDiff, req), guest);
      if (lim && quantityValue(lim) > quantityValue(guest)) limDiff = subQuantity(addQuantity(limDiff, lim), guest);
    }
    vmRequests.set('memory', addQuantity(reqDiff, overhead.quantity));
    if (vmLimits.has('memory')) vmLimits.set('memory', addQuantity(limDiff, overhead.quantity));
  } else {
    const req = vmRequests.get('memory');
    if (!domain.resources?.overcommitGuestOverhead) vmRequests.set('memory', req ? addQuantity(req, overhead.quantity) : overhead.quantity);
    const lim = vmLimits.get('memory');
    if (lim) vmLimits.set('memory', addQuantity(lim, overhead.quantity));
  }

  // 5b. namespace-enforced memory limits
  if (opts.autoMemoryLimitsRatio !== undefined && !domain.resources?.limits?.['memory']) {
    const req = vmRequests.get('memory');
    if (req) calcLimits.set('memory', quantityFromValue(BigInt(Math.trunc(Number(quantityValue(req)) * opts.autoMemoryLimitsRatio)), req.format));
  }

  // 6. device-plugin devices named by the VMI
  const bumpBoth = (name: string) => {
    const merged = mergeInto(calcLimits, vmLimits);
    bump(merged, name);
    calcLimits.set(name, merged.get(name)!);
    const mergedReq = mergeInto(calcRequests, vmRequests);
    bump(mergedReq, name);
    calcRequests.set(name, mergedReq.get(name)!);
  };
  for (const g of domain.devices.gpus ?? []) if (g.deviceName && !g.claimName) bumpBoth(g.deviceName);
  for (const h of domain.devices.hostDevices ?? []) if (h.deviceName && !h.claimName) bumpBoth(h.deviceName);
  if (domain.launchSecurity?.sev !== undefined) bumpBoth(ResourceName.SEV);

  return { requests: toList(mergeInto(calcRequests, vmRequests)), limits: toList(mergeInto(calcLimits, vmLimits)) };
}

/** calculated ∪ VMI (VMI wins), as a new map. */
function mergeInto(calculated: Quantities, vm: Quantities): Quantities {
  const out = new Map(calculated);
  for (const [k, v] of vm) out.set(k, v);
  return out;
}

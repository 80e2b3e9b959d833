// The memory a launcher pod needs on top of the guest's RAM (KubeVirt's
// pkg/hypervisor/kvm/hypervisorbackend.go GetMemoryOverhead + the network binding overhead),
// keeping KubeVirt's formula term for term except the fixed per-pod processes: KubeVirt budgets
// virt-launcher-monitor 25Mi + virt-launcher 100Mi + virtlogd 25Mi + virtqemud 40Mi for its Go
// launcher and libvirt daemons; qvirt runs one Node.js launcher that spawns QEMU itself, so those
// four terms become one, QVIRT_LAUNCHER_OVERHEAD. QEMU's own 50Mi stays.
//
// QVIRT_LAUNCHER_OVERHEAD is measured, the way KubeVirt measures its constants (`ps` RSS of the
// process): `qvirt launcher`'s module graph loaded on Node 24.21 (type stripping, gRPC, protobufjs,
// pino) idles at 109–110 MiB RSS (≈54 MiB anonymous + ≈56 MiB file-backed: the node binary and
// libraries), against ≈44 MiB for a bare Node process (≈63 MiB when it runs a .ts file). The budget
// is 120Mi; test/controller/launcher-footprint.test.ts re-measures it on every run and fails if the
// launcher outgrows it. (anchors.md's 39–51 MiB were Node 20 running plain JavaScript.)
import { parseQuantity, quantityValue, compareQuantity, formatQuantity, quantityFromValue, type ParsedQuantity } from '../../src/api/quantity.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { hasTpmDevice } from '../../src/api/tpm.ts';

const Mi = 1024n * 1024n;

/** The fixed per-pod terms: the processes besides the guest that every launcher pod runs. */
export interface FixedOverheads {
  readonly [process: string]: bigint;
}

/** qvirt: one launcher process (Node.js, drives QEMU over QMP) and QEMU itself. */
export const QVIRT_LAUNCHER_OVERHEAD = 120n * Mi;
export const QEMU_OVERHEAD = 50n * Mi;
export const QVIRT_FIXED_OVERHEADS: FixedOverheads = { 'qvirt-launcher': QVIRT_LAUNCHER_OVERHEAD, qemu: QEMU_OVERHEAD };

/** KubeVirt's constants (hypervisorbackend.go), kept to show the difference, never used to render. */
export const KUBEVIRT_FIXED_OVERHEADS: FixedOverheads = {
  'virt-launcher-monitor': 25n * Mi,
  'virt-launcher': 100n * Mi,
  virtlogd: 25n * Mi,
  virtqemud: 40n * Mi,
  qemu: 50n * Mi,
};

/** Per-feature terms, as in KubeVirt. */
export const OverheadTerms = {
  perVCPU: 8n * Mi,
  ioThread: 8n * Mi,
  video: 32n * Mi,
  arm64Firmware: 128n * Mi,
  vfio: 1024n * Mi,
  downwardMetrics: 1n * Mi,
  probe: 10n * Mi,
  probeHelper: 100n * Mi,
  sev: 256n * Mi,
  tpm: 53n * Mi,
  dedicatedOrGuaranteed: 100n * Mi,
  passtBinding: 250n * Mi,
} as const;

export interface OverheadOptions {
  /** The VMI's architecture, else the cluster's (amd64 by default). */
  readonly architecture?: string | undefined;
  /** Cluster `additionalGuestMemoryOverheadRatio` (e.g. "1.5"); applied to everything but the network term. */
  readonly additionalGuestMemoryOverheadRatio?: string | undefined;
  /** The fixed process terms; qvirt's unless a comparison asks for KubeVirt's. */
  readonly fixed?: FixedOverheads;
}

export interface OverheadTerm {
  readonly name: string;
  readonly bytes: bigint;
}

export interface MemoryOverhead {
  /** The total as a Kubernetes quantity (decimal SI, as KubeVirt builds it from a kilo-scaled zero). */
  readonly quantity: ParsedQuantity;
  readonly bytes: bigint;
  /** Every term that contributed, in formula order, for logs and documentation. */
  readonly terms: readonly OverheadTerm[];
}

/** `hardware.GetNumberOfVCPUs`: cores × sockets × threads, where a 0 factor is skipped. */
export function vcpusFromTopology(cpu: { cores?: number; sockets?: number; threads?: number }): number {
  let v = cpu.cores ?? 0;
  for (const f of [cpu.sockets ?? 0, cpu.threads ?? 0]) {
    if (f !== 0) v = v === 0 ? f : v * f;
  }
  return v;
}

const q = (s: string | undefined) => (s === undefined ? undefined : parseQuantity(s));

/** `WantsToHaveQOSGuaranteed`: memory and CPU requests equal their limits (a lone memory limit counts). */
export function wantsGuaranteedQOS(vmi: VirtualMachineInstance): boolean {
  const r = vmi.spec.domain.resources;
  const reqMem = q(r?.requests?.['memory']);
  const limMem = q(r?.limits?.['memory']);
  const reqCpu = q(r?.requests?.['cpu']);
  const limCpu = q(r?.limits?.['cpu']);
  const zero = (x: ParsedQuantity | undefined) => x === undefined || x.nanos === 0n;
  const eq = (a: ParsedQuantity | undefined, b: ParsedQuantity | undefined) => compareQuantity(a ?? '0', b ?? '0') === 0;
  const memoryWantsIt = (zero(reqMem) && !zero(limMem)) || (!zero(reqMem) && eq(reqMem, limMem));
  const cpuWantsIt = !zero(reqCpu) && eq(reqCpu, limCpu);
  return memoryWantsIt && cpuWantsIt;
}

export function hasVFIODevice(vmi: VirtualMachineInstance): boolean {
  const d = vmi.spec.domain.devices;
  return (d.gpus ?? []).some((g) => !!g.deviceName) || (d.hostDevices ?? []).some((h) => !!h.deviceName);
}

export function hasDownwardMetrics(vmi: VirtualMachineInstance): boolean {
  return (vmi.spec.volumes ?? []).some((v) => v.downwardMetrics !== undefined) || vmi.spec.domain.devices.downwardMetrics !== undefined;
}

function isSEV(vmi: VirtualMachineInstance): boolean {
  const ls = vmi.spec.domain.launchSecurity;
  return ls?.sev !== undefined || ls?.snp !== undefined;
}

/** The vCPU count the overhead formula uses: topology, else CPU limit, else CPU request, at least 1. */
export function overheadVCPUs(vmi: VirtualMachineInstance): number {
  const domain = vmi.spec.domain;
  let vcpus = 0;
  if (domain.cpu) vcpus = vcpusFromTopology(domain.cpu);
  else {
    const lim = domain.resources?.limits?.['cpu'];
    const req = domain.resources?.requests?.['cpu'];
    if (lim !== undefined) vcpus = Number(quantityValue(lim));
    else if (req !== undefined) vcpus = Number(quantityValue(req));
  }
  return vcpus < 1 ? 1 : vcpus;
}

/** `ScaledValue(Kilo)`: ceil(bytes / 1000). */
const ceilKilo = (bytes: bigint) => (bytes <= 0n ? -((-bytes) / 1000n) : (bytes + 999n) / 1000n);

/**
 * The launcher pod's memory overhead for this VMI. Terms (KubeVirt's order): page tables
 * (requests.memory / 512, only when a memory request is set), the fixed processes, 8Mi per vCPU,
 * 8Mi for the IOThread, 32Mi VGA unless autoattachGraphicsDevice is false, 128Mi on arm64, 1Gi
 * with VFIO devices, 1Mi downward metrics, 10Mi per exec probe + 100Mi once, 256Mi SEV, 53Mi
 * TPM, 100Mi for dedicated CPUs or a guaranteed QoS, reservedOverhead.addedOverhead; all scaled by
 * additionalGuestMemoryOverheadRatio; then 250Mi for a passt binding.
 */
export function memoryOverhead(vmi: VirtualMachineInstance, opts: OverheadOptions = {}): MemoryOverhead {
  const domain = vmi.spec.domain;
  const terms: OverheadTerm[] = [];
  const add = (name: string, bytes: bigint) => terms.push({ name, bytes });

  const memReq = domain.resources?.requests?.['memory'];
  const reqBytes = memReq === undefined ? 0n : quantityValue(memReq);
  add('pagetables', (ceilKilo(reqBytes) * 1000n) / 512n);

  for (const [name, bytes] of Object.entries(opts.fixed ?? QVIRT_FIXED_OVERHEADS)) add(name, bytes);

  const vcpus = overheadVCPUs(vmi);
  add(`vcpus (${vcpus})`, OverheadTerms.perVCPU * BigInt(vcpus));
  add('iothread', OverheadTerms.ioThread);
  const graphics = domain.devices.autoattachGraphicsDevice;
  if (graphics === undefined || graphics === true) add('video', OverheadTerms.video);
  const arch = vmi.spec.architecture || opts.architecture || 'amd64';
  if (arch === 'arm64') add('arm64 firmware', OverheadTerms.arm64Firmware);
  if (hasVFIODevice(vmi)) add('vfio', OverheadTerms.vfio);
  if (hasDownwardMetrics(vmi)) add('downward metrics', OverheadTerms.downwardMetrics);
  const liveExec = vmi.spec.livenessProbe?.exec !== undefined;
  const readyExec = vmi.spec.readinessProbe?.exec !== undefined;
  if (liveExec) add('liveness exec probe', OverheadTerms.probe);
  if (readyExec) add('readiness exec probe', OverheadTerms.probe);
  if (liveExec || readyExec) add('probe helper', OverheadTerms.probeHelper);
  if (isSEV(vmi)) add('sev', OverheadTerms.sev);
  if (hasTpmDevice(vmi.spec)) add('tpm', OverheadTerms.tpm);
  if (domain.cpu?.dedicatedCpuPlacement === true || wantsGuaranteedQOS(vmi)) add('dedicated cpu / guaranteed qos', OverheadTerms.dedicatedOrGuaranteed);
  const added = domain.memory?.reservedOverhead?.addedOverhead;
  if (added !== undefined) add('reservedOverhead.addedOverhead', quantityValue(added));

  let total = terms.reduce((s, t) => s + t.bytes, 0n);
  const ratioText = opts.additionalGuestMemoryOverheadRatio;
  if (ratioText !== undefined && ratioText !== '') {
    const ratio = Number.parseFloat(ratioText);
    // KubeVirt logs and ignores a ratio it cannot parse.
    if (Number.isFinite(ratio)) {
      const extraKilo = BigInt(Math.trunc(Number(ceilKilo(total)) * (ratio - 1)));
      add(`additionalGuestMemoryOverheadRatio ${ratioText}`, extraKilo * 1000n);
      total += extraKilo * 1000n;
    }
  }
  if ((domain.devices.interfaces ?? []).some((i) => i.passtBinding !== undefined)) {
    add('passt binding', OverheadTerms.passtBinding);
    total += OverheadTerms.passtBinding;
  }
  return { quantity: quantityFromValue(total, 'DecimalSI'), bytes: total, terms };
}

/** The overhead as KubeVirt's canonical quantity string. */
export function memoryOverheadString(vmi: VirtualMachineInstance, opts: OverheadOptions = {}): string {
  return formatQuantity(memoryOverhead(vmi, opts).quantity);
}

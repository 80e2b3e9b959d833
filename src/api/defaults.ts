/**
 * KubeVirt's create-time defaulting, as pure functions.
 *
 * - `defaultNewVirtualMachineInstance`: what the VMI mutating webhook does on CREATE
 *   (`vmi-mutator.go` → `ApplyNewVMIMutations` → `defaults.SetDefaultVirtualMachineInstance`), in
 *   KubeVirt's order:
 *     spec: architecture, machine type, CPU request, guest memory, CPU topology, containerDisk pull
 *     policies, eviction strategy, default pod network + interface, a disk for every volume;
 *     scheme defaults: firmware (+uuid), features (acpi enabled), disk targets, inputs, probes,
 *     timers, feature states, cdrom readonly/tray; Hyper-V dependencies; architecture defaults
 *     (amd64: bus `sata`, watchdog action `reset`; arm64: virtio, EFI); CPU model; status.memory;
 *     status.currentCPUTopology; CPU/memory hotplug limits (LiveUpdate rollout); the PCI topology
 *     annotation; `status.runtimeUser` 107 unless the Root gate; then the VMI finalizer, phase
 *     `Pending` and its transition timestamp.
 *   Quantities come out canonical, as the Go webhook re-marshals `/spec` and `/status`.
 * - `defaultNewVirtualMachine`: the VM mutating webhook on CREATE (firmware uuid/serial,
 *   architecture, machine type, PCI topology annotation on the template).
 * - `setDefaultVolumeDisk`, `vmiFirmwareUUID` (VM → VMI uuid, `uuid.NewSHA1`).
 *
 * Pure: inputs are never modified; time and randomness come from `env`. Idempotent: applying a
 * function to its own output changes nothing.
 */
import { createHash } from 'node:crypto';
import { canonicalizeQuantities, quantitiesByValue } from './canonical.ts';
import {
  cpuModelFor,
  isVMRolloutStrategyLiveUpdate,
  machineTypeFor,
  NetworkInterfaceType,
  rootEnabled,
  type ClusterConfig,
} from './cluster-config.ts';
import {
  CPU_MODEL_HOST_PASSTHROUGH,
  DEFAULT_HYPERV_SPINLOCKS,
  DEFAULT_NETWORK_NAME,
  DiskBus,
  FIRMWARE_UUID_NAMESPACE,
  Finalizer,
  InputBus,
  InputType,
  NON_ROOT_UID,
  ProbeDefaults,
  PullPolicy,
  TrayState,
  VMIPhase,
  WatchdogAction,
} from './constants.ts';
import { compareQuantity, formatQuantity, parseQuantity, quantityFromValue, quantityValue } from './quantity.ts';
import { VirtualMachineInstanceSpecSchema, VirtualMachineInstanceStatusSchema, VirtualMachineSpecSchema } from './schema/kubevirt.ts';
import type {
  FeatureState,
  Probe,
  Quantity,
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceSpec,
} from './types.ts';

/** What defaulting needs from the outside world. */
export interface DefaultingEnv {
  readonly config: ClusterConfig;
  /** Current time; formatted as `metav1.Time` (RFC 3339, seconds). */
  readonly now: () => Date;
  /** A random RFC 4122 UUID (e.g. `crypto.randomUUID`). */
  readonly randomUUID: () => string;
}

/** Defaulting refused the object (the webhook denies the request with this message). */
export class DefaultingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DefaultingError';
  }
}

/** Annotation the VMI/VM webhooks set when the machine supports PCIe hotplug. */
export const PCI_TOPOLOGY_VERSION_ANNOTATION = 'kubevirt.io/pci-topology-version';
export const PCI_TOPOLOGY_VERSION_V3 = 'v3';

/** `metav1.Time` JSON: RFC 3339 in UTC with second precision. */
export function formatTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// ------------------------------------------------------------------------------------------------
// UUIDs
// ------------------------------------------------------------------------------------------------

function uuidBytes(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new Error(`not a UUID: ${JSON.stringify(uuid)}`);
  return Buffer.from(hex, 'hex');
}

function formatUUID(b: Uint8Array): string {
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** RFC 4122 version-5 (SHA-1, name-based) UUID: Go's `uuid.NewSHA1(namespace, []byte(name))`. */
export function uuidV5(namespace: string, name: string): string {
  const digest = createHash('sha1').update(uuidBytes(namespace)).update(Buffer.from(name, 'utf8')).digest();
  const b = Uint8Array.from(digest.subarray(0, 16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x50;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  return formatUUID(b);
}

/** The firmware UUID a VM's VMI gets when the template sets none (`vm.go`). */
export function vmiFirmwareUUID(vmName: string): string {
  return uuidV5(FIRMWARE_UUID_NAMESPACE, vmName);
}

// ------------------------------------------------------------------------------------------------
// Spec defaults (`SetDefaultVirtualMachineInstanceSpec`), each mutating a private copy
// ------------------------------------------------------------------------------------------------

const isZeroQuantity = (q: Quantity | undefined): boolean => q === undefined || parseQuantity(q).nanos === 0n;

function setDefaultArchitecture(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  if (!spec.architecture) spec.architecture = config.architectureConfiguration.defaultArchitecture;
}

function setDefaultMachineType(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  const type = machineTypeFor(config, spec.architecture ?? '');
  if (spec.domain.machine) {
    if (!spec.domain.machine.type) spec.domain.machine.type = type;
  } else {
    spec.domain.machine = { type };
  }
}

function setDefaultResourceRequests(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  const res = (spec.domain.resources ??= {});
  const limitCPU = res.limits?.cpu;
  if (!isZeroQuantity(limitCPU) && isZeroQuantity(res.requests?.cpu)) {
    res.requests = { ...res.requests, cpu: limitCPU as Quantity };
  }
  // The cluster CPU request is only injected when it differs from KubeVirt's default 100m.
  if (compareQuantity(config.cpuRequest, '100m') !== 0 && res.requests?.cpu === undefined) {
    if (spec.domain.cpu?.dedicatedCpuPlacement) return;
    res.requests = { ...res.requests, cpu: config.cpuRequest };
  }
}

function setGuestMemory(spec: VirtualMachineInstanceSpec): void {
  if (spec.domain.memory?.guest !== undefined) return;
  const memory = (spec.domain.memory ??= {});
  const res = spec.domain.resources;
  if (!isZeroQuantity(res?.requests?.memory)) {
    memory.guest = res?.requests?.memory;
  } else if (!isZeroQuantity(res?.limits?.memory)) {
    memory.guest = res?.limits?.memory;
  } else if (memory.hugepages?.pageSize !== undefined) {
    try {
      parseQuantity(memory.hugepages.pageSize);
      memory.guest = memory.hugepages.pageSize;
    } catch {
      // left to validation
    }
  }
}

function setDefaultGuestCPUTopology(spec: VirtualMachineInstanceSpec): void {
  const cpu = spec.domain.cpu;
  if (cpu && (cpu.cores || cpu.sockets || cpu.threads)) return;
  const res = spec.domain.resources;
  let sockets = 1;
  const fromLimit = res?.limits?.cpu;
  const fromRequest = res?.requests?.cpu;
  if (fromLimit !== undefined) sockets = Number(BigInt.asUintN(32, quantityValue(fromLimit)));
  else if (fromRequest !== undefined) sockets = Number(BigInt.asUintN(32, quantityValue(fromRequest)));
  spec.domain.cpu = { ...cpu, sockets, cores: 1, threads: 1 };
}

function setDefaultPullPoliciesOnContainerDisks(spec: VirtualMachineInstanceSpec): void {
  for (const v of spec.volumes ?? []) {
    const cd = v.containerDisk;
    if (cd && !cd.imagePullPolicy) {
      cd.imagePullPolicy = cd.image.endsWith(':latest') || !/[:@]/.test(cd.image) ? PullPolicy.Always : PullPolicy.IfNotPresent;
    }
  }
}

function setDefaultEvictionStrategy(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  if (spec.evictionStrategy === undefined) spec.evictionStrategy = config.evictionStrategy;
}

/** `vmispec.SetDefaultNetworkInterface`. Throws `DefaultingError` where KubeVirt refuses. */
export function setDefaultNetworkInterface(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  if (spec.domain.devices.autoattachPodInterface === false) return;
  if ((spec.networks?.length ?? 0) !== 0 || (spec.domain.devices.interfaces?.length ?? 0) !== 0) return;
  switch (config.network.defaultNetworkInterface) {
    case NetworkInterfaceType.Bridge:
      if (!config.network.permitBridgeInterfaceOnPodNetwork) {
        throw new DefaultingError('bridge interface is not enabled in kubevirt-config');
      }
      spec.domain.devices.interfaces = [{ name: DEFAULT_NETWORK_NAME, bridge: {} }];
      break;
    case NetworkInterfaceType.Masquerade:
      spec.domain.devices.interfaces = [{ name: DEFAULT_NETWORK_NAME, masquerade: {} }];
      break;
    case NetworkInterfaceType.Slirp:
      throw new DefaultingError('slirp interface is deprecated as of v1.3');
  }
  spec.networks = [{ name: DEFAULT_NETWORK_NAME, pod: {} }];
}

/**
 * `util.SetDefaultVolumeDisk`: every volume with no disk or filesystem of the same name gets a disk
 * `{name}` appended. Returns a new spec; `spec` is not modified.
 */
export function setDefaultVolumeDisk(spec: VirtualMachineInstanceSpec): VirtualMachineInstanceSpec {
  const out = structuredClone(spec);
  setDefaultVolumeDiskInPlace(out);
  return out;
}

function setDefaultVolumeDiskInPlace(spec: VirtualMachineInstanceSpec): void {
  const names = new Set<string>();
  for (const d of spec.domain.devices.disks ?? []) names.add(d.name);
  for (const f of spec.domain.devices.filesystems ?? []) names.add(f.name);
  for (const v of spec.volumes ?? []) {
    if (!names.has(v.name)) {
      (spec.domain.devices.disks ??= []).push({ name: v.name });
      names.add(v.name);
    }
  }
}

/**
 * `SetDefaultVirtualMachineInstanceSpec` alone (what the VM admitter applies to a copy of the
 * template before validating it). Returns a new spec; throws `DefaultingError`.
 */
export function defaultVirtualMachineInstanceSpec(spec: VirtualMachineInstanceSpec, config: ClusterConfig): VirtualMachineInstanceSpec {
  const out = structuredClone(spec);
  setDefaultVirtualMachineInstanceSpec(config, out);
  return out;
}

function setDefaultVirtualMachineInstanceSpec(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  setDefaultArchitecture(config, spec);
  setDefaultMachineType(config, spec);
  setDefaultResourceRequests(config, spec);
  setGuestMemory(spec);
  setDefaultGuestCPUTopology(spec);
  setDefaultPullPoliciesOnContainerDisks(spec);
  setDefaultEvictionStrategy(config, spec);
  setDefaultNetworkInterface(config, spec);
  setDefaultVolumeDiskInPlace(spec);
}

// ------------------------------------------------------------------------------------------------
// Scheme defaults (`SetObjectDefaults_VirtualMachineInstance`)
// ------------------------------------------------------------------------------------------------

function enable<T extends FeatureState>(fs: T | undefined): void {
  if (fs && fs.enabled === undefined) fs.enabled = true;
}

function setProbeDefaults(p: Probe | undefined): void {
  if (!p) return;
  if ((p.timeoutSeconds ?? 0) < 1) p.timeoutSeconds = ProbeDefaults.timeoutSeconds;
  if ((p.periodSeconds ?? 0) < 1) p.periodSeconds = ProbeDefaults.periodSeconds;
  if ((p.successThreshold ?? 0) < 1) p.successThreshold = ProbeDefaults.successThreshold;
  if ((p.failureThreshold ?? 0) < 1) p.failureThreshold = ProbeDefaults.failureThreshold;
}

function setSchemeDefaults(vmi: VirtualMachineInstance, env: DefaultingEnv): void {
  const domain = vmi.spec.domain;
  domain.firmware ??= {};
  domain.features ??= {};
  for (const disk of domain.devices.disks ?? []) {
    if (!disk.disk && !disk.cdrom && !disk.lun) disk.disk = {};
  }
  for (const input of domain.devices.inputs ?? []) {
    if (!input.bus) input.bus = InputBus.USB;
    if (!input.type) input.type = InputType.Tablet;
  }
  if (!domain.firmware.uuid) domain.firmware.uuid = env.randomUUID();
  const timer = domain.clock?.timer;
  if (timer) {
    for (const t of [timer.hpet, timer.kvm, timer.pit, timer.rtc, timer.hyperv]) {
      if (t && t.present === undefined) t.present = true;
    }
  }
  const f = domain.features;
  // `acpi` is a value (not a pointer) in Go: it always exists once features does.
  f.acpi ??= {};
  enable(f.acpi);
  enable(f.apic);
  const hv = f.hyperv;
  if (hv) {
    for (const s of [hv.relaxed, hv.vapic, hv.vpindex, hv.runtime, hv.synic, hv.reset, hv.frequencies, hv.reenlightenment, hv.ipi, hv.evmcs]) {
      enable(s);
    }
    if (hv.spinlocks) {
      enable(hv.spinlocks);
      if (hv.spinlocks.enabled === true && hv.spinlocks.spinlocks === undefined) hv.spinlocks.spinlocks = DEFAULT_HYPERV_SPINLOCKS;
    }
    if (hv.synictimer) {
      enable(hv.synictimer);
      enable(hv.synictimer.direct);
    }
    enable(hv.vendorid);
    if (hv.tlbflush) {
      enable(hv.tlbflush);
      enable(hv.tlbflush.direct);
      enable(hv.tlbflush.extended);
    }
  }
  enable(f.smm);
  enable(f.pvspinlock);
  for (const disk of domain.devices.disks ?? []) {
    if (disk.cdrom) {
      if (disk.cdrom.readonly === undefined) disk.cdrom.readonly = true;
      if (!disk.cdrom.tray) disk.cdrom.tray = TrayState.Closed;
    }
    enable(disk.blockSize?.matchVolume);
  }
  for (const gpu of domain.devices.gpus ?? []) enable(gpu.virtualGPUOptions?.display?.ramFB);
  setProbeDefaults(vmi.spec.livenessProbe);
  setProbeDefaults(vmi.spec.readinessProbe);
}

/** `SetHypervFeatureDependencies`: enable what enabled Hyper-V features require, when unset. */
function setHypervFeatureDependencies(spec: VirtualMachineInstanceSpec): void {
  const hv = spec.domain.features?.hyperv;
  if (!hv) return;
  const on = (s: FeatureState | undefined) => s?.enabled === true;
  const require = (feature: boolean, get: () => FeatureState | undefined, set: (s: FeatureState) => void): boolean => {
    if (!feature) return true;
    const req = get();
    if (req === undefined || req.enabled === undefined) {
      set({ ...req, enabled: true });
      return true;
    }
    return req.enabled; // disabled requirement: left for validation to report
  };
  const vpindex = () => hv.vpindex;
  const setVpindex = (s: FeatureState) => (hv.vpindex = s);
  // KubeVirt's order: evmcs→vapic, ipi→vpindex, tlbflush→vpindex, synictimer→synic, synic→vpindex; stop at the first failure.
  const steps: (() => boolean)[] = [
    () => require(on(hv.evmcs), () => hv.vapic, (s) => (hv.vapic = s)),
    () => require(on(hv.ipi), vpindex, setVpindex),
    () => require(hv.tlbflush?.enabled === true, vpindex, setVpindex),
    () => require(hv.synictimer?.enabled === true, () => hv.synic, (s) => (hv.synic = s)),
    () => require(on(hv.synic), vpindex, setVpindex),
  ];
  for (const step of steps) if (!step()) break;
  if (hv.evmcs && hv.evmcs.enabled !== false) {
    const cpu = (spec.domain.cpu ??= {});
    const features = (cpu.features ??= []);
    const vmx = features.find((x) => x.name === 'vmx');
    if (vmx) vmx.policy = 'require';
    else features.push({ name: 'vmx', policy: 'require' });
  }
}

function setArchDefaults(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  const arm64 = spec.architecture === 'arm64';
  if (arm64) {
    const cpu = (spec.domain.cpu ??= {});
    if (!cpu.model) cpu.model = CPU_MODEL_HOST_PASSTHROUGH;
    const fw = (spec.domain.firmware ??= {});
    if (!fw.bootloader) fw.bootloader = { efi: {} };
    if (fw.bootloader.efi && fw.bootloader.efi.secureBoot === undefined) fw.bootloader.efi.secureBoot = false;
  }
  if (arm64 || spec.architecture !== 's390x') {
    const bus = arm64 ? DiskBus.VirtIO : DiskBus.SATA;
    for (const d of spec.domain.devices.disks ?? []) {
      if (d.disk && !d.disk.bus) d.disk.bus = bus;
      if (d.cdrom && !d.cdrom.bus) d.cdrom.bus = bus;
      if (d.lun && !d.lun.bus) d.lun.bus = bus;
    }
  }
  if (!arm64 && spec.architecture !== 's390x') {
    const wd = spec.domain.devices.watchdog;
    if (wd) {
      wd.i6300esb ??= {};
      if (!wd.i6300esb.action) wd.i6300esb.action = WatchdogAction.Reset;
    }
  }
  const cpu = (spec.domain.cpu ??= {});
  if (!cpu.model) cpu.model = cpuModelFor(config);
}

function setGuestMemoryStatus(vmi: VirtualMachineInstance): void {
  const guest = vmi.spec.domain.memory?.guest;
  if (guest === undefined) return;
  vmi.status ??= {};
  vmi.status.memory = { ...vmi.status.memory, guestAtBoot: guest, guestCurrent: guest, guestRequested: guest };
}

function setCurrentCPUTopologyStatus(vmi: VirtualMachineInstance): void {
  const cpu = vmi.spec.domain.cpu;
  if (!cpu) return;
  vmi.status ??= {};
  vmi.status.currentCPUTopology ??= { sockets: cpu.sockets ?? 0, cores: cpu.cores ?? 0, threads: cpu.threads ?? 0 };
}

const MAX_HOTPLUG_VCPUS = 512;
const HOTPLUG_BLOCK_ALIGNMENT = 2n * 1024n * 1024n;
const HOTPLUG_1G_HUGEPAGES_ALIGNMENT = 1024n * 1024n * 1024n;
const HOTPLUG_MIN_GUEST_MEMORY = 1024n * 1024n * 1024n;

function setupCPUHotplug(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  const cpu = (spec.domain.cpu ??= {});
  const sockets = cpu.sockets ?? 0;
  const cores = cpu.cores ?? 0;
  const threads = cpu.threads ?? 0;
  if (!cpu.maxSockets) {
    let max = config.liveUpdateConfiguration.maxCpuSockets ?? 0;
    if (sockets > max && max !== 0) max = sockets;
    cpu.maxSockets = max;
  }
  if (!cpu.maxSockets) {
    cpu.maxSockets = sockets * config.liveUpdateConfiguration.maxHotplugRatio;
    if (cpu.maxSockets * cores * threads > MAX_HOTPLUG_VCPUS) {
      cpu.maxSockets = Math.max(Math.floor(MAX_HOTPLUG_VCPUS / (cores * threads)), sockets);
    }
  }
}

/** Why memory hotplug cannot be enabled for this spec (`memory.ValidateLiveUpdateMemory`), or undefined. */
export function liveUpdateMemoryIncompatibility(spec: VirtualMachineInstanceSpec, maxGuest: Quantity | undefined): string | undefined {
  const d = spec.domain;
  if (d.cpu?.realtime) return 'Memory hotplug is not compatible with realtime VMs';
  if (d.cpu?.numa?.guestMappingPassthrough) return 'Memory hotplug is not compatible with guest mapping passthrough';
  if (d.launchSecurity) return 'Memory hotplug is not compatible with encrypted VMs';
  const align = d.memory?.hugepages?.pageSize === '1Gi' ? HOTPLUG_1G_HUGEPAGES_ALIGNMENT : HOTPLUG_BLOCK_ALIGNMENT;
  const guest = d.memory?.guest;
  if (guest === undefined) return 'Guest memory must be configured when memory hotplug is enabled';
  if (maxGuest === undefined) return 'Max guest memory must be configured when memory hotplug is enabled';
  const alignment = formatQuantity(quantityFromValue(align));
  if (compareQuantity(guest, maxGuest) > 0) return 'Guest memory is greater than the configured maxGuest memory';
  if (quantityValue(guest) % align !== 0n) return `Guest memory must be ${alignment} aligned`;
  if (quantityValue(maxGuest) % align !== 0n) return `MaxGuest must be ${alignment} aligned`;
  if (spec.architecture !== 'amd64') return 'Memory hotplug is only available for x86_64 VMs';
  if (quantityValue(guest) < HOTPLUG_MIN_GUEST_MEMORY) return 'Memory hotplug is only available for VMs with at least 1Gi of guest memory';
  return undefined;
}

function setupMemoryHotplug(config: ClusterConfig, spec: VirtualMachineInstanceSpec): void {
  const memory = spec.domain.memory;
  if (memory?.maxGuest !== undefined) return;
  let maxGuest: Quantity | undefined;
  if (config.liveUpdateConfiguration.maxGuest !== undefined) maxGuest = config.liveUpdateConfiguration.maxGuest;
  else if (memory?.guest !== undefined) {
    maxGuest = formatQuantity(quantityFromValue(quantityValue(memory.guest) * BigInt(config.liveUpdateConfiguration.maxHotplugRatio)));
  }
  if (liveUpdateMemoryIncompatibility(spec, maxGuest) !== undefined) return;
  (spec.domain.memory ??= {}).maxGuest = maxGuest;
}

/** `SupportsPCIeHotplug`: amd64/arm64 (or unset) with a q35/virt machine. */
export function supportsPCIeHotplug(spec: VirtualMachineInstanceSpec): boolean {
  const arch = spec.architecture ?? '';
  if (arch !== 'amd64' && arch !== 'arm64' && arch !== '') return false;
  const type = spec.domain.machine?.type;
  if (type !== undefined && !type.includes('q35') && !type.startsWith('virt')) return false;
  return true;
}

function setDefaultPciTopologyVersion(meta: { annotations?: Record<string, string> }): void {
  if (meta.annotations?.[PCI_TOPOLOGY_VERSION_ANNOTATION] !== undefined) return;
  meta.annotations = { ...meta.annotations, [PCI_TOPOLOGY_VERSION_ANNOTATION]: PCI_TOPOLOGY_VERSION_V3 };
}

/** `defaults.SetDefaultVirtualMachineInstance` on a private copy. */
function setDefaultVirtualMachineInstance(config: ClusterConfig, vmi: VirtualMachineInstance, env: DefaultingEnv): void {
  setDefaultVirtualMachineInstanceSpec(config, vmi.spec);
  setSchemeDefaults(vmi, env);
  setHypervFeatureDependencies(vmi.spec);
  setArchDefaults(config, vmi.spec);
  setGuestMemoryStatus(vmi);
  setCurrentCPUTopologyStatus(vmi);
  if (vmi.spec.architecture !== 'arm64' && isVMRolloutStrategyLiveUpdate(config)) {
    setupCPUHotplug(config, vmi.spec);
    setupMemoryHotplug(config, vmi.spec);
  }
}

/**
 * The VMI create webhook: defaults the spec, marks non-root, adds the VMI finalizer and enters
 * phase `Pending` with its transition timestamp. Returns a new object. Throws `DefaultingError`
 * where KubeVirt's webhook would deny the request.
 */
export function defaultNewVirtualMachineInstance(input: VirtualMachineInstance, env: DefaultingEnv): VirtualMachineInstance {
  const vmi = structuredClone(input);
  const { config } = env;
  setDefaultVirtualMachineInstance(config, vmi, env);
  vmi.metadata ??= {};
  if (supportsPCIeHotplug(vmi.spec)) setDefaultPciTopologyVersion(vmi.metadata);
  vmi.status ??= {};
  if (!rootEnabled(config)) vmi.status.runtimeUser = NON_ROOT_UID;
  const finalizers = (vmi.metadata.finalizers ??= []);
  if (!finalizers.includes(Finalizer.VirtualMachineInstance)) finalizers.push(Finalizer.VirtualMachineInstance);
  if (!vmi.status.phase) {
    vmi.status.phase = VMIPhase.Pending;
    (vmi.status.phaseTransitionTimestamps ??= []).push({
      phase: VMIPhase.Pending,
      phaseTransitionTimestamp: formatTime(env.now()),
    });
  }
  vmi.spec = canonicalizeQuantities(VirtualMachineInstanceSpecSchema, vmi.spec);
  vmi.status = canonicalizeQuantities(VirtualMachineInstanceStatusSchema, vmi.status);
  return vmi;
}

/**
 * The VM create webhook: random firmware uuid and serial in the template when empty, template
 * architecture and machine type, the PCI topology annotation on the template. Returns a new object.
 */
export function defaultNewVirtualMachine(input: VirtualMachine, env: DefaultingEnv): VirtualMachine {
  const vm = structuredClone(input);
  const template = vm.spec.template;
  const spec = template.spec;
  if (spec) {
    const fw = (spec.domain.firmware ??= {});
    if (!fw.uuid) fw.uuid = env.randomUUID();
    if (!fw.serial) fw.serial = env.randomUUID();
    setDefaultArchitecture(env.config, spec);
    if (!spec.domain.machine?.type) {
      spec.domain.machine = { ...spec.domain.machine, type: machineTypeFor(env.config, spec.architecture ?? '') };
    }
    if (supportsPCIeHotplug(spec)) setDefaultPciTopologyVersion((template.metadata ??= {}));
  }
  vm.spec = canonicalizeQuantities(VirtualMachineSpecSchema, vm.spec);
  return vm;
}

/**
 * The VMI mutating webhook on UPDATE: the VMI CRD has no status subresource, so a status change by
 * anyone but KubeVirt's service accounts is reverted to the old status. Returns `newVMI` itself when
 * nothing changes, else a copy with the old status.
 */
export function protectVirtualMachineInstanceStatus(
  oldVMI: VirtualMachineInstance,
  newVMI: VirtualMachineInstance,
  isKubeVirtServiceAccount: boolean,
): VirtualMachineInstance {
  if (isKubeVirtServiceAccount) return newVMI;
  const canon = (v: VirtualMachineInstance) => quantitiesByValue(VirtualMachineInstanceStatusSchema, v.status ?? {});
  if (JSON.stringify(sortKeys(canon(oldVMI))) === JSON.stringify(sortKeys(canon(newVMI)))) return newVMI;
  const out = structuredClone(newVMI);
  if (oldVMI.status === undefined) delete out.status;
  else out.status = structuredClone(oldVMI.status);
  return out;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => [k, sortKeys(x)]),
  );
}

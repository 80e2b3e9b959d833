/**
 * KubeVirt's VMI create admitter (`vmi-create-admitter.go`) as pure functions returning every
 * `FieldError` found: `ValidateVirtualMachineInstanceSpec` (with the network admitter,
 * `network.ts`, the storage admitter's disk rules, `disks.ts`, and the Hyper-V rules, `hyperv.ts`),
 * volume/disk matching, mandatory memory, `ValidateVirtualMachineInstanceMetadata` and the
 * per-architecture rules. Messages are KubeVirt's (they embed field paths the way KubeVirt prints
 * them). Field paths are the real ones: where KubeVirt reports `spec.domain.volumes[i]` qvirt says
 * `spec.volumes[i]`.
 *
 * Like KubeVirt's webhook, VMI validation expects the object after defaulting (`../defaults.ts`).
 * Rules that need other objects (DataVolumes, instancetypes) are out of scope here.
 */
import { FeatureGate, isFeatureGateEnabled, isVMRolloutStrategyLiveUpdate, type ClusterConfig } from '../cluster-config.ts';
import { DiskBus, Label } from '../constants.ts';
import { FieldPath, fieldError, type FieldError, FieldErrorType } from '../field-error.ts';
import { compareQuantity, isQuantity, parseQuantity, quantityMilliValue, quantityValue } from '../quantity.ts';
import type { FeatureState, Probe, Quantity, VirtualMachineInstance, VirtualMachineInstanceSpec, Volume } from '../types.ts';
import { validateDisks, validatePath } from './disks.ts';
import { dns1123LabelErrors, dns1123SubdomainErrors, isIP } from './formats.ts';
import { validateVirtualMachineInstanceHyperv } from './hyperv.ts';
import { validateNetworks } from './network.ts';

export interface ValidationOptions {
  readonly config: ClusterConfig;
  /** The request comes from a KubeVirt service account (may set reserved labels). */
  readonly isKubeVirtServiceAccount?: boolean;
}

const CLOUD_INIT_USER_MAX_LEN = 2048;
const CLOUD_INIT_NETWORK_MAX_LEN = 2048;
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 6;
const MAX_DNS_SEARCH_LIST_CHARS = 256;
const CPU_FEATURE_POLICIES = ['', 'force', 'require', 'optional', 'disable', 'forbid'];
/** The labels only KubeVirt's service accounts may set or change on a VMI. */
export const RESTRICTED_VMI_LABELS = [
  Label.CreatedBy,
  Label.MigrationJobUID,
  Label.NodeName,
  Label.MigrationTargetNodeName,
  Label.NodeSchedulable,
  'kubevirt.io/install-strategy',
];
const HOOK_SIDECARS_ANNOTATION = 'hooks.kubevirt.io/hookSidecars';
const IGNITION_ANNOTATION = 'kubevirt.io/ignitiondata';
const VIDEO_TYPES_AMD64 = ['vga', 'cirrus', 'virtio', 'ramfb', 'bochs'];

// Quantities and feature states as KubeVirt's Go code reads them: unset (or unparsable) is zero, a
// FeatureState present is enabled unless it says otherwise.
const q = (v: Quantity | undefined): Quantity => v ?? '0';
const value = (v: Quantity | undefined): bigint => (v === undefined || !isQuantity(v) ? 0n : quantityValue(v));
const milli = (v: Quantity | undefined): bigint => (v === undefined || !isQuantity(v) ? 0n : quantityMilliValue(v));
const enabled = (s: FeatureState | undefined) => s !== undefined && s.enabled !== false;

function vcpus(spec: VirtualMachineInstanceSpec): bigint {
  const c = spec.domain.cpu;
  if (!c) return 0n;
  const f = (n: number | undefined) => BigInt(n || 1);
  if (!c.cores && !c.sockets && !c.threads) return 0n;
  return f(c.cores) * f(c.sockets) * f(c.threads);
}

function validateHostnameAndSubdomain(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  if (spec.hostname) {
    const errs = dns1123LabelErrors(spec.hostname);
    if (errs.length) out.push(fieldError.invalid(f.child('hostname'), `${f.child('hostname')} does not conform to the kubernetes DNS_LABEL rules : ${errs.join(', ')}`));
  }
  if (spec.subdomain) {
    const errs = dns1123SubdomainErrors(spec.subdomain);
    if (errs.length) out.push(fieldError.invalid(f.child('subdomain'), `${f.child('subdomain')} does not conform to the kubernetes DNS_SUBDOMAIN rules : ${errs.join(', ')}`));
  }
}

function validateMemory(f: FieldPath, spec: VirtualMachineInstanceSpec, config: ClusterConfig, out: FieldError[]): void {
  const res = spec.domain.resources;
  const reqMem = res?.requests?.memory;
  const limMem = res?.limits?.memory;
  const reqPath = f.child('domain').child('resources').child('requests').child('memory');
  const limPath = f.child('domain').child('resources').child('limits').child('memory');
  const reqRefused = value(reqMem) < 0n || (value(reqMem) > 0n && compareQuantity(q(reqMem), '1M') < 0);
  if (value(reqMem) < 0n) {
    out.push(fieldError.invalid(reqPath, `${reqPath} '${q(reqMem)}': must be greater than or equal to 0.`));
  } else if (reqRefused) {
    out.push(fieldError.invalid(reqPath, `${reqPath} '${q(reqMem)}': must be greater than or equal to 1M.`));
  }
  const limRefused = value(limMem) < 0n;
  if (limRefused) out.push(fieldError.invalid(limPath, `${limPath} '${q(limMem)}': must be greater than or equal to 0.`));
  if (value(limMem) > 0n && value(reqMem) > value(limMem)) {
    out.push(fieldError.invalid(reqPath, `${reqPath} '${q(reqMem)}' is greater than ${limPath} '${q(limMem)}'`));
  }
  // hugepages
  const hp = spec.domain.memory?.hugepages;
  let pageSizeRefused = false;
  if (hp) {
    const psPath = f.child('domain').child('memory').child('hugepages').child('pageSize');
    const ps = hp.pageSize ?? '';
    if (!isQuantity(ps)) {
      out.push(fieldError.invalid(psPath, `${psPath} '${ps}': quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`));
    } else {
      let vmMemory = value(reqMem);
      if (vmMemory === 0n) vmMemory = value(spec.domain.memory?.guest);
      if (vmMemory === 0n) vmMemory = value(limMem);
      const size = quantityValue(ps);
      if (size <= 0n) {
        // KubeVirt's admitter divides by it (a page size of 0 panics the webhook) and accepts a negative one.
        pageSizeRefused = true;
        out.push(fieldError.invalid(psPath, `${psPath} '${ps}' must be greater than zero`));
      } else if (vmMemory !== 0n && vmMemory < size) {
        out.push(fieldError.invalid(reqPath, `${reqPath} '${q(reqMem)}' must be equal to or larger than page size ${psPath} '${ps}'`));
      } else if (vmMemory % size !== 0n) {
        out.push(fieldError.invalid(reqPath, `${reqPath} '${q(reqMem)}' is not a multiple of the page size ${psPath} '${ps}'`));
      }
    }
  }
  // guest: qvirt's rule, in the words of KubeVirt's rule for the memory request. KubeVirt's admitter
  // has none (a guest of -5Mi passes it and fails later, in the launcher pod's memory request or in
  // QEMU); a set guest is what the VM gets, so 0 (which a request may be: unset) is refused too.
  // Not again for a guest defaulted from a request, limit or page size already refused above.
  const guest = spec.domain.memory?.guest;
  const copiedFromRefused = (guest === reqMem && reqRefused) || (guest === limMem && limRefused) || (guest === hp?.pageSize && pageSizeRefused);
  if (guest !== undefined && isQuantity(guest) && !copiedFromRefused) {
    const gPath = f.child('domain').child('memory').child('guest');
    if (value(guest) < 0n) out.push(fieldError.invalid(gPath, `${gPath} '${guest}': must be greater than or equal to 0.`));
    else if (compareQuantity(guest, '1M') < 0) out.push(fieldError.invalid(gPath, `${gPath} '${guest}': must be greater than or equal to 1M.`));
  }
  // guest ≤ limit (only without the LiveUpdate rollout)
  if (!isVMRolloutStrategyLiveUpdate(config) && guest !== undefined && value(limMem) !== 0n && value(limMem) < value(guest)) {
    const gPath = f.child('domain').child('memory').child('guest');
    out.push(fieldError.invalid(gPath, `${gPath} '${guest}' must be equal to or less than the memory limit ${limPath} '${q(limMem)}'`));
  }
}

function validateMachine(f: FieldPath, spec: VirtualMachineInstanceSpec, config: ClusterConfig, out: FieldError[]): void {
  const type = spec.domain.machine?.type;
  if (!type) return;
  const ac = config.architectureConfiguration;
  const machines = spec.architecture === 'arm64' ? ac.arm64.emulatedMachines : spec.architecture === 's390x' ? ac.s390x.emulatedMachines : ac.amd64.emulatedMachines;
  const glob = (g: string) => new RegExp(`^${g.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
  if (!machines.some((m) => glob(m).test(type))) {
    const p = f.child('domain').child('machine').child('type');
    out.push(fieldError.invalid(p, `${p} is not supported: ${type} (allowed values: [${machines.join(' ')}])`));
  }
}

function validateFirmwareACPI(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const acpi = spec.domain.firmware?.acpi;
  if (!acpi) return;
  const p = f.child('acpi');
  if (!acpi.slicNameRef && !acpi.msdmNameRef) {
    out.push(fieldError.invalid(p, 'ACPI was set but no SLIC nor MSDM volume reference was set'));
    return;
  }
  for (const [key, ref] of [['slicNameRef', acpi.slicNameRef], ['msdmNameRef', acpi.msdmNameRef]] as const) {
    if (!ref) continue;
    const vol = spec.volumes?.find((v) => v.name === ref);
    if (!vol) out.push(fieldError.invalid(p.child(key), `${p} does not have a matching Volume.`));
    else if (!vol.secret) out.push(fieldError.invalid(p.child(key), `${p} refers to Volume of unsupported type.`));
  }
}

function validateCPU(f: FieldPath, spec: VirtualMachineInstanceSpec, config: ClusterConfig, out: FieldError[]): void {
  const res = spec.domain.resources;
  const reqCPU = res?.requests?.cpu;
  const limCPU = res?.limits?.cpu;
  const reqPath = f.child('domain').child('resources').child('requests').child('cpu');
  const limPath = f.child('domain').child('resources').child('limits').child('cpu');
  if (milli(reqCPU) < 0n) out.push(fieldError.invalid(reqPath, `${reqPath} '${q(reqCPU)}': must be greater than or equal to 0.`));
  if (milli(limCPU) < 0n) out.push(fieldError.invalid(limPath, `${limPath} '${q(limCPU)}': must be greater than or equal to 0.`));
  if (milli(limCPU) > 0n && milli(reqCPU) > milli(limCPU)) {
    out.push(fieldError.invalid(reqPath, `${reqPath} '${q(reqCPU)}' is greater than ${limPath} '${q(limCPU)}'`));
  }
  const cpu = spec.domain.cpu;
  const cpuPath = f.child('domain').child('cpu');
  const dedicatedPath = cpuPath.child('dedicatedCpuPlacement');
  if (cpu?.dedicatedCpuPlacement) {
    const memErrs: FieldError[] = [];
    validateMemoryIsProvided(f, spec, memErrs);
    out.push(...memErrs);
    if (value(reqCPU) > 0n && value(reqCPU) * 1000n !== milli(reqCPU)) out.push(fieldError.invalid(reqPath, 'provided resources CPU requests must be an interger'));
    if (value(limCPU) > 0n && value(limCPU) * 1000n !== milli(limCPU)) out.push(fieldError.invalid(limPath, 'provided resources CPU limits must be an interger'));
    const reqM = res?.requests?.memory;
    const limM = res?.limits?.memory;
    if (value(reqM) > 0n && value(limM) > 0n && value(reqM) !== value(limM)) {
      const rp = f.child('domain').child('resources').child('requests').child('memory');
      out.push(fieldError.invalid(rp, `${rp} must be equal to ${f.child('domain').child('resources').child('limits').child('memory')}`));
    }
    const coresPath = cpuPath.child('cores');
    const n = vcpus(spec);
    if (value(reqCPU) === 0n && value(limCPU) === 0n && n === 0n) {
      out.push(fieldError.invalid(dedicatedPath, `either ${reqPath} or ${limPath} or ${coresPath} must be provided when DedicatedCPUPlacement is true `));
    }
    if (value(reqCPU) > 0n && value(limCPU) > 0n && value(reqCPU) !== value(limCPU)) {
      out.push(fieldError.invalid(dedicatedPath, `${reqPath} or ${limPath} must be equal when DedicatedCPUPlacement is true `));
    }
    if ((value(reqCPU) > 0n || value(limCPU) > 0n) && n > 0n && value(reqCPU) !== n && value(limCPU) !== n) {
      out.push(fieldError.invalid(dedicatedPath, `${reqPath} or ${limPath} must not be provided at the same time with ${coresPath} when DedicatedCPUPlacement is true `));
    }
    const arch = spec.architecture || config.architectureConfiguration.defaultArchitecture;
    if ((cpu.threads ?? 0) > 1 && arch === 'arm64') {
      out.push(fieldError.invalid(f.child('architecture'), `threads must not be greater than 1 at ${cpuPath.child('threads')} (got ${cpu.threads}) when ${f.child('architecture')} is arm64`));
    }
    if ((cpu.threads ?? 0) > 2) {
      out.push(fieldError.invalid(dedicatedPath, `Not more than two threads must be provided at ${cpuPath.child('threads')} (got ${cpu.threads}) when DedicatedCPUPlacement is true`));
    }
  }
  if (cpu?.numa?.guestMappingPassthrough) {
    const p = cpuPath.child('numa').child('guestMappingPassthrough');
    if (!isFeatureGateEnabled(config, FeatureGate.NUMA)) out.push(fieldError.invalid(p, `NUMA feature gate is not enabled in kubevirt-config, invalid entry ${p}`));
    if (!cpu.dedicatedCpuPlacement) out.push(fieldError.invalid(p, `${dedicatedPath} must be set to true when NUMA topology strategy is set in ${p}`));
    if (!spec.domain.memory?.hugepages) out.push(fieldError.invalid(p, `${f.child('domain').child('memory').child('hugepages')} must be requested when NUMA topology strategy is set in ${p}`));
  }
  if (cpu?.isolateEmulatorThread && !cpu.dedicatedCpuPlacement) {
    out.push(fieldError.invalid(cpuPath.child('isolateEmulatorThread'), 'IsolateEmulatorThread should be only set in combination with DedicatedCPUPlacement'));
  }
  (cpu?.features ?? []).forEach((feat, i) => {
    if (!CPU_FEATURE_POLICIES.includes(feat.policy ?? '')) {
      out.push({ field: cpuPath.child('features').index(i).child('policy').toString(), type: FieldErrorType.NotSupported, reason: `CPU feature ${feat.name} uses policy ${feat.policy} that is not supported.` });
    }
  });
  if (cpu?.maxSockets && (cpu.sockets ?? 0) > cpu.maxSockets) {
    out.push(fieldError.invalid(cpuPath.child('sockets'), 'Number of sockets in CPU topology is greater than the maximum sockets allowed'));
  }
  if (cpu?.realtime) {
    if (!cpu.dedicatedCpuPlacement) out.push(fieldError.required(dedicatedPath, `${dedicatedPath} must be set to true when ${cpuPath.child('realtime')} is used`));
    if (!cpu.numa?.guestMappingPassthrough) {
      const p = cpuPath.child('numa').child('guestMappingPassthrough');
      out.push(fieldError.required(p, `${p} must be defined when ${cpuPath.child('realtime')} is used`));
    }
  }
}

function validateMemoryIsProvided(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const res = spec.domain.resources;
  if (value(res?.limits?.memory) !== 0n || value(res?.requests?.memory) !== 0n) return;
  const mem = spec.domain.memory;
  if (mem?.hugepages) return;
  if (mem?.guest !== undefined && value(mem.guest) !== 0n) return;
  const d = f.child('domain');
  out.push(
    fieldError.invalid(
      d.child('resources').child('limits').child('memory'),
      `${d.child('resources').child('requests').child('memory')}, ${d.child('resources').child('limits').child('memory')}, ${d.child('memory').child('hugepages')} or ${d.child('memory').child('guest')} should be provided`,
    ),
  );
}

function validateStartStrategy(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  if (spec.startStrategy === undefined) return;
  const p = f.child('startStrategy');
  if (spec.startStrategy !== 'Paused') out.push(fieldError.invalid(p, `${p} is set with an unrecognized option: ${spec.startStrategy}`));
  else if (spec.livenessProbe) {
    out.push(fieldError.invalid(p, `either ${p} or ${f.child('livenessProbe')} should be provided.Pausing VMI with LivenessProbe is not supported`));
  }
}

function validateBootOrderAndDiskVolumes(f: FieldPath, spec: VirtualMachineInstanceSpec, config: ClusterConfig, out: FieldError[]): void {
  const volumes = new Map((spec.volumes ?? []).map((v) => [v.name, v]));
  const orders = new Set<number>();
  const disksPath = f.child('domain').child('devices').child('disks');
  (spec.domain.devices.disks ?? []).forEach((disk, i) => {
    const p = disksPath.index(i);
    const vol = volumes.get(disk.name);
    if (!vol) {
      if (!disk.cdrom) out.push(fieldError.invalid(p.child('name'), `${disksPath.index(i).child('Name')} '${disk.name}' not found.`));
      else if (!isFeatureGateEnabled(config, FeatureGate.DeclarativeHotplugVolumes)) {
        out.push(fieldError.invalid(p.child('name'), `${FeatureGate.DeclarativeHotplugVolumes} feature gate not enabled, cannot define an empty CD-ROM disk`));
      }
    }
    if (disk.lun && vol && !vol.persistentVolumeClaim && !vol.dataVolume) {
      out.push(fieldError.invalid(p.child('lun'), `${p.child('lun')} can only be mapped to a DataVolume or PersistentVolumeClaim volume.`));
    }
    if (vol?.downwardMetrics) {
      if (!disk.disk) out.push(fieldError.required(p.child('disk'), `DownwardMetrics volume must be mapped to a disk, but disk is not set on ${p.child('disk')}.`));
      else if (disk.disk.bus && disk.disk.bus !== DiskBus.VirtIO) {
        out.push(fieldError.invalid(p.child('disk').child('bus'), `DownwardMetrics volume must be mapped to virtio bus, but ${p.child('disk').child('bus')} is set to ${disk.disk.bus}`));
      }
    }
    if (disk.bootOrder !== undefined) {
      if (orders.has(disk.bootOrder)) out.push(fieldError.invalid(p.child('bootOrder'), `Boot order for ${p.child('bootOrder')} already set for a different device.`));
      orders.add(disk.bootOrder);
    }
  });
  const ifacesPath = f.child('domain').child('devices').child('interfaces');
  (spec.domain.devices.interfaces ?? []).forEach((iface, i) => {
    if (iface.bootOrder === undefined) return;
    const p = ifacesPath.index(i);
    if (iface.bootOrder < 1) out.push(fieldError.invalid(p.child('bootOrder'), `${p} must have a boot order > 0, if supplied`));
    else {
      if (orders.has(iface.bootOrder)) out.push(fieldError.invalid(p.child('bootOrder'), `Boot order for ${p.child('bootOrder')} already set for a different device.`));
      orders.add(iface.bootOrder);
    }
  });
}

function validateInputs(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  (spec.domain.devices.inputs ?? []).forEach((input, i) => {
    const p = f.child('domain').child('devices').child('inputs').index(i);
    if (input.bus && input.bus !== 'virtio' && input.bus !== 'usb') out.push(fieldError.invalid(p.child('bus'), 'Input device can have only virtio or usb bus.'));
    if (input.type !== 'tablet') out.push(fieldError.invalid(p.child('type'), 'Input device can have only tablet type.'));
  });
}

function validateIOThreads(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const policy = spec.domain.ioThreadsPolicy;
  if (policy === undefined) return;
  if (!['shared', 'auto', 'supplementalPool'].includes(policy)) out.push(fieldError.invalid(f.child('domain').child('ioThreadsPolicy'), `Invalid IOThreadsPolicy (${policy})`));
  if (policy === 'supplementalPool' && (spec.domain.ioThreads?.supplementalPoolThreadCount ?? 0) < 1) {
    out.push(fieldError.invalid(f.child('domain').child('ioThreads').child('count'), 'the number of iothreads needs to be set and positive for the dedicated policy'));
  }
}

function validateProbe(p: FieldPath, probe: Probe | undefined, hasPodNetwork: boolean, out: FieldError[]): void {
  if (!probe) return;
  const n = [probe.httpGet, probe.tcpSocket, probe.exec, probe.guestAgentPing].filter((x) => x !== undefined).length;
  if (n > 1) out.push(fieldError.invalid(p, `${p} must have exactly one probe type set`));
  if (n < 1) out.push(fieldError.required(p, `either ${p.child('tcpSocket')}, ${p.child('exec')} or ${p.child('httpGet')} must be set if a ${p} is specified`));
  if (!hasPodNetwork) {
    if (probe.httpGet) out.push(fieldError.invalid(p.child('httpGet'), `${p.child('httpGet')} is only allowed if the Pod Network is attached`));
    if (probe.tcpSocket) out.push(fieldError.invalid(p.child('tcpSocket'), `${p.child('tcpSocket')} is only allowed if the Pod Network is attached`));
  }
}

function validateFirmware(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const p = f.child('domain').child('firmware');
  const fw = spec.domain.firmware;
  if (fw?.bootloader?.efi && fw.bootloader.bios) {
    const bp = p.child('bootloader');
    out.push(fieldError.invalid(bp, `${bp} has both EFI and BIOS configured, but they are mutually exclusive.`));
  }
  const kb = fw?.kernelBoot;
  if (kb) {
    const kp = p.child('kernelBoot');
    if (!kb.container) {
      if (kb.kernelArgs) out.push(fieldError.invalid(kp.child('kernelArgs'), 'kernel arguments cannot be provided without an external kernel'));
    } else {
      const cp = kp.child('container');
      if (!kb.container.image) out.push(fieldError.required(cp.child('image'), `${cp} must be defined with an image`));
      if (!kb.container.initrdPath && !kb.container.kernelPath) {
        out.push(fieldError.required(cp, `${cp} must be defined with at least one of the following: kernelPath, initrdPath`));
      }
      if (kb.container.kernelPath) out.push(...validatePath(cp.child('kernelPath'), kb.container.kernelPath));
      if (kb.container.initrdPath) out.push(...validatePath(cp.child('initrdPath'), kb.container.initrdPath));
    }
  }
  const secureBoot = fw?.bootloader?.efi !== undefined && fw.bootloader.efi.secureBoot !== false;
  const smm = enabled(spec.domain.features?.smm);
  if (secureBoot && !smm && !spec.domain.launchSecurity?.tdx) {
    const dp = f.child('domain');
    out.push(fieldError.invalid(dp, `${dp} has EFI SecureBoot enabled. SecureBoot requires SMM, which is currently disabled.`));
  }
}

function cloudInitErrors(p: FieldPath, kind: 'cloudInitNoCloud' | 'cloudInitConfigDrive', src: NonNullable<Volume['cloudInitNoCloud']>, out: FieldError[]): void {
  const sp = p.child(kind);
  let userLen = 0;
  let userCount = 0;
  let netLen = 0;
  let netCount = 0;
  if (src.secretRef?.name) userCount++;
  if (src.userDataBase64) {
    userCount++;
    const decoded = decodeBase64(src.userDataBase64);
    if (decoded === undefined) out.push(fieldError.invalid(sp.child('userDataBase64'), `${sp.child('userDataBase64')}.${kind}.userDataBase64 is not a valid base64 value.`));
    userLen = decoded?.length ?? 0;
  }
  if (src.userData) {
    userCount++;
    userLen = Buffer.byteLength(src.userData, 'utf8');
  }
  if (userCount > 1) out.push(fieldError.invalid(sp, `${sp} must have only one userdatasource set.`));
  if (userLen > CLOUD_INIT_USER_MAX_LEN) out.push(fieldError.invalid(sp, `${sp} userdata exceeds ${CLOUD_INIT_USER_MAX_LEN} byte limit. Should use UserDataSecretRef for larger data.`));
  if (src.networkDataSecretRef?.name) netCount++;
  if (src.networkDataBase64) {
    netCount++;
    const decoded = decodeBase64(src.networkDataBase64);
    if (decoded === undefined) out.push(fieldError.invalid(sp.child('networkDataBase64'), `${sp.child('networkDataBase64')}.${kind}.networkDataBase64 is not a valid base64 value.`));
    netLen = decoded?.length ?? 0;
  }
  if (src.networkData) {
    netCount++;
    netLen = Buffer.byteLength(src.networkData, 'utf8');
  }
  if (netCount > 1) out.push(fieldError.invalid(sp, `${sp} must have only one networkdata source set.`));
  if (netLen > CLOUD_INIT_NETWORK_MAX_LEN) out.push(fieldError.invalid(sp, `${sp} networkdata exceeds ${CLOUD_INIT_NETWORK_MAX_LEN} byte limit. Should use NetworkDataSecretRef for larger data.`));
  if (userCount === 0 && netCount === 0) out.push(fieldError.invalid(sp, `${sp} must have at least one userdatasource or one networkdatasource set.`));
}

/** Go `base64.StdEncoding.DecodeString`: padded standard alphabet only. */
function decodeBase64(s: string): Buffer | undefined {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  return Buffer.from(s, 'base64');
}

const VOLUME_SOURCES = [
  'persistentVolumeClaim', 'sysprep', 'cloudInitNoCloud', 'cloudInitConfigDrive', 'containerDisk', 'ephemeral', 'emptyDisk',
  'hostDisk', 'dataVolume', 'configMap', 'secret', 'downwardAPI', 'serviceAccount', 'downwardMetrics', 'memoryDump', 'containerPath',
] as const;

function validateVolumes(p: FieldPath, volumes: readonly Volume[], config: ClusterConfig, out: FieldError[]): void {
  const names = new Map<string, number>();
  let serviceAccounts = 0;
  let downwardMetrics = 0;
  let memoryDumps = 0;
  volumes.forEach((vol, i) => {
    const vp = p.index(i);
    const other = names.get(vol.name);
    if (other === undefined) names.set(vol.name, i);
    else out.push(fieldError.invalid(vp.child('name'), `${vp} and ${p.index(other)} must not have the same Name.`));
    const count = VOLUME_SOURCES.filter((k) => vol[k] !== undefined).length;
    if (vol.dataVolume && !vol.dataVolume.name) out.push(fieldError.required(vp.child('name'), "DataVolume 'name' must be set"));
    if (vol.serviceAccount) serviceAccounts++;
    if (vol.downwardMetrics) downwardMetrics++;
    if (vol.memoryDump) memoryDumps++;
    if (count !== 1) out.push(fieldError.invalid(vp, `${vp} must have exactly one source type set`));
    if (vol.cloudInitNoCloud) cloudInitErrors(vp, 'cloudInitNoCloud', vol.cloudInitNoCloud, out);
    else if (vol.cloudInitConfigDrive) cloudInitErrors(vp, 'cloudInitConfigDrive', vol.cloudInitConfigDrive, out);
    if (vol.downwardMetrics && !isFeatureGateEnabled(config, FeatureGate.DownwardMetrics)) {
      out.push(fieldError.invalid(vp, 'downwardMetrics disks are not allowed: DownwardMetrics feature gate is not enabled.'));
    }
    const hd = vol.hostDisk;
    if (hd) {
      if (!isFeatureGateEnabled(config, FeatureGate.HostDisk)) out.push(fieldError.invalid(vp, 'HostDisk feature gate is not enabled'));
      const hp = vp.child('hostDisk');
      if (!hd.path) out.push(fieldError.required(hp.child('path'), `${hp.child('path')} is required for hostDisk volume`));
      if (hd.type !== 'Disk' && hd.type !== 'DiskOrCreate') {
        out.push(fieldError.invalid(hp.child('type'), `${hp.child('type')} has invalid value '${hd.type}', allowed are 'Disk' or 'DiskOrCreate'`));
      }
      if (hd.type === 'Disk' && hd.capacity !== undefined && isQuantity(hd.capacity) && parseQuantity(hd.capacity).nanos !== 0n) {
        out.push(fieldError.invalid(hp.child('capacity'), `${hp.child('capacity')} is allowed to pass only with ${hp.child('type')} equal to 'DiskOrCreate'`));
      }
    }
    if (vol.emptyDisk && isQuantity(vol.emptyDisk.capacity) && parseQuantity(vol.emptyDisk.capacity).nanos <= 0n) {
      out.push(fieldError.invalid(vp.child('emptyDisk').child('capacity'), `${vp.child('emptyDisk').child('capacity')} must be greater than zero`));
    }
    if (vol.configMap && !vol.configMap.name) out.push(fieldError.invalid(vp.child('configMap').child('name'), `${vp.child('configMap').child('name')} is a required field`));
    if (vol.secret && !vol.secret.secretName) out.push(fieldError.invalid(vp.child('secret').child('secretName'), `${vp.child('secret').child('secretName')} is a required field`));
    if (vol.serviceAccount && !vol.serviceAccount.serviceAccountName) {
      const sp = vp.child('serviceAccount').child('serviceAccountName');
      out.push(fieldError.invalid(sp, `${sp} is a required field`));
    }
    if (vol.containerDisk?.path) out.push(...validatePath(vp.child('containerDisk'), vol.containerDisk.path));
  });
  if (serviceAccounts > 1) out.push(fieldError.invalid(p, `${p} must have max one serviceAccount volume set`));
  if (downwardMetrics > 1) out.push(fieldError.invalid(p, `${p} must have max one downwardMetric volume set`));
  if (memoryDumps > 1) out.push(fieldError.invalid(p, `${p} must have max one memory dump volume set`));
}

function validateAccessCredentials(p: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const volumes = spec.volumes ?? [];
  const hasNoCloud = volumes.some((v) => v.cloudInitNoCloud);
  const hasConfigDrive = volumes.some((v) => v.cloudInitConfigDrive);
  (spec.accessCredentials ?? []).forEach((ac, i) => {
    const ap = p.index(i);
    let count = 0;
    const ssh = ac.sshPublicKey;
    if (ssh) {
      count++;
      const pm = ssh.propagationMethod;
      const methods = [pm.noCloud, pm.configDrive, pm.qemuGuestAgent].filter((x) => x !== undefined).length;
      const mp = ap.child('sshPublicKey').child('propagationMethod');
      if (pm.noCloud && !hasNoCloud) out.push(fieldError.invalid(mp, `${ap} requires a noCloud volume to exist when the noCloud propagationMethod is in use.`));
      if (pm.configDrive && !hasConfigDrive) out.push(fieldError.invalid(mp, `${ap} requires a configDrive volume to exist when the configDrive propagationMethod is in use.`));
      if (pm.qemuGuestAgent && pm.qemuGuestAgent.users.length === 0) {
        out.push(fieldError.invalid(mp.child('qemuGuestAgent').child('users'), `${ap} requires at least one user to be present in the users list`));
      }
      if (!ssh.source.secret) out.push(fieldError.invalid(ap.child('sshPublicKey').child('source'), `${ap} must have exactly one source set`));
      if (methods !== 1) out.push(fieldError.invalid(mp, `${ap} must have exactly one propagationMethod set`));
    }
    const up = ac.userPassword;
    if (up) {
      count++;
      if (!up.source.secret) out.push(fieldError.invalid(ap.child('userPassword').child('source'), `${ap} must have exactly one source set`));
      if (!up.propagationMethod.qemuGuestAgent) out.push(fieldError.invalid(ap.child('userPassword').child('propagationMethod'), `${ap} must have exactly one propagationMethod set`));
    }
    if (count !== 1) out.push(fieldError.invalid(ap, `${ap} must have exactly one access credential type set`));
  });
}

function validateDNS(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const policy = spec.dnsPolicy;
  if (policy && !['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'].includes(policy)) {
    out.push({ field: f.child('dnsPolicy').toString(), type: FieldErrorType.NotSupported, reason: `DNSPolicy: ${policy} is not supported, valid values: [ClusterFirstWithHostNet ClusterFirst Default None ]` });
  }
  const cfg = spec.dnsConfig;
  const p = f.child('dnsConfig');
  if (policy === 'None') {
    if (!cfg) {
      out.push(fieldError.required(p, 'must provide `dnsConfig` when `dnsPolicy` is None'));
      return;
    }
    if ((cfg.nameservers ?? []).length === 0) {
      out.push(fieldError.required(p.child('nameservers'), 'must provide at least one DNS nameserver when `dnsPolicy` is None'));
      return;
    }
  }
  if (!cfg) return;
  const ns = cfg.nameservers ?? [];
  if (ns.length > MAX_DNS_NAMESERVERS) out.push(fieldError.invalid(p.child('nameservers'), `must not have more than ${MAX_DNS_NAMESERVERS} nameservers: [${ns.join(' ')}]`));
  for (const n of ns) if (!isIP(n)) out.push(fieldError.invalid(p.child('nameservers'), `must be valid IP address: ${n}`));
  const searches = cfg.searches ?? [];
  if (searches.length > MAX_DNS_SEARCH_PATHS) out.push(fieldError.invalid(p.child('searches'), `must not have more than ${MAX_DNS_SEARCH_PATHS} search paths`));
  if (searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) {
    out.push(fieldError.invalid(p.child('searches'), `must not have more than ${MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list`));
  }
  for (const s of searches) for (const msg of dns1123SubdomainErrors(s)) out.push(fieldError.invalid(p.child('searches'), msg));
  for (const o of cfg.options ?? []) if (!o.name) out.push(fieldError.invalid(p.child('options'), 'Option.Name must not be empty'));
}

function validateDevicesMisc(f: FieldPath, spec: VirtualMachineInstanceSpec, config: ClusterConfig, out: FieldError[]): void {
  const dev = spec.domain.devices;
  const dp = f.child('domain').child('devices');
  const ramfbs = (dev.gpus ?? []).filter((g) => {
    const d = g.virtualGPUOptions?.display;
    return d !== undefined && d.enabled !== false && (d.ramFB === undefined || d.ramFB.enabled !== false);
  }).length;
  if (ramfbs > 1) out.push(fieldError.invalid(f.child('GPUs'), 'configuring multiple displays with ramfb is not valid '));
  if (dev.hostDevices && !isFeatureGateEnabled(config, FeatureGate.HostDevices)) out.push(fieldError.invalid(f.child('HostDevices'), 'Host Devices feature gate is not enabled in kubevirt-config'));
  if (dev.sound) {
    if (dev.sound.model && dev.sound.model !== 'ich9' && dev.sound.model !== 'ac97') out.push(fieldError.invalid(f.child('Sound'), "Sound device type is not supported. Options: 'ich9' or 'ac97'"));
    if (!dev.sound.name) out.push(fieldError.invalid(f.child('Sound'), 'Sound device requires a name field.'));
  }
  if (dev.downwardMetrics && !isFeatureGateEnabled(config, FeatureGate.DownwardMetrics)) {
    out.push(fieldError.invalid(dp.child('downwardMetrics'), 'downwardMetrics virtio serial is not allowed: DownwardMetrics feature gate is not enabled'));
  }
  (dev.panicDevices ?? []).forEach((pd, i) => {
    if (pd.model !== undefined && !['hyperv', 'isa', 'pvpanic'].includes(pd.model)) {
      out.push({ field: dp.child('panicDevices').index(i).child('model').toString(), type: FieldErrorType.NotSupported, reason: `invalid PanicDeviceModel(${pd.model})` });
    }
  });
  if (spec.domain.launchSecurity && spec.architecture !== 'amd64' && spec.architecture !== 's390x') {
    out.push(fieldError.invalid(f.child('architecture'), `No launchSecurity support for architecture: ${spec.architecture}`));
  }
}

function validateVolumeDiskMatching(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  const disks = new Set((spec.domain.devices.disks ?? []).map((d) => d.name));
  const filesystems = new Set((spec.domain.devices.filesystems ?? []).map((x) => x.name));
  (spec.volumes ?? []).forEach((vol, i) => {
    if (vol.memoryDump) return;
    const vp = f.child('volumes').index(i);
    const hasDisk = disks.has(vol.name);
    const hasFs = filesystems.has(vol.name);
    if (!hasDisk && !hasFs) out.push(fieldError.invalid(vp.child('name'), `${vp.child('name')} '${vol.name}' not found.`));
    if (vol.containerPath) {
      if (hasDisk) out.push(fieldError.invalid(vp, `ContainerPath volume '${vol.name}' must be mapped to a filesystem, not a disk`));
      if (!hasFs) out.push(fieldError.invalid(vp, `ContainerPath volume '${vol.name}' must have a matching filesystem defined in spec.domain.devices.filesystems`));
      for (const prefix of ['/var/run/kubevirt', '/var/run/libvirt']) {
        if (vol.containerPath.path.startsWith(prefix)) {
          out.push(fieldError.invalid(vp.child('containerPath').child('path'), `ContainerPath volume '${vol.name}' uses reserved path prefix '${prefix}'`));
          break;
        }
      }
    }
  });
}

function validateMandatoryMemory(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  if (value(spec.domain.resources?.requests?.memory) !== 0n) return;
  const mem = spec.domain.memory;
  if (!mem || (mem.guest === undefined && mem.hugepages === undefined)) {
    const d = f.child('domain');
    out.push(
      fieldError.required(
        d.child('memory').child('guest'),
        `no memory requested, at least one of '${d.child('memory').child('guest')}', '${d.child('memory').child('hugepages').child('pageSize')}' or '${d.child('resources').child('requests').child('memory')}' must be set`,
      ),
    );
  }
}

/** `ValidateVirtualMachineInstancePerArch`: amd64's watchdog and video models; an architecture qvirt does not know is refused. */
function validateVirtualMachineInstancePerArch(f: FieldPath, spec: VirtualMachineInstanceSpec, out: FieldError[]): void {
  switch (spec.architecture) {
    case 'amd64': {
      const wd = spec.domain.devices.watchdog;
      if (wd && !(wd.i6300esb && !wd.diag288)) {
        out.push({ field: f.child('domain').child('devices').child('watchdog').toString(), type: FieldErrorType.NotSupported, reason: 'amd64 only supports I6300ESB watchdog device' });
      }
      const video = spec.domain.devices.video;
      if (video && !VIDEO_TYPES_AMD64.includes(video.type ?? '')) {
        out.push({ field: f.child('domain').child('devices').child('video').child('type').toString(), type: FieldErrorType.NotSupported, reason: `video model '${video.type ?? ''}' is not supported on amd64 architecture` });
      }
      break;
    }
    case 'arm64':
    case 's390x':
      break;
    default:
      out.push(fieldError.invalid(f.child('architecture'), `unsupported architecture: ${spec.architecture ?? ''}`));
  }
}

/** `ValidateVirtualMachineInstanceMetadata`: reserved labels only from KubeVirt's service accounts; the Ignition and sidecar annotations behind their gates. */
export function validateVirtualMachineInstanceMetadata(p: FieldPath, meta: { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined, opts: ValidationOptions, out: FieldError[]): void {
  if (!opts.isKubeVirtServiceAccount && Object.keys(meta?.labels ?? {}).some((l) => (RESTRICTED_VMI_LABELS as string[]).includes(l))) {
    out.push({ field: p.child('labels').toString(), type: FieldErrorType.NotSupported, reason: 'creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited' });
  }
  const ann = meta?.annotations ?? {};
  if (ann[IGNITION_ANNOTATION] && !isFeatureGateEnabled(opts.config, FeatureGate.ExperimentalIgnitionSupport)) {
    out.push(fieldError.invalid(p.child('annotations'), `ExperimentalIgnitionSupport feature gate is not enabled in kubevirt-config, invalid entry ${p.child('annotations').child(IGNITION_ANNOTATION)}`));
  }
  if (ann[HOOK_SIDECARS_ANNOTATION] && !isFeatureGateEnabled(opts.config, FeatureGate.Sidecar)) {
    out.push(fieldError.invalid(p.child('annotations'), `sidecar feature gate is not enabled in kubevirt-config, invalid entry ${p.child('annotations').child(HOOK_SIDECARS_ANNOTATION)}`));
  }
}

/**
 * `ValidateVirtualMachineInstanceSpec` plus the volume↔disk and mandatory-memory checks every
 * create path runs. `root` is the spec's path (`spec`, or `spec.template.spec`). `mandatoryMemory`
 * false: the memory comes from elsewhere (a VM's instance type), not the spec.
 */
export function validateVirtualMachineInstanceSpec(spec: VirtualMachineInstanceSpec, config: ClusterConfig, root = 'spec', mandatoryMemory = true): FieldError[] {
  const f = rootPath(root);
  const out: FieldError[] = [];
  validateHostnameAndSubdomain(f, spec, out);
  validateMemory(f, spec, config, out);
  validateMachine(f, spec, config, out);
  validateFirmwareACPI(f.child('domain').child('firmware'), spec, out);
  validateCPU(f, spec, config, out);
  validateStartStrategy(f, spec, out);
  validateNetworks(f, spec, config, out);
  validateBootOrderAndDiskVolumes(f, spec, config, out);
  validateInputs(f, spec, out);
  validateIOThreads(f, spec, out);
  const hasPodNetwork = (spec.networks ?? []).some((n) => n.pod);
  validateProbe(f.child('readinessProbe'), spec.readinessProbe, hasPodNetwork, out);
  validateProbe(f.child('livenessProbe'), spec.livenessProbe, hasPodNetwork, out);
  validateDisks(f.child('domain').child('devices').child('disks'), spec.domain.devices.disks ?? [], out);
  validateFirmware(f, spec, out);
  validateVolumes(f.child('volumes'), spec.volumes ?? [], config, out);
  validateAccessCredentials(f.child('accessCredentials'), spec, out);
  validateDNS(f, spec, out);
  if (spec.evictionStrategy !== undefined && !['None', 'LiveMigrate', 'LiveMigrateIfPossible', 'External'].includes(spec.evictionStrategy)) {
    out.push(fieldError.invalid(f.child('evictionStrategy'), `${f.child('evictionStrategy')} is set with an unrecognized option: ${spec.evictionStrategy}`));
  }
  validateDevicesMisc(f, spec, config, out);
  validateVolumeDiskMatching(f, spec, out);
  if (mandatoryMemory) validateMandatoryMemory(f, spec, out);
  validateVirtualMachineInstanceHyperv(f, spec, out);
  return out;
}

function rootPath(root: string): FieldPath {
  return root.split('.').reduce((p, seg) => p.child(seg), FieldPath.root());
}

/** The VMI create admitter (the object as it arrives after defaulting). */
export function validateVirtualMachineInstance(vmi: VirtualMachineInstance, opts: ValidationOptions): FieldError[] {
  const out = validateVirtualMachineInstanceSpec(vmi.spec, opts.config, 'spec');
  validateVirtualMachineInstanceMetadata(FieldPath.root('metadata'), vmi.metadata, opts, out);
  validateVirtualMachineInstancePerArch(FieldPath.root('spec'), vmi.spec, out);
  return out;
}

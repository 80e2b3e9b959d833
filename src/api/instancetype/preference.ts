/**
 * KubeVirt's `pkg/instancetype/preference/apply`: what a preference fills into a VMI spec where the
 * VM's template leaves the field unset — CPU features, devices (autoattach flags, buses of disks,
 * CD-ROMs, LUNs and inputs, interface model and masquerade binding, RNG, TPM, video, panic device,
 * ...), features, firmware, machine type, clock, subdomain, termination grace period,
 * architecture, annotations and launch security. A preference never overrides what is set, except
 * where KubeVirt cannot tell (`disableHotplug`, `features.acpi`: plain values in Go, so the
 * preference wins). Also the preferred CPU topology and spread options the instance type's vCPUs
 * are laid out by. Pure: the spec passed in is changed in place, as in KubeVirt.
 */
import type { ObjectMeta } from '../kube.ts';
import type { Interface, VirtualMachineInstanceSpec } from '../types.ts';
import { DEFAULT_SPREAD_RATIO, PreferredCPUTopologies, SpreadAcrossValues } from './constants.ts';
import type { VirtualMachinePreferenceSpec } from './types.ts';

const clone = <T>(v: T): T => structuredClone(v);

/** `GetPreferredTopology`: the preference's, else `sockets`. */
export function preferredTopology(preference: VirtualMachinePreferenceSpec | undefined): string {
  return preference?.cpu?.preferredCPUTopology ?? PreferredCPUTopologies.Sockets;
}

/** `GetSpreadOptions`: ratio (spreadOptions.ratio, else preferSpreadSocketToCoreRatio, else 2) and across (else SocketsCores). */
export function spreadOptions(preference: VirtualMachinePreferenceSpec | undefined): { ratio: number; across: string } {
  let ratio = DEFAULT_SPREAD_RATIO;
  if (preference?.preferSpreadSocketToCoreRatio) ratio = preference.preferSpreadSocketToCoreRatio;
  let across: string = SpreadAcrossValues.SocketsCores;
  const o = preference?.cpu?.spreadOptions;
  if (o) {
    if (o.across !== undefined) across = o.across;
    if (o.ratio !== undefined) ratio = o.ratio;
  }
  return { ratio, across };
}

/** `ApplyAutoAttachPreferences`: the autoattach flags the template leaves unset (run before the default interface and input are added). */
export function applyAutoAttachPreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.devices;
  if (!p) return;
  const d = spec.domain.devices;
  if (p.preferredAutoattachGraphicsDevice !== undefined && d.autoattachGraphicsDevice === undefined) d.autoattachGraphicsDevice = p.preferredAutoattachGraphicsDevice;
  if (p.preferredAutoattachMemBalloon !== undefined && d.autoattachMemBalloon === undefined) d.autoattachMemBalloon = p.preferredAutoattachMemBalloon;
  if (p.preferredAutoattachPodInterface !== undefined && d.autoattachPodInterface === undefined) d.autoattachPodInterface = p.preferredAutoattachPodInterface;
  if (p.preferredAutoattachSerialConsole !== undefined && d.autoattachSerialConsole === undefined) d.autoattachSerialConsole = p.preferredAutoattachSerialConsole;
  if (p.preferredAutoattachInputDevice !== undefined && d.autoattachInputDevice === undefined) d.autoattachInputDevice = p.preferredAutoattachInputDevice;
}

function applyCPUPreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const features = preference.cpu?.preferredCPUFeatures;
  if (!features?.length) return;
  const cpu = (spec.domain.cpu ??= {});
  const have = new Set((cpu.features ?? []).map((f) => f.name));
  for (const f of features) if (!have.has(f.name)) (cpu.features ??= []).push(clone(f));
}

function applyDiskPreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.devices!;
  for (const disk of spec.domain.devices.disks ?? []) {
    // No target: a disk, so the preferences apply.
    if (!disk.disk && !disk.cdrom && !disk.lun) disk.disk = {};
    if (disk.disk) {
      if (p.preferredDiskBus && !disk.disk.bus) disk.disk.bus = p.preferredDiskBus;
      if (p.preferredDiskBlockSize !== undefined && disk.blockSize === undefined) disk.blockSize = clone(p.preferredDiskBlockSize);
      if (p.preferredDiskCache && !disk.cache) disk.cache = p.preferredDiskCache;
      if (p.preferredDiskIO && !disk.io) disk.io = p.preferredDiskIO;
      if (p.preferredDiskDedicatedIoThread !== undefined && disk.dedicatedIOThread === undefined && disk.disk.bus === 'virtio') {
        disk.dedicatedIOThread = p.preferredDiskDedicatedIoThread;
      }
    } else if (disk.cdrom) {
      if (p.preferredCdromBus && !disk.cdrom.bus) disk.cdrom.bus = p.preferredCdromBus;
    } else if (disk.lun) {
      if (p.preferredLunBus && !disk.lun.bus) disk.lun.bus = p.preferredLunBus;
    }
  }
}

const BINDINGS = ['bridge', 'slirp', 'masquerade', 'sriov', 'macvtap', 'passt', 'passtBinding'] as const;
const bindingUnset = (iface: Interface): boolean => BINDINGS.every((b) => iface[b] === undefined) && iface.binding === undefined;
const onPodNetwork = (name: string, spec: VirtualMachineInstanceSpec): boolean => spec.networks?.find((n) => n.name === name)?.pod !== undefined;

function applyInterfacePreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.devices!;
  for (const iface of spec.domain.devices.interfaces ?? []) {
    if (p.preferredInterfaceModel && !iface.model) iface.model = p.preferredInterfaceModel;
    if (p.preferredInterfaceMasquerade !== undefined && bindingUnset(iface) && onPodNetwork(iface.name, spec)) iface.masquerade = clone(p.preferredInterfaceMasquerade);
  }
}

function applyInputPreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.devices!;
  for (const input of spec.domain.devices.inputs ?? []) {
    if (p.preferredInputBus && !input.bus) input.bus = p.preferredInputBus;
    if (p.preferredInputType && !input.type) input.type = p.preferredInputType;
  }
}

function applyPanicDevicePreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const model = preference.devices!.preferredPanicDeviceModel;
  if (model === undefined) return;
  const d = spec.domain.devices;
  if (!d.panicDevices?.length) {
    d.panicDevices = [{ model }];
    return;
  }
  for (const pd of d.panicDevices) if (pd.model === undefined) pd.model = model;
}

/** `ApplyDevicePreferences`. */
export function applyDevicePreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.devices;
  if (!p) return;
  const d = spec.domain.devices;
  if (p.preferredUseVirtioTransitional !== undefined && d.useVirtioTransitional === undefined) d.useVirtioTransitional = p.preferredUseVirtioTransitional;
  if (p.preferredBlockMultiQueue !== undefined && d.blockMultiQueue === undefined) d.blockMultiQueue = p.preferredBlockMultiQueue;
  if (p.preferredNetworkInterfaceMultiQueue !== undefined && d.networkInterfaceMultiqueue === undefined) d.networkInterfaceMultiqueue = p.preferredNetworkInterfaceMultiQueue;
  // KubeVirt: DisableHotplug is no pointer, a user's value cannot be told apart: the preference wins.
  if (p.preferredDisableHotplug !== undefined) d.disableHotplug = p.preferredDisableHotplug;
  if (p.preferredSoundModel && d.sound && !d.sound.model) d.sound.model = p.preferredSoundModel;
  if (p.preferredRng !== undefined && d.rng === undefined) d.rng = clone(p.preferredRng);
  if (p.preferredTPM !== undefined && d.tpm === undefined) d.tpm = clone(p.preferredTPM);
  if (p.preferredVideoType !== undefined) {
    const video = (d.video ??= {});
    if (!video.type) video.type = p.preferredVideoType;
  }
  applyAutoAttachPreferences(preference, spec);
  applyDiskPreferences(preference, spec);
  applyInterfacePreferences(preference, spec);
  applyInputPreferences(preference, spec);
  applyPanicDevicePreferences(preference, spec);
}

const HYPERV_FEATURES = ['evmcs', 'frequencies', 'ipi', 'reenlightenment', 'relaxed', 'reset', 'runtime', 'spinlocks', 'synic', 'synictimer', 'tlbflush', 'vapic', 'vpindex', 'vendorid'] as const;

function applyFeaturePreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.features;
  if (!p) return;
  const f = (spec.domain.features ??= {});
  // KubeVirt: Features.ACPI is no pointer, so a preference overwrites it.
  if (p.preferredAcpi !== undefined) f.acpi = clone(p.preferredAcpi);
  if (p.preferredApic !== undefined && f.apic === undefined) f.apic = clone(p.preferredApic);
  if (p.preferredHyperv !== undefined) {
    const hv = (f.hyperv ??= {});
    const want = p.preferredHyperv as Record<string, unknown>;
    const have = hv as Record<string, unknown>;
    for (const k of HYPERV_FEATURES) if (want[k] !== undefined && have[k] === undefined) have[k] = clone(want[k]);
  }
  if (p.preferredKvm !== undefined && f.kvm === undefined) f.kvm = clone(p.preferredKvm);
  if (p.preferredPvspinlock !== undefined && f.pvspinlock === undefined) f.pvspinlock = clone(p.preferredPvspinlock);
  if (p.preferredSmm !== undefined && f.smm === undefined) f.smm = clone(p.preferredSmm);
}

function applyFirmwarePreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.firmware;
  if (!p) return;
  const fw = (spec.domain.firmware ??= {});
  const bl = (fw.bootloader ??= {});
  if (p.preferredUseBios === true && bl.bios === undefined && bl.efi === undefined) bl.bios = {};
  if (p.preferredUseBiosSerial !== undefined && bl.bios !== undefined && bl.bios.useSerial === undefined) bl.bios.useSerial = p.preferredUseBiosSerial;
  if (bl.efi === undefined && bl.bios === undefined && p.preferredEfi !== undefined) {
    bl.efi = clone(p.preferredEfi);
    // preferredEfi wins over the deprecated preferredUseEfi / preferredUseSecureBoot.
    return;
  }
  if (p.preferredUseEfi === true && bl.efi === undefined && bl.bios === undefined) bl.efi = {};
  if (p.preferredUseSecureBoot !== undefined && bl.efi !== undefined && bl.efi.secureBoot === undefined) bl.efi.secureBoot = p.preferredUseSecureBoot;
}

function applyMachinePreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const type = preference.machine?.preferredMachineType;
  if (!type) return;
  const m = (spec.domain.machine ??= {});
  if (!m.type) m.type = type;
}

function applyClockPreferences(preference: VirtualMachinePreferenceSpec, spec: VirtualMachineInstanceSpec): void {
  const p = preference.clock;
  if (!p) return;
  const clock = (spec.domain.clock ??= {});
  // Never a partial overwrite: the offset only when the template sets neither utc nor timezone.
  if (p.preferredClockOffset !== undefined && clock.utc === undefined && clock.timezone === undefined) {
    const o = clone(p.preferredClockOffset);
    delete clock.utc;
    delete clock.timezone;
    if (o.utc !== undefined) clock.utc = o.utc;
    if (o.timezone !== undefined) clock.timezone = o.timezone;
  }
  if (p.preferredTimer !== undefined && clock.timer === undefined) clock.timer = clone(p.preferredTimer);
}

/** `ApplyArchitecturePreferences` (also the VM mutator's, before defaulting picks the cluster's). */
export function applyArchitecturePreferences(preference: VirtualMachinePreferenceSpec | undefined, spec: VirtualMachineInstanceSpec): void {
  const arch = preference?.preferredArchitecture;
  if (!arch) return;
  if (!spec.architecture) spec.architecture = arch;
}

function applyPreferenceAnnotations(annotations: Record<string, string> | undefined, meta: ObjectMeta): void {
  if (!annotations || Object.keys(annotations).length === 0) return;
  const target = (meta.annotations ??= {});
  for (const [k, v] of Object.entries(annotations ?? {})) if (!(k in target)) target[k] = v;
}

/** The preference applier (`preference/apply/vmi.go` Apply), in KubeVirt's order. */
export function applyPreferenceToVMI(preference: VirtualMachinePreferenceSpec | undefined, spec: VirtualMachineInstanceSpec, meta: ObjectMeta): void {
  if (!preference) return;
  applyCPUPreferences(preference, spec);
  applyDevicePreferences(preference, spec);
  applyFeaturePreferences(preference, spec);
  applyFirmwarePreferences(preference, spec);
  applyMachinePreferences(preference, spec);
  applyClockPreferences(preference, spec);
  if (!spec.subdomain && preference.preferredSubdomain !== undefined) spec.subdomain = preference.preferredSubdomain;
  if (preference.preferredTerminationGracePeriodSeconds !== undefined && spec.terminationGracePeriodSeconds === undefined) {
    spec.terminationGracePeriodSeconds = preference.preferredTerminationGracePeriodSeconds;
  }
  applyArchitecturePreferences(preference, spec);
  applyPreferenceAnnotations(preference.annotations, meta);
  if (preference.preferredLaunchSecurity !== undefined && spec.domain.launchSecurity === undefined) spec.domain.launchSecurity = clone(preference.preferredLaunchSecurity);
}

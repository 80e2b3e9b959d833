// The domain a launcher reports to its node agent — the contract between the two, typed once: KubeVirt's
// api.Domain in the JSON form Go's encoding/json gives it (the fields carry no json tags, so names are
// the Go field names: `ObjectMeta`, `Spec.Metadata.KubeVirt.GracePeriod.MarkedForGracefulShutdown`,
// `Status.Status`). The launcher builds it (launcher/domain/domain.ts), the node agent decodes it
// (./decode.ts); a KubeVirt virt-handler can unmarshal it unchanged.
import type { DOMAIN_API_VERSION, DOMAIN_KIND, LifeCycle, Reason } from './lifecycle.ts';

export interface GracePeriodMetadata {
  DeletionGracePeriodSeconds: number;
  /** RFC 3339; set when the first graceful shutdown was signalled. */
  DeletionTimestamp: string | null;
  MarkedForGracefulShutdown: boolean | null;
}

export interface MigrationMetadata {
  UID: string;
  StartTimestamp: string | null;
  EndTimestamp: string | null;
  Failed: boolean;
  FailureReason: string;
  AbortStatus: string;
  Mode: string;
}

/** api.MemoryDumpMetadata: the last memory dump asked for (VirtualMachineMemoryDump). */
export interface MemoryDumpMetadata {
  FileName: string;
  StartTimestamp: string | null;
  EndTimestamp: string | null;
  Completed: boolean;
  Failed: boolean;
  FailureReason: string;
}

/** api.AccessCredentialMetadata: the domain's report of the last credential propagation. */
export interface AccessCredentialMetadata {
  Succeeded: boolean;
  Message: string;
}

export interface KubeVirtMetadata {
  UID: string;
  GracePeriod: GracePeriodMetadata | null;
  Migration: MigrationMetadata | null;
  Backup: null;
  AccessCredential: AccessCredentialMetadata | null;
  MemoryDump: MemoryDumpMetadata | null;
}

export interface GuestOSInfo {
  Name: string;
  KernelRelease: string;
  Version: string;
  PrettyName: string;
  VersionId: string;
  KernelVersion: string;
  Machine: string;
  Id: string;
}

export interface InterfaceStatus {
  Mac: string;
  Ip: string;
  IPs: string[] | null;
  InterfaceName: string;
}

export interface GuestPanicInfo {
  Type: string;
  Arg1: number;
  Arg2: number;
  Arg3: number;
  Arg4: number;
  Arg5: number;
}

export interface DomainStatus {
  Status: LifeCycle;
  Reason: Reason;
  Interfaces: InterfaceStatus[] | null;
  OSInfo: GuestOSInfo;
  FSFreezeStatus: { Status: string };
  GuestPanicInfo: GuestPanicInfo | null;
  PanicCount: number;
}

/** A disk of the domain's devices (api.Disk, the parts a hotplug report fills). */
export interface DomainDisk {
  Device: string;
  /** QEMU id; `ua-<volume>` for a user alias, as libvirt names it. */
  Alias: { Name: string } | null;
  Target: { Device: string; Bus: string };
  Source: { File: string };
  HotplugVolume: boolean;
}

/** A NIC of the domain's devices (api.Interface, alias and MAC). */
export interface DomainInterface {
  Alias: { Name: string } | null;
  MAC: { MAC: string } | null;
}

export interface DomainDevices {
  Disks?: DomainDisk[];
  Interfaces?: DomainInterface[];
  [extra: string]: unknown;
}

/** A device whose unplug the guest has not completed yet (qvirt's hotplug report). */
export interface DetachingDevice {
  Alias: string;
  Device: string;
  Kind: string;
  Since: string;
  Reason: string;
}

/** qvirt's hotplug status in the domain spec: devices still detaching and live changes refused. */
export interface QVirtHotplug {
  Detaching: DetachingDevice[];
  /** One sentence each. */
  Refused: string[];
}

/** A size in libvirt's form; qvirt reports bytes (`Unit: 'b'`). */
export interface DomainMemory {
  Value: number;
  Unit: string;
}

/**
 * The parts of the libvirt domain spec qvirt fills. The handler reads `Metadata`, `Features.ACPI`
 * (whether a Destroyed domain means Failed), `Name`, `UUID`, and the hotplug sections (`Devices`,
 * `VCPUs`, `CurrentMemory`, `QVirtHotplug`) a launcher adds once it supports live changes.
 */
export interface DomainSpec {
  Type: string;
  Name: string;
  UUID: string;
  Memory: DomainMemory;
  Metadata: { KubeVirt: KubeVirtMetadata };
  Features: { ACPI: Record<string, never> | null } | null;
  Devices: DomainDevices;
  VCPU?: { Placement: string; CPUs: number };
  VCPUs?: { Current: number; Max: number };
  CurrentMemory?: DomainMemory;
  MaxMemory?: DomainMemory | null;
  QVirtHotplug?: QVirtHotplug;
  [extra: string]: unknown;
}

export interface DomainObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  creationTimestamp: string | null;
  /** Set once the domain is gone: the node agent treats the domain as deleted. */
  deletionTimestamp?: string;
}

export interface Domain {
  kind: typeof DOMAIN_KIND;
  apiVersion: typeof DOMAIN_API_VERSION;
  ObjectMeta: DomainObjectMeta;
  Spec: DomainSpec;
  Status: DomainStatus;
}

export const EMPTY_OS_INFO: GuestOSInfo = {
  Name: '', KernelRelease: '', Version: '', PrettyName: '', VersionId: '', KernelVersion: '', Machine: '', Id: '',
};

/** The UID of the VMI the domain runs (its KubeVirt metadata's, else its ObjectMeta's). */
export function domainVmiUid(d: Domain): string {
  return d.Spec.Metadata.KubeVirt.UID || (d.ObjectMeta.uid ?? '');
}

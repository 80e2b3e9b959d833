// The domain object a launcher reports to its node agent: KubeVirt's api.Domain in the JSON form
// Go's encoding/json gives it (the fields carry no json tags, so names are the Go field names:
// `ObjectMeta`, `Spec.Metadata.KubeVirt.GracePeriod.MarkedForGracefulShutdown`, `Status.Status`).
// A KubeVirt virt-handler can unmarshal it unchanged.
import { DOMAIN_API_VERSION, DOMAIN_KIND, FSFreezeStatus, domainName, type LifeCycle, type Reason } from './constants.ts';
import type { MemoryDumpMetadata } from '../supervise/memory-dump.ts';
import type { AccessCredentialMetadata } from '../access-credentials/credentials.ts';

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

/**
 * The parts of the libvirt domain spec qvirt fills. The handler reads `Metadata`, `Features.ACPI`
 * (whether a Destroyed domain means Failed), `Name`, `UUID`; converters may add device sections.
 */
export interface DomainSpec {
  Type: string;
  Name: string;
  UUID: string;
  Memory: { Value: number; Unit: string };
  Metadata: { KubeVirt: KubeVirtMetadata };
  Features: { ACPI: Record<string, never> | null } | null;
  Devices: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface Domain {
  kind: typeof DOMAIN_KIND;
  apiVersion: typeof DOMAIN_API_VERSION;
  ObjectMeta: {
    name: string;
    namespace: string;
    uid?: string;
    creationTimestamp: string | null;
    deletionTimestamp?: string;
  };
  Spec: DomainSpec;
  Status: DomainStatus;
}

export const EMPTY_OS_INFO: GuestOSInfo = {
  Name: '', KernelRelease: '', Version: '', PrettyName: '', VersionId: '', KernelVersion: '', Machine: '', Id: '',
};

/** Everything the launcher knows about its domain, from which the JSON is built. */
export interface DomainRecord {
  namespace: string;
  name: string;
  /** The VMI UID (KubeVirt metadata uid and ObjectMeta.uid). */
  uid: string;
  /** The SMBIOS/firmware UUID of the VM (spec.domain.firmware.uuid), if known. */
  uuid?: string | undefined;
  /** "kvm" or "qemu" (TCG), as libvirt's domain type. */
  hypervisor?: string | undefined;
  memoryBytes?: number | undefined;
  acpi: boolean;
  status: LifeCycle;
  reason: Reason;
  gracePeriod: GracePeriodMetadata | null;
  migration?: MigrationMetadata | null | undefined;
  /** The last memory dump asked for (VirtualMachineMemoryDump), if any. */
  memoryDump?: MemoryDumpMetadata | null | undefined;
  /** The last access credential propagation through the guest agent, if any. */
  accessCredential?: AccessCredentialMetadata | null | undefined;
  osInfo?: GuestOSInfo | undefined;
  interfaces?: InterfaceStatus[] | undefined;
  fsFreezeStatus?: string | undefined;
  panicInfo?: GuestPanicInfo | null | undefined;
  panicCount?: number | undefined;
  /** Set once the domain is gone: the handler treats the domain as deleted. */
  deletionTimestamp?: string | undefined;
  creationTimestamp?: string | undefined;
  /** Extra spec sections (devices...) a converter wants the handler to see. */
  specExtras?: Record<string, unknown> | undefined;
}

/** KubeVirt's grace period metadata for a VMI's termination grace period. */
export function gracePeriodMetadata(deletionGracePeriodSeconds: number): GracePeriodMetadata {
  return { DeletionGracePeriodSeconds: deletionGracePeriodSeconds, DeletionTimestamp: null, MarkedForGracefulShutdown: null };
}

/** Builds the api.Domain JSON object. Pure. */
export function buildDomain(r: DomainRecord): Domain {
  const objectMeta: Domain['ObjectMeta'] = {
    name: r.name,
    namespace: r.namespace,
    uid: r.uid,
    creationTimestamp: r.creationTimestamp ?? null,
  };
  if (r.deletionTimestamp) objectMeta.deletionTimestamp = r.deletionTimestamp;
  const devices = (r.specExtras?.Devices as Record<string, unknown> | undefined) ?? {};
  return {
    kind: DOMAIN_KIND,
    apiVersion: DOMAIN_API_VERSION,
    ObjectMeta: objectMeta,
    Spec: {
      ...r.specExtras,
      Type: r.hypervisor ?? 'kvm',
      Name: domainName(r.namespace, r.name),
      UUID: r.uuid ?? '',
      Memory: { Value: r.memoryBytes ?? 0, Unit: 'b' },
      Metadata: {
        KubeVirt: {
          UID: r.uid,
          GracePeriod: r.gracePeriod ? { ...r.gracePeriod } : null,
          Migration: r.migration ? { ...r.migration } : null,
          Backup: null,
          AccessCredential: r.accessCredential ? { ...r.accessCredential } : null,
          MemoryDump: r.memoryDump ? { ...r.memoryDump } : null,
        },
      },
      Features: r.acpi ? { ACPI: {} } : null,
      Devices: devices,
    },
    Status: {
      Status: r.status,
      Reason: r.reason,
      Interfaces: r.interfaces ?? null,
      OSInfo: r.osInfo ?? { ...EMPTY_OS_INFO },
      FSFreezeStatus: { Status: r.fsFreezeStatus ?? '' },
      GuestPanicInfo: r.panicInfo ?? null,
      PanicCount: r.panicCount ?? 0,
    },
  };
}

export { FSFreezeStatus };

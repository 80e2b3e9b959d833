// The launcher's side of the domain contract (src/api/domain): what it knows about its domain, and
// the api.Domain object built from that, which it reports to its node agent.
import { DOMAIN_API_VERSION, DOMAIN_KIND, domainName, type LifeCycle, type Reason } from '../../src/api/domain/lifecycle.ts';
import {
  EMPTY_OS_INFO,
  type AccessCredentialMetadata, type Domain, type DomainDevices, type DomainSpec, type GracePeriodMetadata, type GuestOSInfo, type GuestPanicInfo,
  type InterfaceStatus, type MemoryDumpMetadata, type MigrationMetadata,
} from '../../src/api/domain/domain.ts';

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
  specExtras?: Partial<DomainSpec> | undefined;
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
  const devices: DomainDevices = r.specExtras?.Devices ?? {};
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


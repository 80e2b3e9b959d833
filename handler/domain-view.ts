// The node agent's reading of the domain JSON a launcher reports (KubeVirt's api.Domain, Go field
// names). Parsing is strict about the fields the handler's decisions depend on and tolerant of
// everything else, so a newer launcher can add to the domain without breaking older handlers.
import type { ReportedMemoryDump } from './memory-dump-status.ts';
import type { ReportedAccessCredential } from './access-credentials.ts';

export interface DomainGracePeriod {
  readonly deletionGracePeriodSeconds: number;
  readonly deletionTimestamp?: string | undefined;
  readonly markedForGracefulShutdown: boolean;
}

export interface ReportedDomain {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly status: string;
  readonly reason: string;
  readonly acpi: boolean;
  readonly hypervisor: string;
  /** Set when the launcher reports the domain gone. */
  readonly deletionTimestamp?: string | undefined;
  readonly gracePeriod?: DomainGracePeriod | undefined;
  readonly osInfo?: Readonly<Record<string, string>> | undefined;
  readonly interfaces?: ReadonlyArray<{ mac: string; ip: string; ips: string[]; interfaceName: string }> | undefined;
  readonly migration?: Readonly<Record<string, unknown>> | undefined;
  readonly fsFreezeStatus?: string | undefined;
  /** The launcher's memory dump (Spec.Metadata.KubeVirt.MemoryDump), once one was asked for. */
  readonly memoryDump?: ReportedMemoryDump | undefined;
  /** The launcher's last access credential propagation (Spec.Metadata.KubeVirt.AccessCredential). */
  readonly accessCredential?: ReportedAccessCredential | undefined;
  /** Hotplug: what the launcher reports plugged and pending (Spec.Devices, VCPUs, CurrentMemory, QVirtHotplug). */
  readonly live?: DomainLiveView | undefined;
  /** Guest panics seen by this QEMU (Status.PanicCount) and the last one's type and bugcheck code (Status.GuestPanicInfo). */
  readonly panics?: { readonly count: number; readonly type: string; readonly arg1: number } | undefined;
}

export interface DomainLiveView {
  /** Disks by volume name (alias without `ua-`), with the guest target. */
  readonly disks: ReadonlyArray<{ name: string; target: string; hotplugged: boolean }>;
  /** NICs by interface name, with their MAC. */
  readonly interfaces: ReadonlyArray<{ name: string; mac: string }>;
  /** Devices whose unplug the guest has not completed yet, with the reason. */
  readonly detaching: ReadonlyArray<{ name: string; kind: string; reason: string }>;
  /** Live changes the launcher refused, one sentence each. */
  readonly refused: readonly string[];
  readonly vcpus?: { current: number; max: number } | undefined;
  readonly currentMemoryBytes?: number | undefined;
}

export class DomainParseError extends Error {
  override name = 'DomainParseError';
}

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function parseDomain(json: string | Buffer): ReportedDomain {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof json === 'string' ? json : json.toString('utf8'));
  } catch (err) {
    throw new DomainParseError(`domain JSON does not parse: ${(err as Error).message}`);
  }
  const d = obj(raw);
  if (!d) throw new DomainParseError('domain JSON is not an object');
  const meta = obj(d.ObjectMeta) ?? {};
  const spec = obj(d.Spec) ?? {};
  const status = obj(d.Status);
  if (!status || typeof status.Status !== 'string') throw new DomainParseError('domain JSON: Status.Status is missing');
  const kv = obj(obj(spec.Metadata)?.KubeVirt) ?? {};
  const gp = obj(kv.GracePeriod);
  const md = obj(kv.MemoryDump);
  const ac = obj(kv.AccessCredential);
  const osInfo = obj(status.OSInfo);
  const ifaces = Array.isArray(status.Interfaces) ? status.Interfaces.map((i) => obj(i) ?? {}) : undefined;
  return {
    name: str(meta.name),
    namespace: str(meta.namespace),
    uid: str(kv.UID) || str(meta.uid),
    status: status.Status,
    reason: str(status.Reason) || 'Unknown',
    acpi: obj(obj(spec.Features)?.ACPI) !== undefined,
    hypervisor: str(spec.Type),
    deletionTimestamp: str(meta.deletionTimestamp) || undefined,
    gracePeriod: gp ? {
      deletionGracePeriodSeconds: typeof gp.DeletionGracePeriodSeconds === 'number' ? gp.DeletionGracePeriodSeconds : 0,
      deletionTimestamp: str(gp.DeletionTimestamp) || undefined,
      markedForGracefulShutdown: gp.MarkedForGracefulShutdown === true,
    } : undefined,
    osInfo: osInfo ? Object.fromEntries(Object.entries(osInfo).map(([k, v]) => [k, str(v)])) : undefined,
    interfaces: ifaces?.map((i) => ({ mac: str(i.Mac), ip: str(i.Ip), ips: Array.isArray(i.IPs) ? i.IPs.map(str) : [], interfaceName: str(i.InterfaceName) })),
    migration: obj(kv.Migration),
    fsFreezeStatus: str(obj(status.FSFreezeStatus)?.Status) || undefined,
    panics: typeof status.PanicCount === 'number' && status.PanicCount > 0
      ? { count: status.PanicCount, type: str(obj(status.GuestPanicInfo)?.Type), arg1: typeof obj(status.GuestPanicInfo)?.Arg1 === 'number' ? obj(status.GuestPanicInfo)!.Arg1 as number : 0 }
      : undefined,
    memoryDump: md && str(md.FileName) ? {
      fileName: str(md.FileName),
      startTimestamp: str(md.StartTimestamp) || undefined,
      endTimestamp: str(md.EndTimestamp) || undefined,
      completed: md.Completed === true,
      failed: md.Failed === true,
      failureReason: str(md.FailureReason),
    } : undefined,
    accessCredential: ac ? { succeeded: ac.Succeeded === true, message: str(ac.Message) } : undefined,
    live: parseLive(spec),
  };
}

const alias = (v: unknown): string => str(obj(v)?.Name).replace(/^ua-/, '');
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function parseLive(spec: Record<string, unknown>): DomainLiveView | undefined {
  const hp = obj(spec.QVirtHotplug);
  if (!hp) return undefined;
  const devices = obj(spec.Devices) ?? {};
  const arr = (v: unknown) => (Array.isArray(v) ? v.map((x) => obj(x) ?? {}) : []);
  const vcpus = obj(spec.VCPUs);
  const mem = obj(spec.CurrentMemory);
  return {
    disks: arr(devices.Disks).map((d) => ({ name: alias(d.Alias), target: str(obj(d.Target)?.Device), hotplugged: d.HotplugVolume === true })),
    interfaces: arr(devices.Interfaces).map((i) => ({ name: alias(i.Alias), mac: str(obj(i.MAC)?.MAC) })),
    detaching: arr(hp.Detaching).map((d) => ({ name: str(d.Alias), kind: str(d.Kind), reason: str(d.Reason) })),
    refused: Array.isArray(hp.Refused) ? hp.Refused.map(str) : [],
    vcpus: vcpus && num(vcpus.Current) !== undefined ? { current: num(vcpus.Current)!, max: num(vcpus.Max) ?? num(vcpus.Current)! } : undefined,
    currentMemoryBytes: mem && str(mem.Unit) === 'b' ? num(mem.Value) : undefined,
  };
}

// The one decoder of the domain a launcher reports (./domain.ts), as it arrives over gRPC (the Cmd
// socket's GetDomain) and the notify socket: Go's encoding/json semantics — an absent or null field
// takes its zero value, so a newer launcher may add fields and an older one may leave some out — but a
// field of the wrong type, or a lifecycle string KubeVirt does not have, is refused with an error
// naming the field. Fields the contract does not name are kept as they came (spec sections a
// converter adds).
import { DOMAIN_API_VERSION, DOMAIN_KIND, LifeCycle, Reason } from './lifecycle.ts';
import {
  EMPTY_OS_INFO,
  type AccessCredentialMetadata, type DetachingDevice, type Domain, type DomainDevices, type DomainDisk, type DomainInterface, type DomainMemory,
  type DomainObjectMeta, type DomainSpec, type DomainStatus, type GracePeriodMetadata, type GuestOSInfo, type GuestPanicInfo, type InterfaceStatus,
  type KubeVirtMetadata, type MemoryDumpMetadata, type MigrationMetadata, type QVirtHotplug,
} from './domain.ts';

export class DomainDecodeError extends Error {
  override name = 'DomainDecodeError';
}

type Obj = Record<string, unknown>;

const LIFECYCLES = new Set<string>(Object.values(LifeCycle));
const REASONS = new Set<string>(Object.values(Reason));

const at = (path: string, key: string): string => (path ? `${path}.${key}` : key);

function got(v: unknown): string {
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'string' ? `"${v}"` : `${typeof v} ${JSON.stringify(v)}`;
}

function fail(path: string, want: string, v: unknown): never {
  throw new DomainDecodeError(`domain JSON: ${path}: want ${want}, got ${got(v)}`);
}

/** A nested object; absent or null → undefined. */
function object(o: Obj, key: string, path: string): Obj | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) fail(at(path, key), 'an object', v);
  return v as Obj;
}

function array(o: Obj, key: string, path: string): unknown[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) fail(at(path, key), 'an array', v);
  return v;
}

function element(v: unknown, path: string): Obj {
  if (!v || typeof v !== 'object' || Array.isArray(v)) fail(path, 'an object', v);
  return v as Obj;
}

function string(o: Obj, key: string, path: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') fail(at(path, key), 'a string', v);
  return v;
}

/** A Go *string or *metav1.Time: absent, null and '' → null. */
function optionalString(o: Obj, key: string, path: string): string | null {
  return string(o, key, path) || null;
}

function number(o: Obj, key: string, path: string): number {
  const v = o[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(at(path, key), 'a number', v);
  return v;
}

function boolean(o: Obj, key: string, path: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') fail(at(path, key), 'a boolean', v);
  return v;
}

function strings(o: Obj, key: string, path: string): string[] | undefined {
  return array(o, key, path)?.map((v, i) => (typeof v === 'string' ? v : fail(`${path}.${key}[${i}]`, 'a string', v)));
}

function objectMeta(o: Obj | undefined): DomainObjectMeta {
  const p = 'ObjectMeta';
  const m = o ?? {};
  const out: DomainObjectMeta = { name: string(m, 'name', p), namespace: string(m, 'namespace', p), creationTimestamp: optionalString(m, 'creationTimestamp', p) };
  const uid = string(m, 'uid', p);
  if (uid) out.uid = uid;
  const deleted = string(m, 'deletionTimestamp', p);
  if (deleted) out.deletionTimestamp = deleted;
  return out;
}

function gracePeriod(o: Obj | undefined, p: string): GracePeriodMetadata | null {
  if (!o) return null;
  const marked = o.MarkedForGracefulShutdown;
  return {
    DeletionGracePeriodSeconds: number(o, 'DeletionGracePeriodSeconds', p),
    DeletionTimestamp: optionalString(o, 'DeletionTimestamp', p),
    MarkedForGracefulShutdown: marked === undefined || marked === null ? null : boolean(o, 'MarkedForGracefulShutdown', p),
  };
}

function migration(o: Obj | undefined, p: string): MigrationMetadata | null {
  if (!o) return null;
  return {
    UID: string(o, 'UID', p),
    StartTimestamp: optionalString(o, 'StartTimestamp', p),
    EndTimestamp: optionalString(o, 'EndTimestamp', p),
    Failed: boolean(o, 'Failed', p),
    FailureReason: string(o, 'FailureReason', p),
    AbortStatus: string(o, 'AbortStatus', p),
    Mode: string(o, 'Mode', p),
  };
}

function memoryDump(o: Obj | undefined, p: string): MemoryDumpMetadata | null {
  if (!o) return null;
  return {
    FileName: string(o, 'FileName', p),
    StartTimestamp: optionalString(o, 'StartTimestamp', p),
    EndTimestamp: optionalString(o, 'EndTimestamp', p),
    Completed: boolean(o, 'Completed', p),
    Failed: boolean(o, 'Failed', p),
    FailureReason: string(o, 'FailureReason', p),
  };
}

function accessCredential(o: Obj | undefined, p: string): AccessCredentialMetadata | null {
  return o ? { Succeeded: boolean(o, 'Succeeded', p), Message: string(o, 'Message', p) } : null;
}

function kubeVirtMetadata(o: Obj | undefined): KubeVirtMetadata {
  const p = 'Spec.Metadata.KubeVirt';
  const k = o ?? {};
  return {
    UID: string(k, 'UID', p),
    GracePeriod: gracePeriod(object(k, 'GracePeriod', p), `${p}.GracePeriod`),
    Migration: migration(object(k, 'Migration', p), `${p}.Migration`),
    Backup: null,
    AccessCredential: accessCredential(object(k, 'AccessCredential', p), `${p}.AccessCredential`),
    MemoryDump: memoryDump(object(k, 'MemoryDump', p), `${p}.MemoryDump`),
  };
}

const alias = (o: Obj, p: string): { Name: string } | null => {
  const a = object(o, 'Alias', p);
  return a ? { Name: string(a, 'Name', `${p}.Alias`) } : null;
};

function disk(v: unknown, p: string): DomainDisk {
  const d = element(v, p);
  const target = object(d, 'Target', p) ?? {};
  return {
    Device: string(d, 'Device', p),
    Alias: alias(d, p),
    Target: { Device: string(target, 'Device', `${p}.Target`), Bus: string(target, 'Bus', `${p}.Target`) },
    Source: { File: string(object(d, 'Source', p) ?? {}, 'File', `${p}.Source`) },
    HotplugVolume: boolean(d, 'HotplugVolume', p),
  };
}

function nic(v: unknown, p: string): DomainInterface {
  const i = element(v, p);
  const mac = object(i, 'MAC', p);
  return { Alias: alias(i, p), MAC: mac ? { MAC: string(mac, 'MAC', `${p}.MAC`) } : null };
}

function devices(o: Obj | undefined): DomainDevices {
  const p = 'Spec.Devices';
  if (!o) return {};
  const out: DomainDevices = { ...o };
  const disks = array(o, 'Disks', p);
  if (disks) out.Disks = disks.map((d, i) => disk(d, `${p}.Disks[${i}]`));
  const nics = array(o, 'Interfaces', p);
  if (nics) out.Interfaces = nics.map((n, i) => nic(n, `${p}.Interfaces[${i}]`));
  return out;
}

function memory(o: Obj | undefined, p: string): DomainMemory | undefined {
  return o ? { Value: number(o, 'Value', p), Unit: string(o, 'Unit', p) } : undefined;
}

function hotplug(o: Obj | undefined): QVirtHotplug | undefined {
  const p = 'Spec.QVirtHotplug';
  if (!o) return undefined;
  const detaching = (array(o, 'Detaching', p) ?? []).map((v, i): DetachingDevice => {
    const q = `${p}.Detaching[${i}]`;
    const d = element(v, q);
    return { Alias: string(d, 'Alias', q), Device: string(d, 'Device', q), Kind: string(d, 'Kind', q), Since: string(d, 'Since', q), Reason: string(d, 'Reason', q) };
  });
  return { Detaching: detaching, Refused: strings(o, 'Refused', p) ?? [] };
}

function spec(o: Obj | undefined): DomainSpec {
  const p = 'Spec';
  const s = o ?? {};
  const features = object(s, 'Features', p);
  const out: DomainSpec = {
    ...s,
    Type: string(s, 'Type', p),
    Name: string(s, 'Name', p),
    UUID: string(s, 'UUID', p),
    Memory: memory(object(s, 'Memory', p), `${p}.Memory`) ?? { Value: 0, Unit: '' },
    Metadata: { KubeVirt: kubeVirtMetadata(object(object(s, 'Metadata', p) ?? {}, 'KubeVirt', `${p}.Metadata`)) },
    Features: features ? { ACPI: object(features, 'ACPI', `${p}.Features`) ? {} : null } : null,
    Devices: devices(object(s, 'Devices', p)),
  };
  const vcpu = object(s, 'VCPU', p);
  if (vcpu) out.VCPU = { Placement: string(vcpu, 'Placement', `${p}.VCPU`), CPUs: number(vcpu, 'CPUs', `${p}.VCPU`) };
  const vcpus = object(s, 'VCPUs', p);
  if (vcpus) out.VCPUs = { Current: number(vcpus, 'Current', `${p}.VCPUs`), Max: number(vcpus, 'Max', `${p}.VCPUs`) };
  const current = memory(object(s, 'CurrentMemory', p), `${p}.CurrentMemory`);
  if (current) out.CurrentMemory = current;
  if (s.MaxMemory !== undefined) out.MaxMemory = memory(object(s, 'MaxMemory', p), `${p}.MaxMemory`) ?? null;
  const hp = hotplug(object(s, 'QVirtHotplug', p));
  if (hp) out.QVirtHotplug = hp;
  return out;
}

function osInfo(o: Obj | undefined): GuestOSInfo {
  const p = 'Status.OSInfo';
  if (!o) return { ...EMPTY_OS_INFO };
  return Object.fromEntries(Object.keys(EMPTY_OS_INFO).map((k) => [k, string(o, k, p)])) as unknown as GuestOSInfo;
}

function interfaceStatus(v: unknown, p: string): InterfaceStatus {
  const i = element(v, p);
  return { Mac: string(i, 'Mac', p), Ip: string(i, 'Ip', p), IPs: strings(i, 'IPs', p) ?? null, InterfaceName: string(i, 'InterfaceName', p) };
}

function panicInfo(o: Obj | undefined): GuestPanicInfo | null {
  const p = 'Status.GuestPanicInfo';
  if (!o) return null;
  return { Type: string(o, 'Type', p), Arg1: number(o, 'Arg1', p), Arg2: number(o, 'Arg2', p), Arg3: number(o, 'Arg3', p), Arg4: number(o, 'Arg4', p), Arg5: number(o, 'Arg5', p) };
}

function status(o: Obj | undefined): DomainStatus {
  const p = 'Status';
  if (!o || o.Status === undefined || o.Status === null) throw new DomainDecodeError('domain JSON: Status.Status is missing');
  const lifeCycle = string(o, 'Status', p);
  if (!LIFECYCLES.has(lifeCycle)) fail(`${p}.Status`, `one of ${[...LIFECYCLES].join(', ')}`, lifeCycle);
  // A domain without a reason reports api.ReasonUnknown.
  const reason = string(o, 'Reason', p) || Reason.Unknown;
  if (!REASONS.has(reason)) fail(`${p}.Reason`, `one of ${[...REASONS].join(', ')}`, reason);
  return {
    Status: lifeCycle as LifeCycle,
    Reason: reason as Reason,
    Interfaces: array(o, 'Interfaces', p)?.map((v, i) => interfaceStatus(v, `${p}.Interfaces[${i}]`)) ?? null,
    OSInfo: osInfo(object(o, 'OSInfo', p)),
    FSFreezeStatus: { Status: string(object(o, 'FSFreezeStatus', p) ?? {}, 'Status', `${p}.FSFreezeStatus`) },
    GuestPanicInfo: panicInfo(object(o, 'GuestPanicInfo', p)),
    PanicCount: number(o, 'PanicCount', p),
  };
}

/** Decodes the domain JSON a launcher sent (a string, bytes, or JSON already parsed). */
export function decodeDomain(json: string | Uint8Array | object): Domain {
  let raw: unknown = json;
  if (typeof json === 'string' || json instanceof Uint8Array) {
    try {
      raw = JSON.parse(typeof json === 'string' ? json : new TextDecoder().decode(json));
    } catch (err) {
      throw new DomainDecodeError(`domain JSON does not parse: ${(err as Error).message}`);
    }
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new DomainDecodeError('domain JSON is not an object');
  const d = raw as Obj;
  return {
    kind: DOMAIN_KIND,
    apiVersion: DOMAIN_API_VERSION,
    ObjectMeta: objectMeta(object(d, 'ObjectMeta', '')),
    Spec: spec(object(d, 'Spec', '')),
    Status: status(object(d, 'Status', '')),
  };
}

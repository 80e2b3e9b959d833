// What `qvirt top` shows of a running VMI, and the node agent's `usage` subresource that feeds it:
// one reading of the figures the agent's /metrics exports (its launcher's GetDomainStats — CPU time,
// memory, storage and network counters), with the agent's clock. The CLI reads twice and turns the
// counters into rates, as `rate()` over two scrapes would. Pure.

/** The node agent's subresource: GET /v1/namespaces/NS/virtualmachineinstances/NAME/usage. */
export const VMI_USAGE_SUBRESOURCE = 'usage';

/** One reading. Counters are totals since the QEMU started; a figure the launcher did not report is absent. */
export interface VmiUsageSample {
  /** When the agent had the answer (ms since the epoch, the agent's clock). */
  readonly time: number;
  /** kubevirt_vmi_cpu_usage_seconds_total: the vCPUs' and QEMU's own CPU time. */
  readonly cpuSeconds?: number | undefined;
  /** vCPUs the domain has. */
  readonly vcpus: number;
  /** vmi:kubevirt_vmi_memory_used_bytes:sum (available − usable), once the guest's balloon driver reports. */
  readonly memoryUsedBytes?: number | undefined;
  /** kubevirt_vmi_memory_resident_bytes: QEMU's resident set. */
  readonly memoryResidentBytes?: number | undefined;
  /** kubevirt_vmi_memory_domain_bytes. */
  readonly memoryDomainBytes?: number | undefined;
  /** Sums over the VMI's drives (kubevirt_vmi_storage_*_traffic_bytes_total, iops_*_total). */
  readonly storageReadBytes: number;
  readonly storageWriteBytes: number;
  readonly storageReadOps: number;
  readonly storageWriteOps: number;
  /** Sums over its interfaces (kubevirt_vmi_network_{receive,transmit}_bytes_total). */
  readonly networkReceiveBytes: number;
  readonly networkTransmitBytes: number;
}

/** What a person reads: rates over the interval between two readings. */
export interface VmiUsage {
  readonly cpuCores?: number | undefined;
  /** The guest's used memory where it reports it, else QEMU's resident set. */
  readonly memoryBytes?: number | undefined;
  readonly memorySource?: 'guest' | 'qemu' | undefined;
  readonly readBytesPerSecond?: number | undefined;
  readonly writeBytesPerSecond?: number | undefined;
  readonly receiveBytesPerSecond?: number | undefined;
  readonly transmitBytesPerSecond?: number | undefined;
}

/** A counter's rate; none across a reset (a new QEMU after a migration) or without time between. */
function rate(a: number | undefined, b: number | undefined, seconds: number): number | undefined {
  if (a === undefined || b === undefined || !(seconds > 0) || b < a) return undefined;
  return (b - a) / seconds;
}

/** The usage between two readings of one VMI (`a` first). Pure. */
export function usageBetween(a: VmiUsageSample, b: VmiUsageSample): VmiUsage {
  const s = (b.time - a.time) / 1000;
  const memory = b.memoryUsedBytes !== undefined ? { memoryBytes: b.memoryUsedBytes, memorySource: 'guest' as const }
    : b.memoryResidentBytes !== undefined ? { memoryBytes: b.memoryResidentBytes, memorySource: 'qemu' as const } : {};
  return {
    cpuCores: rate(a.cpuSeconds, b.cpuSeconds, s),
    ...memory,
    readBytesPerSecond: rate(a.storageReadBytes, b.storageReadBytes, s),
    writeBytesPerSecond: rate(a.storageWriteBytes, b.storageWriteBytes, s),
    receiveBytesPerSecond: rate(a.networkReceiveBytes, b.networkReceiveBytes, s),
    transmitBytesPerSecond: rate(a.networkTransmitBytes, b.networkTransmitBytes, s),
  };
}

/** Checks an answer of the `usage` subresource; throws naming the bad field. Pure. */
export function parseVmiUsageSample(v: unknown): VmiUsageSample {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('usage: the answer is not a JSON object');
  const o = v as Record<string, unknown>;
  const num = (k: string, required: boolean): number | undefined => {
    const x = o[k];
    if (x === undefined && !required) return undefined;
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new Error(`usage.${k}: ${required ? 'required, ' : ''}must be a number (got ${JSON.stringify(x)})`);
    return x;
  };
  const optional = (k: 'cpuSeconds' | 'memoryUsedBytes' | 'memoryResidentBytes' | 'memoryDomainBytes') => {
    const x = num(k, false);
    return x === undefined ? {} : { [k]: x };
  };
  return {
    time: num('time', true)!,
    ...optional('cpuSeconds'),
    vcpus: num('vcpus', true)!,
    ...optional('memoryUsedBytes'),
    ...optional('memoryResidentBytes'),
    ...optional('memoryDomainBytes'),
    storageReadBytes: num('storageReadBytes', true)!,
    storageWriteBytes: num('storageWriteBytes', true)!,
    storageReadOps: num('storageReadOps', true)!,
    storageWriteOps: num('storageWriteOps', true)!,
    networkReceiveBytes: num('networkReceiveBytes', true)!,
    networkTransmitBytes: num('networkTransmitBytes', true)!,
  };
}

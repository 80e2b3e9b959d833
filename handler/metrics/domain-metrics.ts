// A VMI's domain statistics as KubeVirt's virt-handler reports them
// (pkg/monitoring/metrics/virt-handler/domainstats: memory, cpu, vcpu, block and network
// collectors; migrationdomainstats for a migration under way): the same names, types, units
// (bytes from KiB, seconds from ns) and labels — node, namespace, name, every VMI label as
// kubernetes_vmi_label_<label with . / - as _>, and per device `drive` (the disk's name) or
// `interface` (the interface's name), per vCPU `id` and `state`. Pure.
import { MetricType, type Labels } from '../../src/metrics/exposition.ts';
import { FamilyBuilder, type MetricDef } from '../../src/metrics/family-builder.ts';

export { FamilyBuilder };
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { DomainStats } from './domain-stats.ts';

type Def = MetricDef;
const counter = (name: string, help: string): Def => ({ name, type: MetricType.Counter, help });
const gauge = (name: string, help: string): Def => ({ name, type: MetricType.Gauge, help });

export const DomainMetric = {
  memoryResident: gauge('kubevirt_vmi_memory_resident_bytes', 'Resident set size of the process running the domain.'),
  memoryAvailable: gauge('kubevirt_vmi_memory_available_bytes', 'Amount of usable memory as seen by the domain. This value may not be accurate if a balloon driver is in use or if the guest OS does not initialize all assigned pages'),
  memoryUnused: gauge('kubevirt_vmi_memory_unused_bytes', 'The amount of memory left completely unused by the system. Memory that is available but used for reclaimable caches should NOT be reported as free.'),
  memoryCached: gauge('kubevirt_vmi_memory_cached_bytes', 'The amount of memory that is being used to cache I/O and is available to be reclaimed, corresponds to the sum of `Buffers` + `Cached` + `SwapCached` in `/proc/meminfo`.'),
  memorySwapIn: gauge('kubevirt_vmi_memory_swap_in_traffic_bytes', 'The total amount of data read from swap space of the guest in bytes.'),
  memorySwapOut: gauge('kubevirt_vmi_memory_swap_out_traffic_bytes', 'The total amount of memory written out to swap space of the guest in bytes.'),
  memoryPgmajfault: counter('kubevirt_vmi_memory_pgmajfault_total', 'The number of page faults when disk IO was required. Page faults occur when a process makes a valid access to virtual memory that is not available. When servicing the page fault, if disk IO is required, it is considered as major fault.'),
  memoryPgminfault: counter('kubevirt_vmi_memory_pgminfault_total', 'The number of other page faults, when disk IO was not required. Page faults occur when a process makes a valid access to virtual memory that is not available. When servicing the page fault, if disk IO is NOT required, it is considered as minor fault.'),
  memoryActualBalloon: gauge('kubevirt_vmi_memory_actual_balloon_bytes', 'Current balloon size in bytes.'),
  memoryUsable: gauge('kubevirt_vmi_memory_usable_bytes', "The amount of memory which can be reclaimed by balloon without pushing the guest system to swap, corresponds to 'Available' in /proc/meminfo."),
  memoryDomain: gauge('kubevirt_vmi_memory_domain_bytes', 'The amount of memory in bytes allocated to the domain. The `memory` value in domain xml file.'),
  cpuUsage: counter('kubevirt_vmi_cpu_usage_seconds_total', 'Total CPU time spent in all modes (sum of both vcpu and hypervisor usage).'),
  cpuUser: counter('kubevirt_vmi_cpu_user_usage_seconds_total', 'Total CPU time spent in user mode.'),
  cpuSystem: counter('kubevirt_vmi_cpu_system_usage_seconds_total', 'Total CPU time spent in system mode.'),
  vcpuSeconds: counter('kubevirt_vmi_vcpu_seconds_total', 'Total amount of time spent in each state by each vcpu (cpu_time excluding hypervisor time). Where `id` is the vcpu identifier and `state` can be one of the following: [`OFFLINE`, `RUNNING`, `BLOCKED`].'),
  vcpuWait: counter('kubevirt_vmi_vcpu_wait_seconds_total', 'Amount of time spent by each vcpu while waiting on I/O.'),
  vcpuDelay: counter('kubevirt_vmi_vcpu_delay_seconds_total', 'Amount of time spent by each vcpu waiting in the queue instead of running.'),
  storageIopsRead: counter('kubevirt_vmi_storage_iops_read_total', 'Total number of I/O read operations.'),
  storageIopsWrite: counter('kubevirt_vmi_storage_iops_write_total', 'Total number of I/O write operations.'),
  storageReadBytes: counter('kubevirt_vmi_storage_read_traffic_bytes_total', 'Total number of bytes read from storage.'),
  storageWriteBytes: counter('kubevirt_vmi_storage_write_traffic_bytes_total', 'Total number of written bytes.'),
  storageReadTimes: counter('kubevirt_vmi_storage_read_times_seconds_total', 'Total time spent on read operations.'),
  storageWriteTimes: counter('kubevirt_vmi_storage_write_times_seconds_total', 'Total time spent on write operations.'),
  storageFlushRequests: counter('kubevirt_vmi_storage_flush_requests_total', 'Total storage flush requests.'),
  storageFlushTimes: counter('kubevirt_vmi_storage_flush_times_seconds_total', 'Total time spent on cache flushing.'),
  networkTrafficDeprecated: counter('kubevirt_vmi_network_traffic_bytes_total', '[Deprecated] Total number of bytes sent and received.'),
  networkReceiveBytes: counter('kubevirt_vmi_network_receive_bytes_total', 'Total network traffic received in bytes.'),
  networkTransmitBytes: counter('kubevirt_vmi_network_transmit_bytes_total', 'Total network traffic transmitted in bytes.'),
  networkReceivePackets: counter('kubevirt_vmi_network_receive_packets_total', 'Total network traffic received packets.'),
  networkTransmitPackets: counter('kubevirt_vmi_network_transmit_packets_total', 'Total network traffic transmitted packets.'),
  networkReceiveErrors: counter('kubevirt_vmi_network_receive_errors_total', 'Total network received error packets.'),
  networkTransmitErrors: counter('kubevirt_vmi_network_transmit_errors_total', 'Total network transmitted error packets.'),
  networkReceiveDropped: counter('kubevirt_vmi_network_receive_packets_dropped_total', 'The total number of rx packets dropped on vNIC interfaces.'),
  networkTransmitDropped: counter('kubevirt_vmi_network_transmit_packets_dropped_total', 'The total number of tx packets dropped on vNIC interfaces.'),
  migrationDataTotal: counter('kubevirt_vmi_migration_data_bytes_total', 'The total Guest OS data to be migrated to the new VM.'),
  migrationDataRemaining: gauge('kubevirt_vmi_migration_data_remaining_bytes', 'The remaining guest OS data to be migrated to the new VM.'),
  migrationDataProcessed: gauge('kubevirt_vmi_migration_data_processed_bytes', 'The total Guest OS data processed and migrated to the new VM.'),
  migrationDirtyMemoryRate: gauge('kubevirt_vmi_migration_dirty_memory_rate_bytes', 'The rate of memory being dirty in the Guest OS.'),
  migrationMemoryTransferRate: gauge('kubevirt_vmi_migration_memory_transfer_rate_bytes', 'The rate at which the memory is being transferred.'),
} as const;

const KIB = 1024;
const NS = 1e9;

/** KubeVirt's label of a VMI label: kubernetes_vmi_label_ + the key with `.`, `/` and `-` as `_`. Pure. */
export function vmiLabelName(key: string): string {
  return `kubernetes_vmi_label_${key.replace(/[./-]/g, '_')}`;
}

/** KubeVirt's humanReadableState of a libvirt vCPU state. */
export function vcpuState(state: number): string {
  switch (state) {
    case 0: return 'offline';
    case 1: return 'running';
    case 2: return 'blocked';
    default: return 'unknown';
  }
}


const scale = (v: number | undefined, by: number) => (v === undefined ? undefined : v * by);
const seconds = (ns: number | undefined) => (ns === undefined ? undefined : ns / NS);

/** The families of one VMI's domain stats. `node` is the VMI's node (status.nodeName). Pure. */
export function domainMetrics(vmi: VirtualMachineInstance, stats: DomainStats, out = new FamilyBuilder()): FamilyBuilder {
  const base: Record<string, string> = { node: vmi.status?.nodeName ?? '', namespace: vmi.metadata?.namespace ?? '', name: vmi.metadata?.name ?? '' };
  const vmiLabels: Record<string, string> = { ...base };
  for (const [k, v] of Object.entries(vmi.metadata?.labels ?? {})) vmiLabels[vmiLabelName(k)] = v;
  const L = (extra: Record<string, string> = {}): Labels => ({ ...vmiLabels, ...extra });
  const M = DomainMetric;

  const mem = stats.memory;
  if (mem) {
    out.add(M.memoryResident, L(), scale(mem.RSS, KIB));
    out.add(M.memoryAvailable, L(), scale(mem.Available, KIB));
    out.add(M.memoryUnused, L(), scale(mem.Unused, KIB));
    out.add(M.memoryCached, L(), scale(mem.Cached, KIB));
    out.add(M.memorySwapIn, L(), scale(mem.SwapIn, KIB));
    out.add(M.memorySwapOut, L(), scale(mem.SwapOut, KIB));
    out.add(M.memoryPgmajfault, L(), mem.MajorFault);
    out.add(M.memoryPgminfault, L(), mem.MinorFault);
    out.add(M.memoryActualBalloon, L(), scale(mem.ActualBalloon, KIB));
    out.add(M.memoryUsable, L(), scale(mem.Usable, KIB));
    out.add(M.memoryDomain, L(), scale(mem.Total, KIB));
  }
  if (stats.cpu) {
    out.add(M.cpuUsage, L(), seconds(stats.cpu.Time));
    out.add(M.cpuUser, L(), seconds(stats.cpu.User));
    out.add(M.cpuSystem, L(), seconds(stats.cpu.System));
  }
  stats.vcpu.forEach((v, i) => {
    const id = String(i);
    out.add(M.vcpuSeconds, L({ id, state: vcpuState(v.State ?? 0) }), seconds(v.Time));
    out.add(M.vcpuWait, L({ id }), seconds(v.Wait));
    out.add(M.vcpuDelay, L({ id }), seconds(v.Delay));
  });
  for (const b of stats.block) {
    const l = L({ drive: b.alias ?? b.name });
    const f = b.figures;
    out.add(M.storageIopsRead, l, f.RdReqs);
    out.add(M.storageIopsWrite, l, f.WrReqs);
    out.add(M.storageReadBytes, l, f.RdBytes);
    out.add(M.storageWriteBytes, l, f.WrBytes);
    out.add(M.storageReadTimes, l, seconds(f.RdTimes));
    out.add(M.storageWriteTimes, l, seconds(f.WrTimes));
    out.add(M.storageFlushRequests, l, f.FlReqs);
    out.add(M.storageFlushTimes, l, seconds(f.FlTimes));
  }
  for (const n of stats.net) {
    const iface = n.alias ?? n.name;
    const l = L({ interface: iface });
    const f = n.figures;
    out.add(M.networkTrafficDeprecated, L({ interface: iface, type: 'rx' }), f.RxBytes);
    out.add(M.networkReceiveBytes, l, f.RxBytes);
    out.add(M.networkTrafficDeprecated, L({ interface: iface, type: 'tx' }), f.TxBytes);
    out.add(M.networkTransmitBytes, l, f.TxBytes);
    out.add(M.networkReceivePackets, l, f.RxPkts);
    out.add(M.networkTransmitPackets, l, f.TxPkts);
    out.add(M.networkReceiveErrors, l, f.RxErrs);
    out.add(M.networkTransmitErrors, l, f.TxErrs);
    out.add(M.networkReceiveDropped, l, f.RxDrop);
    out.add(M.networkTransmitDropped, l, f.TxDrop);
  }
  // migrationdomainstats labels a migration with namespace, name and node only.
  const job = stats.migration;
  if (job) {
    out.add(M.migrationDataTotal, base, job.DataTotal);
    out.add(M.migrationDataRemaining, base, job.DataRemaining);
    out.add(M.migrationDataProcessed, base, job.DataProcessed);
    out.add(M.migrationDirtyMemoryRate, base, job.MemDirtyRate);
    out.add(M.migrationMemoryTransferRate, base, job.MemoryBps);
  }
  return out;
}

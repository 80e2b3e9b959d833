// One reading of a VMI's usage (src/api/vmi-usage.ts) from its launcher's domain stats — the same
// figures and units /metrics exports (domain-metrics.ts), summed over drives and interfaces. Pure.
import type { VmiUsageSample } from '../../src/api/vmi-usage.ts';
import type { DomainStats } from './domain-stats.ts';

const KIB = 1024;

export function usageSample(stats: DomainStats, time: number): VmiUsageSample {
  const mem = stats.memory ?? {};
  const sum = <T>(list: readonly T[], f: (x: T) => number | undefined) => list.reduce((n, x) => n + (f(x) ?? 0), 0);
  const used = mem.Available !== undefined && mem.Usable !== undefined ? Math.max(0, mem.Available - mem.Usable) * KIB : undefined;
  return {
    time,
    cpuSeconds: stats.cpu?.Time !== undefined ? stats.cpu.Time / 1e9 : undefined,
    vcpus: stats.vcpu.length,
    memoryUsedBytes: used,
    memoryResidentBytes: mem.RSS !== undefined ? mem.RSS * KIB : undefined,
    memoryDomainBytes: mem.Total !== undefined ? mem.Total * KIB : undefined,
    storageReadBytes: sum(stats.block, (b) => b.figures.RdBytes),
    storageWriteBytes: sum(stats.block, (b) => b.figures.WrBytes),
    storageReadOps: sum(stats.block, (b) => b.figures.RdReqs),
    storageWriteOps: sum(stats.block, (b) => b.figures.WrReqs),
    networkReceiveBytes: sum(stats.net, (n) => n.figures.RxBytes),
    networkTransmitBytes: sum(stats.net, (n) => n.figures.TxBytes),
  };
}

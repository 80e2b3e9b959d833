// `qvirt top`'s table, as `kubectl top pod` prints its own: NAME, CPU(cores) in millicores,
// MEMORY(bytes) in Mi, columns three spaces apart; then the disk's read and write rates (and the
// network's with --network). A figure the VMI did not report reads <unknown>. Pure.
import type { VmiUsage } from '../api/vmi-usage.ts';

export interface TopRow {
  readonly namespace: string;
  readonly name: string;
  readonly usage: VmiUsage | undefined;
}

export type TopSort = 'cpu' | 'memory' | '';

const UNKNOWN = '<unknown>';
const KI = 1024;
const MI = 1024 * 1024;

/** kubectl's CPU: whole millicores, `12m`. */
export function formatCpu(cores: number | undefined): string {
  return cores === undefined ? UNKNOWN : `${Math.round(cores * 1000)}m`;
}

/** kubectl's memory: whole MiB, `118Mi`. */
export function formatMemory(bytes: number | undefined): string {
  return bytes === undefined ? UNKNOWN : `${Math.round(bytes / MI)}Mi`;
}

/** A rate in bytes per second: `0`, `512`, `12Ki`, `3Mi` (whole units, as a Kubernetes quantity). */
export function formatRate(bytesPerSecond: number | undefined): string {
  if (bytesPerSecond === undefined) return UNKNOWN;
  const b = Math.round(bytesPerSecond);
  if (b < KI) return String(b);
  if (b < MI) return `${Math.round(b / KI)}Ki`;
  return `${Math.round(b / MI)}Mi`;
}

/** The table's lines (with a trailing newline each). */
export function formatTop(rows: readonly TopRow[], o: { allNamespaces?: boolean; noHeaders?: boolean; sortBy?: TopSort; network?: boolean } = {}): string {
  const sorted = [...rows];
  const key = (r: TopRow) => (o.sortBy === 'cpu' ? r.usage?.cpuCores : r.usage?.memoryBytes) ?? -1;
  if (o.sortBy) sorted.sort((a, b) => key(b) - key(a));
  const header = [...(o.allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'CPU(cores)', 'MEMORY(bytes)', 'READ(bytes/s)', 'WRITE(bytes/s)', ...(o.network ? ['RX(bytes/s)', 'TX(bytes/s)'] : [])];
  const lines = sorted.map((r) => [
    ...(o.allNamespaces ? [r.namespace] : []),
    r.name,
    formatCpu(r.usage?.cpuCores),
    formatMemory(r.usage?.memoryBytes),
    formatRate(r.usage?.readBytesPerSecond),
    formatRate(r.usage?.writeBytesPerSecond),
    ...(o.network ? [formatRate(r.usage?.receiveBytesPerSecond), formatRate(r.usage?.transmitBytesPerSecond)] : []),
  ]);
  const all = o.noHeaders ? lines : [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((l) => l[i]!.length)));
  return all.map((l) => `${l.map((c, i) => (i === l.length - 1 ? c : c.padEnd(widths[i]! + 3))).join('')}\n`).join('');
}

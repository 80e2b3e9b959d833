// The domain's migration metadata (api.MigrationMetadata) as the launcher updates it. Pure.
import { MIGRATION_ABORTED_REASON, TARGET_QEMU_KILLED_REASON, type MigrationAbortStatusValue, type MigrationModeValue } from '../../src/api/migration.ts';
import { MigrationAbortStatus, MigrationMode } from '../../src/api/constants.ts';
import type { MigrationMetadata } from '../../src/api/domain/domain.ts';
import { rfc3339 } from '../../src/log/iso-time.ts';

export const nowTimestamp = (): string => rfc3339(Date.now());

export function startedMigration(uid: string, at: string): MigrationMetadata {
  return { UID: uid, StartTimestamp: at, EndTimestamp: null, Failed: false, FailureReason: '', AbortStatus: '', Mode: MigrationMode.PreCopy };
}

/** Whether a migration is under way (started, not ended). */
export function migrationInProgress(m: MigrationMetadata | null): boolean {
  return m !== null && m.StartTimestamp !== null && m.EndTimestamp === null;
}

export function withMode(m: MigrationMetadata, mode: MigrationModeValue): MigrationMetadata {
  return { ...m, Mode: mode };
}

export function withAbortStatus(m: MigrationMetadata, s: MigrationAbortStatusValue): MigrationMetadata {
  return { ...m, AbortStatus: s };
}

/**
 * KubeVirt's setMigrationResult: ends the migration once (a second result is ignored); a failure
 * after a successful abort says "Live migration has been aborted".
 */
export function withResult(m: MigrationMetadata, at: string, failure?: string): MigrationMetadata {
  if (m.EndTimestamp !== null) return m;
  if (failure === undefined) return { ...m, EndTimestamp: at };
  const reason = m.AbortStatus === MigrationAbortStatus.Succeeded ? MIGRATION_ABORTED_REASON : failure;
  return { ...m, EndTimestamp: at, Failed: true, FailureReason: reason };
}

/** A target's metadata before anything was recorded (it does not start the migration). */
const noIncomingMigration = (uid: string): MigrationMetadata => ({ UID: uid, StartTimestamp: null, EndTimestamp: null, Failed: false, FailureReason: '', AbortStatus: '', Mode: '' });

/** The target's metadata once the incoming migration completed (KubeVirt's setEndTimestamp). */
export function incomingCompleted(m: MigrationMetadata | null, at: string): MigrationMetadata {
  if (m && m.EndTimestamp !== null) return m;
  return { ...(m ?? noIncomingMigration('')), EndTimestamp: at };
}

/**
 * The target's metadata when its QEMU ended before the incoming migration completed: failed, with
 * why (incomingFailureReason), under the migration's UID. An ended migration stays as it was.
 */
export function incomingFailed(m: MigrationMetadata | null, uid: string, at: string, reason: string): MigrationMetadata {
  if (m && m.EndTimestamp !== null) return m;
  const base = m ?? noIncomingMigration(uid);
  return withResult({ ...base, UID: base.UID || uid }, at, reason);
}

/**
 * Why a migration target's QEMU ended before its incoming migration completed, from its exit and
 * the last lines it wrote to stderr (`stderr`: without QEMU's timestamps). Pure.
 */
export function incomingFailureReason(exit: { readonly code: number | null; readonly signal: string | null }, stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean).slice(-3).join('; ');
  const said = lines.length > 400 ? `…${lines.slice(-400)}` : lines;
  const how = exit.signal ? `${TARGET_QEMU_KILLED_REASON}${exit.signal}` : `the target's QEMU exited with code ${exit.code ?? '?'}`;
  return `${how}${said ? `: ${said}` : ''}`;
}

/**
 * query-migrate's running numbers as KubeVirt's stats.DomainJobInfo (DomainStats.MigrateDomainJobInfo).
 * A block migration's disks count in the data, as in libvirt's job info (`disk`: the mirrors' bytes
 * to copy and copied; before `migrate` they are all there is). Pure.
 */
export function domainJobInfo(
  info: { ram?: { total?: number; transferred?: number; remaining?: number; 'dirty-pages-rate'?: number; 'page-size'?: number; mbps?: number } } | undefined,
  disk?: { total: number; processed: number },
): Record<string, unknown> | undefined {
  const mem = info?.ram;
  if (!mem && !disk) return undefined;
  const ram = mem ?? {};
  const add = (a: number | undefined, b: number | undefined) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0));
  if (disk) {
    return domainJobInfo({ ram: { ...ram, total: add(ram.total, disk.total), transferred: add(ram.transferred, disk.processed), remaining: add(ram.remaining, Math.max(0, disk.total - disk.processed)) } });
  }
  const pageSize = ram['page-size'] ?? 4096;
  const out: Record<string, unknown> = {};
  const put = (name: string, v: number | undefined) => {
    if (v === undefined) return;
    out[name] = Math.round(v);
    out[`${name}Set`] = true;
  };
  put('DataTotal', ram.total);
  put('DataProcessed', ram.transferred);
  put('DataRemaining', ram.remaining);
  put('MemDirtyRate', ram['dirty-pages-rate'] !== undefined ? ram['dirty-pages-rate'] * pageSize : undefined);
  put('MemoryBps', ram.mbps !== undefined ? (ram.mbps * 1e6) / 8 : undefined);
  return out;
}

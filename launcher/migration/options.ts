// The handler's MigrationOptions (KubeVirt's cmdclient.MigrationOptions, JSON with Go field names,
// as MigrateVirtualMachine carries it) parsed into numbers, and the QMP capabilities and parameters
// each end of the migration needs. Pure.
import { parseQuantity, quantityValue } from '../../src/api/quantity.ts';
import { isIP } from 'node:net';
import { DIRECT_MIGRATION_TARGET_ANNOTATION, MigrationDefaults, parallelMigrationThreads, type DirectMigration } from '../../src/api/migration.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

export interface MigrationOptions {
  /** Bytes per second; 0 = unlimited (KubeVirt's `0Mi`). */
  bandwidthBytesPerSecond: number;
  /** Seconds without the remaining data shrinking before the migration is aborted; 0 = never. */
  progressTimeoutSeconds: number;
  /** Seconds per GiB of guest memory the whole migration may take; 0 = no limit. */
  completionTimeoutPerGiB: number;
  /**
   * The cluster's maxDowntimeMs as virt-handler passes it. Not applied at start: KubeVirt's launcher
   * sets max downtime only from its stall detector / downtime tuning (feature-gated, not done here),
   * so a migration runs with QEMU's own downtime-limit (300 ms) as under KubeVirt.
   */
  maxDowntimeMs: number;
  allowAutoConverge: boolean;
  allowPostCopy: boolean;
  /** After the completion timeout: help the migration finish (post-copy, or pause) instead of aborting. */
  allowWorkloadDisruption: boolean;
  /** Multifd channels, or undefined for a single stream. */
  parallelMigrationThreads: number | undefined;
  /** A direct migration: QEMU connects to the target QEMU itself (absent: the pod's migration socket). */
  direct?: DirectMigration;
}

/** MigrationOptions that do not parse; the message names the field. */
export class MigrationOptionsError extends Error {
  override readonly name = 'MigrationOptionsError';
}

/** KubeVirt's "unlimited" bandwidth as a QEMU max-bandwidth: 1 TiB/s (QEMU's own default caps at 128 MiB/s). */
export const UNLIMITED_BANDWIDTH = 2 ** 40;
/** QEMU's upper bound for downtime-limit (ms). */
export const QEMU_MAX_DOWNTIME_MS = 2_000_000;

function num(obj: Record<string, unknown>, field: string, dflt: number): number {
  const v = obj[field];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new MigrationOptionsError(`MigrationOptions.${field}: ${JSON.stringify(v)} is not a non-negative number`);
  return v;
}
function bool(obj: Record<string, unknown>, field: string, dflt: boolean): boolean {
  const v = obj[field];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new MigrationOptionsError(`MigrationOptions.${field}: ${JSON.stringify(v)} is not a boolean`);
  return v;
}

/** Parses MigrateVirtualMachine's `options` bytes. Empty means KubeVirt's defaults. */
export function parseMigrationOptions(raw: Uint8Array | string | undefined): MigrationOptions {
  const text = raw === undefined ? '' : typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
  let obj: Record<string, unknown> = {};
  if (text.trim() !== '') {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (err) {
      throw new MigrationOptionsError(`MigrationOptions: not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new MigrationOptionsError('MigrationOptions: not a JSON object');
    obj = v as Record<string, unknown>;
  }
  let bandwidth = 0;
  const bw = obj.Bandwidth ?? MigrationDefaults.bandwidthPerMigration;
  if (typeof bw !== 'string' && typeof bw !== 'number') throw new MigrationOptionsError(`MigrationOptions.Bandwidth: ${JSON.stringify(bw)} is not a quantity`);
  try {
    bandwidth = Number(quantityValue(parseQuantity(bw)));
  } catch (err) {
    throw new MigrationOptionsError(`MigrationOptions.Bandwidth: "${bw}" is not a valid quantity: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (bandwidth < 0) throw new MigrationOptionsError(`MigrationOptions.Bandwidth: "${bw}" must not be negative`);
  const allowPostCopy = bool(obj, 'AllowPostCopy', MigrationDefaults.allowPostCopy);
  const threads = obj.ParallelMigrationThreads;
  let parallel: number | undefined;
  if (threads !== undefined && threads !== null) {
    if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 1 || threads > 255) {
      throw new MigrationOptionsError(`MigrationOptions.ParallelMigrationThreads: ${JSON.stringify(threads)} is not an integer in 1..255`);
    }
    parallel = threads;
  }
  const direct = obj.DirectMigration === undefined || obj.DirectMigration === null ? undefined : parseDirectMigration(obj.DirectMigration, 'MigrationOptions.DirectMigration');
  return {
    ...(direct ? { direct } : {}),
    bandwidthBytesPerSecond: bandwidth,
    progressTimeoutSeconds: num(obj, 'ProgressTimeout', MigrationDefaults.progressTimeout),
    completionTimeoutPerGiB: num(obj, 'CompletionTimeoutPerGiB', MigrationDefaults.completionTimeoutPerGiB),
    maxDowntimeMs: Math.min(num(obj, 'MaxDowntimeMs', 0), QEMU_MAX_DOWNTIME_MS),
    allowAutoConverge: bool(obj, 'AllowAutoConverge', MigrationDefaults.allowAutoConverge),
    allowPostCopy,
    allowWorkloadDisruption: bool(obj, 'AllowWorkloadDisruption', allowPostCopy),
    // multifd and postcopy-ram do not mix in QEMU 7.2
    parallelMigrationThreads: allowPostCopy ? undefined : parallel,
  };
}

/** A DirectMigration (src/api/migration.ts) from JSON; `where` names it in the error. */
export function parseDirectMigration(v: unknown, where: string): DirectMigration {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new MigrationOptionsError(`${where}: not a JSON object`);
  const o = v as Record<string, unknown>;
  if (typeof o.Address !== 'string' || isIP(o.Address) === 0) throw new MigrationOptionsError(`${where}.Address: ${JSON.stringify(o.Address)} is not an IP address`);
  if (typeof o.Port !== 'number' || !Number.isInteger(o.Port) || o.Port < 1 || o.Port > 65535) throw new MigrationOptionsError(`${where}.Port: ${JSON.stringify(o.Port)} is not a port`);
  if (typeof o.TLS !== 'boolean') throw new MigrationOptionsError(`${where}.TLS: ${JSON.stringify(o.TLS)} is not a boolean`);
  if (o.TLSHostname !== undefined && (typeof o.TLSHostname !== 'string' || !/^[a-z0-9.-]+$/i.test(o.TLSHostname))) throw new MigrationOptionsError(`${where}.TLSHostname: ${JSON.stringify(o.TLSHostname)} is not a host name`);
  if (o.TLSAuthz !== undefined && (typeof o.TLSAuthz !== 'string' || o.TLSAuthz === '')) throw new MigrationOptionsError(`${where}.TLSAuthz: ${JSON.stringify(o.TLSAuthz)} is not a distinguished name`);
  if (o.BlockPort !== undefined && (typeof o.BlockPort !== 'number' || !Number.isInteger(o.BlockPort) || o.BlockPort < 1 || o.BlockPort > 65535 || o.BlockPort === o.Port)) throw new MigrationOptionsError(`${where}.BlockPort: ${JSON.stringify(o.BlockPort)} is not a port other than Port`);
  return { Address: o.Address, Port: o.Port, TLS: o.TLS, ...(o.TLSHostname !== undefined ? { TLSHostname: o.TLSHostname as string } : {}), ...(o.TLSAuthz !== undefined ? { TLSAuthz: o.TLSAuthz as string } : {}), ...(o.BlockPort !== undefined ? { BlockPort: o.BlockPort as number } : {}) };
}

/**
 * What a target listens for, from the VMI SyncMigrationTarget carries: a direct migration
 * (DIRECT_MIGRATION_TARGET_ANNOTATION, qvirt's: KubeVirt's request has no place for it), or nothing
 * (the pod's migration socket).
 */
export function targetDirectMigration(vmi: VirtualMachineInstance): DirectMigration | undefined {
  const text = vmi.metadata?.annotations?.[DIRECT_MIGRATION_TARGET_ANNOTATION];
  if (text === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new MigrationOptionsError(`annotation ${DIRECT_MIGRATION_TARGET_ANNOTATION}: not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseDirectMigration(v, `annotation ${DIRECT_MIGRATION_TARGET_ANNOTATION}`);
}

/** QEMU's URI of a direct migration's target: `tcp:host:port`, an IPv6 host in brackets. */
export function directMigrationUri(d: DirectMigration): string {
  return `tcp:${isIP(d.Address) === 6 ? `[${d.Address}]` : d.Address}:${d.Port}`;
}

/** The QOM id of the migration's TLS credentials object in either QEMU. */
export const MIGRATION_TLS_CREDS_ID = 'qvirt-migration-tls';
/** The QOM id of the target's authz-simple object (the one client identity it accepts). */
export const MIGRATION_TLS_AUTHZ_ID = 'qvirt-migration-authz';

/**
 * QEMU's TLS for a migration: the credentials object from `dir` (tls-creds-x509, verify-peer: a
 * target demands the source's certificate, a source checks the target's against the CA and
 * `TLSHostname`), on the target an authz-simple object admitting only the `TLSAuthz` client subject,
 * and the tls-creds / tls-hostname / tls-authz parameters; without a direct TLS migration,
 * parameters that turn TLS off (a previous direct migration of this QEMU may have set them). The
 * object of an earlier migration is deleted first (see the caller: its failure is ignored).
 */
export function migrationTlsSetup(endpoint: 'server' | 'client', d: DirectMigration | undefined, dir: string): QmpStep[] {
  if (!d?.TLS) return [{ execute: 'migrate-set-parameters', arguments: { 'tls-creds': '', 'tls-hostname': '' } }];
  const authz = endpoint === 'server' && d.TLSAuthz !== undefined;
  return [
    { execute: 'object-add', arguments: { 'qom-type': 'tls-creds-x509', id: MIGRATION_TLS_CREDS_ID, dir, endpoint, 'verify-peer': true } },
    ...(authz ? [{ execute: 'object-add', arguments: { 'qom-type': 'authz-simple', id: MIGRATION_TLS_AUTHZ_ID, identity: d.TLSAuthz } }] : []),
    { execute: 'migrate-set-parameters', arguments: { 'tls-creds': MIGRATION_TLS_CREDS_ID, 'tls-hostname': endpoint === 'client' ? d.TLSHostname ?? '' : '', ...(authz ? { 'tls-authz': MIGRATION_TLS_AUTHZ_ID } : {}) } },
  ];
}

export interface QmpStep { execute: string; arguments: Record<string, unknown> }

/**
 * QEMU's return path, on both ends as libvirt sets it: the source waits for the target's verdict on
 * the stream's last part (the device state) before it reports `completed`. Without it a target that
 * fails to load that part has already been sent everything, the source stops its guest as migrated,
 * and the guest is lost. With it the migration fails and the source's guest runs on. Post-copy opens
 * the same path implicitly.
 */
const RETURN_PATH = { 'return-path': true } as const;

function capabilities(caps: Record<string, boolean>): QmpStep {
  return { execute: 'migrate-set-capabilities', arguments: { capabilities: Object.entries(caps).map(([capability, state]) => ({ capability, state })) } };
}

/**
 * What the source QEMU gets before `migrate`. `block`: a block migration, which waits in
 * pre-switchover (guest stopped) until its disk mirrors completed (block.ts).
 */
export function sourceMigrationSetup(o: MigrationOptions, block = false): QmpStep[] {
  const multifd = o.parallelMigrationThreads !== undefined && o.parallelMigrationThreads > 1;
  const params: Record<string, unknown> = {
    'max-bandwidth': o.bandwidthBytesPerSecond > 0 ? o.bandwidthBytesPerSecond : UNLIMITED_BANDWIDTH,
  };
  if (multifd) params['multifd-channels'] = o.parallelMigrationThreads;
  return [
    capabilities({ events: true, ...RETURN_PATH, 'auto-converge': o.allowAutoConverge, 'postcopy-ram': o.allowPostCopy, multifd, ...(block ? { 'pause-before-switchover': true } : {}) }),
    { execute: 'migrate-set-parameters', arguments: params },
  ];
}

/** The migration settings a target reads from its VMI (status.migrationState.migrationConfiguration). */
export function incomingSettings(vmi: VirtualMachineInstance): { allowPostCopy: boolean; parallelMigrationThreads: number | undefined } {
  const allowPostCopy = vmi.status?.migrationState?.migrationConfiguration?.allowPostCopy ?? MigrationDefaults.allowPostCopy;
  return { allowPostCopy, parallelMigrationThreads: parallelMigrationThreads(vmi, allowPostCopy) };
}

/** What the target QEMU gets before `migrate-incoming` (postcopy-ram and multifd must match the source). */
export function incomingMigrationSetup(s: { allowPostCopy: boolean; parallelMigrationThreads: number | undefined }): QmpStep[] {
  const multifd = s.parallelMigrationThreads !== undefined && s.parallelMigrationThreads > 1;
  const steps: QmpStep[] = [capabilities({ events: true, ...RETURN_PATH, 'postcopy-ram': s.allowPostCopy, multifd })];
  if (multifd) steps.push({ execute: 'migrate-set-parameters', arguments: { 'multifd-channels': s.parallelMigrationThreads } });
  return steps;
}

/**
 * KubeVirt's getVMIMigrationDataSize: guest memory (spec.domain.memory.guest, else
 * resources.requests.memory) plus, for a block migration, the bytes of the local disks to copy
 * (`diskBytes`), in GB rounded up (resource.Quantity.ScaledValue(Giga)); the completion timeout is
 * per "GiB" of that.
 */
export function migrationDataSizeGiB(vmi: VirtualMachineInstance, diskBytes = 0): number {
  const q = vmi.spec.domain.memory?.guest ?? vmi.spec.domain.resources?.requests?.memory;
  let memory = 0;
  if (q !== undefined) {
    try {
      memory = Number(quantityValue(parseQuantity(q as string)));
    } catch {
      memory = 0;
    }
  }
  return Math.ceil((memory + diskBytes) / 1e9);
}

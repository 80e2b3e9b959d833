// The node agents' migration decisions (virt-handler's migration-source.go / migration-target.go),
// pure: what the source does next, the MigrationOptions it sends, how the domain's migration
// metadata becomes the VMI's status.migrationState, and what the target writes when the guest
// runs on its node.
import { BLOCK_MIGRATION_PORT, DIRECT_MIGRATION_PORT, MigrationDefaults, MULTIFD_MIGRATION_PORT, TARGET_QEMU_KILLED_REASON, parallelMigrationThreads, TARGET_QEMU_BLOCK_MIGRATION_PORT, TARGET_QEMU_MIGRATION_PORT } from '../../src/api/migration.ts';
import { isBlockMigration } from '../../src/api/block-migration.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigrationState } from '../../src/api/types.ts';
import { Label } from '../../src/api/constants.ts';
import type { MigrationMetadata } from '../../src/api/domain/domain.ts';
import { LifeCycle } from '../../src/api/domain/lifecycle.ts';

/** Whether the migration state is over (completed or failed). */
export function migrationFinished(ms: VirtualMachineInstanceMigrationState | undefined): boolean {
  return ms?.completed === true || ms?.failed === true;
}

export type SourceAction =
  | { readonly kind: 'none' }
  /**
   * Open the source proxy to the target and send MigrateVirtualMachine. `multifdPort`: where the
   * connections after the first go (a socat target's multifd channels' listener); `blockPort`: a
   * block migration's second proxy (the disks' stream, KubeVirt's 49153).
   */
  | { readonly kind: 'migrate'; readonly host: string; readonly port: number; readonly multifdPort?: number; readonly blockPort?: number }
  /**
   * The target QEMU listens itself (transport.ts's direct): the source QEMU connects to host:port with
   * QEMU's TLS; a block migration's disks go to the target QEMU's NBD server on host:blockPort.
   */
  | { readonly kind: 'migrate'; readonly host: string; readonly port: number; readonly direct: true; readonly blockPort?: number }
  /** abortRequested: CancelVirtualMachineMigration. */
  | { readonly kind: 'cancel' }
  /** The migration is over: close the proxy. */
  | { readonly kind: 'cleanup' };

/**
 * What the source node does for a VMI on its node. `started`: this handler already sent
 * MigrateVirtualMachine for the current migration UID.
 */
export function sourceAction(vmi: VirtualMachineInstance, nodeName: string, domain: MigrationMetadata | null | undefined, started: boolean): SourceAction {
  const ms = vmi.status?.migrationState;
  if (!ms?.migrationUid || ms.sourceNode !== nodeName || ms.targetNode === nodeName) return { kind: 'none' };
  if (migrationFinished(ms)) return { kind: 'cleanup' };
  const ours = domain != null && domain.UID === ms.migrationUid;
  if (ms.abortRequested && ours && domain.StartTimestamp && !domain.EndTimestamp && domain.AbortStatus === '') return { kind: 'cancel' };
  if (ms.abortRequested) return { kind: 'none' };
  if (started || (ours && domain.StartTimestamp)) return { kind: 'none' };
  if (!ms.targetNodeAddress) return { kind: 'none' };
  const listenerFor = (target: number): number | undefined => {
    const entry = Object.entries(ms.targetDirectMigrationNodePorts ?? {}).find(([, p]) => p === target);
    const port = entry ? Number(entry[0]) : NaN;
    return Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
  };
  const qemuPort = listenerFor(TARGET_QEMU_MIGRATION_PORT);
  if (qemuPort !== undefined) {
    if (!isBlockMigration(vmi)) return { kind: 'migrate', host: ms.targetNodeAddress, port: qemuPort, direct: true };
    // A block migration waits until the target QEMU also serves the disks.
    const nbdPort = listenerFor(TARGET_QEMU_BLOCK_MIGRATION_PORT);
    return nbdPort === undefined ? { kind: 'none' } : { kind: 'migrate', host: ms.targetNodeAddress, port: qemuPort, direct: true, blockPort: nbdPort };
  }
  const port = listenerFor(DIRECT_MIGRATION_PORT);
  if (port === undefined) return { kind: 'none' };
  const multifdPort = listenerFor(MULTIFD_MIGRATION_PORT);
  const direct = multifdPort === undefined ? { kind: 'migrate' as const, host: ms.targetNodeAddress, port } : { kind: 'migrate' as const, host: ms.targetNodeAddress, port, multifdPort };
  if (!isBlockMigration(vmi)) return direct;
  // A block migration waits until the target also listens for the disks.
  const blockPort = listenerFor(BLOCK_MIGRATION_PORT);
  if (blockPort === undefined) return { kind: 'none' };
  return { ...direct, blockPort };
}

/** KubeVirt's MigrationOptions (Go field names) from the VMI's migration configuration. */
export function migrationOptionsFor(vmi: VirtualMachineInstance): Record<string, unknown> {
  const c = vmi.status?.migrationState?.migrationConfiguration ?? {};
  const allowPostCopy = c.allowPostCopy ?? MigrationDefaults.allowPostCopy;
  const opts: Record<string, unknown> = {
    Bandwidth: c.bandwidthPerMigration ?? MigrationDefaults.bandwidthPerMigration,
    ProgressTimeout: c.progressTimeout ?? MigrationDefaults.progressTimeout,
    CompletionTimeoutPerGiB: c.completionTimeoutPerGiB ?? MigrationDefaults.completionTimeoutPerGiB,
    MaxDowntimeMs: c.maxDowntimeMs ?? 0,
    UnsafeMigration: c.unsafeMigrationOverride ?? false,
    AllowAutoConverge: c.allowAutoConverge ?? MigrationDefaults.allowAutoConverge,
    AllowPostCopy: allowPostCopy,
    AllowWorkloadDisruption: c.allowWorkloadDisruption ?? allowPostCopy,
  };
  const threads = parallelMigrationThreads(vmi, allowPostCopy);
  if (threads !== undefined) opts.ParallelMigrationThreads = threads;
  return opts;
}

/**
 * The source's copy of the domain's migration metadata into migrationState (KubeVirt's
 * updateVMIMigrationSourceStatus): start, mode, abort status, and on failure the end, `failed` and
 * the reason. A successful end is the target's to write. Undefined when nothing changes.
 */
export function sourceStateFromDomain(ms: VirtualMachineInstanceMigrationState, d: MigrationMetadata | null | undefined): VirtualMachineInstanceMigrationState | undefined {
  if (!d || d.UID !== ms.migrationUid) return undefined;
  // Over already: only a start the source had not written yet is still worth recording.
  if (migrationFinished(ms)) return d.StartTimestamp && !ms.startTimestamp ? { ...ms, startTimestamp: d.StartTimestamp } : undefined;
  const next: VirtualMachineInstanceMigrationState = { ...ms };
  if (d.StartTimestamp && !ms.startTimestamp) next.startTimestamp = d.StartTimestamp;
  if (d.Mode && d.Mode !== ms.mode) next.mode = d.Mode as VirtualMachineInstanceMigrationState['mode'];
  if (d.AbortStatus && d.AbortStatus !== ms.abortStatus) next.abortStatus = d.AbortStatus as VirtualMachineInstanceMigrationState['abortStatus'];
  if (d.Failed) {
    next.failed = true;
    next.endTimestamp = d.EndTimestamp ?? ms.endTimestamp;
    if (d.FailureReason) next.failureReason = d.FailureReason;
  }
  return JSON.stringify(next) === JSON.stringify(ms) ? undefined : next;
}

/** What a source says when its stream broke: the far end went away (socket, TLS channel, relay). */
const SOURCE_STREAM_BROKE = /Broken pipe|Connection reset|Input\/output error|Channel error|connection closed|Connection refused/i;

/**
 * A failed migration's reason with what its target's QEMU said, when the target caused the failure
 * (libvirt carries the destination's error back to the source, so KubeVirt's reason names it): the
 * target's QEMU killed, or ending on its own while the source only saw its stream break (or said
 * nothing yet: the controller's "target pod is down"). Not when the source ended the migration
 * itself — an abort, a timeout, an error of its own — which leaves the target a cut stream to
 * complain about. `target`: the target domain's migration metadata (launcher/domain/
 * migration-metadata.ts incomingFailed: not written when its own launcher stopped that QEMU).
 * Undefined when nothing changes.
 */
export function failureReasonWithTarget(ms: VirtualMachineInstanceMigrationState | undefined, target: MigrationMetadata | null | undefined): string | undefined {
  if (!ms?.failed || !target?.Failed || !target.FailureReason || target.UID !== ms.migrationUid) return undefined;
  if (ms.abortStatus === 'Succeeded') return undefined;
  const current = ms.failureReason ?? '';
  if (current.includes(target.FailureReason)) return undefined;
  const killed = target.FailureReason.startsWith(TARGET_QEMU_KILLED_REASON);
  if (!killed && current !== '' && !SOURCE_STREAM_BROKE.test(current)) return undefined;
  return current ? `${target.FailureReason} (the source: ${current})` : target.FailureReason;
}

export type TargetStep =
  | { readonly kind: 'wait' }
  /** Start the target launcher's incoming QEMU (SyncMigrationTarget). */
  | { readonly kind: 'sync' }
  /** Listen and publish the address and ports. */
  | { readonly kind: 'listen' }
  /** The target domain exists / runs: note it. */
  | { readonly kind: 'detected'; readonly ready: boolean }
  /** The guest runs here and the migration ended: move the VMI to this node. */
  | { readonly kind: 'complete' }
  /** The migration is over (failed, or completed earlier): clean up. */
  | { readonly kind: 'cleanup' };

/** The target node's next step for a VMI labelled with its node as migration target. */
export function targetStep(vmi: VirtualMachineInstance, nodeName: string, s: { synced: boolean; listening: boolean; domain: { status: string; migrationEnd: boolean } | undefined }): TargetStep {
  const ms = vmi.status?.migrationState;
  if (!ms?.migrationUid || ms.targetNode !== nodeName) return { kind: 'wait' };
  if (migrationFinished(ms)) return { kind: 'cleanup' };
  if (!s.synced) return { kind: 'sync' };
  if (!s.listening || !ms.targetNodeAddress) return { kind: 'listen' };
  const d = s.domain;
  if (d && d.status === LifeCycle.Running && d.migrationEnd) return { kind: 'complete' };
  if (d && (!ms.targetNodeDomainDetected || (d.status === LifeCycle.Running && !ms.targetNodeDomainReadyTimestamp))) return { kind: 'detected', ready: d.status === LifeCycle.Running };
  return { kind: 'wait' };
}

/** What the target writes when the guest runs on its node (KubeVirt's migration-target finalization). */
export function completedOnTarget(vmi: VirtualMachineInstance, nodeName: string, now: string): VirtualMachineInstance {
  const next = structuredClone(vmi);
  const ms = { ...(next.status?.migrationState ?? {}) };
  ms.endTimestamp = ms.endTimestamp ?? now;
  ms.targetNodeDomainDetected = true;
  ms.targetNodeDomainReadyTimestamp = ms.targetNodeDomainReadyTimestamp ?? now;
  ms.completed = true;
  next.status = { ...(next.status ?? {}), migrationState: ms, nodeName, migrationTransport: 'Unix' };
  delete next.status.evacuationNodeName;
  next.metadata = { ...(next.metadata ?? {}), labels: { ...(next.metadata?.labels ?? {}), [Label.NodeName]: nodeName } };
  return next;
}

// Live migration's exact strings and the one naming rule both ends of a migration share: where the
// migration stream's unix socket lives inside a launcher pod (KubeVirt's migration-proxy key
// `<vmiUID>-<port>` and `migrationproxy/<key>-source.sock`). On the target the launcher's QEMU listens
// there (migrate-incoming); on the source the handler listens there and forwards to the target
// node, and the launcher's QEMU migrates to it. Pure: path joins only.
import { join } from 'node:path';
import type { MigrationAbortStatus, MigrationMode } from './constants.ts';
import { parseQuantity, quantityValue } from './quantity.ts';

/** KubeVirt's port number of the direct QEMU migration stream (LibvirtDirectMigrationPort). */
export const DIRECT_MIGRATION_PORT = 49152;

/** KubeVirt's port number of the block migration's disk stream (LibvirtBlockMigrationPort): NBD here. */
export const BLOCK_MIGRATION_PORT = 49153;

/**
 * qvirt's key (beside KubeVirt's 49152 and 49153) in
 * status.migrationState.targetDirectMigrationNodePorts for the target's listener of the multifd
 * channels: QEMU 7.2 must accept the main channel first, and the socat relay orders them by port
 * (handler/migration/socat-relay.ts). Absent: every channel goes to the direct migration port.
 */
export const MULTIFD_MIGRATION_PORT = 49154;

/**
 * qvirt's key in status.migrationState.targetDirectMigrationNodePorts for the target QEMU's own
 * listener (the direct transport, handler/migration/transport.ts): the source launcher's QEMU
 * connects to targetNodeAddress (then the target pod's address) on that port itself, with QEMU's
 * own TLS, no relay between. Absent: the ports are the node agents' relay.
 */
export const TARGET_QEMU_MIGRATION_PORT = 49155;

/**
 * qvirt's key, beside TARGET_QEMU_MIGRATION_PORT, for the target QEMU's own NBD server of a direct
 * block migration (the source QEMU mirrors the local disks to it with the migration's TLS).
 */
export const TARGET_QEMU_BLOCK_MIGRATION_PORT = 49156;

/**
 * The VMI annotation that picks a migration's transport: `direct` (QEMU to QEMU, QEMU's TLS) or
 * `relay` (through the node agents); absent or `auto`, the target node agent chooses
 * (handler/migration/transport.ts).
 */
export const MIGRATION_TRANSPORT_ANNOTATION = 'qvirt.io/migration-transport';

/**
 * On the VMI the target node agent sends with SyncMigrationTarget (that copy only, never stored):
 * JSON of the DirectMigration the target QEMU listens for. Absent: it listens on the pod's
 * migration socket for the relay.
 */
export const DIRECT_MIGRATION_TARGET_ANNOTATION = 'qvirt.io/direct-migration-target';

/** A migration transport as the annotation and the node agent's setting name it. */
export type MigrationTransportSetting = 'auto' | 'direct' | 'relay';

/**
 * What the node agent adds to MigrateVirtualMachine's options (source) and SyncMigrationTarget's
 * (target) for a direct migration: the target QEMU's address and port, and whether QEMU's TLS is
 * on. With TLS the credentials are in migrationTlsDir of the pod (the node agent writes them), and
 * the source checks the target's certificate for `tlsHostname`.
 */
export interface DirectMigration {
  readonly Address: string;
  readonly Port: number;
  readonly TLS: boolean;
  /** Source only: the name the target's certificate must carry (QEMU's tls-hostname). */
  readonly TLSHostname?: string;
  /**
   * Target only: the one client certificate subject the target QEMU accepts, as QEMU prints an x509
   * distinguished name (`O=…,CN=…`; QEMU's tls-authz with an authz-simple object).
   */
  readonly TLSAuthz?: string;
  /** A block migration: the target QEMU's NBD server's port on the same address (the disks go there, with the same TLS). */
  readonly BlockPort?: number;
}

/** The directory under a launcher's share dir (/var/run/kubevirt) holding migration sockets. */
export const MIGRATION_PROXY_DIR = 'migrationproxy';

/** KubeVirt's ConstructProxyKey: `<vmiUID>` or `<vmiUID>-<port>`. */
export function migrationProxyKey(vmiUid: string, port: number): string {
  return port === 0 ? vmiUid : `${vmiUid}-${port}`;
}

/** KubeVirt's SourceUnixFile: `<shareDir>/migrationproxy/<key>-source.sock`. */
export function migrationSocketPath(shareDir: string, vmiUid: string, port = DIRECT_MIGRATION_PORT): string {
  return join(shareDir, MIGRATION_PROXY_DIR, `${migrationProxyKey(vmiUid, port)}-source.sock`);
}

/**
 * Where a direct migration's credentials live in a launcher pod: `<shareDir>/migrationproxy/<vmiUID>-tls`,
 * QEMU's tls-creds-x509 layout (ca-cert.pem, and server-cert.pem + server-key.pem on the target,
 * client-cert.pem + client-key.pem on the source).
 */
export function migrationTlsDir(shareDir: string, vmiUid: string): string {
  return join(shareDir, MIGRATION_PROXY_DIR, `${vmiUid}-tls`);
}

/** v1.MigrationAbortStatus (the strings are src/api/constants.ts's). */
export type MigrationAbortStatusValue = (typeof MigrationAbortStatus)[keyof typeof MigrationAbortStatus];

/** v1.MigrationMode. */
export type MigrationModeValue = (typeof MigrationMode)[keyof typeof MigrationMode];

/** KubeVirt's migration defaults (pkg/virt-config): what a missing migration setting means. */
export const MigrationDefaults = {
  /** `0Mi`: unlimited. */
  bandwidthPerMigration: '0Mi',
  progressTimeout: 150,
  completionTimeoutPerGiB: 150,
  parallelMigrationsPerCluster: 5,
  parallelOutboundMigrationsPerNode: 2,
  allowAutoConverge: false,
  allowPostCopy: false,
} as const;

/** KubeVirt's parallelMultifdMigrationThreads (virt-handler migration-source.go). */
export const PARALLEL_MULTIFD_MIGRATION_THREADS = 8;

/** The failure reason KubeVirt records when a migration was cancelled on request. */
export const MIGRATION_ABORTED_REASON = 'Live migration has been aborted';
/**
 * How a migration target's failure reason starts when its QEMU was killed (the target launcher writes
 * it, launcher/domain/migration-metadata.ts; the target's node agent reads it, handler/migration/state.ts).
 */
export const TARGET_QEMU_KILLED_REASON = "the target's QEMU was killed by ";

/**
 * How many multifd channels a migration of this VMI uses, or undefined for one stream (KubeVirt's
 * configureParallelMigrationThreads: none when the VMI has a CPU limit or dedicated CPUs; libvirt
 * never combines parallel migration with post-copy, and QEMU 7.2 refuses multifd with postcopy-ram).
 * qvirt also keeps one stream when the migration configuration limits the bandwidth
 * (`bandwidthPerMigration` above 0): QEMU 7.2's multifd channels send at full speed whatever
 * `max-bandwidth` says (only the main channel is rate-limited), so a limit a user set to protect the
 * network would not hold.
 * Both ends compute it from the VMI, so the target listens for as many channels as the source opens.
 */
export function parallelMigrationThreads(vmi: {
  spec: { domain: { resources?: { limits?: Record<string, unknown> } | undefined; cpu?: { dedicatedCpuPlacement?: boolean | undefined } | undefined } };
  status?: { migrationState?: { migrationConfiguration?: { bandwidthPerMigration?: string | number | undefined } | undefined } | undefined } | undefined;
}, allowPostCopy: boolean): number | undefined {
  if (allowPostCopy) return undefined;
  const cpuLimit = vmi.spec.domain.resources?.limits?.cpu;
  if (cpuLimit !== undefined && cpuLimit !== null && String(cpuLimit) !== '0') return undefined;
  if (vmi.spec.domain.cpu?.dedicatedCpuPlacement) return undefined;
  if (bandwidthLimited(vmi.status?.migrationState?.migrationConfiguration?.bandwidthPerMigration)) return undefined;
  return PARALLEL_MULTIFD_MIGRATION_THREADS;
}

/** Whether a bandwidthPerMigration quantity limits the bandwidth (above 0; unparsable counts as no limit, admission rejects it). */
function bandwidthLimited(q: string | number | undefined): boolean {
  if (q === undefined) return false;
  try {
    return quantityValue(parseQuantity(q)) > 0n;
  } catch {
    return false;
  }
}

/**
 * qvirt's progress report of a running migration, on the VMI (KubeVirt keeps these numbers in the
 * source launcher's domain stats only): JSON of MigrationProgress, written by the source node agent.
 */
export const MIGRATION_PROGRESS_ANNOTATION = 'qvirt.io/migration-progress';

export interface MigrationProgress {
  /** The migration's UID. */
  migrationUid: string;
  /** Bytes of guest RAM in all. */
  total: number;
  /** Bytes sent so far. */
  transferred: number;
  /** Bytes still to send (dirty pages included). */
  remaining: number;
  /** Bytes of guest memory dirtied per second. */
  dirtyRate: number;
  /** Throughput in bytes per second. */
  throughput: number;
  /** When measured (RFC 3339). */
  at: string;
}

/** The progress annotation's value, or undefined when absent or malformed. */
export function parseMigrationProgress(v: string | undefined): MigrationProgress | undefined {
  if (!v) return undefined;
  try {
    const o = JSON.parse(v) as Partial<MigrationProgress>;
    const nums = [o.total, o.transferred, o.remaining, o.dirtyRate, o.throughput];
    if (typeof o.migrationUid !== 'string' || nums.some((n) => typeof n !== 'number' || !Number.isFinite(n))) return undefined;
    return o as MigrationProgress;
  } catch {
    return undefined;
  }
}

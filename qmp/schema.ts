// Typed shapes for the QMP commands and events a VM supervisor relies on, as QEMU 7.2 defines them
// (qapi/*.json; checked against the installed QEMU's `query-qmp-schema` by test/qmp/schema.test.ts).
// Only what the launcher needs: everything else stays `unknown` and is read with checks.
import type { QmpEvent } from './messages.ts';

/** `query-status` → StatusInfo.status (qapi/run-state.json RunState). */
export const RUN_STATES = [
  'debug', 'inmigrate', 'internal-error', 'io-error', 'paused', 'postmigrate', 'prelaunch', 'finish-migrate',
  'restore-vm', 'running', 'save-vm', 'shutdown', 'suspended', 'watchdog', 'guest-panicked', 'colo',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/** `query-status` reply. */
export interface StatusInfo {
  running: boolean;
  singlestep: boolean;
  status: RunState;
}

/** SHUTDOWN / RESET `reason` (qapi/run-state.json ShutdownCause). */
export const SHUTDOWN_CAUSES = [
  'none', 'host-error', 'host-qmp-quit', 'host-qmp-system-reset', 'host-signal', 'host-ui', 'guest-shutdown',
  'guest-reset', 'guest-panic', 'subsystem-reset', 'snapshot-load',
] as const;
export type ShutdownCause = (typeof SHUTDOWN_CAUSES)[number];

/** MIGRATION `status` (qapi/migration.json MigrationStatus). */
export const MIGRATION_STATUSES = [
  'none', 'setup', 'cancelling', 'cancelled', 'active', 'postcopy-active', 'postcopy-paused', 'postcopy-recover',
  'completed', 'failed', 'colo', 'pre-switchover', 'device', 'wait-unplug',
] as const;
export type MigrationStatus = (typeof MIGRATION_STATUSES)[number];

/** JOB_STATUS_CHANGE `status` (qapi/job.json JobStatus). */
export const JOB_STATUSES = ['undefined', 'created', 'running', 'paused', 'ready', 'standby', 'waiting', 'pending', 'aborting', 'concluded', 'null'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** GUEST_PANICKED `action`. */
export const GUEST_PANIC_ACTIONS = ['pause', 'poweroff', 'run'] as const;
export type GuestPanicAction = (typeof GUEST_PANIC_ACTIONS)[number];

/** BLOCK_IO_ERROR `action`. */
export const BLOCK_ERROR_ACTIONS = ['ignore', 'report', 'stop'] as const;
export type BlockErrorAction = (typeof BLOCK_ERROR_ACTIONS)[number];

/** `data` of the events a supervisor handles. Optional members are QAPI's `*name`. */
export interface QmpEventData {
  SHUTDOWN: { guest: boolean; reason: ShutdownCause };
  RESET: { guest: boolean; reason: ShutdownCause };
  POWERDOWN: Record<string, never>;
  STOP: Record<string, never>;
  RESUME: Record<string, never>;
  /** The child `virtio-backend` event carries only `path`: filter on `device`. */
  DEVICE_DELETED: { device?: string; path: string };
  MIGRATION: { status: MigrationStatus };
  BLOCK_IO_ERROR: { device: string; 'node-name'?: string; operation: 'read' | 'write'; action: BlockErrorAction; nospace?: boolean; reason: string };
  GUEST_PANICKED: { action: GuestPanicAction; info?: Record<string, unknown> };
  VSERPORT_CHANGE: { id: string; open: boolean };
  BALLOON_CHANGE: { actual: number };
  ACPI_DEVICE_OST: { info: { device?: string; slot: string; 'slot-type': 'DIMM' | 'CPU'; source: number; status: number } };
  DEVICE_TRAY_MOVED: { device: string; id: string; 'tray-open': boolean };
  JOB_STATUS_CHANGE: { id: string; status: JobStatus };
  MEMORY_DEVICE_SIZE_CHANGE: { id?: string; size: number; 'qom-path': string };
}

export type KnownEventName = keyof QmpEventData;

/** An event whose `data` has the QAPI shape of `N`. */
export type TypedQmpEvent<N extends KnownEventName> = Omit<QmpEvent, 'event' | 'data'> & { event: N; data: QmpEventData[N] };

/**
 * Narrow an event by name. QEMU is trusted to send its own schema (as libvirt and python qemu.qmp
 * do); the name is the only thing checked.
 */
export function isEvent<N extends KnownEventName>(ev: QmpEvent, name: N): ev is QmpEvent & TypedQmpEvent<N> {
  return ev.event === name;
}

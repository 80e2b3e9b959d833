// The domain's lifecycle state as KubeVirt reports it (libvirt's state + reason), derived from what
// QEMU tells us over QMP and from how the QEMU process ended. Pure: the launcher feeds every QMP
// event, every intent it acts on, and the process exit through `nextDomainState` and publishes the
// result.
//
// QMP has no "why" for STOP, so the launcher records its intent (pause by user, migration, dump)
// before sending the command; QMP's own evidence (BLOCK_IO_ERROR, GUEST_PANICKED, SHUTDOWN) wins
// over intents. Shutoff and Crashed are final for one QEMU process: later events (the STOP that
// follows a guest power-off under -no-shutdown, the SHUTDOWN host-qmp-quit of our own `quit`)
// never rewrite why the domain ended.
import { LifeCycle, Reason } from '../../src/api/domain/lifecycle.ts';

export interface DomainState {
  readonly status: LifeCycle;
  readonly reason: Reason;
  /** The reason the next STOP gets (the launcher's own pause, migration, dump...). */
  readonly pendingStop?: Reason | undefined;
  /** The launcher decided to destroy QEMU (Kill, hard stop after the grace period). */
  readonly destroying: boolean;
  /** A BLOCK_IO_ERROR with action "stop" was seen since the last RESUME. */
  readonly ioError: boolean;
  /** A WATCHDOG with action "pause" was seen since the last RESUME. */
  readonly watchdog: boolean;
  /** The last SHUTDOWN event of this QEMU. */
  readonly shutdown?: { readonly guest: boolean; readonly reason: string } | undefined;
  /** Guest panics seen (GUEST_PANICKED). */
  readonly panicCount: number;
  /**
   * A soft reboot is under way (libvirt's "fake reboot"): the guest's next power-off is turned
   * into system_reset + cont by the launcher, so it ends neither the domain nor QEMU.
   */
  readonly rebooting?: 'requested' | 'resetting' | undefined;
}

/** What can happen to a domain. */
export type DomainInput =
  /** QEMU was spawned with -S: defined, not yet running (libvirt: Paused/StartingUp). */
  | { readonly kind: 'started' }
  /** The launcher is about to act; `pause` | `migrate` | `dump` | `save` | `snapshot` name the next STOP. */
  | { readonly kind: 'intent'; readonly intent: 'pause' | 'migrate' | 'dump' | 'save' | 'snapshot' | 'destroy' | 'reboot' }
  /** startStrategy Paused: QEMU stays in prelaunch on purpose (libvirt: Paused/User). */
  | { readonly kind: 'start-paused' }
  /** A QMP event. */
  | { readonly kind: 'qmp'; readonly event: string; readonly data?: Readonly<Record<string, unknown>> | undefined }
  /** The run state from query-status (resync after (re)attach; events are not replayed). */
  | { readonly kind: 'run-state'; readonly status: string }
  /** The QEMU process ended. */
  | { readonly kind: 'exit'; readonly code: number | null; readonly signal: string | null }
  /** The domain was removed (DeleteVirtualMachine after QEMU ended): libvirt's undefine. */
  | { readonly kind: 'undefined' }
  /** Outgoing migration completed: the guest runs on the target now (libvirt: Shutoff/Migrated). */
  | { readonly kind: 'migrated' }
  /** Outgoing migration ended without completing: a STOP from now on is not the migration's. */
  | { readonly kind: 'migration-ended' }
  /** This QEMU waited for an incoming migration that failed (it exits rc 1): not a crash. */
  | { readonly kind: 'incoming-failed' };

/** Before anything is defined: libvirt reports no state. */
export const INITIAL_DOMAIN_STATE: DomainState = {
  status: LifeCycle.NoState,
  reason: Reason.Unknown,
  destroying: false,
  ioError: false,
  watchdog: false,
  panicCount: 0,
};

/** Whether the QEMU behind this state has ended or is about to (Shutoff, Crashed). */
export function isFinal(state: Pick<DomainState, 'status'>): boolean {
  return state.status === LifeCycle.Shutoff || state.status === LifeCycle.Crashed || state.status === LifeCycle.NoState;
}

/** KubeVirt's `domainAlive`: exists and not Shutoff, Crashed or no state. */
export function isAlive(state: Pick<DomainState, 'status'>): boolean {
  return !isFinal(state);
}

const INTENT_STOP_REASON: Record<'pause' | 'migrate' | 'dump' | 'save' | 'snapshot', Reason> = {
  pause: Reason.User,
  migrate: Reason.Migration,
  dump: Reason.Dump,
  save: Reason.Save,
  snapshot: Reason.Snapshot,
};

function set(state: DomainState, status: LifeCycle, reason: Reason, extra: Partial<DomainState> = {}): DomainState {
  return { ...state, status, reason, ...extra };
}

/** Shutoff reason for a SHUTDOWN event (QEMU's ShutdownCause). */
function shutoffFor(shutdown: { guest: boolean; reason: string }): { status: LifeCycle; reason: Reason } {
  if (shutdown.reason === 'guest-panic') return { status: LifeCycle.Crashed, reason: Reason.Panicked };
  if (shutdown.guest) return { status: LifeCycle.Shutoff, reason: Reason.Shutdown };
  // host-qmp-quit, host-signal, host-ui, host-qmp-system-reset under -no-reboot...: the host ended it.
  return { status: LifeCycle.Shutoff, reason: Reason.Destroyed };
}

function onQmpEvent(state: DomainState, event: string, data: Readonly<Record<string, unknown>>): DomainState {
  const final = isFinal(state);
  switch (event) {
    case 'STOP': {
      if (final) return state;
      // The STOP -no-shutdown adds after a power-off that becomes a reboot.
      if (state.rebooting === 'resetting') return state;
      let reason: Reason = state.pendingStop ?? Reason.Unknown;
      if (state.ioError) reason = Reason.IOError;
      else if (state.watchdog) reason = Reason.Watchdog;
      return set(state, LifeCycle.Paused, reason, { pendingStop: undefined });
    }
    case 'RESUME':
      if (final) return state;
      return set(state, LifeCycle.Running, Reason.Unknown, { pendingStop: undefined, ioError: false, watchdog: false, rebooting: undefined });
    case 'BLOCK_IO_ERROR':
      if (final) return state;
      if (data.action !== 'stop') return state;
      // The STOP follows; if QEMU is already stopped (status io-error), say so now.
      if (state.status === LifeCycle.Paused) return set(state, LifeCycle.Paused, Reason.IOError, { ioError: true });
      return { ...state, ioError: true };
    case 'WATCHDOG':
      if (final) return state;
      return data.action === 'pause' ? { ...state, watchdog: true } : state;
    case 'SHUTDOWN': {
      const shutdown = { guest: data.guest === true, reason: typeof data.reason === 'string' ? data.reason : '' };
      if (final) return { ...state, shutdown: state.shutdown ?? shutdown };
      if (state.rebooting && shutdown.guest && shutdown.reason !== 'guest-panic') return { ...state, rebooting: 'resetting' };
      const next = shutoffFor(shutdown);
      return set(state, next.status, next.reason, { shutdown, pendingStop: undefined });
    }
    case 'GUEST_PANICKED':
      if (final && state.status !== LifeCycle.Crashed) return state;
      return set(state, LifeCycle.Crashed, Reason.Panicked, { panicCount: state.panicCount + 1 });
    case 'RESET':
      // The guest rebooted by itself: a soft reboot we asked for has happened (or is moot).
      if (state.rebooting === 'requested') return { ...state, rebooting: undefined };
      return state;
    case 'SUSPEND':
      if (final) return state;
      return set(state, LifeCycle.PMSuspended, Reason.Unknown);
    case 'WAKEUP':
      if (final || state.status !== LifeCycle.PMSuspended) return state;
      return set(state, LifeCycle.Running, Reason.Unknown);
    default:
      // POWERDOWN, VSERPORT_CHANGE, DEVICE_DELETED, BALLOON_CHANGE...: no lifecycle change.
      return state;
  }
}

/** QMP RunState (query-status .status) → lifecycle, for resync. */
function onRunState(state: DomainState, runState: string): DomainState {
  if (isFinal(state) && state.status !== LifeCycle.NoState) return state;
  switch (runState) {
    case 'running':
      return set(state, LifeCycle.Running, Reason.Unknown);
    case 'paused':
      // Keep a reason we already know; a pause we did not see happen is Unknown.
      return set(state, LifeCycle.Paused, state.status === LifeCycle.Paused ? state.reason : (state.pendingStop ?? Reason.Unknown));
    case 'prelaunch':
      return set(state, LifeCycle.Paused, state.status === LifeCycle.Paused ? state.reason : Reason.StartingUp);
    case 'io-error':
      return set(state, LifeCycle.Paused, Reason.IOError, { ioError: true });
    case 'watchdog':
      return set(state, LifeCycle.Paused, Reason.Watchdog, { watchdog: true });
    case 'inmigrate':
    case 'finish-migrate':
    case 'postmigrate':
      return set(state, LifeCycle.Paused, Reason.Migration);
    case 'save-vm':
      return set(state, LifeCycle.Paused, Reason.Save);
    case 'restore-vm':
      return set(state, LifeCycle.Paused, Reason.StartingUp);
    case 'guest-panicked':
      return set(state, LifeCycle.Crashed, Reason.Panicked);
    case 'internal-error':
      return set(state, LifeCycle.Crashed, Reason.Unknown);
    case 'shutdown':
      return set(state, LifeCycle.Shutoff, state.shutdown ? shutoffFor(state.shutdown).reason : Reason.Shutdown);
    case 'suspended':
      return set(state, LifeCycle.PMSuspended, Reason.Unknown);
    case 'debug':
    case 'colo':
      return set(state, LifeCycle.Paused, Reason.Unknown);
    default:
      return state;
  }
}

function onExit(state: DomainState, code: number | null, signal: string | null): DomainState {
  if (state.status === LifeCycle.Shutoff || state.status === LifeCycle.Crashed) return state;
  if (state.shutdown) {
    const next = shutoffFor(state.shutdown);
    return set(state, next.status, next.reason);
  }
  if (state.destroying) return set(state, LifeCycle.Shutoff, Reason.Destroyed);
  // No SHUTDOWN and nobody asked: QEMU died (crash, OOM kill, kill -9) or failed to start.
  if (code === 0 && signal === null) return set(state, LifeCycle.Shutoff, Reason.Destroyed);
  return set(state, LifeCycle.Crashed, Reason.Crashed);
}

/**
 * The domain state after `input`. Returns `current` itself (same object) when nothing changed,
 * so callers can compare by identity; compare `status`/`reason` to decide whether to notify.
 */
export function nextDomainState(current: DomainState, input: DomainInput): DomainState {
  switch (input.kind) {
    case 'started':
      return { ...INITIAL_DOMAIN_STATE, status: LifeCycle.Paused, reason: Reason.StartingUp };
    case 'start-paused':
      if (isFinal(current)) return current;
      return set(current, LifeCycle.Paused, Reason.User);
    case 'intent':
      if (input.intent === 'destroy') return current.destroying ? current : { ...current, destroying: true, rebooting: undefined };
      if (isFinal(current)) return current;
      if (input.intent === 'reboot') return { ...current, rebooting: 'requested' };
      return { ...current, pendingStop: INTENT_STOP_REASON[input.intent] };
    case 'qmp': {
      const next = onQmpEvent(current, input.event, input.data ?? {});
      return next;
    }
    case 'run-state':
      return onRunState(current, input.status);
    case 'exit':
      return onExit(current, input.code, input.signal);
    case 'undefined':
      return set(current, LifeCycle.NoState, Reason.NonExistent);
    case 'migrated':
      if (isFinal(current)) return current;
      return set(current, LifeCycle.Shutoff, Reason.Migrated, { pendingStop: undefined });
    case 'migration-ended':
      return current.pendingStop === Reason.Migration ? { ...current, pendingStop: undefined } : current;
    case 'incoming-failed':
      if (isFinal(current)) return current;
      return set(current, LifeCycle.Shutoff, Reason.Failed, { pendingStop: undefined });
  }
}

/** Whether two states differ in what the handler sees. */
export function sameLifecycle(a: Pick<DomainState, 'status' | 'reason'>, b: Pick<DomainState, 'status' | 'reason'>): boolean {
  return a.status === b.status && a.reason === b.reason;
}

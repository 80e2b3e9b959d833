// A child dies with the process that started it, however that process dies: the kernel's
// parent-death signal — QEMU with its launcher, the DataVolume importer's curl/qemu-img and the
// registry puller's skopeo with the local mode, the migration relays' socat with the node agent. Node
// cannot call prctl(PR_SET_PDEATHSIG), so util-linux's `setpriv --pdeathsig KILL` sets it and
// execs the rest (same pid). The signal comes when the *thread* that forked exits; libuv forks
// from the event-loop thread (child_process.spawn runs there), which lives as long as the launcher.
//
// One race remains with setpriv alone: a launcher that dies after the fork and before setpriv's
// prctl leaves a child that no signal will reach (it is re-parented at once). So setpriv execs a
// shell that checks, after the prctl, that its parent is still the launcher (getppid, dash's
// $PPID) and only then execs QEMU; otherwise it exits without starting QEMU. Without setpriv
// QEMU runs bare (and the launcher says so): its pod's PID namespace, or the local pod runner's
// process group, is then all that takes it down with the launcher.

import { accessSync, constants as fsConstants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The name the guard shell runs under ($0): what `ps` shows for the instant before QEMU's exec. */
export const PARENT_CHECK_NAME = 'qvirt-qemu-parent-check';

/** What the guard shell says (on stderr, exit code 1) when the launcher died before QEMU started. */
export const PARENT_GONE_MESSAGE = 'the launcher ended before QEMU started: not starting an orphaned QEMU';

/** $1: the launcher's pid; the rest: QEMU's binary and arguments. */
const PARENT_CHECK_SCRIPT = `[ "$PPID" = "$1" ] || { echo "${PARENT_GONE_MESSAGE} (parent $PPID, launcher $1)" >&2; exit 1; }; shift; exec "$@"`;

export interface ParentDeathTools {
  /** Absolute path of util-linux's setpriv, when there is one. */
  readonly setpriv: string | undefined;
  /** Absolute path of a POSIX shell, when there is one. */
  readonly shell: string | undefined;
}

/** How a child is protected: parent-death signal and the parent check, the signal alone, or nothing. */
export type ParentDeathGuard = 'signal-and-check' | 'signal' | 'none';

export interface GuardedCommand {
  readonly file: string;
  readonly args: string[];
  readonly guard: ParentDeathGuard;
}

/**
 * The command that starts `binary args` so that it is SIGKILLed when process `parentPid` (the
 * spawner) dies. Pure.
 */
export function withParentDeathSignal(tools: ParentDeathTools, parentPid: number, binary: string, args: readonly string[]): GuardedCommand {
  if (!tools.setpriv) return { file: binary, args: [...args], guard: 'none' };
  const signal = [tools.setpriv, '--pdeathsig', 'KILL', '--'];
  if (!tools.shell) return { file: tools.setpriv, args: [...signal.slice(1), binary, ...args], guard: 'signal' };
  return {
    file: tools.setpriv,
    args: [...signal.slice(1), tools.shell, '-c', PARENT_CHECK_SCRIPT, PARENT_CHECK_NAME, String(parentPid), binary, ...args],
    guard: 'signal-and-check',
  };
}

const onPath = (name: string): string | undefined => {
  for (const d of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const p = join(d || '.', name);
    try { accessSync(p, fsConstants.X_OK); return p; } catch { /* not here */ }
  }
  return undefined;
};

let found: ParentDeathTools | undefined;

/** util-linux's setpriv and a POSIX shell on PATH, looked up once. */
export function parentDeathTools(): ParentDeathTools {
  found ??= { setpriv: onPath('setpriv'), shell: onPath('sh') };
  return found;
}

/** Where `name` is on PATH (an absolute or relative path is taken as it is), or undefined. */
export function findOnPath(name: string): string | undefined {
  if (name.includes('/')) { try { accessSync(name, fsConstants.X_OK); return name; } catch { return undefined; } }
  return onPath(name);
}

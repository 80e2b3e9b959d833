// Whether a VMI's launcher that has never answered is still coming up or is gone: virt-handler's
// IsLauncherClientUnresponsive for a launcher it has no client for (launcher-clients.go). The
// handler remembers when it first looked for the launcher (NotInitializedSince); then
//   socket there                               → a client can be made (not decided here)
//   no socket for longer than the init timeout  → unresponsive (KubeVirt: 3 minutes)
//   otherwise                                   → initializing (look again in a second)
// So a launcher killed before it created its command socket (a SIGKILL while the VMI is Scheduled)
// fails the VMI instead of leaving it Scheduled forever. (KubeVirt also gives up at once when the
// pod's socket directory is gone; here the VMI controller fails a Scheduled VMI whose pod is gone,
// and a pod directory made just after the VMI is Scheduled is not mistaken for a vanished one.)

/** KubeVirt's wait for a launcher's command socket before the launcher counts as unresponsive. */
export const LAUNCHER_INIT_TIMEOUT_MS = 3 * 60_000;

export interface LauncherInitView {
  /** The launcher's command socket exists. */
  readonly socketExists: boolean;
  /** When the handler first looked for this launcher (ms since the epoch). */
  readonly notInitializedSinceMs: number;
  readonly nowMs: number;
  readonly timeoutMs: number;
}

export type LauncherInit = 'socket' | 'initializing' | 'unresponsive';

export function launcherInit(v: LauncherInitView): LauncherInit {
  if (v.socketExists) return 'socket';
  return v.nowMs - v.notInitializedSinceMs > v.timeoutMs ? 'unresponsive' : 'initializing';
}

// Whether a launcher the node agent has a client for is alive (virt-handler's watchdog,
// pkg/virt-handler/cache). KubeVirt declares a launcher unresponsive only after it has not answered
// for the watchdog timeout (30 s), because a launcher that does not answer may merely be busy. A
// launcher whose command socket refuses connections is not busy: nobody listens there any more —
// its process is gone (a unix socket's listener closes with the process; a full backlog is EAGAIN,
// not ECONNREFUSED) — so it is unresponsive at once, as a vanished socket already was. That is what
// makes a SIGKILLed launcher's VMI Failed within a second instead of after half a minute (issue 22).
//   answered                                   → responsive
//   socket refuses connections / socket gone   → unresponsive now (the launcher exited)
//   silent for longer than the watchdog timeout → unresponsive (KubeVirt's watchdog)
//   otherwise                                  → silent (ask again later)
import { connect } from 'node:net';

/** What a plain connect(2) to the launcher's command socket found. */
export type SocketProbe = 'listening' | 'refused' | 'missing' | 'error';

export interface LivenessView {
  /** The launcher answered a call just now. */
  readonly answered: boolean;
  /** The probe of its socket after it did not answer; undefined when not probed. */
  readonly probe?: SocketProbe | undefined;
  /** Since when it has not answered (ms). */
  readonly silentMs: number;
  readonly watchdogTimeoutMs: number;
}

export type Liveness =
  | { readonly state: 'responsive' }
  | { readonly state: 'silent' }
  | { readonly state: 'unresponsive'; readonly why: string };

export function launcherLiveness(v: LivenessView): Liveness {
  if (v.answered) return { state: 'responsive' };
  if (v.probe === 'refused') return { state: 'unresponsive', why: 'its command socket refuses connections: the launcher has exited' };
  if (v.probe === 'missing') return { state: 'unresponsive', why: 'its command socket is gone: the launcher has exited' };
  if (v.silentMs >= v.watchdogTimeoutMs) return { state: 'unresponsive', why: `no answer for ${Math.round(v.silentMs / 1000)} s (watchdog timeout ${Math.round(v.watchdogTimeoutMs / 1000)} s)` };
  return { state: 'silent' };
}

/** The errno of a failed connect(2) as a probe result. */
export function probeFromErrno(code: string | undefined): SocketProbe {
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
  return 'error';
}

/** Connects to the unix socket and hangs up at once: is anybody listening? */
export function probeSocket(path: string, timeoutMs = 2000): Promise<SocketProbe> {
  return new Promise((resolve) => {
    const sock = connect(path);
    const done = (r: SocketProbe) => { clearTimeout(timer); sock.destroy(); resolve(r); };
    const timer = setTimeout(() => done('error'), timeoutMs);
    sock.once('connect', () => done('listening'));
    sock.once('error', (err: NodeJS.ErrnoException) => done(probeFromErrno(err.code)));
  });
}

// The launcher runtime: the domain manager, its live migration, the command server and the
// notifier wired together with KubeVirt's virt-launcher behaviour — listen on launcher-init-sock, publish it as
// launcher-sock (markReady), define/start the domain when the handler syncs, and end when QEMU has
// ended: on SIGTERM mark the domain for graceful shutdown (the handler then shuts the guest down),
// destroy it after the grace period, wait for the final (deletion) notification, stop serving.
import type { Logger } from '../src/log/logger.ts';
import { forObject } from '../src/log/logger.ts';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import { WatchEventType } from '../src/proto/notify.ts';
import { CmdServer } from './server/cmd-server.ts';
import { Notifier, defaultNotifySocket } from './notify/notifier.ts';
import { DomainManager, type VmiRef } from './supervise/domain-manager.ts';
import { DomainMigration } from './migration/domain-migration.ts';
import type { PreparedLaunch } from './supervise/prepared-launch.ts';
import type { DomainState } from './domain/state.ts';
import type { QemuExit } from './supervise/qemu-process.ts';

export interface LauncherRuntimeOptions {
  /** KubeVirt's --kubevirt-share-dir (/var/run/kubevirt): sockets/ and the notify socket live here. */
  shareDir: string;
  /** Private per-VMI directory (/var/run/kubevirt-private/<uid>): pidfile. */
  runDir: string;
  vmiRef: VmiRef;
  log: Logger;
  /** --grace-period-seconds (KubeVirt default 30); the VMI's terminationGracePeriodSeconds wins for the domain. */
  graceSeconds?: number;
  /** The notify socket; default `<shareDir>/domain-notify-pipe.sock`; null: no notifications (local mode). */
  notifySocket?: string | null;
  /** Turns a VMI into a launch plan (convert + disks). */
  start: (vmi: VirtualMachineInstance) => Promise<PreparedLaunch>;
  /** Publish launcher-sock right away (default true); false: call markReady() yourself. */
  markReady?: boolean;
  /** How long to wait for the handler's deletion event after QEMU ended (KubeVirt 15 s). */
  finalNotifyTimeoutMs?: number;
  /** --qemu-timeout: give up when no domain was started within this long (default: wait forever). */
  domainStartTimeoutMs?: number;
  qemuBinary?: string;
  qmpTimeoutMs?: number;
  /** A launcher pod path as this process sees it (the local mode's container root); default: itself. */
  podPath?: (p: string) => string;
  /** Notifier timings (tests). */
  notifyTimings?: { intervalMs?: number; sendTimeoutMs?: number; totalTimeoutMs?: number };
}

export interface LauncherRuntimeResult {
  /** Why the runtime ended. */
  reason: 'qemu-exited' | 'stopped' | 'no-domain';
  exit?: QemuExit | undefined;
  state: DomainState;
}

export interface LauncherRuntime {
  readonly manager: DomainManager;
  readonly migration: DomainMigration;
  readonly server: CmdServer;
  readonly notifier: Notifier | undefined;
  /** Rename launcher-init-sock → launcher-sock. */
  markReady(): void;
  /**
   * The launcher got SIGTERM (or SIGINT/SIGQUIT/SIGHUP): graceful shutdown. The first call marks the
   * domain and starts the grace timer; after it QEMU is destroyed. Resolves with `done`.
   */
  shutdown(): Promise<LauncherRuntimeResult>;
  /** Settles when the launcher is finished (QEMU ended and the final notification went out). */
  readonly done: Promise<LauncherRuntimeResult>;
  /** Immediate stop: kill QEMU, stop the server and notifier, remove sockets. */
  close(): Promise<void>;
}

/** Starts the launcher runtime. Resolves once the command server answers (and is published). */
export async function startLauncherRuntime(opts: LauncherRuntimeOptions): Promise<LauncherRuntime> {
  const log = forObject(opts.log, { namespace: opts.vmiRef.namespace, name: opts.vmiRef.name, uid: opts.vmiRef.uid, kind: 'VirtualMachineInstance' });
  const graceSeconds = opts.graceSeconds ?? 30;
  const manager = new DomainManager({
    vmiRef: opts.vmiRef,
    runDir: opts.runDir,
    log,
    graceSeconds,
    start: opts.start,
    qemuBinary: opts.qemuBinary,
    qmpTimeoutMs: opts.qmpTimeoutMs,
  });
  const notifySocket = opts.notifySocket === undefined ? defaultNotifySocket(opts.shareDir) : opts.notifySocket;
  const notifier = notifySocket === null ? undefined : new Notifier({ socketPath: notifySocket, log, vmiRef: opts.vmiRef, ...opts.notifyTimings });
  if (notifier) {
    manager.on('domain', (ev) => notifier.notifyDomain(ev.type === 'ADDED' ? WatchEventType.Added : WatchEventType.Modified, ev.domain));
    manager.on('k8s-event', (ev) => notifier.notifyK8sEvent(ev.type, ev.reason, ev.message));
  }
  const migration = new DomainMigration(manager, log);
  const server = await CmdServer.start({ shareDir: opts.shareDir, manager, migration, log, podPath: opts.podPath });

  let finish!: (r: LauncherRuntimeResult) => void;
  const done = new Promise<LauncherRuntimeResult>((r) => { finish = r; });
  let finished = false;
  let ending: Promise<void> | undefined;
  let qemuExit: QemuExit | undefined;
  let startTimer: NodeJS.Timeout | undefined;

  const end = (reason: LauncherRuntimeResult['reason']): Promise<void> => {
    if (!ending) {
      ending = (async () => {
        clearTimeout(startTimer);
        await manager.waitQemuExit();
        if (notifier && reason !== 'no-domain' && manager.getDomain() !== undefined) {
          // KubeVirt's waitForFinalNotify: the handler deletes the ended domain; that deletion
          // event is the last thing it needs from us.
          const delivered = await notifier.waitForFinalNotify(opts.finalNotifyTimeoutMs ?? 15_000);
          if (!delivered) log.warn('no final deletion notification within the timeout: exiting anyway');
        }
        // The bound's timer is cleared once the flush is done: left running it held the process
        // up for its whole 2 s after everything had ended, and the pod — and with it the VM's
        // restart after a crash — waited for it.
        if (notifier) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([notifier.flush(), new Promise((r) => { timer = setTimeout(r, 2000); })]);
          clearTimeout(timer);
        }
        await server.stop();
        notifier?.close();
        finished = true;
        finish({ reason, exit: qemuExit, state: manager.domainState });
      })();
    }
    return ending;
  };

  manager.on('qemu-exit', (exit) => {
    qemuExit = exit;
    if (!finished) void end('qemu-exited');
  });

  if (opts.domainStartTimeoutMs) {
    startTimer = setTimeout(() => {
      if (!manager.qemu) {
        log.error({ timeoutMs: opts.domainStartTimeoutMs }, 'no domain was started in time');
        void end('no-domain');
      }
    }, opts.domainStartTimeoutMs);
    startTimer.unref();
  }

  let shutdownStarted = false;
  const runtime: LauncherRuntime = {
    manager,
    migration,
    server,
    notifier,
    markReady: () => server.markReady(),
    done,
    shutdown: async () => {
      if (!shutdownStarted) {
        shutdownStarted = true;
        log.info({ graceSeconds }, 'launcher shutting down: domain marked for graceful shutdown');
        const proc = manager.qemu;
        if (!proc || proc.hasExited) {
          void end(proc ? 'qemu-exited' : 'no-domain');
        } else {
          manager.markForGracefulShutdown();
          // The handler signals the guest; if QEMU still runs after the grace period, destroy it.
          void (async () => {
            if (!(await proc.waitExit(graceSeconds * 1000))) {
              log.warn({ graceSeconds }, 'grace period over: destroying the domain');
              await manager.kill();
            }
          })();
        }
      }
      return done;
    },
    close: async () => {
      const wasFinished = finished;
      finished = true; // a QEMU exit from here on does not start the final-notify wait
      clearTimeout(startTimer);
      await manager.close();
      notifier?.close();
      await server.stop(0);
      if (ending) await ending;
      if (!wasFinished) finish({ reason: 'stopped', exit: qemuExit, state: manager.domainState });
    },
  };
  if (opts.markReady !== false) server.markReady();
  return runtime;
}

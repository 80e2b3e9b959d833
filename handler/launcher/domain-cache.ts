// virt-handler's domain informer (pkg/virt-handler/cache): what every launcher on this node says
// about its domain. Sources: the launcher's Notify events (a per-launcher listener in the pod's
// `public` emptyDir, where the launcher dials `domain-notify-pipe.sock`), a periodic resync by
// GetDomain, and a watchdog that declares a launcher unresponsive when it has not answered for the
// watchdog timeout (KubeVirt: 30 s) and touches `launcher-unresponsive` beside its socket. Beyond
// KubeVirt: the command connection closing (the launcher died: its end of the socket closed) makes
// the cache look at once, and a socket nobody listens on any more makes the launcher unresponsive
// without waiting for the watchdog (handler/launcher/liveness.ts). Every change calls
// `onChange(key)`, which the controller turns into a work-queue add.
import { existsSync } from 'node:fs';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { NON_ROOT_UID } from '../../src/api/constants.ts';
import { dirname } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import { CmdClient } from '../../src/proto/launcher-client.ts';
import { grpc } from '../../src/proto/grpc.ts';
import type { K8sEvent } from '../../src/proto/notify.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import { domainVmiUid, type Domain } from '../../src/api/domain/domain.ts';
import { LifeCycle } from '../../src/api/domain/lifecycle.ts';
import type { LauncherState } from '../phase-from-domain.ts';
import { NotifyServer } from './notify-server.ts';
import { launcherLiveness, probeSocket } from './liveness.ts';
import { shortSocketPath, type GhostRecords, type LauncherPaths } from './sockets.ts';

export interface DomainCacheOptions {
  readonly ghosts: GhostRecords;
  /** Short symlinks for socket paths over the unix limit live here. */
  readonly stateDir: string;
  readonly log: Logger;
  readonly onChange: (key: string) => void;
  readonly onK8sEvent?: (key: string, ev: K8sEvent) => void;
  readonly resyncMs?: number;
  readonly watchdogTimeoutMs?: number;
  readonly callTimeoutMs?: number;
}

export interface LauncherEntry {
  readonly key: string;
  readonly uid: string;
  readonly paths: LauncherPaths;
  /** The path the client dials (a short link to `paths.socket` when that is over the unix limit). */
  readonly dial: string;
  readonly client: CmdClient;
  notify?: NotifyServer;
  domain?: Domain | undefined;
  /** Counts the launcher's domain events: a GetDomain answer sent before the latest one is older than it. */
  events: number;
  lastAnswerMs: number;
  unresponsive: boolean;
}

/**
 * The domain a launcher's event leaves in the cache. A deletion keeps the state the domain ended in
 * (Shutoff: Shutdown, Destroyed, Crashed...): qvirt's launcher reports its domain deleted as soon as
 * QEMU has exited, with no state (NoState/NonExistent), where libvirt keeps a shut-off domain defined
 * until virt-handler deletes it. The VMI's phase (Succeeded or Failed) is read from that end state, so
 * it must outlive the deletion event that can reach the handler in the same breath. Pure.
 */
export function domainAfterEvent(previous: Domain | undefined, next: Domain): Domain {
  if (next.ObjectMeta.deletionTimestamp === undefined || previous === undefined) return next;
  if (next.Status.Status !== LifeCycle.NoState) return next;
  if (previous.Status.Status !== LifeCycle.Shutoff && previous.Status.Status !== LifeCycle.Crashed) return next;
  return { ...next, Status: previous.Status };
}

/** The domain as KubeVirt lists a domain whose launcher is gone: deleted, now. */
function deleted(d: Domain): Domain {
  return { ...d, ObjectMeta: { ...d.ObjectMeta, deletionTimestamp: new Date().toISOString() } };
}

export class DomainCache {
  private readonly o: DomainCacheOptions;
  private readonly entries = new Map<string, LauncherEntry>();
  private resyncTimer?: NodeJS.Timeout;
  private watchdogTimer?: NodeJS.Timeout;
  private readonly watchdogTimeoutMs: number;

  constructor(o: DomainCacheOptions) {
    this.o = o;
    this.watchdogTimeoutMs = o.watchdogTimeoutMs ?? 30_000;
  }

  start(): void {
    this.resyncTimer = setInterval(() => { for (const e of this.entries.values()) void this.refresh(e); }, this.o.resyncMs ?? 300_000);
    // KubeVirt checks every watchdogTimeout/3 + 1 s.
    const every = Math.floor(this.watchdogTimeoutMs / 3) + 1000;
    this.watchdogTimer = setInterval(() => { for (const e of this.entries.values()) void this.check(e); }, every);
    this.resyncTimer.unref();
    this.watchdogTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.resyncTimer);
    clearInterval(this.watchdogTimer);
    await Promise.all([...this.entries.values()].map((e) => this.closeEntry(e)));
    this.entries.clear();
  }

  get(key: string): LauncherEntry | undefined {
    return this.entries.get(key);
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  launcherState(key: string): LauncherState {
    const e = this.entries.get(key);
    if (!e) return 'initializing';
    return e.unresponsive ? 'unresponsive' : 'responsive';
  }

  /** Starts tracking a launcher: client, Notify listener, ghost record, a first GetDomain. */
  async attach(key: string, uid: string, paths: LauncherPaths): Promise<LauncherEntry> {
    const existing = this.entries.get(key);
    if (existing && existing.uid === uid && existing.paths.socket === paths.socket) return existing;
    if (existing) await this.detach(key);
    const [namespace = '', name = ''] = key.split('/');
    await this.o.ghosts.add({ name, namespace, socketFile: paths.socket, uid });
    const dial = await shortSocketPath(paths.socket, this.o.stateDir);
    const entry: LauncherEntry = { key, uid, paths, dial, client: new CmdClient(dial, { timeoutMs: this.o.callTimeoutMs ?? 30_000 }), events: 0, lastAnswerMs: Date.now(), unresponsive: false };
    this.entries.set(key, entry);
    this.watchConnection(entry);
    try {
      await mkdir(dirname(paths.notifySocket), { recursive: true });
      entry.notify = await NotifyServer.start(await shortSocketPath(paths.notifySocket, this.o.stateDir), {
        domainEvent: (_type, domain) => {
          const uid = domainVmiUid(domain);
          if (uid && uid !== entry.uid) return;
          entry.domain = domainAfterEvent(entry.domain, domain);
          entry.events++;
          entry.lastAnswerMs = Date.now();
          entry.unresponsive = false;
          this.o.onChange(key);
        },
        k8sEvent: (ev) => { this.o.onK8sEvent?.(key, ev); },
      });
      // A non-root launcher (KubeVirt's default: qemu, 107) must be able to connect: a socket is
      // opened for writing, and the handler made it as root (KubeVirt sets the same ownership).
      await chown(paths.notifySocket, NON_ROOT_UID, NON_ROOT_UID).catch((err: unknown) => this.o.log.debug({ key, err: (err as Error).message }, 'notify socket left to its maker (not root)'));
    } catch (err) {
      this.o.log.warn({ key, socket: paths.notifySocket, err: (err as Error).message }, 'cannot listen for the launcher\'s domain events; relying on resync');
    }
    await this.refresh(entry);
    return entry;
  }

  /** Stops tracking a launcher (virt-handler's CloseLauncherClient): the ghost record goes too. */
  async detach(key: string): Promise<void> {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    await this.closeEntry(e);
    await this.o.ghosts.delete(key);
  }

  private async closeEntry(e: LauncherEntry): Promise<void> {
    e.client.close();
    await e.notify?.stop().catch(() => undefined);
  }

  /** GetDomain now; a launcher that answers with no domain reports none. */
  async refresh(e: LauncherEntry): Promise<void> {
    if (!existsSync(e.paths.socket)) {
      // The socket is gone: the launcher has exited. KubeVirt lists such a domain as deleted.
      if (e.domain && !e.domain.ObjectMeta.deletionTimestamp) e.domain = deleted(e.domain);
      this.o.onChange(e.key);
      return;
    }
    try {
      const eventsBefore = e.events;
      const r = await e.client.getDomain({ timeoutMs: 5000 });
      e.lastAnswerMs = Date.now();
      e.unresponsive = false;
      if (r.response && !r.response.success) return;
      const next = r.domain ? decodeDomain(r.domain) : undefined;
      if (this.entries.get(e.key) !== e) return;
      // An event came while the call was out (a pause right after the start, say): the answer may
      // predate it, and the event's domain is the newer. Keep it.
      if (e.events !== eventsBefore) return;
      e.domain = next;
      this.o.onChange(e.key);
    } catch (err) {
      this.o.log.debug({ key: e.key, err: (err as Error).message }, 'GetDomain failed');
      await this.judge(e, false);
    }
  }

  /**
   * Looks at the launcher the moment its command connection leaves READY: a launcher that died
   * closed its end, and its socket then refuses connections. (grpc-js only reconnects on the next
   * call, so a dead launcher would otherwise be noticed at the next watchdog tick, 11 s later, and
   * declared unresponsive 30 s after its last answer.)
   */
  private watchConnection(e: LauncherEntry): void {
    const channel = e.client.rpc.raw.getChannel();
    const from = (state: grpc.connectivityState) => {
      try {
        channel.watchConnectivityState(state, Infinity, () => {
          if (this.entries.get(e.key) !== e) return;
          const next = channel.getConnectivityState(false);
          if (next === grpc.connectivityState.SHUTDOWN) return;
          if (state === grpc.connectivityState.READY) void this.check(e);
          from(next);
        });
      } catch { /* the channel is shut down: the entry is gone */ }
    };
    from(channel.getConnectivityState(false));
  }

  /** Ping now; what does not answer is judged by launcherLiveness. */
  private async check(e: LauncherEntry): Promise<void> {
    if (e.unresponsive) return;
    let answered = false;
    try {
      await e.client.ping({ timeoutMs: 2000 });
      answered = true;
    } catch { /* judged below */ }
    await this.judge(e, answered);
  }

  /** Records an answer, or decides from a probe of the socket whether a silent launcher is gone. */
  private async judge(e: LauncherEntry, answered: boolean): Promise<void> {
    if (e.unresponsive || this.entries.get(e.key) !== e) return;
    if (answered) { e.lastAnswerMs = Date.now(); return; }
    const probe = await probeSocket(e.dial);
    const live = launcherLiveness({ answered, probe, silentMs: Date.now() - e.lastAnswerMs, watchdogTimeoutMs: this.watchdogTimeoutMs });
    if (live.state !== 'unresponsive' || e.unresponsive || this.entries.get(e.key) !== e) return;
    e.unresponsive = true;
    this.o.log.warn({ key: e.key, socket: e.paths.socket, silentMs: Date.now() - e.lastAnswerMs, why: live.why }, 'launcher is unresponsive');
    await writeFile(e.paths.unresponsiveMarker, '').catch(() => undefined);
    // What KubeVirt's watchdog reports: the domain as deleted.
    if (e.domain && !e.domain.ObjectMeta.deletionTimestamp) e.domain = deleted(e.domain);
    this.o.onChange(e.key);
  }
}

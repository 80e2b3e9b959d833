// The launcher's side of kubevirt.notify.v1.Notify: domain events (ADDED / MODIFIED, deletion as
// MODIFIED with ObjectMeta.deletionTimestamp) and Kubernetes events for the VMI, sent to the node
// agent's notify socket (`<share-dir>/domain-notify-pipe.sock`).
//
// Callers only enqueue: `notifyDomain`/`notifyK8sEvent` return at once, so the QMP reader that
// produces the events is never held up by a slow or absent handler. One worker sends in order with
// KubeVirt's policy: each attempt has a 5 s deadline, transient failures (connection refused,
// deadline, unavailable) retry every 1 s, an event is given up after 20 s in total. While the
// handler is away, consecutive MODIFIED domain events collapse into the newest one: the handler
// wants the current domain, not its history.
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import { GrpcStatus, grpcStatusName, isTransientGrpcError } from '../../src/proto/service.ts';
import { NotifyClient, WatchEventType, type K8sEvent } from '../../src/proto/notify.ts';
import { negotiateNotifyVersion } from '../../src/proto/info.ts';
import type { Domain } from '../../src/api/domain/domain.ts';

/** KubeVirt's notify socket name inside the launcher's share dir. */
export const NOTIFY_PIPE_SOCKET = 'domain-notify-pipe.sock';

export function defaultNotifySocket(shareDir: string): string {
  return join(shareDir, NOTIFY_PIPE_SOCKET);
}

export interface NotifierOptions {
  socketPath: string;
  log: Logger;
  /** The VMI the Kubernetes events are about. */
  vmiRef: { namespace: string; name: string; uid: string };
  /** Retry interval (KubeVirt 1 s). */
  intervalMs?: number;
  /** Per-attempt deadline (KubeVirt 5 s). */
  sendTimeoutMs?: number;
  /** Give up on an event after this long (KubeVirt 20 s). */
  totalTimeoutMs?: number;
  /** Most events kept while the handler is unreachable; the oldest MODIFIED go first. */
  maxQueue?: number;
}

type Item =
  | { kind: 'domain'; type: WatchEventType; domain: Domain; enqueued: number }
  | { kind: 'k8s'; event: K8sEvent; enqueued: number };

export interface NotifierEvents {
  sent: [item: { kind: 'domain' | 'k8s'; type?: string; attempts: number }];
  failed: [item: { kind: 'domain' | 'k8s'; type?: string; error: string }];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function describe(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && 'details' in err) {
    const e = err as { code: number; details: string };
    return `${grpcStatusName(e.code)}: ${e.details}`;
  }
  return err instanceof Error ? err.message : String(err);
}

export class Notifier extends EventEmitter<NotifierEvents> {
  readonly socketPath: string;
  private readonly log: Logger;
  private readonly vmiRef: NotifierOptions['vmiRef'];
  private readonly intervalMs: number;
  private readonly sendTimeoutMs: number;
  private readonly totalTimeoutMs: number;
  private readonly maxQueue: number;
  private readonly queue: Item[] = [];
  private client: NotifyClient | undefined;
  private working = false;
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;
  private closed = false;
  private deletionDelivered = false;
  private deletionWaiters: ((delivered: boolean) => void)[] = [];

  constructor(opts: NotifierOptions) {
    super();
    this.socketPath = opts.socketPath;
    this.log = opts.log;
    this.vmiRef = opts.vmiRef;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.sendTimeoutMs = opts.sendTimeoutMs ?? 5000;
    this.totalTimeoutMs = opts.totalTimeoutMs ?? 20_000;
    this.maxQueue = opts.maxQueue ?? 256;
  }

  /** Queues a domain event. Never blocks, never throws. */
  notifyDomain(type: WatchEventType, domain: Domain): void {
    if (this.closed) return;
    const last = this.queue.at(-1);
    if (type === WatchEventType.Modified && last?.kind === 'domain' && last.type === WatchEventType.Modified && this.queue.length > 1) {
      // Not the one in flight (index 0): replace it with the newer domain.
      this.queue[this.queue.length - 1] = { kind: 'domain', type, domain, enqueued: last.enqueued };
    } else {
      this.queue.push({ kind: 'domain', type, domain, enqueued: Date.now() });
    }
    this.trim();
    this.kick();
  }

  /** Queues a Kubernetes event about the VMI. Never blocks, never throws. */
  notifyK8sEvent(type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.closed) return;
    this.queue.push({
      kind: 'k8s',
      enqueued: Date.now(),
      event: {
        involvedObject: { kind: 'VirtualMachineInstance', apiVersion: 'kubevirt.io/v1', namespace: this.vmiRef.namespace, name: this.vmiRef.name, uid: this.vmiRef.uid },
        type,
        reason,
        message,
      },
    });
    this.trim();
    this.kick();
  }

  private trim(): void {
    while (this.queue.length > this.maxQueue) {
      const i = this.queue.findIndex((it, idx) => idx > 0 && it.kind === 'domain' && it.type === WatchEventType.Modified);
      const dropped = this.queue.splice(i > 0 ? i : 1, 1)[0];
      this.log.warn({ kind: dropped?.kind }, 'notify queue full: dropped an event');
    }
  }

  /** Resolves when every queued event was sent or given up. */
  flush(): Promise<void> {
    if (!this.working && this.queue.length === 0) return Promise.resolve();
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => { resolve = r; });
      this.idle = { promise, resolve };
    }
    return this.idle.promise;
  }

  /**
   * Resolves once a domain event with a deletionTimestamp was delivered (KubeVirt's
   * waitForFinalNotify), or after `timeoutMs`; true if delivered.
   */
  async waitForFinalNotify(timeoutMs: number): Promise<boolean> {
    if (this.deletionDelivered) return true;
    let timer: NodeJS.Timeout | undefined;
    const delivered = await Promise.race([
      new Promise<boolean>((r) => this.deletionWaiters.push(r)),
      new Promise<boolean>((r) => { timer = setTimeout(() => r(false), timeoutMs); }),
    ]);
    clearTimeout(timer);
    return delivered;
  }

  /** Stops sending (queued events are dropped) and closes the connection. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.client?.close();
    this.client = undefined;
    this.idle?.resolve();
    this.idle = undefined;
    this.wakeDeletionWaiters(false);
  }

  private kick(): void {
    if (this.working) return;
    this.working = true;
    void this.work();
  }

  private async work(): Promise<void> {
    try {
      while (!this.closed && this.queue.length > 0) {
        const item = this.queue[0]!;
        await this.deliver(item);
        if (this.queue[0] === item) this.queue.shift();
      }
    } finally {
      this.working = false;
      if (this.queue.length === 0 || this.closed) {
        this.idle?.resolve();
        this.idle = undefined;
      } else {
        this.kick();
      }
    }
  }

  private async connect(): Promise<NotifyClient> {
    if (this.client) return this.client;
    try {
      await negotiateNotifyVersion(this.socketPath, { timeoutMs: this.sendTimeoutMs });
    } catch (err) {
      // A notify server without NotifyInfo still speaks v1; anything else is a connection problem.
      if (!(err && typeof err === 'object' && 'code' in err && (err as { code: number }).code === GrpcStatus.UNIMPLEMENTED)) throw err;
    }
    this.client = new NotifyClient(this.socketPath, { timeoutMs: this.sendTimeoutMs });
    this.log.info({ socket: this.socketPath }, 'connected to the domain notify socket');
    return this.client;
  }

  private dropClient(): void {
    this.client?.close();
    this.client = undefined;
  }

  private async deliver(item: Item): Promise<void> {
    const started = Date.now();
    const label = item.kind === 'domain' ? { kind: item.kind, type: item.type } : { kind: item.kind, type: item.event.reason };
    let attempts = 0;
    for (;;) {
      if (this.closed) return;
      // The node agent has the domain's deletion: a domain event after it tells it nothing, and
      // the agent may already have closed this VMI's notify socket — retrying one (the deletion is
      // often reported twice: by the state change and by DeleteVirtualMachine) held the launcher's
      // exit, and a crashed VM's restart, up to the flush bound.
      if (item.kind === 'domain' && this.deletionDelivered) return;
      attempts++;
      try {
        const client = await this.connect();
        const res = item.kind === 'domain'
          ? await client.handleDomainEvent(item.type, JSON.stringify(item.domain), null, { timeoutMs: this.sendTimeoutMs })
          : await client.handleK8sEvent(item.event, { timeoutMs: this.sendTimeoutMs });
        if (!res.success && res.message) {
          this.log.error({ ...label, message: res.message }, 'notify server refused the event');
          this.emit('failed', { ...label, error: res.message });
        } else {
          this.log.debug({ ...label, attempts }, 'event delivered');
          this.emit('sent', { ...label, attempts });
        }
        if (item.kind === 'domain' && item.domain.ObjectMeta.deletionTimestamp) this.markDeletionDelivered();
        return;
      } catch (err) {
        const transient = isTransientGrpcError(err);
        this.dropClient();
        const elapsed = Date.now() - started;
        if (!transient || elapsed + this.intervalMs > this.totalTimeoutMs) {
          this.log.error({ ...label, attempts, err: describe(err) }, transient ? `giving up on the event after ${this.totalTimeoutMs} ms` : 'event rejected');
          this.emit('failed', { ...label, error: describe(err) });
          if (item.kind === 'domain' && item.domain.ObjectMeta.deletionTimestamp) this.markDeletionDelivered();
          return;
        }
        this.log.debug({ ...label, attempts, err: describe(err) }, 'notify failed, retrying');
        await sleep(this.intervalMs);
      }
    }
  }

  private markDeletionDelivered(): void {
    this.deletionDelivered = true;
    this.wakeDeletionWaiters(true);
  }

  private wakeDeletionWaiters(delivered: boolean): void {
    const w = this.deletionWaiters;
    this.deletionWaiters = [];
    for (const f of w) f(delivered);
  }
}

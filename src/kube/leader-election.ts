// Leader election on a coordination.k8s.io/v1 Lease, with client-go's timing: a candidate takes a
// lease that is free or whose holder has not renewed it within leaseDuration; the leader renews every
// retryPeriod and steps down if it cannot renew within renewDeadline. Optimistic concurrency
// (resourceVersion) makes two candidates racing for the same lease impossible to both win.
import type { Logger } from '../log/logger.ts';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient, type KubeObject } from './client.ts';
import { Resources } from './resource.ts';

export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface LeaderElectionOptions {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs?: number; // 15 s
  readonly renewDeadlineMs?: number; // 10 s
  readonly retryPeriodMs?: number; // 2 s
  readonly log?: Logger;
  readonly onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  readonly onStoppedLeading?: () => void;
  readonly onNewLeader?: (identity: string) => void;
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private readonly client: KubeClient;
  private readonly o: Required<Omit<LeaderElectionOptions, 'log' | 'onStoppedLeading' | 'onNewLeader'>> & LeaderElectionOptions;
  private leading = false;
  private stopped = false;
  private lastObservedHolder = '';
  private leadAbort?: AbortController;
  private timer?: NodeJS.Timeout;
  private lastRenew = 0;
  /** The acquire-or-renew under way, which stop() lets land before it releases. */
  private attempt: Promise<boolean> | undefined;

  constructor(client: KubeClient, opts: LeaderElectionOptions) {
    this.client = client;
    this.o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...opts };
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts campaigning; resolves once this candidate leads (or the elector is stopped first). */
  run(): Promise<void> {
    return new Promise((resolve) => {
      const tick = async () => {
        if (this.stopped) { resolve(); return; }
        this.attempt = this.tryAcquireOrRenew().catch((err: unknown) => {
          this.o.log?.warn({ err: err instanceof Error ? err.message : err, lease: this.o.name }, 'leader election: lease update failed');
          return false;
        });
        const ok = await this.attempt;
        // Stopped while it was under way: stop() releases what it may have renewed or acquired.
        if (this.stopped) { resolve(); return; }
        const now = Date.now();
        if (ok) {
          this.lastRenew = now;
          if (!this.leading) {
            this.leading = true;
            this.leadAbort = new AbortController();
            this.o.log?.info({ lease: this.o.name, identity: this.o.identity }, 'became leader');
            resolve();
            void this.o.onStartedLeading(this.leadAbort.signal);
          }
        } else if (this.leading && now - this.lastRenew > this.o.renewDeadlineMs) {
          this.loseLeadership('could not renew the lease within the renew deadline');
        }
        if (!this.stopped) this.timer = setTimeout(tick, this.o.retryPeriodMs);
      };
      void tick();
    });
  }

  private loseLeadership(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.o.log?.warn({ lease: this.o.name, identity: this.o.identity }, `lost leadership: ${why}`);
    this.leadAbort?.abort();
    this.o.onStoppedLeading?.();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const durationS = Math.ceil(this.o.leaseDurationMs / 1000);
    let lease: Lease;
    try {
      lease = await this.client.get<Lease>(Resources.leases, this.o.namespace, this.o.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const fresh: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.o.name, namespace: this.o.namespace },
        spec: { holderIdentity: this.o.identity, leaseDurationSeconds: durationS, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
      };
      try {
        await this.client.create(Resources.leases, fresh);
        this.observe(this.o.identity);
        return true;
      } catch (e) {
        if (isAlreadyExists(e)) return false;
        throw e;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    this.observe(holder);
    const renewedAt = spec.renewTime ? Date.parse(spec.renewTime) : 0;
    const expired = !holder || renewedAt + (spec.leaseDurationSeconds ?? durationS) * 1000 < now.getTime();
    if (holder !== this.o.identity && !expired) return false;
    const next: Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: this.o.identity,
        leaseDurationSeconds: durationS,
        renewTime: microTime(now),
        acquireTime: holder === this.o.identity ? (spec.acquireTime ?? microTime(now)) : microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === this.o.identity ? 0 : 1),
      },
    };
    try {
      await this.client.update(Resources.leases, next);
      this.observe(this.o.identity);
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  private observe(holder: string): void {
    if (holder && holder !== this.lastObservedHolder) {
      this.lastObservedHolder = holder;
      this.o.onNewLeader?.(holder);
    }
  }

  /** Stops campaigning; a leader releases the lease so a successor need not wait for it to expire. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const wasLeading = this.leading;
    this.loseLeadership('stopped');
    // A renewal under way would change the lease under the release (a conflict): let it land first. It may
    // also have just acquired the lease for a candidate that was not leading yet.
    const acquired = await this.attempt;
    if (!wasLeading && !acquired) return;
    // Released as client-go's ReleaseOnCancel does, read afresh after a conflict with a write of our own.
    for (let i = 0; ; i++) {
      try {
        const lease = await this.client.get<Lease>(Resources.leases, this.o.namespace, this.o.name);
        if (lease.spec?.holderIdentity !== this.o.identity) return;
        await this.client.update(Resources.leases, { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) } });
        return;
      } catch (err) {
        if (isConflict(err) && i < 2) continue;
        this.o.log?.warn({ err: err instanceof Error ? err.message : err }, 'could not release the lease');
        return;
      }
    }
  }
}

// A shared informer: list, then watch from the list's resourceVersion; keep a local cache; tell
// handlers about adds, updates and deletes; relist when the API server says the version is too old
// (410 Gone); re-watch from the last seen version when a watch ends; periodically re-deliver every
// object (resync) so level-triggered controllers converge even after a missed edge.
import { EventEmitter } from 'node:events';
import type { Logger } from '../log/logger.ts';
import { KubeApiError, type KubeClient, type KubeObject, type ListOptions, type WatchEvent } from './client.ts';
import type { ResourceType } from './resource.ts';

export type ObjectKey = string;

/** `namespace/name`, or `name` for cluster-scoped objects: KubeVirt's and client-go's key format. */
export function keyOf(obj: KubeObject): ObjectKey {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name}` : `${m.name}`;
}

export function splitKey(key: ObjectKey): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export interface InformerOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Re-deliver every cached object as an update this often (0 = never). */
  readonly resyncMs?: number;
  readonly log?: Logger;
  /** Delay before re-listing/re-watching after an error; doubles up to 30 s. */
  readonly retryBaseMs?: number;
}

export interface InformerEvents<T> {
  add: [obj: T];
  update: [oldObj: T, newObj: T];
  delete: [obj: T];
}

export class Informer<T extends KubeObject> {
  private readonly client: KubeClient;
  private readonly resource: ResourceType;
  private readonly opts: InformerOptions;
  private readonly store = new Map<ObjectKey, T>();
  private readonly emitter = new EventEmitter();
  private abort?: AbortController;
  private resyncTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private stopped = false;
  private lastRv = '';
  private retries = 0;
  private syncedResolve!: () => void;
  private synced = false;
  /** Resolves once the first list has been delivered. */
  readonly hasSynced: Promise<void>;
  /** How many times the informer listed (1 + relists after 410 or errors): for tests and metrics. */
  listCount = 0;

  constructor(client: KubeClient, resource: ResourceType, opts: InformerOptions = {}) {
    this.client = client;
    this.resource = resource;
    this.opts = opts;
    this.hasSynced = new Promise((r) => { this.syncedResolve = r; });
    this.emitter.setMaxListeners(0);
  }

  on<E extends keyof InformerEvents<T>>(event: E, handler: (...args: InformerEvents<T>[E]) => void): this {
    this.emitter.on(event, handler as (...a: unknown[]) => void);
    return this;
  }

  get(key: ObjectKey): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  /** The last resourceVersion seen, from a list, an event or a bookmark. */
  get resourceVersion(): string {
    return this.lastRv;
  }

  start(): Promise<void> {
    this.stopped = false;
    void this.listAndWatch();
    if (this.opts.resyncMs) {
      this.resyncTimer = setInterval(() => {
        for (const obj of this.store.values()) this.emit('update', obj, obj);
      }, this.opts.resyncMs);
    }
    return this.hasSynced;
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private emit<E extends keyof InformerEvents<T>>(event: E, ...args: InformerEvents<T>[E]): void {
    try {
      this.emitter.emit(event, ...args);
    } catch (err) {
      this.opts.log?.error({ err, resource: this.resource.plural }, 'informer handler threw');
    }
  }

  private listOptions(): ListOptions {
    return { namespace: this.opts.namespace, labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }

  private scheduleRetry(what: string, err: unknown, relist: boolean): void {
    if (this.stopped) return;
    const base = this.opts.retryBaseMs ?? 200;
    const delay = Math.min(30_000, base * 2 ** Math.min(this.retries++, 8));
    this.opts.log?.warn({ err: err instanceof Error ? err.message : err, resource: this.resource.plural, delayMs: delay }, `${what} failed, retrying`);
    this.retryTimer = setTimeout(() => { void (relist ? this.listAndWatch() : this.watchFrom(this.lastRv)); }, delay);
  }

  private async listAndWatch(): Promise<void> {
    if (this.stopped) return;
    let list;
    try {
      this.listCount++;
      list = await this.client.list<T>(this.resource, this.listOptions());
    } catch (err) {
      this.scheduleRetry('list', err, true);
      return;
    }
    if (this.stopped) return;
    this.replace(list.items);
    this.lastRv = list.metadata.resourceVersion ?? '';
    if (!this.synced) { this.synced = true; this.syncedResolve(); }
    await this.watchFrom(this.lastRv);
  }

  /** Replaces the cache with a fresh list, telling handlers what changed while we were not watching. */
  private replace(items: T[]): void {
    const seen = new Set<ObjectKey>();
    for (const obj of items) {
      const key = keyOf(obj);
      seen.add(key);
      const old = this.store.get(key);
      this.store.set(key, obj);
      if (!old) this.emit('add', obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit('update', old, obj);
    }
    for (const [key, old] of [...this.store]) {
      if (!seen.has(key)) { this.store.delete(key); this.emit('delete', old); }
    }
  }

  private async watchFrom(rv: string): Promise<void> {
    if (this.stopped) return;
    let gone = false;
    let sawEvent = false;
    const onEvent = (ev: WatchEvent<T>) => {
      sawEvent = true;
      if (ev.type === 'ERROR') {
        const st = ev.object as unknown as { code?: number; message?: string };
        if (st.code === 410) gone = true;
        else this.opts.log?.warn({ status: st, resource: this.resource.plural }, 'watch error event');
        return;
      }
      const obj = ev.object;
      const newRv = obj.metadata?.resourceVersion;
      if (newRv) this.lastRv = newRv;
      if (ev.type === 'BOOKMARK') return;
      const key = keyOf(obj);
      const old = this.store.get(key);
      if (ev.type === 'DELETED') {
        this.store.delete(key);
        this.emit('delete', old ?? obj);
      } else if (!old) {
        this.store.set(key, obj);
        this.emit('add', obj);
      } else {
        this.store.set(key, obj);
        this.emit('update', old, obj);
      }
    };
    const onDone = (err?: unknown) => {
      if (this.stopped) return;
      if (gone || (err instanceof KubeApiError && err.code === 410) || (err as { statusCode?: number } | undefined)?.statusCode === 410) {
        this.opts.log?.debug({ resource: this.resource.plural }, 'resourceVersion too old (410): relisting');
        void this.listAndWatch();
        return;
      }
      if (err) { this.scheduleRetry('watch', err, false); return; }
      if (sawEvent) this.retries = 0;
      // A watch that ends cleanly (server timeout) is resumed from the last version seen.
      void this.watchFrom(this.lastRv);
    };
    try {
      this.abort = await this.client.watch<T>(this.resource, { ...this.listOptions(), resourceVersion: rv, allowWatchBookmarks: true }, onEvent, onDone);
      // stop() while the watch was being set up: it had nothing to abort yet.
      if (this.stopped) this.abort.abort();
    } catch (err) {
      this.scheduleRetry('watch', err, false);
    }
  }
}

// Kubernetes Events as KubeVirt's components record them (reason, message, Normal/Warning), with
// client-go's aggregation: the same event for the same object again bumps `count` and
// `lastTimestamp` instead of creating a new object. Recording never throws into the caller: an
// event that cannot be written is logged and dropped, as in client-go.
import type { Logger } from '../log/logger.ts';
import type { KubeClient, KubeObject } from './client.ts';
import { Resources } from './resource.ts';

export type EventType = 'Normal' | 'Warning';

interface CachedEvent {
  name: string;
  namespace: string;
  count: number;
}

export class EventRecorder {
  private readonly client: KubeClient;
  private readonly component: string;
  private readonly host?: string;
  private readonly log?: Logger;
  private readonly cache = new Map<string, CachedEvent>();

  constructor(client: KubeClient, component: string, opts: { host?: string; log?: Logger } = {}) {
    this.client = client;
    this.component = component;
    this.host = opts.host;
    this.log = opts.log;
  }

  /** Records an event about `obj`; resolves once written (or dropped with a log line). */
  async record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const m = obj.metadata ?? {};
    const namespace = m.namespace ?? 'default';
    const key = `${m.uid ?? `${namespace}/${m.name}`}|${type}|${reason}|${message}`;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    try {
      const cached = this.cache.get(key);
      if (cached) {
        cached.count++;
        await this.client.patch(Resources.events, cached.namespace, cached.name, { count: cached.count, lastTimestamp: now }, 'merge');
        return;
      }
      const name = `${m.name ?? 'unknown'}.${Date.now().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
      await this.client.create(Resources.events, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion },
        reason,
        message,
        type,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: this.component, ...(this.host ? { host: this.host } : {}) },
        reportingComponent: this.component,
        reportingInstance: this.host ?? '',
      } as KubeObject);
      this.cache.set(key, { name, namespace, count: 1 });
      if (this.cache.size > 4096) this.cache.delete(this.cache.keys().next().value!);
    } catch (err) {
      this.cache.delete(key);
      this.log?.warn({ err: err instanceof Error ? err.message : err, reason, object: `${namespace}/${m.name}` }, 'could not record event');
    }
  }

  normal(obj: KubeObject, reason: string, message: string): Promise<void> {
    return this.record(obj, 'Normal', reason, message);
  }

  warning(obj: KubeObject, reason: string, message: string): Promise<void> {
    return this.record(obj, 'Warning', reason, message);
  }
}

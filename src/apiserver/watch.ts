// Watch fan-out: each store event reaches every watcher of its resource whose namespace and
// selectors it matches, as one JSON line `{"type":...,"object":...}`. The line is built once per
// (event, type, apiVersion) and shared by all watchers, so a write costs one serialization
// however many informers are watching. Selector transitions follow kube-apiserver: an object that
// stops matching is sent as DELETED, one that starts matching as ADDED.
import { jsonOf, metaOf, namespaceOf, type Obj, type StoreEvent, type EventType } from './store.ts';
import { matchesFields, type FieldGetter, type FieldRequirement } from './field-selector.ts';
import { selectorMatches, type Selector } from '../api/label-selector.ts';

export type WatchEventType = EventType | 'BOOKMARK' | 'ERROR';

export interface WatchFilter {
  namespace: string | undefined;
  labels: Selector;
  fields: readonly FieldRequirement[];
  fieldGetter: FieldGetter;
}

export function matchesFilter(f: WatchFilter, obj: Obj): boolean {
  if (f.namespace && namespaceOf(obj) !== f.namespace) return false;
  if (!selectorMatches(f.labels, metaOf(obj).labels as Record<string, string> | undefined)) return false;
  if (f.fields.length && !matchesFields(f.fields, obj, f.fieldGetter)) return false;
  return true;
}

/** The object as served under `apiVersion` (custom resources are stored in one version, served in all). */
export function asVersion(obj: Obj, apiVersion: string | undefined): Obj {
  return apiVersion === undefined || obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

const lineCache = new WeakMap<Obj, Map<string, string>>();

/** `{"type":T,"object":O}\n`, cached per object, type and apiVersion. */
export function eventLine(type: WatchEventType, obj: Obj, apiVersion: string | undefined): string {
  let m = lineCache.get(obj);
  if (!m) {
    m = new Map();
    lineCache.set(obj, m);
  }
  const k = `${type}|${apiVersion ?? ''}`;
  let s = m.get(k);
  if (s === undefined) {
    s = `{"type":"${type}","object":${jsonOf(asVersion(obj, apiVersion))}}\n`;
    m.set(k, s);
  }
  return s;
}

/** What a watcher receives for one store event after its filter: the type to send, or nothing. */
export function watchDecision(f: WatchFilter, e: StoreEvent): EventType | undefined {
  const now = matchesFilter(f, e.obj);
  if (e.type !== 'MODIFIED') return now ? e.type : undefined;
  const before = e.prev ? matchesFilter(f, e.prev) : false;
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  if (before) return 'DELETED';
  return undefined;
}

export interface Watcher {
  readonly resource: string;
  readonly filter: WatchFilter;
  /** Called with each event the watcher should see and the type to send it as. */
  send(type: EventType, e: StoreEvent): void;
}

/** Routes store events to the watchers of their resource. */
export class WatchHub {
  private readonly byResource = new Map<string, Set<Watcher>>();

  dispatch(e: StoreEvent): void {
    const set = this.byResource.get(e.resource);
    if (!set) return;
    for (const w of set) {
      const t = watchDecision(w.filter, e);
      if (t) w.send(t, e);
    }
  }

  add(w: Watcher): () => void {
    let set = this.byResource.get(w.resource);
    if (!set) {
      set = new Set();
      this.byResource.set(w.resource, set);
    }
    set.add(w);
    return () => {
      set.delete(w);
    };
  }

  get size(): number {
    let n = 0;
    for (const s of this.byResource.values()) n += s.size;
    return n;
  }
}

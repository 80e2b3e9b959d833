// The garbage collector: ownerReferences, as kube-controller-manager's GC applies them.
//   - a dependent whose owners are all gone is deleted (background);
//     one with some owners left loses the references to the missing ones;
//   - an owner deleted with propagationPolicy=Foreground carries the `foregroundDeletion`
//     finalizer: its dependents are deleted, and the finalizer is removed (so the owner goes)
//     once no dependent with `blockOwnerDeletion: true` remains;
//   - an owner deleted with propagationPolicy=Orphan carries the `orphan` finalizer: its
//     dependents lose their reference to it, then the finalizer is removed.
// It reacts to store events and does its work on the next turn of the event loop, after the
// request that caused it has been answered, as an asynchronous controller would.
import type { Logger } from 'pino';
import { ApiError } from './errors.ts';
import { Finalizers, type Rest } from './rest.ts';
import type { ResourceDef } from './resources.ts';
import { metaOf, nameOf, namespaceOf, uidOf, type Obj, type StoreEvent } from './store.ts';

interface OwnerRef { uid: string; blockOwnerDeletion?: boolean }

const ownerRefs = (o: Obj): OwnerRef[] => {
  const refs = metaOf(o).ownerReferences;
  return Array.isArray(refs) ? refs.filter((r): r is OwnerRef => typeof r === 'object' && r !== null && typeof (r as OwnerRef).uid === 'string') : [];
};

type Task = { k: 'owner-gone'; uid: string } | { k: 'dependent'; resource: string; ns: string; name: string } | { k: 'owner-deleting'; uid: string };

export class GarbageCollector {
  private readonly rest: Rest;
  private readonly log: Logger;
  /** owner uid → dependents as `resource\nnamespace\nname` */
  private readonly dependents = new Map<string, Set<string>>();
  private queue: Task[] = [];
  private scheduled = false;
  private readonly unsubscribe: () => void;
  private idleWaiters: (() => void)[] = [];

  constructor(rest: Rest, log: Logger) {
    this.rest = rest;
    this.log = log;
    for (const resource of rest.store.resources()) for (const o of rest.store.list(resource)) this.index(resource, o, undefined);
    this.unsubscribe = rest.store.subscribe((e) => this.onEvent(e));
    // Objects that were waiting on the GC when the server stopped.
    for (const resource of rest.store.resources()) for (const o of rest.store.list(resource)) {
      const m = metaOf(o);
      if (m.deletionTimestamp && Array.isArray(m.finalizers) && (m.finalizers.includes(Finalizers.orphan) || m.finalizers.includes(Finalizers.foregroundDeletion)))
        this.push({ k: 'owner-deleting', uid: uidOf(o) });
      if (ownerRefs(o).length) this.push({ k: 'dependent', resource, ns: namespaceOf(o), name: nameOf(o) });
    }
  }

  stop(): void {
    this.unsubscribe();
    this.queue = [];
  }

  isIdle(): boolean {
    return !this.scheduled && this.queue.length === 0;
  }

  /** Resolves when the collector has nothing queued (tests and orderly shutdown). */
  idle(): Promise<void> {
    if (!this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private depKey(resource: string, o: Obj): string {
    return `${resource}\n${namespaceOf(o)}\n${nameOf(o)}`;
  }

  private index(resource: string, o: Obj | undefined, prev: Obj | undefined): void {
    if (prev) for (const r of ownerRefs(prev)) this.dependents.get(r.uid)?.delete(this.depKey(resource, prev));
    if (o) for (const r of ownerRefs(o)) {
      let s = this.dependents.get(r.uid);
      if (!s) this.dependents.set(r.uid, (s = new Set()));
      s.add(this.depKey(resource, o));
    }
  }

  private onEvent(e: StoreEvent): void {
    if (e.type === 'DELETED') {
      this.index(e.resource, undefined, e.prev);
      const uid = uidOf(e.obj);
      if (this.dependents.get(uid)?.size) this.push({ k: 'owner-gone', uid });
      for (const r of ownerRefs(e.obj)) this.push({ k: 'owner-deleting', uid: r.uid });
      return;
    }
    this.index(e.resource, e.obj, e.prev);
    const m = metaOf(e.obj);
    const fins = Array.isArray(m.finalizers) ? (m.finalizers as string[]) : [];
    if (m.deletionTimestamp && (fins.includes(Finalizers.orphan) || fins.includes(Finalizers.foregroundDeletion))) this.push({ k: 'owner-deleting', uid: uidOf(e.obj) });
    const refs = ownerRefs(e.obj);
    if (refs.length && (e.type === 'ADDED' || JSON.stringify(refs) !== JSON.stringify(e.prev ? ownerRefs(e.prev) : [])))
      this.push({ k: 'dependent', resource: e.resource, ns: namespaceOf(e.obj), name: nameOf(e.obj) });
    // A dependent that starts being deleted may unblock a foreground owner only when it is gone.
  }

  private push(t: Task): void {
    this.queue.push(t);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    let n = 0;
    while (this.queue.length && n < 1000) {
      const t = this.queue.shift()!;
      n++;
      try {
        this.run(t);
      } catch (e) {
        if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) this.log.error({ err: e, task: t }, 'garbage collector task failed');
      }
    }
    if (this.queue.length) {
      setImmediate(() => this.drain());
      return;
    }
    this.scheduled = false;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  private def(resource: string): ResourceDef | undefined {
    const i = resource.indexOf('/');
    return this.rest.registry.get(resource.slice(0, i), resource.slice(i + 1));
  }

  private dependentsOf(uid: string): { def: ResourceDef; obj: Obj }[] {
    const out: { def: ResourceDef; obj: Obj }[] = [];
    for (const key of this.dependents.get(uid) ?? []) {
      const [resource, ns, name] = key.split('\n') as [string, string, string];
      const def = this.def(resource);
      const obj = this.rest.store.get(resource, ns, name);
      if (def && obj) out.push({ def, obj });
    }
    return out;
  }

  private run(t: Task): void {
    switch (t.k) {
      case 'owner-gone':
        for (const d of this.dependentsOf(t.uid)) this.checkDependent(d.def, d.obj);
        return;
      case 'dependent': {
        const def = this.def(t.resource);
        const obj = this.rest.store.get(t.resource, t.ns, t.name);
        if (def && obj) this.checkDependent(def, obj);
        return;
      }
      case 'owner-deleting': {
        const found = this.rest.store.byUid(t.uid);
        if (!found) return;
        const def = this.def(found.resource);
        if (def) this.processDeletingOwner(def, found.obj);
        return;
      }
    }
  }

  /** Deletes a dependent whose owners are all gone; drops references to missing owners otherwise. */
  private checkDependent(def: ResourceDef, obj: Obj): void {
    const refs = ownerRefs(obj);
    if (!refs.length) return;
    const missing = refs.filter((r) => !this.rest.store.byUid(r.uid));
    if (!missing.length) return;
    if (missing.length === refs.length) {
      if (metaOf(obj).deletionTimestamp) return;
      this.log.debug({ resource: def.plural, namespace: namespaceOf(obj), name: nameOf(obj) }, 'deleting dependent whose owners are gone');
      this.rest.delete(def, namespaceOf(obj), nameOf(obj), { propagationPolicy: 'Background' });
      return;
    }
    const gone = new Set(missing.map((r) => r.uid));
    this.rest.mutate(def, namespaceOf(obj), nameOf(obj), (o) => {
      const m = o.metadata as Record<string, unknown>;
      m.ownerReferences = ownerRefs(o).filter((r) => !gone.has(r.uid));
      return true;
    });
  }

  private processDeletingOwner(def: ResourceDef, owner: Obj): void {
    const m = metaOf(owner);
    if (!m.deletionTimestamp) return;
    const fins = Array.isArray(m.finalizers) ? (m.finalizers as string[]) : [];
    const uid = uidOf(owner);
    if (fins.includes(Finalizers.orphan)) {
      for (const d of this.dependentsOf(uid)) {
        this.rest.mutate(d.def, namespaceOf(d.obj), nameOf(d.obj), (o) => {
          const dm = o.metadata as Record<string, unknown>;
          const kept = ownerRefs(o).filter((r) => r.uid !== uid);
          if (kept.length) dm.ownerReferences = kept;
          else delete dm.ownerReferences;
          return true;
        });
      }
      this.removeFinalizer(def, owner, Finalizers.orphan);
      return;
    }
    if (fins.includes(Finalizers.foregroundDeletion)) {
      const deps = this.dependentsOf(uid);
      for (const d of deps) {
        // As kube-controller-manager: in the foreground only a dependent that has dependents itself.
        const policy = this.dependents.get(uidOf(d.obj))?.size ? 'Foreground' : 'Background';
        if (!metaOf(d.obj).deletionTimestamp) this.rest.delete(d.def, namespaceOf(d.obj), nameOf(d.obj), { propagationPolicy: policy });
      }
      const blocking = this.dependentsOf(uid).filter((d) => ownerRefs(d.obj).some((r) => r.uid === uid && r.blockOwnerDeletion === true));
      if (blocking.length === 0) this.removeFinalizer(def, owner, Finalizers.foregroundDeletion);
    }
  }

  private removeFinalizer(def: ResourceDef, obj: Obj, finalizer: string): void {
    this.rest.mutate(def, namespaceOf(obj), nameOf(obj), (o) => {
      const m = o.metadata as Record<string, unknown>;
      const fins = Array.isArray(m.finalizers) ? (m.finalizers as string[]) : [];
      if (!fins.includes(finalizer)) return false;
      m.finalizers = fins.filter((f) => f !== finalizer);
      return true;
    });
  }
}

// Two lifecycles kube-apiserver and kube-controller-manager run besides the garbage collector:
//   - namespaces: deleting one marks it Terminating; everything in it is deleted; once empty its
//     `kubernetes` spec finalizer is dropped and it goes. No new objects may be created in it meanwhile.
//   - CustomResourceDefinitions: creating or updating one (re)registers the resource it defines
//     (served at once, status Established); deleting one deletes all its objects, then unregisters
//     the resource and removes the CRD.
import type { Logger } from 'pino';
import { resourceFromCrd, crdStatus } from './crd.ts';
import { ApiError, invalid } from './errors.ts';
import { now, type Rest } from './rest.ts';
import { resourceKey, type ResourceDef } from './resources.ts';
import { metaOf, nameOf, namespaceOf, type Obj, type StoreEvent } from './store.ts';

export const NAMESPACES = '/namespaces';
export const CRDS = 'apiextensions.k8s.io/customresourcedefinitions';

export class Lifecycle {
  private readonly rest: Rest;
  private readonly log: Logger;
  private readonly pending = new Set<string>();
  private scheduled = false;
  private readonly unsubscribe: () => void;
  private idleWaiters: (() => void)[] = [];

  constructor(rest: Rest, log: Logger) {
    this.rest = rest;
    this.log = log;
    rest.hooks = {
      beforeWrite: (r, obj, prev) => {
        if (r.group === 'apiextensions.k8s.io' && r.plural === 'customresourcedefinitions') this.checkCrd(obj, prev);
      },
      afterWrite: (r, obj, type) => {
        if (r.group === 'apiextensions.k8s.io' && r.plural === 'customresourcedefinitions' && type !== 'DELETED') this.register(obj);
      },
    };
    // Serve the resources of the CRDs already stored (restart).
    for (const crd of rest.store.list(CRDS)) this.register(crd);
    this.unsubscribe = rest.store.subscribe((e) => this.onEvent(e));
    for (const ns of rest.store.list(NAMESPACES)) if (metaOf(ns).deletionTimestamp) this.push(`ns\n${nameOf(ns)}`);
    for (const crd of rest.store.list(CRDS)) if (metaOf(crd).deletionTimestamp) this.push(`crd\n${nameOf(crd)}`);
  }

  stop(): void {
    this.unsubscribe();
    this.pending.clear();
  }

  isIdle(): boolean {
    return !this.scheduled && this.pending.size === 0;
  }

  idle(): Promise<void> {
    if (!this.scheduled) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private checkCrd(obj: Record<string, unknown>, prev: Obj | undefined): void {
    const { def, errors } = resourceFromCrd(obj);
    const name = String(metaOf(obj).name ?? '');
    if (!def) throw invalid('CustomResourceDefinition', 'apiextensions.k8s.io', name, errors);
    if (prev) {
      const ps = (prev.spec ?? {}) as Obj;
      const ns = (obj.spec ?? {}) as Obj;
      if (ps.group !== ns.group || ((ps.names ?? {}) as Obj).plural !== ((ns.names ?? {}) as Obj).plural)
        throw invalid('CustomResourceDefinition', 'apiextensions.k8s.io', name, [{ type: 'FieldValueInvalid', field: 'spec.group', value: ns.group, detail: 'field is immutable' }]);
    } else {
      const existing = this.rest.registry.get(def.group, def.plural);
      if (existing?.builtin) throw new ApiError(409, 'Conflict', `the resource ${def.plural}.${def.group} is already served by the API server`);
    }
    obj.status = crdStatus(obj, now());
  }

  private register(crd: Obj): void {
    if (metaOf(crd).deletionTimestamp) return;
    const { def, errors } = resourceFromCrd(crd);
    if (!def) {
      this.log.error({ crd: nameOf(crd), errors }, 'stored CustomResourceDefinition no longer valid; its resource is not served');
      return;
    }
    this.rest.registry.add(def);
  }

  private onEvent(e: StoreEvent): void {
    if (e.resource === NAMESPACES) {
      if (e.type === 'MODIFIED' && metaOf(e.obj).deletionTimestamp) this.push(`ns\n${nameOf(e.obj)}`);
      return;
    }
    if (e.resource === CRDS) {
      if (e.type === 'MODIFIED' && metaOf(e.obj).deletionTimestamp) this.push(`crd\n${nameOf(e.obj)}`);
      return;
    }
    if (e.type === 'DELETED') {
      const ns = namespaceOf(e.obj);
      if (ns) {
        const nsObj = this.rest.store.get(NAMESPACES, '', ns);
        if (nsObj && metaOf(nsObj).deletionTimestamp) this.push(`ns\n${ns}`);
      }
      const slash = e.resource.indexOf('/');
      const group = e.resource.slice(0, slash);
      if (group) {
        const crdName = `${e.resource.slice(slash + 1)}.${group}`;
        const crd = this.rest.store.get(CRDS, '', crdName);
        if (crd && metaOf(crd).deletionTimestamp) this.push(`crd\n${crdName}`);
      }
    }
  }

  private push(task: string): void {
    this.pending.add(task);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    const tasks = [...this.pending];
    this.pending.clear();
    for (const t of tasks) {
      const [kind, name] = t.split('\n') as [string, string];
      try {
        if (kind === 'ns') this.finalizeNamespace(name);
        else this.finalizeCrd(name);
      } catch (e) {
        if (!(e instanceof ApiError && (e.code === 404 || e.code === 409))) this.log.error({ err: e, task: t }, 'lifecycle task failed');
      }
    }
    if (this.pending.size) {
      setImmediate(() => this.drain());
      return;
    }
    this.scheduled = false;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }

  private deleteAll(def: ResourceDef, ns: string | undefined): number {
    let remaining = 0;
    for (const o of this.rest.store.list(resourceKey(def.group, def.plural), ns)) {
      remaining++;
      if (!metaOf(o).deletionTimestamp) {
        const { deleted } = this.rest.delete(def, namespaceOf(o), nameOf(o), { propagationPolicy: 'Background' });
        if (deleted) remaining--;
      }
    }
    return remaining;
  }

  private finalizeNamespace(name: string): void {
    const nsDef = this.rest.registry.get('', 'namespaces')!;
    const nsObj = this.rest.store.get(NAMESPACES, '', name);
    if (!nsObj || !metaOf(nsObj).deletionTimestamp) return;
    let remaining = 0;
    for (const def of this.rest.registry.all()) if (def.namespaced) remaining += this.deleteAll(def, name);
    if (remaining > 0) return;
    this.rest.mutate(nsDef, '', name, (o) => {
      const spec = (o.spec ?? {}) as Record<string, unknown>;
      if (!Array.isArray(spec.finalizers) || spec.finalizers.length === 0) return false;
      o.spec = { ...spec, finalizers: [] };
      return true;
    });
  }

  private finalizeCrd(name: string): void {
    const crdDef = this.rest.registry.get('apiextensions.k8s.io', 'customresourcedefinitions')!;
    const crd = this.rest.store.get(CRDS, '', name);
    if (!crd || !metaOf(crd).deletionTimestamp) return;
    const spec = (crd.spec ?? {}) as Obj;
    const plural = String(((spec.names ?? {}) as Obj).plural ?? '');
    const group = String(spec.group ?? '');
    const def = this.rest.registry.get(group, plural);
    if (def && !def.builtin && this.deleteAll(def, undefined) > 0) return;
    if (Array.isArray(metaOf(crd).finalizers) && (metaOf(crd).finalizers as string[]).length > 0) return;
    this.rest.registry.remove(group, plural);
    this.rest.finalizeRemove(crdDef, crd);
  }
}

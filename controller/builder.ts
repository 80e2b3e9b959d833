// One builder wires every controller, as controller-runtime's does: informers' add/update/delete
// events become keys in the controller's rate-limited queue, with the creations and deletions it
// waits for observed in its expectations on the way, and the reconciler syncs one key at a time.
//
//   controllerFor('vmi', { queue: { name: 'virt-controller-vmi' }, workers: 8 })
//     .withExpectations(r.expectations)
//     .watches(informers.vmis)                                   // the primary: its own key
//     .owns(informers.pods, Kinds.VirtualMachineInstance, { deletions: 'on-mark-and-delete' })
//     .watchesMapped(informers.vms, (vm) => ..., { events: ['delete'] })
//     .complete(r);                                              // a Controller for the manager
import { Expectations } from '../src/kube/expectations.ts';
import { keyOf, type Informer } from '../src/kube/informer.ts';
import type { KubeObject } from '../src/kube/client.ts';
import { WorkQueue, type RateLimiterOptions, type ReconcileResult } from '../src/kube/workqueue.ts';
import { ownerKey, type Controller } from './shell.ts';

/** What the builder needs of an informer: its events. */
export type EventSource<T extends KubeObject> = Pick<Informer<T>, 'on'>;

export type InformerEvent = 'add' | 'update' | 'delete';

/** The keys an object maps to: none, one, or several. */
export type KeyMap<T> = (obj: T) => string | undefined | Iterable<string>;

/** The idempotent sync of one key (controller-runtime's Reconciler). */
export interface Reconciler {
  sync(key: string): Promise<ReconcileResult | void>;
}

export interface MapOptions<T> {
  /** Which events enqueue (default all three). */
  readonly events?: readonly InformerEvent[];
  /** An update maps the old object's keys too (an owner or node that changed gets its key). */
  readonly includeOld?: boolean;
  /** An update enqueues only when this holds. */
  readonly when?: (oldObj: T, newObj: T) => boolean;
}

/**
 * When a child's deletion counts as observed for its owner's expectations:
 * - `on-delete`: when it is gone;
 * - `on-mark-and-delete`: when it is marked for graceful deletion and again when gone (client-go's
 *   ReplicaSet controller: a marked pod counts as deleted at once);
 * - `once`: when it is marked, or when it is gone if it never was;
 * - `none`: the controller expects no deletions of this kind.
 */
export type DeletionObservation = 'on-delete' | 'on-mark-and-delete' | 'once' | 'none';

export interface OwnsOptions<T> extends MapOptions<T> {
  /** Default `on-delete`. */
  readonly deletions?: DeletionObservation;
}

export interface BuilderOptions {
  readonly queue?: RateLimiterOptions;
  readonly workers: number;
}

const ALL: readonly InformerEvent[] = ['add', 'update', 'delete'];

function keysOf<T>(map: KeyMap<T>, obj: T): string[] {
  const k = map(obj);
  if (k === undefined) return [];
  if (typeof k === 'string') return [k];
  return [...k];
}

/** The keys an update queues: the new object's, and the old one's too with `includeOld`. */
function updateKeys<T>(map: KeyMap<T>, opts: MapOptions<T>, old: T, cur: T): Iterable<string> {
  return opts.includeOld ? new Set([...keysOf(map, old), ...keysOf(map, cur)]) : keysOf(map, cur);
}

const marked = (o: KubeObject) => o.metadata?.deletionTimestamp != null;

export class ControllerBuilder {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly workers: number;
  private expectations?: Expectations;

  constructor(name: string, o: BuilderOptions) {
    this.name = name;
    this.queue = new WorkQueue<string>(o.queue);
    this.workers = o.workers;
  }

  /** The expectations `owns` observes and a deleted primary clears (created here when not given). */
  withExpectations(expectations: Expectations = new Expectations()): this {
    this.expectations = expectations;
    return this;
  }

  /** The primary resource: every event queues the object's own key; its deletion clears its expectations. */
  watches<T extends KubeObject>(informer: EventSource<T>): this {
    informer.on('add', (o) => this.queue.add(keyOf(o)));
    informer.on('update', (_old, o) => this.queue.add(keyOf(o)));
    informer.on('delete', (o) => {
      this.expectations?.delete(keyOf(o));
      this.queue.add(keyOf(o));
    });
    return this;
  }

  /**
   * Children the controller creates and deletes: each event queues the owner's key (the controller
   * owner of `owner`'s kind, or what `owner` maps the child to), and an added child counts as an
   * observed creation, a deleted one as an observed deletion (`deletions`).
   */
  owns<T extends KubeObject>(informer: EventSource<T>, owner: string | KeyMap<T>, opts: OwnsOptions<T> = {}): this {
    const map: KeyMap<T> = typeof owner === 'string' ? (o) => ownerKey(o, owner) : owner;
    const deletions = opts.deletions ?? 'on-delete';
    const events = opts.events ?? ALL;
    const e = () => this.expectations;
    if (events.includes('add')) {
      informer.on('add', (o) => {
        for (const k of keysOf(map, o)) { e()?.creationObserved(k); this.queue.add(k); }
      });
    }
    if (events.includes('update')) {
      informer.on('update', (old, o) => {
        if (opts.when && !opts.when(old, o)) return;
        const markedNow = !marked(old) && marked(o) && (deletions === 'on-mark-and-delete' || deletions === 'once');
        for (const k of updateKeys(map, opts, old, o)) { if (markedNow) e()?.deletionObserved(k); this.queue.add(k); }
      });
    }
    if (events.includes('delete')) {
      informer.on('delete', (o) => {
        const observe = deletions === 'on-delete' || deletions === 'on-mark-and-delete' || (deletions === 'once' && !marked(o));
        for (const k of keysOf(map, o)) { if (observe) e()?.deletionObserved(k); this.queue.add(k); }
      });
    }
    return this;
  }

  /** Another resource whose changes concern the controller's objects: each event queues the keys `map` gives. */
  watchesMapped<T extends KubeObject>(informer: EventSource<T>, map: KeyMap<T>, opts: MapOptions<T> = {}): this {
    const events = opts.events ?? ALL;
    if (events.includes('add')) informer.on('add', (o) => { for (const k of keysOf(map, o)) this.queue.add(k); });
    if (events.includes('update')) {
      informer.on('update', (old, o) => {
        if (opts.when && !opts.when(old, o)) return;
        for (const k of updateKeys(map, opts, old, o)) this.queue.add(k);
      });
    }
    if (events.includes('delete')) informer.on('delete', (o) => { for (const k of keysOf(map, o)) this.queue.add(k); });
    return this;
  }

  /** The controller: this builder's queue and expectations, `workers` loops syncing keys through `reconciler`. */
  complete(reconciler: Reconciler): Controller {
    const { name, queue, workers, expectations } = this;
    return { name, queue, workers, ...(expectations ? { expectations } : {}), sync: (key) => reconciler.sync(key) };
  }
}

export function controllerFor(name: string, o: BuilderOptions): ControllerBuilder {
  return new ControllerBuilder(name, o);
}

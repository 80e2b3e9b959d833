// Object storage: every object of every resource in memory, keyed by resource and namespace/name,
// with one global, monotonically increasing resourceVersion (as etcd's revision), a bounded history
// of change events for watches and consistent paging, and optional persistence in SQLite
// (`node:sqlite`, WAL) under a data directory so a restart loses nothing and resourceVersions
// continue where they stopped. The database holds every object — Secrets, cloud-init user data,
// service-account tokens — so its directory is the owner's alone (0700) and its files (the database,
// its -wal and -shm) 0600, also in a data directory an older version made readable to all.
//
// SQLite's checkpoints (the WAL copied into the database, each synced to disk) run in a worker thread,
// never in a write on the event loop: one took 0.76 s there when the disk was busy, with twenty VMs
// starting (the density bench), every request of the local mode waiting behind it.
//
// Stored objects are never mutated: a write replaces the object, so an event, a history entry and
// a list can share it, and its JSON text is computed once (`jsonOf`) however many watchers see it.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';

export type Obj = Record<string, unknown>;

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: EventType;
  /** `group/plural` */
  readonly resource: string;
  readonly rv: number;
  /** The object after the change (for DELETED: its last state, carrying the deletion's resourceVersion). */
  readonly obj: Obj;
  /** The object before the change (MODIFIED, DELETED). */
  readonly prev: Obj | undefined;
}

const jsonCache = new WeakMap<Obj, string>();

/** The JSON text of a stored (immutable) object, computed once. */
export function jsonOf(obj: Obj): string {
  let s = jsonCache.get(obj);
  if (s === undefined) {
    s = JSON.stringify(obj);
    jsonCache.set(obj, s);
  }
  return s;
}

export const metaOf = (obj: Obj): Obj => (obj.metadata ?? {}) as Obj;
export const nameOf = (obj: Obj): string => String(metaOf(obj).name ?? '');
export const namespaceOf = (obj: Obj): string => String(metaOf(obj).namespace ?? '');
export const uidOf = (obj: Obj): string => String(metaOf(obj).uid ?? '');
export const objectKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The database file under a store's data directory; SQLite keeps `-wal` and `-shm` beside it. */
export const STORE_DB_FILE = 'objects.db';
/** The store's directory and files: readable by their owner only. */
export const STORE_DIR_MODE = 0o700;
export const STORE_FILE_MODE = 0o600;

/**
 * Makes `dataDir` the owner's alone, with the database and SQLite's companion files 0600 before
 * SQLite opens them: a new database file is created 0600 (SQLite's own default is 0644, and its
 * -wal and -shm take the database file's mode), an existing one is narrowed.
 */
function secureStoreFiles(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true, mode: STORE_DIR_MODE });
  chmodSync(dataDir, STORE_DIR_MODE);
  const db = join(dataDir, STORE_DB_FILE);
  if (!existsSync(db)) closeSync(openSync(db, 'a', STORE_FILE_MODE));
  for (const f of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]) {
    try { chmodSync(f, STORE_FILE_MODE); } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; }
  }
  return db;
}

/** How often the checkpointer copies the WAL into the database (ms). */
const CHECKPOINT_INTERVAL_MS = 1000;

/**
 * The checkpointer: a worker thread with its own connection, checkpointing PASSIVE (what no reader
 * holds, never waiting for the writer) every interval; the store's connection never checkpoints.
 * Source text, not a module file: the API server also runs from a single-file bundle.
 */
const CHECKPOINTER = `
const { DatabaseSync } = require('node:sqlite');
const { workerData, parentPort } = require('node:worker_threads');
const closed = new Int32Array(workerData.closed);
const done = () => { Atomics.store(closed, 0, 1); Atomics.notify(closed, 0); };
let db;
try { db = new DatabaseSync(workerData.path); } catch { db = undefined; }
if (db) {
  const timer = setInterval(() => { try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); } catch {} }, workerData.intervalMs);
  parentPort.once('message', () => { clearInterval(timer); try { db.close(); } finally { done(); parentPort.close(); } });
} else {
  done();
  parentPort.close();
}
`;

/** How long `close()` waits for the checkpointer's connection to close (ms); it is normally a few. */
const CHECKPOINTER_CLOSE_WAIT_MS = 5000;

export interface StoreOptions {
  dataDir?: string | undefined;
  /** How many events the history keeps for watch resumption and paging (default 20 000). */
  historySize?: number;
}

export class Store {
  private rv = 0;
  private readonly tables = new Map<string, Map<string, Obj>>();
  private readonly uids = new Map<string, { resource: string; key: string }>();
  private readonly history: StoreEvent[] = [];
  private historyStart = 0;
  /** Oldest resourceVersion from which the history can replay (exclusive start of a watch). */
  private compactedRv = 0;
  private readonly historySize: number;
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly db: DatabaseSync | undefined;
  private readonly put: StatementSync | undefined;
  private readonly del: StatementSync | undefined;
  private readonly setRv: StatementSync | undefined;
  private readonly checkpointer: Worker | undefined;
  /** Set to 1 by the checkpointer once its connection is closed. */
  private readonly checkpointerClosed = new Int32Array(new SharedArrayBuffer(4));
  /** `resource\nkey` → JSON to write, or null to delete; flushed once per event-loop turn. */
  private readonly pending = new Map<string, string | null>();
  private flushScheduled = false;

  constructor(opts: StoreOptions = {}) {
    this.historySize = opts.historySize ?? 20_000;
    if (opts.dataDir) {
      const path = secureStoreFiles(opts.dataDir);
      const db = new DatabaseSync(path);
      // The checkpointer is a second connection: while it checkpoints (or, when a store closed, its last
      // connection checkpoints and removes the WAL) the database is briefly locked — wait for it rather
      // than fail (a store reopened at once on the same directory failed with "database is locked").
      db.exec('PRAGMA busy_timeout=10000');
      db.exec(`PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0;
        CREATE TABLE IF NOT EXISTS objects (resource TEXT NOT NULL, key TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (resource, key));
        CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);`);
      this.db = db;
      this.put = db.prepare('INSERT OR REPLACE INTO objects (resource, key, json) VALUES (?, ?, ?)');
      this.del = db.prepare('DELETE FROM objects WHERE resource = ? AND key = ?');
      this.setRv = db.prepare("INSERT OR REPLACE INTO meta (k, v) VALUES ('resourceVersion', ?)");
      const row = db.prepare("SELECT v FROM meta WHERE k = 'resourceVersion'").get() as { v: string } | undefined;
      this.rv = row ? Number(row.v) : 0;
      for (const r of db.prepare('SELECT resource, key, json FROM objects').all() as { resource: string; key: string; json: string }[]) {
        const obj = JSON.parse(r.json) as Obj;
        this.table(r.resource).set(r.key, obj);
        const uid = uidOf(obj);
        if (uid) this.uids.set(uid, { resource: r.resource, key: r.key });
      }
      this.compactedRv = this.rv;
      this.checkpointer = new Worker(CHECKPOINTER, { eval: true, workerData: { path, intervalMs: CHECKPOINT_INTERVAL_MS, closed: this.checkpointerClosed.buffer } });
      this.checkpointer.unref();
      // Best effort: a database it cannot open (a store closed at once and removed) leaves the WAL to the next open.
      this.checkpointer.on('error', () => undefined);
    }
  }

  /**
   * Writes what is still buffered and closes the database (its last connection checkpoints what is left
   * and removes the WAL). Returns once the checkpointer's connection is closed too, so nothing touches the
   * directory afterwards (removing it raced the checkpointer's last writes: ENOTEMPTY).
   */
  close(): void {
    this.flush();
    if (this.checkpointer) {
      this.checkpointer.postMessage('stop');
      Atomics.wait(this.checkpointerClosed, 0, 0, CHECKPOINTER_CLOSE_WAIT_MS);
    }
    this.db?.close();
  }

  /**
   * Persists buffered writes in one transaction. Writes are buffered for at most one turn of the
   * event loop (a burst of requests shares one SQLite transaction); `close()` flushes, so an
   * orderly stop loses nothing, and a crash loses at most the writes of the last turn.
   */
  flush(): void {
    if (!this.db || this.pending.size === 0) return;
    this.db.exec('BEGIN');
    try {
      for (const [k, json] of this.pending) {
        const i = k.indexOf('\n');
        if (json === null) this.del!.run(k.slice(0, i), k.slice(i + 1));
        else this.put!.run(k.slice(0, i), k.slice(i + 1), json);
      }
      this.setRv!.run(String(this.rv));
      this.db.exec('COMMIT');
    } catch (e) {
      this.db.exec('ROLLBACK');
      throw e;
    }
    this.pending.clear();
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** The oldest resourceVersion a watch or continue token may start from. */
  get oldestResourceVersion(): number {
    return this.compactedRv;
  }

  private table(resource: string): Map<string, Obj> {
    let t = this.tables.get(resource);
    if (!t) {
      t = new Map();
      this.tables.set(resource, t);
    }
    return t;
  }

  get(resource: string, namespace: string, name: string): Obj | undefined {
    return this.tables.get(resource)?.get(objectKey(namespace, name));
  }

  /** Where the object with this uid lives, if it exists. */
  byUid(uid: string): { resource: string; obj: Obj } | undefined {
    const at = this.uids.get(uid);
    if (!at) return undefined;
    const obj = this.tables.get(at.resource)?.get(at.key);
    return obj ? { resource: at.resource, obj } : undefined;
  }

  /** Objects of a resource (in one namespace when given), sorted by namespace/name. */
  list(resource: string, namespace?: string): Obj[] {
    const t = this.tables.get(resource);
    if (!t) return [];
    const out: [string, Obj][] = [];
    for (const [k, o] of t) if (namespace === undefined || namespace === '' || k.startsWith(`${namespace}/`)) out.push([k, o]);
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return out.map((x) => x[1]);
  }

  /** Every resource key with at least one object (for namespace cleanup and GC scans). */
  resources(): string[] {
    return [...this.tables.keys()];
  }

  /** Allocates the next resourceVersion; the caller writes it into the object it then stores. */
  nextResourceVersion(): number {
    return this.rv + 1;
  }

  private commit(type: EventType, resource: string, obj: Obj, prev: Obj | undefined): StoreEvent {
    const rv = Number(metaOf(obj).resourceVersion);
    if (!(rv > this.rv)) throw new Error(`store: resourceVersion ${rv} of ${resource} ${nameOf(obj)} is not newer than ${this.rv}`);
    this.rv = rv;
    const key = objectKey(namespaceOf(obj), nameOf(obj));
    if (this.db) {
      this.pending.set(`${resource}\n${key}`, type === 'DELETED' ? null : jsonOf(obj));
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          this.flush();
        });
      }
    }
    const ev: StoreEvent = { type, resource, rv, obj, prev };
    this.history.push(ev);
    if (this.history.length - this.historyStart > this.historySize) {
      this.compactedRv = this.history[this.historyStart]!.rv;
      this.historyStart++;
      if (this.historyStart > 4096) {
        this.history.splice(0, this.historyStart);
        this.historyStart = 0;
      }
    }
    for (const l of this.listeners) l(ev);
    return ev;
  }

  /** Stores a new object (its metadata.resourceVersion must be `nextResourceVersion()`). */
  create(resource: string, obj: Obj): StoreEvent {
    const key = objectKey(namespaceOf(obj), nameOf(obj));
    const t = this.table(resource);
    if (t.has(key)) throw new Error(`store: ${resource} ${key} already exists`);
    t.set(key, obj);
    const uid = uidOf(obj);
    if (uid) this.uids.set(uid, { resource, key });
    return this.commit('ADDED', resource, obj, undefined);
  }

  update(resource: string, obj: Obj): StoreEvent {
    const key = objectKey(namespaceOf(obj), nameOf(obj));
    const t = this.table(resource);
    const prev = t.get(key);
    if (!prev) throw new Error(`store: ${resource} ${key} does not exist`);
    t.set(key, obj);
    return this.commit('MODIFIED', resource, obj, prev);
  }

  /** Removes an object; `last` is its final state, carrying the deletion's resourceVersion. */
  remove(resource: string, last: Obj): StoreEvent {
    const key = objectKey(namespaceOf(last), nameOf(last));
    const t = this.table(resource);
    const prev = t.get(key);
    if (!prev) throw new Error(`store: ${resource} ${key} does not exist`);
    t.delete(key);
    this.uids.delete(uidOf(prev));
    return this.commit('DELETED', resource, last, prev);
  }

  subscribe(l: (e: StoreEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /**
   * Events of a resource after `rv`, oldest first; undefined when the history no longer reaches back
   * that far (the caller answers 410 Gone / Expired).
   */
  eventsSince(resource: string, rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedRv) return undefined;
    const out: StoreEvent[] = [];
    // Binary search for the first event with rv > given.
    let lo = this.historyStart;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.history[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.history.length; i++) {
      const e = this.history[i]!;
      if (e.resource === resource) out.push(e);
    }
    return out;
  }

  /**
   * The objects of a resource as they were at resourceVersion `rv` (current state with later events
   * undone), sorted by key; undefined when the history no longer reaches back that far.
   */
  listAt(resource: string, rv: number, namespace?: string): Obj[] | undefined {
    const later = this.eventsSince(resource, rv);
    if (!later) return undefined;
    if (later.length === 0) return this.list(resource, namespace);
    const state = new Map<string, Obj>();
    for (const o of this.list(resource, namespace)) state.set(objectKey(namespaceOf(o), nameOf(o)), o);
    for (let i = later.length - 1; i >= 0; i--) {
      const e = later[i]!;
      if (namespace && namespaceOf(e.obj) !== namespace) continue;
      const key = objectKey(namespaceOf(e.obj), nameOf(e.obj));
      if (e.type === 'ADDED') state.delete(key);
      else state.set(key, e.prev!);
    }
    return [...state.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((x) => x[1]);
  }
}

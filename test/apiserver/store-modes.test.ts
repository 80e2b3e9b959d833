// Data at rest: the store's database holds every object (Secrets, cloud-init user data, tokens), so
// its directory is 0700 and the database with its -wal and -shm 0600 — on creation, whatever the
// umask, and after a restart on a data directory an older version left readable to all. Its WAL
// reaches the database through the checkpointer thread.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Store, STORE_DB_FILE } from '../../src/apiserver/store.ts';
import { tempDir } from '../lib/tmp.ts';

const mode = (p: string) => statSync(p).mode & 0o777;

/** Every entry of the store directory with its mode, the directory itself first. */
function modes(dir: string): Record<string, number> {
  const out: Record<string, number> = { '.': mode(dir) };
  for (const f of readdirSync(dir)) out[f] = mode(join(dir, f));
  return out;
}

const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default', uid: 'u1', resourceVersion: '1' }, stringData: { password: 'hunter2' } };

test('a new store: directory 0700, database, -wal and -shm 0600, even with a permissive umask', () => {
  const t = tempDir('qsm');
  const old = process.umask(0o000);
  try {
    const dir = join(t.path, 'api', 'store');
    const store = new Store({ dataDir: dir });
    try {
      store.create('core/secrets', secret);
      store.flush();
      assert.equal(modes(dir), { '.': 0o700, [STORE_DB_FILE]: 0o600, [`${STORE_DB_FILE}-wal`]: 0o600, [`${STORE_DB_FILE}-shm`]: 0o600 });
    } finally {
      store.close();
    }
  } finally {
    process.umask(old);
    t.cleanup();
  }
});

test('an older data directory left readable to all is narrowed when the store opens it, and keeps its objects', () => {
  const t = tempDir('qsm');
  try {
    const dir = join(t.path, 'store');
    const first = new Store({ dataDir: dir });
    first.create('core/secrets', secret);
    first.flush();
    // As an older version left it (SQLite's 0644, a 0755 folder), with the WAL files still there (the
    // first store stays open, as a process that crashed leaves -wal and -shm behind).
    chmodSync(dir, 0o755);
    for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o644);
    const second = new Store({ dataDir: dir });
    try {
      for (const [f, m] of Object.entries(modes(dir))) assert.is(m, f === '.' ? 0o700 : 0o600, `${f} is ${m.toString(8)}`);
      assert.ok(second.get('core/secrets', 'default', 's'), 'the objects are still there');
    } finally {
      second.close();
      first.close();
    }
  } finally {
    t.cleanup();
  }
});

test('a data directory whose parent does not exist yet is made, the store directory 0700', () => {
  const t = tempDir('qsm');
  try {
    mkdirSync(join(t.path, 'a'));
    const dir = join(t.path, 'a', 'b', 'store');
    const s = new Store({ dataDir: dir });
    s.close();
    assert.is(mode(dir), 0o700);
    assert.is(mode(join(dir, STORE_DB_FILE)), 0o600);
  } finally {
    t.cleanup();
  }
});

test('the WAL is checkpointed into the database by the checkpointer thread while the store is open; a reopened store has every object', async () => {
  const t = tempDir('qsm');
  try {
    const dir = join(t.path, 'store');
    const store = new Store({ dataDir: dir });
    const big = 'x'.repeat(8 * 1024);
    try {
      // ~6 MiB in one transaction: the WAL far past SQLite's 1000-page autocheckpoint, which the store's own connection no longer runs.
      for (let i = 1; i <= 750; i++) store.create('core/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'default', uid: `u${i}`, resourceVersion: String(i) }, data: { big } });
      store.flush();
      const db = join(dir, STORE_DB_FILE);
      const deadline = Date.now() + 10_000;
      while (statSync(db).size < 6 * 1024 * 1024 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      assert.ok(statSync(db).size >= 6 * 1024 * 1024, `the database holds the objects (${statSync(db).size} bytes)`);
    } finally {
      store.close();
    }
    const again = new Store({ dataDir: dir });
    try {
      assert.is(again.list('core/configmaps').length, 750);
      assert.is(again.resourceVersion, 750);
    } finally {
      again.close();
    }
  } finally {
    t.cleanup();
  }
});

test('a store reopened at once on its directory while the old one\'s checkpointer is still closing: it waits for the lock, nothing lost', async () => {
  const t = tempDir('qsm');
  try {
    let n = 0;
    for (let round = 0; round < 10; round++) {
      // Enough written for longer than a checkpoint interval that the checkpointer has a WAL to copy when the store closes.
      const s = new Store({ dataDir: t.path });
      assert.is(s.list('configmaps').length, n, `round ${round}: every object of the rounds before`);
      const end = Date.now() + 1200;
      while (Date.now() < end) {
        for (let j = 0; j < 50; j++) {
          n++;
          s.create('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${n}`, namespace: 'default', uid: `u${n}`, resourceVersion: String(s.nextResourceVersion()) }, data: { a: 'x'.repeat(2000) } });
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      s.close();
      // close() returns once every connection is closed: the last one checkpointed and removed the WAL, and
      // nothing writes in the directory any more (removing it at once raced the checkpointer: ENOTEMPTY).
      assert.equal(readdirSync(t.path).filter((f) => f.endsWith('-wal') || f.endsWith('-shm')), [], `round ${round}: no WAL left after close`);
    }
    const last = new Store({ dataDir: t.path });
    assert.is(last.list('configmaps').length, n);
    last.close();
  } finally {
    t.cleanup();
  }
});

test.run();

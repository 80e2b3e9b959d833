import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deepestExisting, LauncherSocketWatch } from '../../handler/launcher/socket-watch.ts';
import { tempDir } from '../lib/tmp.ts';

const SOCK = '/pods/uid/volumes/kubernetes.io~empty-dir/sockets/launcher-sock';
const rows: Array<[string, string[], string | undefined]> = [
  ['only the pods dir', ['/pods'], '/pods'],
  ['the pod dir', ['/pods', '/pods/uid'], '/pods/uid'],
  ['the sockets dir', ['/pods', '/pods/uid', '/pods/uid/volumes', '/pods/uid/volumes/kubernetes.io~empty-dir', '/pods/uid/volumes/kubernetes.io~empty-dir/sockets'], '/pods/uid/volumes/kubernetes.io~empty-dir/sockets'],
  ['no pods dir: nothing to watch (never above it)', ['/'], undefined],
];
for (const [name, existing, want] of rows) {
  test(`deepestExisting: ${name}`, () => {
    assert.is(deepestExisting(SOCK, '/pods', (p) => existing.includes(p)), want);
  });
}

test('deepestExisting: a path outside the stop dir is not watched', () => {
  assert.is(deepestExisting('/elsewhere/x/launcher-sock', '/pods', () => true), undefined);
  assert.is(deepestExisting(SOCK, '/pods/', (p) => p === '/pods'), '/pods');
});

const waitKey = (keys: string[], n: number) => new Promise<void>((resolve, reject) => {
  const end = Date.now() + 10_000;
  const tick = () => (keys.length >= n ? resolve() : Date.now() > end ? reject(new Error(`no change seen (${keys.length}/${n})`)) : setTimeout(tick, 10));
  tick();
});

test('LauncherSocketWatch: follows the directories as they appear, down to the socket', async () => {
  const tmp = tempDir('qlw');
  const pods = join(tmp.path, 'pods');
  mkdirSync(pods);
  const sockets = join(pods, 'uid', 'volumes', 'kubernetes.io~empty-dir', 'sockets');
  const sock = join(sockets, 'launcher-sock');
  const seen: string[] = [];
  const w = new LauncherSocketWatch((k) => seen.push(k));
  try {
    assert.ok(w.watch('ns/vm', sock, pods));
    // The pod's directories appear all at once (mkdir -p): the pods-dir watch fires.
    mkdirSync(sockets, { recursive: true });
    await waitKey(seen, 1);
    // The controller looks again: now the sockets dir is watched; an unrelated file does not fire.
    assert.ok(w.watch('ns/vm', sock, pods));
    writeFileSync(join(sockets, 'other'), '');
    await new Promise((r) => setTimeout(r, 200));
    assert.is(seen.length, 1, 'an unrelated file in the sockets dir is ignored');
    writeFileSync(sock, '');
    await waitKey(seen, 2);
    assert.equal(seen, ['ns/vm', 'ns/vm']);
  } finally {
    w.closeAll();
    tmp.cleanup();
  }
});

test('LauncherSocketWatch: no pods dir → false (the caller polls); a socket already there fires at once', async () => {
  const tmp = tempDir('qlw');
  const seen: string[] = [];
  const w = new LauncherSocketWatch((k) => seen.push(k));
  try {
    assert.not.ok(w.watch('ns/a', join(tmp.path, 'nope', 'uid', 'launcher-sock'), join(tmp.path, 'nope')));
    mkdirSync(join(tmp.path, 's'));
    writeFileSync(join(tmp.path, 's', 'launcher-sock'), '');
    assert.ok(w.watch('ns/b', join(tmp.path, 's', 'launcher-sock'), tmp.path));
    assert.equal(seen, ['ns/b']);
  } finally {
    w.closeAll();
    tmp.cleanup();
  }
});

test.run();

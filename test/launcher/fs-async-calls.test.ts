// launcher/fs/async.ts against node:fs/promises: each call, made by both on the same files, gives the
// same result or fails with the same error code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fsp from 'node:fs/promises';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import * as fsa from '../../launcher/fs/async.ts';

const dir = mkdtempSync('/tmp/qvirt-fs-async-');
test.after(() => rmSync(dir, { recursive: true, force: true }));

type Outcome = { value: unknown } | { code: string | undefined };
async function outcome(p: Promise<unknown>): Promise<Outcome> {
  try {
    const v = await p;
    const stats = v as { isFile?: () => boolean; size?: number } | undefined;
    return { value: typeof stats?.isFile === 'function' ? { isFile: stats.isFile(), size: stats.size } : v };
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code };
  }
}

/** [name, a call with node:fs/promises' functions or fs-async's; each run gets its own subdirectory]. */
const cases: [string, (f: typeof fsa, d: string) => Promise<unknown>][] = [
  ['readFile as a string', (f, d) => f.readFile(join(d, 'a'), 'utf8')],
  ['readFile as a Buffer', (f, d) => f.readFile(join(d, 'a'))],
  ['readFile of a missing file', (f, d) => f.readFile(join(d, 'missing'), 'utf8')],
  ['writeFile then its content', async (f, d) => { await f.writeFile(join(d, 'w'), 'new', { mode: 0o600 }); return readFileSync(join(d, 'w'), 'utf8') + (statSync(join(d, 'w')).mode & 0o777).toString(8); }],
  ['writeFile into a missing directory', (f, d) => f.writeFile(join(d, 'no/such'), 'x')],
  ['mkdir recursive returns the first directory made', (f, d) => f.mkdir(join(d, 'm/n/o'), { recursive: true }).then((p) => p?.slice(d.length))],
  ['mkdir of an existing directory', (f, d) => f.mkdir(join(d, 'sub'))],
  ['mkdtemp', (f, d) => f.mkdtemp(join(d, 't-')).then((p) => p.startsWith(join(d, 't-')) && statSync(p).isDirectory())],
  ['readdir sorted', (f, d) => f.readdir(d).then((n) => n.sort())],
  ['readdir with file types', (f, d) => f.readdir(d, { withFileTypes: true }).then((es) => es.map((e) => `${e.name}:${e.isDirectory()}`).sort())],
  ['readdir of a file', (f, d) => f.readdir(join(d, 'a'))],
  ['stat of a file', (f, d) => f.stat(join(d, 'a'))],
  ['stat of a missing path', (f, d) => f.stat(join(d, 'missing'))],
  ['statfs', (f, d) => f.statfs(d).then((s) => s.bsize > 0)],
  ['access for writing', (f, d) => f.access(join(d, 'a'), fsa.constants.W_OK)],
  ['access of a missing path', (f, d) => f.access(join(d, 'missing'), fsa.constants.R_OK)],
  ['rename', async (f, d) => { await f.rename(join(d, 'a'), join(d, 'b')); return readFileSync(join(d, 'b'), 'utf8'); }],
  ['rm recursive of a directory', async (f, d) => { await f.rm(join(d, 'sub'), { recursive: true }); return f.readdir(d).then((n) => n.sort()); }],
  ['rm of a missing path', (f, d) => f.rm(join(d, 'missing'))],
  ['rm of a missing path with force', (f, d) => f.rm(join(d, 'missing'), { force: true })],
  ['truncate', async (f, d) => { await f.truncate(join(d, 'a'), 2); return readFileSync(join(d, 'a'), 'utf8'); }],
  ['chmod', async (f, d) => { await f.chmod(join(d, 'a'), 0o640); return (statSync(join(d, 'a')).mode & 0o777).toString(8); }],
  ['chown to the owner it has', (f, d) => f.chown(join(d, 'a'), statSync(join(d, 'a')).uid, statSync(join(d, 'a')).gid)],
  ['copyFile', async (f, d) => { await f.copyFile(join(d, 'a'), join(d, 'c')); return readFileSync(join(d, 'c'), 'utf8'); }],
  ['copyFile refusing to replace', (f, d) => f.copyFile(join(d, 'a'), join(d, 'sub/x'), fsa.constants.COPYFILE_EXCL)],
  ['realpath through a link', (f, d) => f.realpath(join(d, 'link')).then((p) => p.slice(d.length))],
];

let n = 0;
for (const [name, call] of cases) {
  test(name, async () => {
    const made: string[] = [];
    for (const side of ['promises', 'fs-async'] as const) {
      const d = join(dir, `${n++}`);
      mkdirSync(join(d, 'sub'), { recursive: true });
      writeFileSync(join(d, 'a'), 'content');
      writeFileSync(join(d, 'sub/x'), 'x');
      symlinkSync(join(d, 'sub'), join(d, 'link'));
      made.push(JSON.stringify(await outcome(call(side === 'promises' ? (fsp as unknown as typeof fsa) : fsa, d))));
    }
    assert.is(made[1], made[0]);
  });
}

test('openFd, ftruncate and closeFd create a sparse file; openFd with wx refuses an existing one', async () => {
  const p = join(dir, 'sparse');
  const fd = await fsa.openFd(p, 'wx', 0o666);
  await fsa.ftruncate(fd, 1 << 20);
  await fsa.closeFd(fd);
  assert.is(statSync(p).size, 1 << 20);
  assert.ok(statSync(p).blocks < 16, 'sparse');
  const err = await fsa.openFd(p, 'wx').catch((e: NodeJS.ErrnoException) => e);
  assert.is((err as NodeJS.ErrnoException).code, 'EEXIST');
});

test.run();

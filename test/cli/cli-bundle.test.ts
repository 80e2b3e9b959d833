// The CLI bundle (scripts/build.ts buildCliBundle: dist/cli) answers as the sources do, and bin/qvirt
// runs it while it is fresh. Each command runs both ways; output and exit code must agree.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCliBundle } from '../../scripts/build.ts';
import { cliScript } from '../../src/local/launcher-command.ts';
import { checkoutPath } from '../../src/local/checkout.ts';
import { tempDir } from '../lib/tmp.ts';

const node = process.execPath;
const SOURCES = checkoutPath('src/cli/main.ts');
const BUNDLE = checkoutPath('dist/cli/qvirt.mjs');
const t = tempDir('qvclib');

interface Run { code: number; out: string; err: string }
const run = (script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> => new Promise((resolve) => {
  execFile(node, [script, ...args], { env: { PATH: process.env.PATH ?? '', HOME: t.path, ...env }, timeout: 60_000 }, (err, out, errOut) =>
    resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) }));
});

test.before(async () => {
  // npm test builds it first; a file run alone after an edit builds it here.
  if (cliScript() !== BUNDLE) await buildCliBundle();
});
test.after(() => t.cleanup());

const kubeconfig = join(t.path, 'kubeconfig');
mkdirSync(t.path, { recursive: true });
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');

const cases: Array<[string, string[]]> = [
  ['no command: the help, exit 2', []],
  ['--help', ['--help']],
  ['an unknown command', ['frobnicate']],
  ['create vm with an instancetype and a container disk', ['create', 'vm', '--name', 'v1', '--instancetype', 'u1.medium', '--volume-containerdisk', 'src:quay.io/containerdisks/fedora:41']],
  ['create instancetype', ['create', 'instancetype', '--name', 'small', '--cpu', '2', '--memory', '1Gi']],
  ['a bad flag value names the flag', ['create', 'vm', '--name', 'v', '--run-strategy', 'Sometimes']],
  ['a verb without a kubeconfig context', ['start', 'v1']],
  ['qmp-shell syntax help', ['qmp', '--help']],
];
for (const [name, args] of cases) {
  test(`bundle = sources: ${name}`, async () => {
    const env = { KUBECONFIG: kubeconfig };
    const [a, b] = await Promise.all([run(BUNDLE, args, env), run(SOURCES, args, env)]);
    assert.equal(a, b);
  });
}

test('version: the same figures from the bundle (package.json found from dist/cli)', async () => {
  const [a, b] = await Promise.all([run(BUNDLE, ['version']), run(SOURCES, ['version'])]);
  assert.is(a.code, 0, a.err);
  assert.equal(a, b);
  assert.match(a.out, /^qvirt \d+\.\d+\.\d+/);
});

test('bin/qvirt runs the bundle while it is fresh', async () => {
  // A FIFO as the kubeconfig holds the command at its read, long enough to see what runs it.
  const fifo = join(t.path, 'kubeconfig.fifo');
  await new Promise<void>((resolve, reject) => execFile('mkfifo', [fifo], (err) => (err ? reject(err) : resolve())));
  const child = spawn(checkoutPath('bin/qvirt'), ['start', 'held'], { env: { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: fifo }, stdio: 'ignore' });
  try {
    // bin/qvirt is bash until it execs node (same pid).
    let argv: string[] = [];
    for (let i = 0; i < 100 && !argv[0]?.endsWith('/node'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      argv = existsSync(`/proc/${child.pid}/cmdline`) ? readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0') : [];
    }
    assert.equal(argv.slice(1, 4), [BUNDLE, 'start', 'held']);
  } finally {
    writeFileSync(fifo, 'apiVersion: v1\n');
    await new Promise((r) => child.once('exit', r));
  }
});

test.run();

// The CLI bundle (scripts/build.ts buildCliBundle: dist/cli) answers as the sources do, and bin/qvirt
// runs it while it is fresh. Each command runs both ways; output and exit code must agree. `bin/qvirt
// launcher` runs the launcher's bundle (scripts/build.ts buildLauncherBundle) with the launcher's flags.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCliBundle, buildLauncherBundle } from '../../scripts/build.ts';
import { cliScript, LAUNCHER_LOADER, LAUNCHER_NODE_FLAGS, launcherArgv } from '../../src/local/launcher-command.ts';
import { checkoutPath } from '../../src/local/checkout.ts';
import { tempDir } from '../lib/tmp.ts';

const node = process.execPath;
const SOURCES = checkoutPath('src/cli/main.ts');
const BUNDLE = checkoutPath('dist/cli/qvirt.mjs');
const LAUNCHER_BUNDLE_LOADER = checkoutPath('dist/launcher', LAUNCHER_LOADER);
const t = tempDir('qvclib');

interface Run { code: number; out: string; err: string }
const run = (script: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Run> => new Promise((resolve) => {
  execFile(node, [script, ...args], { env: { PATH: process.env.PATH ?? '', HOME: t.path, ...env }, timeout: 60_000 }, (err, out, errOut) =>
    resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) }));
});

test.before(async () => {
  // npm test builds it first; a file run alone after an edit builds it here.
  if (cliScript() !== BUNDLE) await buildCliBundle();
  if (!launcherArgv().includes(LAUNCHER_BUNDLE_LOADER)) await buildLauncherBundle();
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
  const argv = await execdArgv(['start', 'held'], { KUBECONFIG: fifo }, () => writeFileSync(fifo, 'apiVersion: v1\n'));
  assert.equal(argv.slice(1, 4), [BUNDLE, 'start', 'held']);
});

/** The argv of `bin/qvirt ARGS` once bash has exec'd node (same pid), and then the process is killed. */
async function execdArgv(args: readonly string[], env: NodeJS.ProcessEnv, release = () => {}): Promise<string[]> {
  const child = spawn(checkoutPath('bin/qvirt'), args, { env: { PATH: process.env.PATH ?? '', HOME: t.path, ...env }, stdio: 'ignore' });
  const exited = new Promise((r) => child.once('exit', r));
  let argv: string[] = [];
  try {
    for (let i = 0; i < 100 && !argv[0]?.endsWith('/node'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      argv = existsSync(`/proc/${child.pid}/cmdline`) ? readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0') : [];
    }
  } finally {
    release();
    child.kill('SIGKILL');
    await exited;
  }
  return argv;
}

test("bin/qvirt launcher runs the launcher bundle with the launcher's Node flags while it is fresh", async () => {
  const args = ['--name', 'held', '--uid', '6c9a1f0e-0000-4000-8000-000000000003', '--namespace', 'default', '--root', join(t.path, 'launcher-root'), '--allow-emulation', '--notify-socket', 'none', '--cache-dir', join(t.path, 'launcher-cache')];
  const argv = await execdArgv(['launcher', ...args], {});
  assert.equal(argv.slice(1, -1), [...LAUNCHER_NODE_FLAGS, LAUNCHER_BUNDLE_LOADER, ...args]);
});

test.run();

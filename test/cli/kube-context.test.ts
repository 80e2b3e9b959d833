// Which cluster and namespace the cluster verbs use: the order (--kubeconfig, $KUBECONFIG, a running
// `qvirt local up`, ~/.kube/config, in-cluster) as a table, the local-up record (a dead pid is
// ignored), and `qvirt start` run as a user runs it against a real embedded API server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { chooseKubeconfig, chooseNamespace, type KubeconfigInputs } from '../../src/cli/kube-context.ts';
import { localUpRecordPath, readLiveLocalUpRecord, removeLocalUpRecord, writeLocalUpRecord } from '../../src/local/local-up-record.ts';
import { startTestServer } from '../apiserver/lib.ts';
import { tempDir } from '../lib/tmp.ts';

const QVIRT = fileURLToPath(new URL('../../bin/qvirt', import.meta.url));

const base: KubeconfigInputs = { homeConfig: '/home/u/.kube/config', homeConfigExists: true, inCluster: true };
const order: Array<[string, Partial<KubeconfigInputs>, ReturnType<typeof chooseKubeconfig>]> = [
  ['--kubeconfig wins over everything', { flag: '/f', env: '/e', localUp: '/l' }, { from: 'flag', path: '/f' }],
  ['$KUBECONFIG before the local mode', { env: '/e:/e2', localUp: '/l' }, { from: 'env', path: '/e:/e2' }],
  ['a running local up before ~/.kube/config', { localUp: '/l' }, { from: 'local-up', path: '/l' }],
  ['empty KUBECONFIG counts as unset', { env: '', localUp: '/l' }, { from: 'local-up', path: '/l' }],
  ['~/.kube/config', {}, { from: 'home', path: '/home/u/.kube/config' }],
  ['in-cluster when there is no ~/.kube/config', { homeConfigExists: false }, { from: 'in-cluster' }],
  ['nothing at all', { homeConfigExists: false, inCluster: false }, undefined],
];
for (const [title, inputs, want] of order) test(`chooseKubeconfig: ${title}`, () => assert.equal(chooseKubeconfig({ ...base, ...inputs }), want));

test('chooseNamespace: flag, then the context, then default', () => {
  assert.is(chooseNamespace('a', 'b'), 'a');
  assert.is(chooseNamespace(undefined, 'b'), 'b');
  assert.is(chooseNamespace(undefined, undefined), 'default');
  assert.is(chooseNamespace('', ''), 'default');
});

test('localUpRecordPath: QVIRT_RUNTIME_DIR, /run/qvirt as root, XDG_RUNTIME_DIR, the data dir', () => {
  assert.is(localUpRecordPath({ QVIRT_RUNTIME_DIR: '/x', XDG_RUNTIME_DIR: '/run/user/1' }, 0, '/h'), '/x/local-up.json');
  assert.is(localUpRecordPath({ XDG_RUNTIME_DIR: '/run/user/1' }, 0, '/h'), '/run/qvirt/local-up.json');
  assert.is(localUpRecordPath({ XDG_RUNTIME_DIR: '/run/user/1' }, 1000, '/h'), '/run/user/1/qvirt/local-up.json');
  assert.is(localUpRecordPath({}, 1000, '/h'), '/h/.local/share/qvirt/local-up.json');
});

test('local-up record: live pid found, dead pid / missing kubeconfig / garbage ignored, removed only by its owner', () => {
  const t = tempDir('qkc');
  try {
    const path = join(t.path, 'run', 'local-up.json');
    const kubeconfig = join(t.path, 'kubeconfig');
    writeFileSync(kubeconfig, '{}');
    const rec = { pid: process.pid, kubeconfig, url: 'https://127.0.0.1:1', dataDir: t.path, nodeName: 'n', startedAt: 'now' };
    writeLocalUpRecord(path, rec);
    assert.equal(readLiveLocalUpRecord(path), rec);
    removeLocalUpRecord(path, process.pid + 1);
    assert.ok(readLiveLocalUpRecord(path), 'another pid does not remove it');
    const dead = spawnSync('true').pid!;
    writeLocalUpRecord(path, { ...rec, pid: dead });
    assert.is(readLiveLocalUpRecord(path), undefined, 'stale: its process is gone');
    writeLocalUpRecord(path, { ...rec, kubeconfig: join(t.path, 'gone') });
    assert.is(readLiveLocalUpRecord(path), undefined, 'its kubeconfig is gone');
    writeFileSync(path, 'not json');
    assert.is(readLiveLocalUpRecord(path), undefined);
    writeLocalUpRecord(path, rec);
    removeLocalUpRecord(path);
    assert.is(readLiveLocalUpRecord(path), undefined);
  } finally {
    t.cleanup();
  }
});

test('qvirt start as a user runs it: kubeconfig from the local-up record, ~/.kube/config with its namespace, -n, errors', async () => {
  const srv = await startTestServer({ tls: true });
  const t = tempDir('qkc');
  try {
    const home = join(t.path, 'home');
    const runtime = join(t.path, 'run');
    mkdirSync(home, { recursive: true });
    const env = { PATH: process.env.PATH ?? '', HOME: home, QVIRT_RUNTIME_DIR: runtime, KUBECONFIG: '', QVIRT_LOG_LEVEL: 'warn' };
    const qvirt = async (args: string[], extraEnv: Record<string, string> = {}) => {
      try {
        const r = await promisify(execFile)(QVIRT, args, { env: { ...env, ...extraEnv }, timeout: 30_000 });
        return { code: 0, out: r.stdout, err: r.stderr };
      } catch (e) {
        const x = e as { code?: number; stdout?: string; stderr?: string };
        return { code: x.code ?? -1, out: x.stdout ?? '', err: x.stderr ?? '' };
      }
    };
    // Nothing to talk to.
    let r = await qvirt(['start', 'vm1']);
    assert.is(r.code, 1);
    assert.match(r.err, /^Error: no cluster to talk to: .*qvirt local up/);
    // A running local up (this process's pid) is found.
    writeLocalUpRecord(join(runtime, 'local-up.json'), { pid: process.pid, kubeconfig: srv.api.kubeconfigPath!, url: srv.api.url, dataDir: srv.dir, nodeName: 'n', startedAt: '' });
    r = await qvirt(['start', 'vm1']);
    assert.is(r.code, 1, r.err);
    assert.is(r.err, 'Error: VirtualMachine "vm1" not found in namespace "default"\n');
    r = await qvirt(['stop', 'vm1', '-n', 'team-a']);
    assert.is(r.err, 'Error: VirtualMachine "vm1" not found in namespace "team-a"\n');
    // A stale record is ignored: ~/.kube/config is used, with its context's namespace.
    writeLocalUpRecord(join(runtime, 'local-up.json'), { pid: spawnSync('true').pid!, kubeconfig: srv.api.kubeconfigPath!, url: srv.api.url, dataDir: srv.dir, nodeName: 'n', startedAt: '' });
    const kc = JSON.parse(readFileSync(srv.api.kubeconfigPath!, 'utf8')) as { contexts: Array<{ context: Record<string, string> }> };
    kc.contexts[0]!.context.namespace = 'from-context';
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), JSON.stringify(kc));
    r = await qvirt(['restart', 'vm1']);
    assert.is(r.err, 'Error: VirtualMachine "vm1" not found in namespace "from-context"\n');
    // $KUBECONFIG before ~/.kube/config; --kubeconfig before both.
    r = await qvirt(['start', 'vm1'], { KUBECONFIG: srv.api.kubeconfigPath! });
    assert.is(r.err, 'Error: VirtualMachine "vm1" not found in namespace "default"\n');
    r = await qvirt(['start', 'vm1', '--kubeconfig', join(t.path, 'nope')]);
    assert.is(r.code, 1);
    assert.match(r.err, /^Error: cannot load the kubeconfig .*nope \(from --kubeconfig\): no such file/);
    // Usage errors exit 2 and say what is wrong.
    r = await qvirt(['stop', 'vm1', '--grace-period', '0']);
    assert.is(r.code, 2);
    assert.match(r.err, /--force and --grace-period go together/);
    r = await qvirt(['start']);
    assert.is(r.code, 2);
    assert.match(r.err, /missing VM/);
    r = await qvirt(['start', '--help']);
    assert.is(r.code, 0);
    for (const f of ['--paused', '--dry-run', '--kubeconfig', '-n, --namespace']) assert.ok(r.out.includes(f), f);
    // An API server that is not there.
    const saved = join(t.path, 'saved-kubeconfig');
    writeFileSync(saved, readFileSync(srv.api.kubeconfigPath!));
    await srv.close();
    r = await qvirt(['start', 'vm1'], { KUBECONFIG: saved });
    assert.is(r.code, 1, r.err);
    assert.match(r.err, /^Error: cannot reach the Kubernetes API server at https:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  } finally {
    await srv.close().catch(() => undefined);
    t.cleanup();
  }
});

test.run();

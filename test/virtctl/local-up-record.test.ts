// `qvirt local up` says where it runs, and the cluster verbs find it with no --kubeconfig and no
// $KUBECONFIG; once it stops, the record is gone and the verbs say there is no cluster.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QVIRT, eventually } from './lib.ts';
import { tempDir } from '../lib/tmp.ts';

test('local up records itself; qvirt start finds it; stop removes the record', async () => {
  const t = tempDir('qvl');
  const env = { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: '', QVIRT_RUNTIME_DIR: join(t.path, 'run'), QVIRT_LOG_LEVEL: 'warn', QVIRT_IMAGE_STORE: join(t.path, 'store') };
  const up = spawn(QVIRT, ['local', 'up', '--data-dir', join(t.path, 'data'), '--port', '0', '--demo-image=false', '--emulation', 'true', '--no-pod-network'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  up.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  up.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((r) => up.once('exit', (c) => r(c)));
  const qvirt = (...args: string[]) => new Promise<{ code: number; err: string }>((resolve) => {
    execFile(QVIRT, args, { env, timeout: 60_000 }, (err, _o, e) => resolve({ code: err ? Number(err.code) : 0, err: String(e) }));
  });
  try {
    await eventually(() => out.includes('qvirt local mode is up'), 120_000, 'local up started');
    const record = join(t.path, 'run', 'local-up.json');
    assert.ok(existsSync(record), 'the record is written');
    const rec = JSON.parse(readFileSync(record, 'utf8')) as { pid: number; kubeconfig: string };
    assert.is(rec.pid, up.pid);
    assert.is(rec.kubeconfig, join(t.path, 'data', 'kubeconfig'));
    const r = await qvirt('start', 'vm1', '-n', 'ns1');
    assert.is(r.err, 'Error: VirtualMachine "vm1" not found in namespace "ns1"\n');
    up.kill('SIGINT');
    assert.is(await exited, 0, out);
    assert.not.ok(existsSync(record), 'the record is removed on stop');
    const after = await qvirt('start', 'vm1');
    assert.is(after.code, 1);
    assert.match(after.err, /^Error: no cluster to talk to/);
  } finally {
    if (up.exitCode === null) { up.kill('SIGKILL'); await exited; }
    t.cleanup();
  }
});

test.run();

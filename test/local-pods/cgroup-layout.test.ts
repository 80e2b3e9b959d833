// The cgroup tree and files the pod runner's cgroup manager writes, for cgroup v2 and v1, on a
// directory standing in for the cgroup filesystem (this machine's real cpu controller is tested in
// cgroups.test.ts; the other version may only exist on another machine, e.g. v2 on CI). In a real
// cgroupfs the interface files exist from mkdir on; here they are created by the writes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CgroupManager, joiningCgroup, kubepodsName } from '../../src/local/pod-runner/cgroup-manager.ts';
import { execFileSync, spawnSync } from 'node:child_process';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('cgroup-layout-test', { level: 'warn' });
const read = (...p: string[]) => readFileSync(join(...p), 'utf8').trim();
const [B, G, E] = ['0b5c9f3e-1f2a-4b7c-9d3e-5f6a7b8c9d01', '0b5c9f3e-1f2a-4b7c-9d3e-5f6a7b8c9d02', '0b5c9f3e-1f2a-4b7c-9d3e-5f6a7b8c9d03'] as const;

for (const version of [2, 1] as const) {
  test(`cgroup v${version}: qvirt/, system-reserved with this process, kubepods by QoS, the pods' values`, () => {
    const t = tempDir('qcg');
    try {
      const base = join(t.path, 'own');
      const podsDir = join(t.path, 'pods');
      mkdirSync(base, { recursive: true });
      if (version === 2) { writeFileSync(join(base, 'cgroup.controllers'), 'cpuset cpu io memory pids\n'); writeFileSync(join(base, 'cgroup.subtree_control'), ''); }
      const m = CgroupManager.open({ podsDir, log, capacityMilli: 4000, candidates: [{ version, dir: base }] });
      assert.ok(m, 'opened');
      const qvirt = join(base, 'qvirt');
      const kubepods = join(qvirt, kubepodsName(podsDir));
      assert.is(m!.kubepods, kubepods);
      assert.is(read(qvirt, 'system-reserved', 'cgroup.procs'), String(process.pid), 'this process written into system-reserved');
      const b = m!.ensurePod(B, 'Burstable', { shares: 108 }, [106, 200]);
      const g = m!.ensurePod(G, 'Guaranteed', { shares: 2063, quotaUs: 201_500, periodUs: 100_000 }, [106, 200]);
      const e = m!.ensurePod(E, 'BestEffort', { shares: 2 }, [106, 200]);
      assert.equal([b, g, e], [join(kubepods, 'burstable', `pod${B}`), join(kubepods, `pod${G}`), join(kubepods, 'besteffort', `pod${E}`)]);
      if (version === 2) {
        // The cpu controller enabled in every parent down to the pods; weights by runc's conversion.
        for (const d of [base, qvirt, kubepods, join(kubepods, 'burstable')]) assert.is(read(d, 'cgroup.subtree_control'), '+cpu', d);
        assert.equal([read(qvirt, 'cpu.weight'), read(qvirt, 'system-reserved', 'cpu.weight'), read(kubepods, 'cpu.weight')], ['157', '39', '118'], '4 CPUs: qvirt 4096 shares, system-reserved 1 CPU, kubepods 3');
        assert.equal([read(b, 'cpu.weight'), read(b, 'cpu.max')], ['5', 'max 100000']);
        assert.equal([read(g, 'cpu.weight'), read(g, 'cpu.max')], ['79', '201500 100000']);
        assert.equal([read(e, 'cpu.weight'), read(kubepods, 'burstable', 'cpu.weight'), read(kubepods, 'besteffort', 'cpu.weight')], ['1', '12', '1']);
      } else {
        assert.equal([read(qvirt, 'cpu.shares'), read(qvirt, 'system-reserved', 'cpu.shares'), read(kubepods, 'cpu.shares')], ['4096', '1024', '3072']);
        assert.equal([read(b, 'cpu.shares'), read(b, 'cpu.cfs_quota_us')], ['108', '-1']);
        assert.equal([read(g, 'cpu.shares'), read(g, 'cpu.cfs_quota_us'), read(g, 'cpu.cfs_period_us')], ['2063', '201500', '100000']);
        assert.equal([read(e, 'cpu.shares'), read(kubepods, 'burstable', 'cpu.shares'), read(kubepods, 'besteffort', 'cpu.shares')], ['2', '313', '2']);
      }
      assert.equal(m!.podUids().sort(), [B, G, E]);
      // The runner stops: this process is written back into its own cgroup.
      m!.stop(true);
      assert.is(read(base, 'cgroup.procs'), String(process.pid));
      assert.ok(existsSync(kubepods), 'pods left: the tree stays for the next runner');
    } finally { t.cleanup(); }
  });
}

test('joiningCgroup: the shell makes the container cgroup, writes its values, joins it, then execs the container', () => {
  const t = tempDir('qcg');
  try {
    const dir = join(t.path, 'pod', 'compute');
    mkdirSync(join(t.path, 'pod'));
    const argv = joiningCgroup(dir, ['/bin/sh', '-c', 'echo $$ "$1"', 'x', 'a b'], [['cpu.shares', '102'], ['cpu.cfs_period_us', '100000'], ['cpu.cfs_quota_us', '-1']]);
    const out = execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }).trim();
    const [pid, arg] = [out.slice(0, out.indexOf(' ')), out.slice(out.indexOf(' ') + 1)];
    assert.is(read(dir, 'cgroup.procs'), pid, 'the pid written is the pid that runs the container');
    assert.is(arg, 'a b', 'arguments passed through unchanged');
    assert.equal([read(dir, 'cpu.shares'), read(dir, 'cpu.cfs_period_us'), read(dir, 'cpu.cfs_quota_us')], ['102', '100000', '-1'], 'the values, in order');
    // Again (a restarted container): the cgroup is there already, the values are written anew.
    const again = joiningCgroup(dir, ['/bin/echo', 'ran'], [['cpu.shares', '204']]);
    assert.is(execFileSync(again[0]!, again.slice(1), { encoding: 'utf8' }).trim(), 'ran');
    assert.is(read(dir, 'cpu.shares'), '204');
    // No pod cgroup to make it in: the container still runs, and its stderr says why it is not in its cgroup.
    const gone = joiningCgroup(join(t.path, 'gone', 'compute'), ['/bin/echo', 'ran'], [['cpu.shares', '2']]);
    const r = spawnSync(gone[0]!, gone.slice(1), { encoding: 'utf8' });
    assert.is(r.stdout.trim(), 'ran');
    assert.match(r.stderr, /could not make the container cgroup/);
    assert.match(r.stderr, /could not join the container cgroup/);
  } finally { t.cleanup(); }
});

test('joiningCgroup into an existing cgroup, no values: the process writes its own pid into it, then execs the container with the same pid and arguments', () => {
  const t = tempDir('qcg');
  try {
    const dir = join(t.path, 'pod');
    mkdirSync(dir);
    const out = execFileSync(joiningCgroup(dir, ['/bin/sh', '-c', 'echo $$ "$1"', 'x', 'a b'], [])[0]!, joiningCgroup(dir, ['/bin/sh', '-c', 'echo $$ "$1"', 'x', 'a b'], []).slice(1), { encoding: 'utf8' }).trim();
    const [pid, arg] = [out.slice(0, out.indexOf(' ')), out.slice(out.indexOf(' ') + 1)];
    assert.is(read(dir, 'cgroup.procs'), pid, 'the pid written is the pid that runs the container');
    assert.is(arg, 'a b', 'arguments passed through unchanged');
    // A pod cgroup that went: the container still runs, and says why it is not in its cgroup.
    const r = execFileSync(joiningCgroup(join(t.path, 'gone', 'c'), ['/bin/echo', 'ran'], [])[0]!, joiningCgroup(join(t.path, 'gone', 'c'), ['/bin/echo', 'ran'], []).slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    assert.is(r.trim(), 'ran');
  } finally { t.cleanup(); }
});

test('no cpu controller in a v2 cgroup, nothing writable: undefined and one warning, nothing left', () => {
  const t = tempDir('qcg');
  const lines: string[] = [];
  const warnLog = componentLogger('cgroup-layout-test', { level: 'warn', destination: { write: (s: string) => { lines.push(s); return true; } } as never });
  try {
    const base = join(t.path, 'own');
    mkdirSync(base, { recursive: true });
    writeFileSync(join(base, 'cgroup.controllers'), 'memory pids\n');
    const m = CgroupManager.open({ podsDir: join(t.path, 'pods'), log: warnLog, capacityMilli: 2000, candidates: [{ version: 2, dir: base }, { version: 1, dir: join(t.path, 'no-such-dir') }] });
    assert.is(m, undefined);
    assert.is(lines.filter((l) => l.includes('no writable CPU cgroups')).length, 1);
    assert.not.ok(existsSync(join(base, 'qvirt')));
  } finally { t.cleanup(); }
});

test.run();

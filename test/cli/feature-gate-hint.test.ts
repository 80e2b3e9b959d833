// `qvirt run`'s feature gates: the flag parsed, the gates validation errors name, the hint; and the
// CLI itself refusing a hostDisk manifest with the hint, then accepting it with the gate.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { featureGateHint, gatesNamed, parseFeatureGates } from '../../src/cli/feature-gate-hint.ts';
import { tempDir } from '../lib/tmp.ts';

test('gates named in errors, once each, both of KubeVirt\'s phrasings', () => {
  assert.equal(gatesNamed(['spec.volumes[0]: HostDisk feature gate is not enabled', "x: 'Snapshot' feature gate is not enabled", 'y: HostDisk feature gate is not enabled']), ['HostDisk', 'Snapshot']);
  assert.equal(gatesNamed(['spec.domain.memory.guest: must be greater than or equal to 1M.']), []);
});

test('the hint names the flag with the gates already given plus the missing ones', () => {
  assert.is(featureGateHint(['v: HostDisk feature gate is not enabled'], ['NUMA']), 'hint: switch the feature gate on with --feature-gates NUMA,HostDisk (on a cluster: the KubeVirt CR\'s spec.configuration.developerConfiguration.featureGates)');
  assert.is(featureGateHint(['other error'], []), '');
});

test('--feature-gates parsing', () => {
  assert.equal(parseFeatureGates('HostDisk, Snapshot'), ['HostDisk', 'Snapshot']);
  assert.equal(parseFeatureGates(undefined), []);
  assert.throws(() => parseFeatureGates('Host Disk'), /--feature-gates: "Host Disk" is not a feature gate name/);
});

test('qvirt run: a hostDisk manifest refused with the hint; --feature-gates HostDisk gets it past validation', async () => {
  const t = tempDir('qvfg');
  try {
    const f = join(t.path, 'hd.yaml');
    writeFileSync(f, 'apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: hd}\nspec:\n  domain: {devices: {disks: [{name: hd, disk: {bus: virtio}}]}, resources: {requests: {memory: 64Mi}}}\n  volumes: [{name: hd, hostDisk: {path: ' + join(t.path, 'hd.img') + ', type: DiskOrCreate, capacity: 16Mi}}]\n');
    const run = (...args: string[]) => new Promise<{ code: number; err: string }>((resolve) => {
      execFile(join(import.meta.dirname, '../../bin/qvirt'), ['run', ...args, f], { timeout: 60_000, env: { ...process.env, QVIRT_IMAGE_STORE: join(t.path, 'store') } }, (e, _o, err) => resolve({ code: e ? Number(e.code) : 0, err: String(err) }));
    });
    const refused = await run();
    assert.is(refused.code, 1);
    assert.match(refused.err, /HostDisk feature gate is not enabled\nhint: switch the feature gate on with --feature-gates HostDisk/);
    // With the gate the manifest is valid: whatever happens next (no kernel or disk to boot here) is not a validation error.
    const allowed = await run('--feature-gates', 'HostDisk', '--timeout', '1s');
    assert.not.match(allowed.err, /the manifest is invalid/);
  } finally {
    t.cleanup();
  }
});

test.run();

// The tool shell: time limits, errors that carry argv and stderr, qemu-img info parsing, and the
// writer choice on a host without xorrisofs (a child process with a PATH that lacks it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { DiskToolError } from '../../launcher/disks/errors.ts';
import { parseImageInfo, qemuImgInfo, runTool } from '../../launcher/disks/tools.ts';
import { volumeSourceKind } from '../../launcher/disks/prepared.ts';
import type { Volume } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { blkid, failure, qemuImg } from './lib.ts';

const tmp = tempDir('qv-tools');
test.after(() => tmp.cleanup());
const node = process.execPath;
const root = new URL('../..', import.meta.url).pathname;

test('a tool that outlives its limit is killed and reported as timed out', async () => {
  const started = Date.now();
  const e = await failure(runTool('sleep', ['10'], 200));
  assert.instance(e, DiskToolError);
  assert.ok((e as DiskToolError).timedOut);
  assert.match(e.message, 'sleep 10: timed out after 200 ms');
  assert.ok(Date.now() - started < 5000);
});

test('a failing tool\'s error carries its argv, exit code and stderr', async () => {
  const e = await failure(qemuImgInfo(join(tmp.path, 'missing.img')));
  assert.instance(e, DiskToolError);
  const t = e as DiskToolError;
  assert.is(t.exitCode, 1);
  assert.match(t.stderr, 'Could not open');
  assert.match(e.message, `qemu-img info ${join(tmp.path, 'missing.img')} --output json: exited with code 1: qemu-img: Could not open`);
});

test('a missing tool is reported, not thrown as a raw spawn error', async () => {
  const e = await failure(runTool('qvirt-no-such-tool', ['x'], 1000));
  assert.instance(e, DiskToolError);
  assert.match(e.message, 'qvirt-no-such-tool x:');
});

test('qemu-img info under the disk memory limit (prlimit) still works', async () => {
  const img = join(tmp.path, 'x.qcow2');
  qemuImg('create', '-f', 'qcow2', img, '3M');
  const info = await qemuImgInfo(img, { memoryLimitBytes: 2_097_152_000 });
  assert.equal({ format: info.format, virtualSize: info.virtualSize, backingFile: info.backingFile }, { format: 'qcow2', virtualSize: 3 * 1024 * 1024, backingFile: undefined });
  // a limit too small to even start qemu-img fails with a tool error, not a hang
  const e = await failure(qemuImgInfo(img, { memoryLimitBytes: 1024 * 1024 }));
  assert.instance(e, DiskToolError);
});

test('parseImageInfo names what is wrong', () => {
  assert.throws(() => parseImageInfo('nope', '/x'), /qemu-img info of \/x did not print JSON/);
  assert.throws(() => parseImageInfo('[]', '/x'), /expected a JSON object/);
  assert.throws(() => parseImageInfo('{"virtual-size":1}', '/x'), /field "format" missing/);
  assert.equal(parseImageInfo('{"format":"qcow2","virtual-size":5,"backing-filename":"/b","backing-filename-format":"raw"}', '/x'),
    { format: 'qcow2', virtualSize: 5, actualSize: undefined, backingFile: '/b', backingFormat: 'raw' });
});

test('without xorrisofs on PATH, auto picks the built-in writer and the seed disk is still right', () => {
  const script = `
    import { prepareCloudInit } from ${JSON.stringify(join(root, 'launcher/disks/cloud-init.ts'))};
    import { resolveIsoWriter } from ${JSON.stringify(join(root, 'launcher/disks/iso.ts'))};
    import { diskDirsUnder } from ${JSON.stringify(join(root, 'launcher/disks/paths.ts'))};
    const vmi = { metadata: { name: 'edge', namespace: 'ns' }, spec: { domain: { firmware: { uuid: 'u' }, devices: {} }, volumes: [{ name: 'ci', cloudInitNoCloud: { userData: '#cloud-config\\n' } }] } };
    const p = await prepareCloudInit(vmi, diskDirsUnder(${JSON.stringify(join(tmp.path, 'edge'))}));
    console.log(JSON.stringify({ choice: resolveIsoWriter('auto'), writer: p.isoWriter, path: p.path }));
  `;
  const out = execFileSync(node, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, PATH: '/nonexistent' } });
  const r = JSON.parse(out.trim().split('\n').pop()!) as { choice: string; writer: string; path: string };
  assert.equal([r.choice, r.writer], ['builtin', 'builtin']);
  assert.is(blkid(r.path).label, 'cidata');
});

const kindRows: [Volume, string | undefined][] = [
  [{ name: 'a', containerDisk: { image: 'i' } }, 'containerDisk'],
  [{ name: 'a', emptyDisk: { capacity: '1Mi' } }, 'emptyDisk'],
  [{ name: 'a', ephemeral: { persistentVolumeClaim: { claimName: 'c' } } }, 'ephemeral'],
  [{ name: 'a', persistentVolumeClaim: { claimName: 'c' } }, 'persistentVolumeClaim'],
  [{ name: 'a', dataVolume: { name: 'd' } }, 'dataVolume'],
  [{ name: 'a', hostDisk: { path: '/p', type: 'Disk' } }, 'hostDisk'],
  [{ name: 'a', cloudInitNoCloud: {} }, 'cloudInitNoCloud'],
  [{ name: 'a', cloudInitConfigDrive: {} }, 'cloudInitConfigDrive'],
  [{ name: 'a', configMap: {} }, 'configMap'],
  [{ name: 'a', secret: {} }, 'secret'],
  [{ name: 'a', downwardAPI: {} }, 'downwardAPI'],
  [{ name: 'a', serviceAccount: {} }, 'serviceAccount'],
  [{ name: 'a', sysprep: {} }, 'sysprep'],
  [{ name: 'a', downwardMetrics: {} }, 'downwardMetrics'],
  [{ name: 'a', memoryDump: { claimName: 'c' } }, 'memoryDump'],
  [{ name: 'a', containerPath: { path: '/x' } }, 'containerPath'],
  [{ name: 'a' }, undefined],
];
for (const [v, want] of kindRows) test(`volumeSourceKind → ${want}`, () => assert.is(volumeSourceKind(v), want));

test.run();

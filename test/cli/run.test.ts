// `qvirt run` and `qvirt qmp` as a user runs them: real processes, the test guest under TCG.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { tempDir } from '../lib/tmp.ts';

const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
const work = tempDir('qvr');
const store = join(work.path, 'store');
const env = { ...process.env, QVIRT_IMAGE_STORE: store, QVIRT_RUN_DIR: join(work.path, 'runs'), QVIRT_CACHE_DIR: join(work.path, 'cache') };
const run = promisify(execFile);

const manifest = (name: string, extra = '') => `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 30
  domain:
    firmware:
      kernelBoot:
        kernelArgs: console=ttyS0 quiet cryptomgr.notests
        container: {image: qvirt/test-guest, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
    devices:
      disks:
        - {name: scratch, serial: S1, disk: {bus: virtio}}
    resources: {requests: {memory: 192Mi}}${extra}
  volumes:
    - {name: scratch, emptyDisk: {capacity: 16Mi}}
`;

test.before(async () => {
  await importTestGuest(new ImageStore(store));
});

test('qvirt run boots a manifest, qvirt qmp reads it (and refuses writes without --unsafe), Ctrl-C shuts it down', async () => {
  const file = join(work.path, 'vm.yaml');
  writeFileSync(file, manifest('runvm'));
  const child = spawn(qvirt, ['run', '--allow-emulation', '--console', file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  try {
    for (let i = 0; i < 1200 && !out.includes('QVIRT-GUEST-READY'); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(out.includes('QVIRT-GUEST-READY'), `guest never became ready:\n${out}`);
    assert.match(out, /VirtualMachineInstance default\/runvm: Scheduled/);
    assert.match(out, /VirtualMachineInstance default\/runvm: Running/);
    assert.match(out, /QVIRT-DISK name=vda serial=S1/);

    const status = await run(qvirt, ['qmp', 'runvm', 'query-status'], { env });
    assert.equal(JSON.parse(status.stdout), { status: 'running', singlestep: false, running: true });
    const block = await run(qvirt, ['qmp', 'default/runvm', 'query-block'], { env });
    assert.ok(Array.isArray(JSON.parse(block.stdout)));
    const refused = await run(qvirt, ['qmp', 'runvm', 'stop'], { env }).then(() => undefined, (err: { code: number; stderr: string }) => err);
    assert.ok(refused, 'stop without --unsafe must fail');
    assert.is(refused!.code, 1);
    assert.match(refused!.stderr, /refused/);
    assert.equal(JSON.parse((await run(qvirt, ['qmp', 'runvm', 'query-status'], { env })).stdout).status, 'running', 'the refused stop did nothing');
    await run(qvirt, ['qmp', 'runvm', '--unsafe', 'stop'], { env });
    assert.equal(JSON.parse((await run(qvirt, ['qmp', 'runvm', 'query-status'], { env })).stdout).status, 'paused');
    await run(qvirt, ['qmp', 'runvm', '--unsafe', 'cont'], { env });
    const missing = await run(qvirt, ['qmp', 'nosuchvm', 'query-status'], { env }).then(() => undefined, (err: { stderr: string }) => err);
    assert.match(missing!.stderr, /no running VM "nosuchvm"/);

    child.kill('SIGINT');
    const code = await exited;
    assert.is(code, 0, out);
    assert.match(out, /shutting down gracefully/);
    assert.match(out, /QVIRT-GUEST-POWEROFF/);
    assert.match(out, /runvm ended: Succeeded/);
  } finally {
    child.kill('SIGKILL');
  }
});

test('a bad manifest is refused with the field and the reason, and nothing starts', async () => {
  const file = join(work.path, 'bad.yaml');
  writeFileSync(file, manifest('badvm').replace('bus: virtio', 'bus: ide'));
  const err = await run(qvirt, ['run', '--allow-emulation', file], { env }).then(() => undefined, (e: { code: number; stderr: string }) => e);
  assert.ok(err);
  assert.is(err!.code, 1);
  assert.match(err!.stderr, /spec\.domain\.devices\.disks\[0\]\.disk\.bus/);
  assert.match(err!.stderr, /virtio, sata, scsi, usb/);
  const notYaml = join(work.path, 'bad2.yaml');
  writeFileSync(notYaml, 'kind: [');
  const err2 = await run(qvirt, ['run', notYaml], { env }).then(() => undefined, (e: { stderr: string }) => e);
  assert.match(err2!.stderr, /not valid YAML/);
});

test('without --allow-emulation the launcher uses KVM only where it runs guests, else says how to allow emulation', async () => {
  const file = join(work.path, 'kvm.yaml');
  writeFileSync(file, manifest('kvmvm'));
  const r = await run(qvirt, ['run', '--until', 'QVIRT-GUEST-READY', '--timeout', '120s', file], { env }).then(
    (ok) => ({ code: 0, stdout: ok.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
  const probe = JSON.parse(readFileSync(join(work.path, 'cache', 'kvm-probe.json'), 'utf8')) as { usable?: boolean; result?: { usable?: boolean } };
  const kvmUsable = probe.usable ?? probe.result?.usable;
  if (kvmUsable) {
    assert.is(r.code, 0, r.stdout);
    assert.match(r.stdout, /kvmvm ended: Succeeded/);
  } else {
    assert.is(r.code, 1);
    assert.match(r.stdout, /software emulation is not allowed/);
    assert.match(r.stdout, /useEmulation/);
  }
});

test.after(() => work.cleanup());
test.run();

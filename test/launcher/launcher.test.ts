// The launcher end to end: a real `qvirt launcher` process per VMI, driven over KubeVirt's Cmd gRPC
// and Notify protocols by the single-VM node (src/local/single-vm.ts), booting the test guest
// under TCG. Asserts what the guest itself reports on its serial console.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { loadVmiManifest } from '../../src/local/manifest.ts';
import { SingleVm } from '../../src/local/single-vm.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';
import { isVcpuThread, procThreads } from '../lib/proc-threads.ts';

const log = componentLogger('test', { level: 'warn' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const work = tempDir('qvl');
const store = new ImageStore(join(work.path, 'store'));
let guestReady: Promise<void> | undefined;

function prepareImages(): Promise<void> {
  guestReady ??= (async () => {
    await importTestGuest(store);
    const base = join(work.path, 'base.qcow2');
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', base, '64M']);
    await store.importDisk('example/containerdisk:v1', base);
  })();
  return guestReady;
}

const guestSpec = (volumesYaml: string, disksYaml: string, extra = '') => `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: NAME
spec:
  terminationGracePeriodSeconds: 20
  domain:
    firmware:
      kernelBoot:
        kernelArgs: console=ttyS0 quiet cryptomgr.notests
        container: {image: qvirt/test-guest, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
    devices:
      disks:
${disksYaml}
    resources: {requests: {memory: 192Mi}}
${extra}
  volumes:
${volumesYaml}
`;

let n = 0;
async function boot(yamlText: string): Promise<{ vm: SingleVm; root: string; console: () => string; waitFor: (re: RegExp, ms?: number) => Promise<string> }> {
  await prepareImages();
  const name = `vm${++n}`;
  const file = join(work.path, `${name}.yaml`);
  writeFileSync(file, yamlText.replace('NAME', name));
  const vmi = await loadVmiManifest(file);
  const root = join(work.path, `r${n}`);
  const vm = new SingleVm({ vmi, root, allowEmulation: true, imageStore: store, log, launcherLog: join(work.path, `${name}.launcher.log`), cleanup: false, cacheDir: join(work.path, 'cache') });
  await vm.start();
  const consoleText = () => (existsSync(vm.paths.serialLog) ? readFileSync(vm.paths.serialLog, 'utf8') : '');
  const waitFor = async (re: RegExp, ms = 90_000) => {
    const until = Date.now() + ms;
    for (;;) {
      const m = re.exec(consoleText());
      if (m) return m[0];
      if (Date.now() > until) throw new Error(`console never matched ${re} within ${ms} ms; console:\n${consoleText().slice(-2000)}\nlauncher log: ${readFileSync(join(work.path, `${name}.launcher.log`), 'utf8').slice(-3000)}`);
      if (vm.currentPhase === 'Failed') throw new Error(`VM failed while waiting for ${re}`);
      await sleep(100);
    }
  };
  return { vm, root, console: consoleText, waitFor };
}

/** Nothing of a VM may outlive it: no QEMU, no launcher, no socket file in its root. */
function assertNothingLeft(root: string, uid: string): void {
  let qemus = '';
  try { qemus = execFileSync('pgrep', ['-af', uid], { encoding: 'utf8' }); } catch { /* none */ }
  assert.is(qemus.trim(), '', `processes left for ${uid}`);
  const sockets: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isSocket()) sockets.push(p);
    }
  };
  if (existsSync(root)) walk(root);
  assert.equal(sockets, [], 'sockets left behind');
}

test('containerDisk + emptyDisk + NoCloud: the guest sees each disk by serial and runs its user-data; pause/unpause over gRPC; graceful shutdown', async () => {
  const { vm, root, waitFor } = await boot(guestSpec(`
    - name: root
      containerDisk: {image: example/containerdisk:v1}
    - name: scratch
      emptyDisk: {capacity: 128Mi}
    - name: cloudinit
      cloudInitNoCloud:
        userData: |
          #!/bin/sh
          echo USERDATA-RAN-$(hostname)
`, `
        - {name: root, serial: CDISK1, disk: {bus: virtio}}
        - {name: scratch, serial: EMPTY1, disk: {bus: sata}}
        - {name: cloudinit, disk: {bus: virtio}}`));
  try {
    await waitFor(/QVIRT-GUEST-READY/);
    await waitFor(/QVIRT-DISK name=vd\w serial=CDISK1 size=131072 /);
    await waitFor(/QVIRT-DISK name=sd\w serial=EMPTY1 size=262144 .*bus=sata/);
    await waitFor(new RegExp(`QVIRT-CIDATA instance-id=${vm.vmi.spec.domain.firmware!.uuid} source=nocloud`));
    await waitFor(/USERDATA-RAN-vm1/);
    assert.is(vm.currentPhase, 'Running');

    const paused = await vm.client.pauseVirtualMachine(vm.vmi);
    assert.ok(paused.success, paused.message);
    for (let i = 0; i < 50 && vm.currentDomain?.Status.Status !== 'Paused'; i++) await sleep(100);
    assert.is(vm.currentDomain?.Status.Status, 'Paused');
    assert.is(vm.currentDomain?.Status.Reason, 'User');
    const dom = JSON.parse((await vm.client.getDomain()).domain) as { Status: { Status: string; Reason: string } };
    assert.equal([dom.Status.Status, dom.Status.Reason], ['Paused', 'User']);
    assert.is(vm.currentPhase, 'Running', 'a paused VMI is still Running');
    const resumed = await vm.client.unpauseVirtualMachine(vm.vmi);
    assert.ok(resumed.success, resumed.message);
    for (let i = 0; i < 50 && vm.currentDomain?.Status.Status !== 'Running'; i++) await sleep(100);
    assert.is(vm.currentDomain?.Status.Status, 'Running');

    const t0 = Date.now();
    await vm.shutdown();
    const result = await vm.done;
    assert.is(result.phase, 'Succeeded');
    assert.is(result.launcherExitCode, 0);
    assert.ok(Date.now() - t0 < 20_000, 'within the grace period');
    await waitFor(/QVIRT-GUEST-POWEROFF/);
    assertNothingLeft(root, vm.vmi.metadata!.uid!);
  } finally {
    await vm.kill();
  }
});

test('ConfigDrive: the guest finds config-2 and its instance uuid; its vCPU threads run below QEMU\'s and the launcher\'s other threads', async () => {
  const { vm, root, waitFor } = await boot(guestSpec(`
    - name: cloudinit
      cloudInitConfigDrive:
        userData: |
          #!/bin/sh
          echo CONFIGDRIVE-USERDATA
`, `
        - {name: cloudinit, disk: {bus: virtio}}`));
  try {
    await waitFor(/QVIRT-CIDATA instance-id=\S+ source=configdrive/);
    await waitFor(/CONFIGDRIVE-USERDATA/);
    const qemuPid = Number(execFileSync('pgrep', ['-f', `qemu-system.*${vm.vmi.metadata!.uid}`], { encoding: 'utf8' }).trim().split('\n')[0]);
    const threads = procThreads(qemuPid);
    // The thread group leader (tid = pid; not always the lowest tid once pids wrap around): QEMU's main loop, at the launcher's nice.
    const main = threads.find((t) => t.tid === qemuPid)!.nice;
    const vcpus = threads.filter(isVcpuThread);
    assert.is(vcpus.length, 1, `one vCPU thread (${JSON.stringify(threads)})`);
    assert.equal(vcpus.map((t) => t.nice), [Math.min(19, main + 5)], `vCPU at the main loop's nice + 5 (${JSON.stringify(threads)})`);
    await vm.shutdown();
    assert.is((await vm.done).phase, 'Succeeded');
    assertNothingLeft(root, vm.vmi.metadata!.uid!);
  } finally {
    await vm.kill();
  }
});

test('QEMU killed with SIGKILL: the launcher reports Crashed and the VMI fails', async () => {
  const { vm, root, waitFor } = await boot(guestSpec(`
    - name: scratch
      emptyDisk: {capacity: 16Mi}
`, `
        - {name: scratch, disk: {bus: virtio}}`));
  try {
    await waitFor(/QVIRT-GUEST-BOOTED/);
    const pid = Number(execFileSync('pgrep', ['-f', `qemu-system.*${vm.vmi.metadata!.uid}`], { encoding: 'utf8' }).trim().split('\n')[0]);
    assert.ok(pid > 0);
    process.kill(pid, 'SIGKILL');
    const result = await vm.done;
    assert.is(result.phase, 'Failed');
    assert.is(vm.currentDomain?.ObjectMeta.deletionTimestamp !== undefined || vm.currentDomain?.Status.Status === 'Crashed', true);
    assertNothingLeft(root, vm.vmi.metadata!.uid!);
  } finally {
    await vm.kill();
  }
});

test('SIGTERM to the launcher: the guest is powered off gracefully and nothing is left', async () => {
  const { vm, root, waitFor } = await boot(guestSpec(`
    - name: scratch
      emptyDisk: {capacity: 16Mi}
`, `
        - {name: scratch, disk: {bus: virtio}}`));
  try {
    await waitFor(/QVIRT-GUEST-READY/);
    assert.ok(vm.launcherPid);
    process.kill(vm.launcherPid!, 'SIGTERM');
    const result = await vm.done;
    await waitFor(/QVIRT-GUEST-POWEROFF/);
    assert.is(result.phase, 'Succeeded', 'powered off by ACPI, not destroyed');
    assert.is(result.launcherExitCode, 0);
    assertNothingLeft(root, vm.vmi.metadata!.uid!);
  } finally {
    await vm.kill();
  }
});

test.after(() => work.cleanup());
test.run();

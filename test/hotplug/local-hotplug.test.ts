// Volume hotplug through the whole local mode, the way a user does it: a VM from kubectl, a
// PersistentVolumeClaim bound by the local-path provisioner, `qvirt addvolume` (the CLI plays
// virt-api: a VM status.volumeRequests patch) → the VM controller persists it in the template and
// adds it to the running VMI → the node agent links the claim into the launcher pod → the launcher
// plugs it → the guest reports the disk by serial; volumeStatus goes MountedToPod → Ready. Then
// `qvirt removevolume` takes it out again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { importTestGuest, MarkerLog, markers } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const repo = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

const manifests = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data-claim}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 64Mi}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: hp-vm}
spec:
  runStrategy: Always
  template:
    spec:
      terminationGracePeriodSeconds: 5
      domain:
        cpu: {sockets: 1, cores: 1, threads: 1, maxSockets: 2}
        firmware:
          kernelBoot:
            kernelArgs: console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0
            container: {image: qvirt/test-guest:latest, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
        devices: {}
        resources: {requests: {memory: 256Mi}}
`;

test('local mode: qvirt addvolume / removevolume and a vCPU LiveUpdate on a running VM; a socket reduction sets RestartRequired; a persisted volume is back after a restart', async () => {
  const t = tempDir('qlh');
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' }) });
  try {
    const file = join(t.path, 'm.yaml');
    writeFileSync(file, manifests);
    await run('kubectl', ['--kubeconfig', local.kubeconfig, 'apply', '-f', file], { timeout: 30_000 });
    const qvirt = (...args: string[]) => run(process.execPath, [join(repo, 'src/cli/main.ts'), ...args, '--kubeconfig', local.kubeconfig], { timeout: 30_000 });
    const getVmi = () => local.client.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, 'default', 'hp-vm').catch(() => undefined);
    let vmi: VirtualMachineInstance | undefined;
    for (let i = 0; i < 900 && vmi?.status?.phase !== 'Running'; i++) { vmi = await getVmi(); await sleep(100); }
    assert.is(vmi?.status?.phase, 'Running');

    const console = new MarkerLog();
    let offset = 0;
    const podsDir = join(t.path, 'data', 'pods');
    const firstUid = vmi!.metadata!.uid!;
    const poll = setInterval(() => {
      for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
        const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', firstUid, 'virt-serial0-log');
        if (!existsSync(f)) continue;
        const buf = readFileSync(f);
        if (buf.length > offset) { console.push(buf.subarray(offset)); offset = buf.length; }
      }
    }, 50);
    try {
      await console.waitFor(markers.ready, { timeoutMs: 120_000 });

      // Bad input first: clear errors, nothing changes.
      const noClaim = await qvirt('addvolume', 'hp-vm', '--volume-name=nope').then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
      assert.match(noClaim, /Volume nope is not a DataVolume or PersistentVolumeClaim/);
      const badBus = await qvirt('addvolume', 'hp-vm', '--volume-name=data-claim', '--bus=sata').then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
      assert.match(badBus, /--bus: invalid bus type 'sata' for disk/);

      const since = console.seen.length;
      const out = await qvirt('addvolume', 'hp-vm', '--volume-name=data-claim', '--serial=LOCALHP1', '--bus=virtio');
      const accepted = Date.now();
      assert.match(out.stdout, /Successfully submitted add volume request to VM hp-vm for volume data-claim/);
      const added = await console.waitFor(markers.diskAdded, { fields: { serial: 'LOCALHP1' }, since, timeoutMs: 30_000 });
      const ms = Date.now() - accepted;
      process.stdout.write(`    addvolume accepted → QVIRT-DISK-ADDED ${added.fields.name} in ${ms} ms\n`);
      assert.is(added.fields.size, String(64 * 2048));

      // The VM template keeps it (persisted); the request is trimmed; the VMI reports it Ready.
      let vm: VirtualMachine | undefined;
      for (let i = 0; i < 100; i++) {
        vm = await local.client.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, 'default', 'hp-vm');
        vmi = await getVmi();
        if (!vm.status?.volumeRequests && vmi?.status?.volumeStatus?.find((s) => s.name === 'data-claim')?.phase === 'Ready') break;
        await sleep(100);
      }
      assert.equal(vm?.spec.template?.spec?.volumes?.find((v) => v.name === 'data-claim'), { name: 'data-claim', persistentVolumeClaim: { claimName: 'data-claim', hotpluggable: true } });
      assert.equal(vm?.spec.template?.spec?.domain.devices.disks?.find((d) => d.name === 'data-claim'), { name: 'data-claim', serial: 'LOCALHP1', disk: { bus: 'virtio' } });
      assert.is(vm?.status?.volumeRequests, undefined);
      const vs = vmi?.status?.volumeStatus?.find((s) => s.name === 'data-claim');
      assert.equal([vs?.phase, vs?.reason, vs?.target], ['Ready', 'VolumeReady', 'vda']);
      assert.equal(vs?.hotplugVolume, {});
      assert.is(vs?.persistentVolumeClaimInfo?.claimName, 'data-claim');

      // A second add of the same volume is refused the way virt-api refuses it.
      const dup = await qvirt('addvolume', 'hp-vm', '--volume-name=data-claim').then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
      assert.match(dup, /Unable to add volume \[data-claim\] because volume with that name already exists/);

      const since2 = console.seen.length;
      const rm = await qvirt('removevolume', 'hp-vm', '--volume-name=data-claim');
      assert.match(rm.stdout, /Successfully submitted remove volume request to VM hp-vm for volume data-claim/);
      await console.waitFor(markers.diskRemoved, { fields: { serial: 'LOCALHP1' }, since: since2, timeoutMs: 30_000 });
      for (let i = 0; i < 100; i++) {
        vm = await local.client.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, 'default', 'hp-vm');
        vmi = await getVmi();
        if (!vm.status?.volumeRequests && !vmi?.status?.volumeStatus?.some((s) => s.name === 'data-claim')) break;
        await sleep(100);
      }
      assert.not.ok(vm?.spec.template?.spec?.volumes?.some((v) => v.name === 'data-claim'));
      assert.not.ok(vmi?.spec.volumes?.some((v) => v.name === 'data-claim'));
      assert.not.ok(vmi?.status?.volumeStatus?.some((s) => s.name === 'data-claim'), JSON.stringify(vmi?.status?.volumeStatus));

      // The node agent's events for the volume, as virt-handler records them.
      let reasons: string[] = [];
      for (let i = 0; i < 50 && !reasons.includes('VolumeUnplugged'); i++) {
        const events = JSON.parse((await run('kubectl', ['--kubeconfig', local.kubeconfig, 'get', 'events', '-o', 'json'], { timeout: 30_000 })).stdout) as { items: Array<{ reason: string; involvedObject: { kind: string; name: string } }> };
        reasons = events.items.filter((e) => e.involvedObject.kind === 'VirtualMachineInstance' && e.involvedObject.name === 'hp-vm').map((e) => e.reason);
        await sleep(100);
      }
      // (MountedToPod may be passed over when the launcher has plugged the disk before the status is written.)
      for (const r of ['VolumeReady', 'VolumeUnplugged']) assert.ok(reasons.includes(r), `${r} in ${reasons.join(',')}`);

      // LiveUpdate: one more socket in the template → the VMI gets it → the guest onlines vCPU 1.
      const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', local.kubeconfig, ...args], { timeout: 30_000 });
      await kubectl('patch', 'vm', 'hp-vm', '--type=merge', '-p', '{"spec":{"template":{"spec":{"domain":{"cpu":{"sockets":2}}}}}}');
      const cpu = await console.waitFor(markers.cpuOnline, { fields: { cpu: '1' }, timeoutMs: 30_000 });
      assert.is(cpu.fields.online, '0-1');
      for (let i = 0; i < 100; i++) {
        vmi = await getVmi();
        if (vmi?.status?.currentCPUTopology?.sockets === 2 && !vmi.status.conditions?.some((c) => c.type === 'HotVCPUChange')) break;
        await sleep(100);
      }
      assert.is(vmi?.spec.domain.cpu?.sockets, 2);
      assert.equal(vmi?.status?.currentCPUTopology, { sockets: 2, cores: 1, threads: 1 });
      assert.not.ok(vmi?.status?.conditions?.some((c) => c.type === 'HotVCPUChange'), 'HotVCPUChange cleared once applied');

      // Fewer sockets cannot be applied live: RestartRequired on the VM, the VMI keeps its 2.
      await kubectl('patch', 'vm', 'hp-vm', '--type=merge', '-p', '{"spec":{"template":{"spec":{"domain":{"cpu":{"sockets":1}}}}}}');
      let restart: { status: string; message?: string } | undefined;
      for (let i = 0; i < 100 && !restart; i++) {
        vm = await local.client.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, 'default', 'hp-vm');
        restart = vm.status?.conditions?.find((c) => c.type === 'RestartRequired');
        await sleep(100);
      }
      assert.equal([restart?.status, restart?.message], ['True', 'Reduction of CPU socket count requires a restart']);
      assert.is((await getVmi())?.spec.domain.cpu?.sockets, 2);

      // A persisted hotplug volume comes back after a restart: plugged once the new VMI runs.
      await qvirt('addvolume', 'hp-vm', '--volume-name=data-claim', '--serial=LOCALHP2', '--bus=scsi');
      for (let i = 0; i < 100; i++) {
        vm = await local.client.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, 'default', 'hp-vm');
        if (vm.spec.template?.spec?.volumes?.some((v) => v.name === 'data-claim') && !vm.status?.volumeRequests) break;
        await sleep(100);
      }
      const oldUid = vmi!.metadata!.uid!;
      await qvirt('restart', 'hp-vm');
      for (let i = 0; i < 1200; i++) {
        vmi = await getVmi();
        if (vmi?.metadata?.uid && vmi.metadata.uid !== oldUid && vmi.status?.phase === 'Running') break;
        await sleep(100);
      }
      assert.is.not(vmi?.metadata?.uid, oldUid);
      const console2 = new MarkerLog();
      let offset2 = 0;
      const secondUid = vmi!.metadata!.uid!;
      const poll2 = setInterval(() => {
        for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
          const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', secondUid, 'virt-serial0-log');
          if (!existsSync(f)) continue;
          const buf = readFileSync(f);
          if (buf.length > offset2) { console2.push(buf.subarray(offset2)); offset2 = buf.length; }
        }
      }, 50);
      try {
        // Plugged right after the start: the guest lists it at boot or as hot-added, depending on timing.
        await console2.waitFor(markers.ready, { timeoutMs: 120_000 });
        const back = console2.seen.find((m) => m.name === markers.disk && m.fields.serial === 'LOCALHP2')
          ?? await console2.waitFor(markers.diskAdded, { fields: { serial: 'LOCALHP2' }, timeoutMs: 30_000 });
        assert.is(back.fields.bus, 'scsi');
        for (let i = 0; i < 100; i++) {
          vmi = await getVmi();
          if (vmi?.status?.volumeStatus?.find((x) => x.name === 'data-claim')?.phase === 'Ready') break;
          await sleep(100);
        }
        assert.is(vmi?.status?.volumeStatus?.find((x) => x.name === 'data-claim')?.phase, 'Ready');
      } finally {
        clearInterval(poll2);
      }
    } finally {
      clearInterval(poll);
    }
  } finally {
    await local.stop();
    t.cleanup();
  }
});

test('local mode: qvirt addvolume / removevolume on a VMI without a VM patch the VMI spec (until it stops)', async () => {
  const t = tempDir('qlv');
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' }) });
  try {
    const file = join(t.path, 'm.yaml');
    writeFileSync(file, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: vmi-claim}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 32Mi}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: hp-vmi}
spec:
  terminationGracePeriodSeconds: 5
  domain:
    firmware:
      kernelBoot:
        kernelArgs: console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0
        container: {image: qvirt/test-guest:latest, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
    devices: {}
    resources: {requests: {memory: 256Mi}}
`);
    await run('kubectl', ['--kubeconfig', local.kubeconfig, 'apply', '-f', file], { timeout: 30_000 });
    const qvirt = (...args: string[]) => run(process.execPath, [join(repo, 'src/cli/main.ts'), ...args, '--kubeconfig', local.kubeconfig], { timeout: 30_000 });
    const getVmi = () => local.client.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, 'default', 'hp-vmi').catch(() => undefined);
    let vmi: VirtualMachineInstance | undefined;
    for (let i = 0; i < 900 && vmi?.status?.phase !== 'Running'; i++) { vmi = await getVmi(); await sleep(100); }
    assert.is(vmi?.status?.phase, 'Running');
    const console = new MarkerLog();
    let offset = 0;
    const podsDir = join(t.path, 'data', 'pods');
    const firstUid = vmi!.metadata!.uid!;
    const poll = setInterval(() => {
      for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
        const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', firstUid, 'virt-serial0-log');
        if (!existsSync(f)) continue;
        const buf = readFileSync(f);
        if (buf.length > offset) { console.push(buf.subarray(offset)); offset = buf.length; }
      }
    }, 50);
    try {
      await console.waitFor(markers.ready, { timeoutMs: 120_000 });
      const out = await qvirt('addvolume', 'hp-vmi', '--volume-name=vmi-claim', '--disk-type=lun');
      assert.match(out.stdout, /Successfully submitted add volume request to VMI hp-vmi for volume vmi-claim/);
      const added = await console.waitFor(markers.diskAdded, { fields: { serial: 'vmi-claim' }, timeoutMs: 30_000 });
      assert.is(added.fields.bus, 'scsi');
      vmi = await getVmi();
      assert.equal(vmi?.spec.volumes?.find((v) => v.name === 'vmi-claim'), { name: 'vmi-claim', persistentVolumeClaim: { claimName: 'vmi-claim', hotpluggable: true } });
      assert.equal(vmi?.spec.domain.devices.disks?.find((d) => d.name === 'vmi-claim'), { name: 'vmi-claim', lun: { bus: 'scsi' }, serial: 'vmi-claim' });
      await qvirt('removevolume', 'hp-vmi', '--volume-name=vmi-claim');
      await console.waitFor(markers.diskRemoved, { fields: { serial: 'vmi-claim' }, timeoutMs: 30_000 });
      const cold = await qvirt('removevolume', 'hp-vmi', '--volume-name=nothing').then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
      assert.match(cold, /Unable to remove volume \[nothing\] because it does not exist/);
    } finally {
      clearInterval(poll);
    }
  } finally {
    await local.stop();
    t.cleanup();
  }
});

test.run();

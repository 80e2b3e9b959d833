// Hotplug through the launcher's gRPC Cmd server: a real `qvirt launcher` process (the single-VM
// node drives it) boots the test guest under TCG, and SyncVirtualMachine with a changed VMI plugs
// and unplugs over QMP. What counts is what the guest itself reports on its console (QVIRT-DISK-ADDED
// by serial, QVIRT-NIC-ADDED by MAC, QVIRT-CPU-ONLINE) and what the domain reports to the handler.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { importTestGuest, MarkerLog, markers } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { loadVmiManifest } from '../../src/local/manifest.ts';
import { SingleVm } from '../../src/local/single-vm.ts';
import { componentLogger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { isVcpuThread, procThreads } from '../lib/proc-threads.ts';

const log = componentLogger('test', { level: 'warn' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const work = tempDir('qvhp');
const store = new ImageStore(join(work.path, 'store'));
await importTestGuest(store);

interface Booted { vm: SingleVm; root: string; console: MarkerLog; stop(): Promise<void> }

async function boot(name: string, yaml: string): Promise<Booted> {
  const file = join(work.path, `${name}.yaml`);
  writeFileSync(file, yaml);
  const vmi = await loadVmiManifest(file);
  const root = join(work.path, name);
  const launcherLog = join(work.path, `${name}.launcher.log`);
  const vm = new SingleVm({ vmi, root, allowEmulation: true, imageStore: store, log, launcherLog, cleanup: false, cacheDir: join(work.path, 'cache') });
  await vm.start();
  const console = new MarkerLog();
  let offset = 0;
  const poll = setInterval(() => {
    if (!existsSync(vm.paths.serialLog)) return;
    const buf = readFileSync(vm.paths.serialLog);
    if (buf.length > offset) { console.push(buf.subarray(offset)); offset = buf.length; }
  }, 50);
  return {
    vm, root, console,
    stop: async () => {
      clearInterval(poll);
      await vm.client.killVirtualMachine(vm.vmi).catch(() => undefined);
      await vm.kill();
    },
  };
}

const guestYaml = (name: string, extra = '') => `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 5
  domain:
    cpu: {sockets: 1, cores: 1, threads: 1, maxSockets: 2}
    firmware:
      kernelBoot:
        kernelArgs: console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0
        container: {image: qvirt/test-guest, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
    devices: {}
    resources: {requests: {memory: 256Mi}}
${extra}
`;

/** The VMI with hotplug volume `name` (a hotpluggable claim the node has mounted into the launcher). */
function withVolume(vmi: VirtualMachineInstance, name: string, serial: string, bus: 'virtio' | 'scsi' = 'virtio'): VirtualMachineInstance {
  const v = structuredClone(vmi);
  v.spec.domain.devices.disks = [...(v.spec.domain.devices.disks ?? []), { name, serial, disk: { bus } }];
  v.spec.volumes = [...(v.spec.volumes ?? []), { name, persistentVolumeClaim: { claimName: `claim-${name}`, hotpluggable: true } }];
  v.status = { ...v.status, volumeStatus: [...(v.status?.volumeStatus ?? []), { name, target: '', phase: 'MountedToPod', hotplugVolume: {} }] };
  return v;
}

function withoutVolume(vmi: VirtualMachineInstance, name: string): VirtualMachineInstance {
  const v = structuredClone(vmi);
  v.spec.domain.devices.disks = (v.spec.domain.devices.disks ?? []).filter((d) => d.name !== name);
  v.spec.volumes = (v.spec.volumes ?? []).filter((d) => d.name !== name);
  v.status = { ...v.status, volumeStatus: (v.status?.volumeStatus ?? []).filter((s) => s.name !== name) };
  return v;
}

/** What the node does for a hotplugged Filesystem claim: its disk.img appears as `<hotplug-dir>/<vol>.img`. */
function mountClaim(root: string, name: string, sizeMiB = 64): string {
  const dir = join(root, 'var/run/kubevirt/hotplug-disks');
  mkdirSync(dir, { recursive: true });
  const img = join(dir, `${name}.img`);
  execFileSync('truncate', ['-s', `${sizeMiB}M`, img]);
  return img;
}

interface DomainJson { Spec: { Devices: { Disks?: Array<{ Alias: { Name: string }; Target: { Device: string } }>; Interfaces?: Array<{ Alias: { Name: string } }> }; VCPUs?: { Current: number }; QVirtHotplug?: { Detaching: Array<{ Alias: string; Reason: string }>; Refused: string[] } }; Status: { Status: string } }

async function domainOf(vm: SingleVm): Promise<DomainJson> {
  return JSON.parse((await vm.client.getDomain()).domain) as DomainJson;
}

async function waitDomain(vm: SingleVm, what: string, pred: (d: DomainJson) => boolean, timeoutMs = 30_000): Promise<DomainJson> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await domainOf(vm);
    if (pred(d)) return d;
    if (Date.now() > until) throw new Error(`domain never showed ${what}: ${JSON.stringify(d.Spec.Devices)} ${JSON.stringify(d.Spec.QVirtHotplug)}`);
    await sleep(100);
  }
}

async function sync(vm: SingleVm, vmi: VirtualMachineInstance): Promise<void> {
  const r = await vm.client.syncVirtualMachine(vmi);
  assert.ok(r.success, `SyncVirtualMachine: ${r.message}`);
}

async function guestSh(vm: SingleVm, script: string): Promise<string> {
  const r = await vm.client.exec('', '/bin/sh', ['-c', script], 30);
  assert.is(r.exitCode, 0, `guest: ${script} → exit ${r.exitCode}: ${r.stdOut}`);
  return r.stdOut;
}

test('disk hotplug: seen by serial at once, data written, unplugged, plugged again with the data intact; a hostDisk and a scsi disk too', async () => {
  const b = await boot('hpdisk', guestYaml('hpdisk'));
  try {
    const { vm, root, console } = b;
    await console.waitFor(markers.ready, { timeoutMs: 120_000 });
    await console.waitFor(markers.gaStarted, { timeoutMs: 30_000 });
    mountClaim(root, 'data1');
    const added = withVolume(vm.vmi, 'data1', 'HOTDATA1');

    const t0 = Date.now();
    await sync(vm, added);
    const seen = await console.waitFor(markers.diskAdded, { fields: { serial: 'HOTDATA1' }, timeoutMs: 20_000 });
    const ms = Date.now() - t0;
    console_log(`disk sync → QVIRT-DISK-ADDED ${seen.fields.name} in ${ms} ms`);
    assert.is(seen.fields.bus, 'virtio');
    assert.is(seen.fields.size, String(64 * 2048));
    assert.ok(ms < 5000, `guest saw the disk ${ms} ms after the sync`);
    const d1 = await domainOf(vm);
    assert.ok(d1.Spec.Devices.Disks?.some((d) => d.Alias.Name === 'ua-data1'), 'domain lists the disk');

    await guestSh(vm, `printf 'QVIRT-PAYLOAD-42' | dd of=/dev/${seen.fields.name} bs=512 conv=sync,fsync 2>/dev/null`);
    // A second sync with the same VMI changes nothing (idempotent).
    await sync(vm, added);

    const since = console.seen.length;
    await sync(vm, withoutVolume(added, 'data1'));
    await console.waitFor(markers.diskRemoved, { fields: { serial: 'HOTDATA1' }, since, timeoutMs: 20_000 });
    await waitDomain(vm, 'data1 gone', (d) => !(d.Spec.Devices.Disks ?? []).some((x) => x.Alias.Name === 'ua-data1') && (d.Spec.QVirtHotplug?.Detaching.length ?? 0) === 0);

    const since2 = console.seen.length;
    await sync(vm, added);
    const again = await console.waitFor(markers.diskAdded, { fields: { serial: 'HOTDATA1' }, since: since2, timeoutMs: 20_000 });
    const data = await guestSh(vm, `dd if=/dev/${again.fields.name} bs=16 count=1 2>/dev/null`);
    assert.is(data, 'QVIRT-PAYLOAD-42');

    // A hostDisk added to the running VMI: the launcher creates its image (DiskOrCreate) and plugs it.
    const hd = structuredClone(added);
    hd.spec.domain.devices.disks!.push({ name: 'hd1', serial: 'HOSTDISK1', disk: { bus: 'virtio' } });
    hd.spec.volumes!.push({ name: 'hd1', hostDisk: { path: join(root, 'host-disks', 'hd1.img'), type: 'DiskOrCreate', capacity: '32Mi' } });
    mkdirSync(join(root, 'host-disks'), { recursive: true });
    const sinceHd = console.seen.length;
    await sync(vm, hd);
    const hdSeen = await console.waitFor(markers.diskAdded, { fields: { serial: 'HOSTDISK1' }, since: sinceHd, timeoutMs: 20_000 });
    assert.is(hdSeen.fields.size, String(32 * 2048));
    assert.ok(existsSync(join(root, 'host-disks', 'hd1.img')));
    await sync(vm, added);
    await console.waitFor(markers.diskRemoved, { fields: { serial: 'HOSTDISK1' }, since: sinceHd, timeoutMs: 20_000 });

    // A scsi disk goes onto scsi0 and its unplug completes too.
    mountClaim(root, 'data2', 32);
    const both = withVolume(added, 'data2', 'HOTSCSI2', 'scsi');
    const since3 = console.seen.length;
    await sync(vm, both);
    const scsi = await console.waitFor(markers.diskAdded, { fields: { serial: 'HOTSCSI2' }, since: since3, timeoutMs: 20_000 });
    assert.is(scsi.fields.bus, 'scsi');
    await sync(vm, withoutVolume(both, 'data2'));
    await console.waitFor(markers.diskRemoved, { fields: { serial: 'HOTSCSI2' }, since: since3, timeoutMs: 20_000 });
  } finally {
    await b.stop();
  }
});

/** Types `line` on the serial console (the guest's root shell) and waits for `expect` to come back. */
function consoleRoundTrip(socket: string, line: string, expect: string, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection(socket);
    let got = '';
    const timer = setTimeout(() => { c.destroy(); reject(new Error(`console never answered ${expect}; got: ${got.slice(-500)}`)); }, timeoutMs);
    c.on('connect', () => c.write(`\n${line}\n`));
    c.on('data', (d) => {
      got += d.toString('utf8');
      if (got.includes(expect)) { clearTimeout(timer); c.destroy(); resolve(got); }
    });
    c.on('error', (err) => { clearTimeout(timer); reject(err); });
  });
}

function console_log(s: string): void {
  process.stdout.write(`    ${s}\n`);
}

test('NIC hotplug and unplug; vCPUs 1 → 2 seen online; lowering vCPUs under TCG refused with the reason', async () => {
  const b = await boot('hpnic', guestYaml('hpnic'));
  try {
    const { vm, console } = b;
    await console.waitFor(markers.ready, { timeoutMs: 120_000 });
    const v = structuredClone(vm.vmi);
    v.spec.domain.devices.interfaces = [...(v.spec.domain.devices.interfaces ?? []), { name: 'hot1', masquerade: {}, macAddress: '02:00:00:00:aa:01' }];
    v.spec.networks = [...(v.spec.networks ?? []), { name: 'hot1', pod: {} }];
    await sync(vm, v);
    const nic = await console.waitFor(markers.nicAdded, { fields: { mac: '02:00:00:00:aa:01' }, timeoutMs: 20_000 });
    assert.is(nic.fields.driver, 'virtio_net');
    assert.ok((await domainOf(vm)).Spec.Devices.Interfaces?.some((i) => i.Alias.Name === 'ua-hot1'));

    const absent = structuredClone(v);
    absent.spec.domain.devices.interfaces = absent.spec.domain.devices.interfaces!.map((i) => (i.name === 'hot1' ? { ...i, state: 'absent' as const } : i));
    await sync(vm, absent);
    await console.waitFor(markers.nicRemoved, { fields: { mac: '02:00:00:00:aa:01' }, timeoutMs: 20_000 });
    await waitDomain(vm, 'hot1 gone', (d) => !(d.Spec.Devices.Interfaces ?? []).some((i) => i.Alias.Name === 'ua-hot1'));

    const two = structuredClone(absent);
    two.spec.domain.cpu = { ...two.spec.domain.cpu, sockets: 2 };
    await sync(vm, two);
    const cpu = await console.waitFor(markers.cpuOnline, { fields: { cpu: '1' }, timeoutMs: 30_000 });
    assert.is(cpu.fields.online, '0-1');
    assert.is((await domainOf(vm)).Spec.VCPUs?.Current, 2);
    // The hot-added vCPU thread runs below QEMU's main loop, as the first one does.
    const qemuPid = Number(execFileSync('pgrep', ['-f', `qemu-system.*${vm.vmi.metadata!.uid}`], { encoding: 'utf8' }).trim().split('\n')[0]);
    const threads = procThreads(qemuPid);
    assert.equal(threads.filter(isVcpuThread).map((t) => t.nice), [Math.min(19, threads[0]!.nice + 5), Math.min(19, threads[0]!.nice + 5)], JSON.stringify(threads));

    const one = structuredClone(two);
    one.spec.domain.cpu = { ...one.spec.domain.cpu, sockets: 1 };
    await sync(vm, one);
    const d = await domainOf(vm);
    assert.is(d.Spec.VCPUs?.Current, 2, 'nothing unplugged');
    assert.ok(d.Spec.QVirtHotplug?.Refused.some((r) => /refused under software emulation \(TCG\)/.test(r)), JSON.stringify(d.Spec.QVirtHotplug));
    // QEMU survived the refusal: a further hotplug still works.
    await sync(vm, two);
    assert.is((await domainOf(vm)).Status.Status, 'Running');
  } finally {
    await b.stop();
  }
});

test('a guest that never acknowledges the unplug: the disk stays Detaching with the reason; pause, console and another hotplug keep working', async () => {
  // Without ACPI the guest gets no hotplug notifications: device_del is never acknowledged.
  const b = await boot('hpna', guestYaml('hpna', '    features: {acpi: {enabled: false}}'));
  try {
    const { vm, root, console } = b;
    await console.waitFor(markers.ready, { timeoutMs: 120_000 });
    mountClaim(root, 'stuck');
    const added = withVolume(vm.vmi, 'stuck', 'STUCK1');
    await sync(vm, added);
    await waitDomain(vm, 'stuck attached', (d) => (d.Spec.Devices.Disks ?? []).some((x) => x.Alias.Name === 'ua-stuck'));
    const t0 = Date.now();
    const removed = withoutVolume(added, 'stuck');
    await sync(vm, removed);
    assert.ok(Date.now() - t0 < 5000, 'the removal request returned at once');
    const pending = await waitDomain(vm, 'stuck detaching', (d) => (d.Spec.QVirtHotplug?.Detaching ?? []).some((x) => x.Alias === 'stuck'));
    assert.match(pending.Spec.QVirtHotplug!.Detaching[0]!.Reason, /waiting for the guest to release disk "stuck"/);

    // Meanwhile: pause and unpause answer, the console answers, another disk plugs.
    const p = await vm.client.pauseVirtualMachine(removed);
    assert.ok(p.success, p.message);
    await waitDomain(vm, 'Paused', (d) => d.Status.Status === 'Paused', 10_000);
    const u = await vm.client.unpauseVirtualMachine(removed);
    assert.ok(u.success, u.message);
    await waitDomain(vm, 'Running', (d) => d.Status.Status === 'Running', 10_000);
    mountClaim(root, 'other', 16);
    await sync(vm, withVolume(removed, 'other', 'OTHER1'));
    await waitDomain(vm, 'other attached', (d) => (d.Spec.Devices.Disks ?? []).some((x) => x.Alias.Name === 'ua-other'));
    assert.match(await consoleRoundTrip(vm.paths.serialSocket, 'echo QVIRT-CONSOLE-$((6*7))', 'QVIRT-CONSOLE-42'), 'QVIRT-CONSOLE-42');

    const late = await waitDomain(vm, 'not acknowledged', (d) => (d.Spec.QVirtHotplug?.Detaching ?? []).some((x) => /has not acknowledged the unplug/.test(x.Reason)), 30_000);
    assert.ok((late.Spec.Devices.Disks ?? []).some((x) => x.Alias.Name === 'ua-stuck'), 'still attached while not acknowledged');
    assert.ok(Date.now() - t0 >= 10_000);
    // Adding it back while it is detaching is refused with the reason, not attempted.
    const back = await vm.client.syncVirtualMachine(withVolume(withVolume(removed, 'other', 'OTHER1'), 'stuck', 'STUCK1'));
    assert.ok(back.success, back.message);
    const refused = await domainOf(vm);
    assert.ok(refused.Spec.QVirtHotplug?.Refused.some((x) => /"stuck" is still being detached/.test(x)), JSON.stringify(refused.Spec.QVirtHotplug));
    // A reset lets QEMU complete the unplug (pitfall 4).
    assert.ok((await vm.client.resetVirtualMachine(removed)).success);
    await waitDomain(vm, 'stuck released after reset', (d) => !(d.Spec.Devices.Disks ?? []).some((x) => x.Alias.Name === 'ua-stuck') && (d.Spec.QVirtHotplug?.Detaching.length ?? 0) === 0, 30_000);
  } finally {
    await b.stop();
  }
});

test('memory: guest 1Gi → 1536Mi through virtio-mem requested-size; the guest onlines the blocks; the domain reports the plugged size', async () => {
  const b = await boot('hpmem', guestYaml('hpmem').replace('resources: {requests: {memory: 256Mi}}', 'memory: {guest: 1Gi, maxGuest: 2Gi}\n    resources: {requests: {memory: 1Gi}}'));
  try {
    const { vm, console } = b;
    await console.waitFor(markers.ready, { timeoutMs: 120_000 });
    const before = Number((await console.waitFor(markers.memory)).fields['total-kb']);
    const d0 = await domainOf(vm) as DomainJson & { Spec: { CurrentMemory?: { Value: number } } };
    assert.is(d0.Spec.CurrentMemory?.Value, 2 ** 30);
    const more = structuredClone(vm.vmi);
    more.spec.domain.memory = { ...more.spec.domain.memory, guest: '1536Mi' };
    await sync(vm, more);
    // Four 128 MiB blocks come online in the guest.
    const last = await console.waitFor(markers.memoryOnline, { where: (m) => Number(m.fields['total-kb']) - before >= 512 * 1024 - 4096, timeoutMs: 90_000 });
    console_log(`guest MemTotal ${before} kB → ${last.fields['total-kb']} kB`);
    const d = await waitDomain(vm, 'plugged 512 MiB', (x) => (x as typeof d0).Spec.CurrentMemory?.Value === 1536 * 2 ** 20, 60_000);
    assert.ok(d);
    // Beyond maxGuest: refused with the reason, nothing sent.
    const tooMuch = structuredClone(vm.vmi);
    tooMuch.spec.domain.memory = { ...tooMuch.spec.domain.memory, guest: '3Gi' };
    await sync(vm, tooMuch);
    assert.ok((await domainOf(vm)).Spec.QVirtHotplug?.Refused.some((r) => /^spec.domain.memory.guest: guest memory is greater than maxGuest/.test(r)));
  } finally {
    await b.stop();
  }
});

test.after(() => work.cleanup());
test.run();

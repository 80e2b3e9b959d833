// Boots the test guest for real under QEMU TCG and checks what it reports: disks by serial on
// virtio and SATA, NoCloud and ConfigDrive data with shell user-data, the guest agent, hotplug of
// a disk and a vCPU, and clean power-off through the ACPI button and through qemu-ga.
// QMP is spoken raw over node:net here, on purpose independent of the project's QMP client.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../lib/tmp.ts';
import { ensureGuest, kernelBootArgs, kernelCmdline, markers, MarkerLog, parseMarker, type GuestArtifacts } from '../../src/local/guest/guest.ts';

const memArg = (args: string[]) => args.includes('-m') ? [] : ['-m', '256'];
const bootTimeoutMs = 90_000; // TCG on a shared 2-vCPU host; typically 10-20 s

// ---- a minimal raw QMP exchange ------------------------------------------------------------------
interface QmpEvent { event: string; data?: Record<string, unknown> }
class RawQmp {
  readonly events: QmpEvent[] = [];
  private buf = '';
  private nextId = 0;
  private pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private eventWaiters: Array<{ name: string; resolve: (e: QmpEvent) => void }> = [];
  private readonly sock: Socket;
  private constructor(sock: Socket) {
    this.sock = sock;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      this.buf += d;
      let nl;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl).trim();
        this.buf = this.buf.slice(nl + 1);
        if (line) this.onMessage(JSON.parse(line) as Record<string, unknown>);
      }
    });
    sock.on('error', () => { /* surfaced through pending commands */ });
    sock.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('QMP connection closed'));
      this.pending.clear();
    });
  }
  static async open(path: string, timeoutMs = 10_000): Promise<RawQmp> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const sock = await new Promise<Socket>((resolve, reject) => {
          const s = connect(path, () => resolve(s));
          s.once('error', reject);
        });
        const qmp = new RawQmp(sock);
        await qmp.execute('qmp_capabilities');
        return qmp;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`QMP socket ${path} did not answer: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  private onMessage(msg: Record<string, unknown>): void {
    if (typeof msg.event === 'string') {
      const ev = msg as unknown as QmpEvent;
      this.events.push(ev);
      this.eventWaiters = this.eventWaiters.filter((w) => (w.name === ev.event ? (w.resolve(ev), false) : true));
      return;
    }
    const id = typeof msg.id === 'string' ? msg.id : undefined;
    const p = id ? this.pending.get(id) : undefined;
    if (!p || !id) return; // the greeting
    this.pending.delete(id);
    if ('error' in msg) p.reject(new Error(`QMP error: ${JSON.stringify(msg.error)}`));
    else p.resolve(msg.return);
  }
  execute(command: string, args?: Record<string, unknown>): Promise<unknown> {
    const id = `t${this.nextId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.sock.write(JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}), id }) + '\n');
    });
  }
  waitEvent(name: string, timeoutMs: number): Promise<QmpEvent> {
    const seen = this.events.find((e) => e.event === name);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no QMP event ${name} within ${timeoutMs} ms (saw ${this.events.map((e) => e.event).join(', ')})`)), timeoutMs);
      this.eventWaiters.push({ name, resolve: (e) => { clearTimeout(timer); resolve(e); } });
    });
  }
  close(): void { this.sock.destroy(); }
}

/**
 * From the guest's poweroff marker to QEMU's SHUTDOWN: the guest stops its processes, syncs and powers
 * off under TCG emulation — seconds on a quiet machine, once over 30 s in a loaded CI run after the
 * hotplug test's extra vCPU and memory.
 */
const SHUTDOWN_MS = 90_000;

// ---- QEMU with the guest ---------------------------------------------------------------------------
interface Vm { qemu: ChildProcess; qmp: RawQmp; log: MarkerLog; started: number; exited: Promise<number | null>; dir: string }

async function bootVm(guest: GuestArtifacts, dir: string, extra: string[], cmdline = kernelCmdline, bzImage = false): Promise<Vm> {
  const qmpPath = join(dir, 'qmp.sock');
  const args = [
    '-machine', 'q35', '-accel', 'tcg', ...memArg(extra), '-nodefaults', '-no-user-config', '-display', 'none',
    ...kernelBootArgs(bzImage ? { ...guest, kernel: guest.bzImage } : guest, cmdline),
    '-chardev', 'stdio,id=ser0,signal=off', '-serial', 'chardev:ser0',
    '-qmp', `unix:${qmpPath},server=on,wait=off`,
    ...extra,
  ];
  const started = Date.now();
  const qemu = spawn('qemu-system-x86_64', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const log = new MarkerLog();
  let stderr = '';
  qemu.stdout!.on('data', (d: Buffer) => log.push(d));
  qemu.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  // 'close', not 'exit': the console output is complete only once QEMU's stdout has closed.
  const exited = new Promise<number | null>((resolve) => qemu.on('close', (code, signal) => {
    log.push(`\n[qemu exited: ${code ?? signal}${stderr.trim() ? `: ${stderr.trim()}` : ''}]\n`);
    log.end(`QEMU exited (${code ?? signal})`);
    resolve(code);
  }));
  const qmp = await RawQmp.open(qmpPath);
  return { qemu, qmp, log, started, exited, dir };
}

async function stopVm(vm: Vm | undefined): Promise<void> {
  if (!vm) return;
  vm.qmp.close();
  if (vm.qemu.exitCode === null && vm.qemu.signalCode === null) {
    vm.qemu.kill('SIGKILL');
    await vm.exited;
  }
}

function makeIso(dir: string, name: string, volid: string, files: Record<string, string>): string {
  const root = join(dir, `${name}.d`);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  const iso = join(dir, `${name}.iso`);
  execFileSync('xorrisofs', ['-quiet', '-volid', volid, '-joliet', '-rock', '-o', iso, root], { stdio: ['ignore', 'ignore', 'pipe'] });
  return iso;
}

function rawDisk(dir: string, name: string, mib: number): string {
  const path = join(dir, `${name}.img`);
  execFileSync('qemu-img', ['create', '-q', '-f', 'raw', path, `${mib}M`]);
  return path;
}

/** One guest-agent request/response over the chardev socket QEMU serves for the channel. */
function agentCall(path: string, command: string, opts: { noReply?: boolean; timeoutMs?: number } = {}): Promise<unknown> {
  const { noReply = false, timeoutMs = 30_000 } = opts;
  return new Promise((resolve, reject) => {
    const sock = connect(path);
    let buf = '';
    const syncId = Math.floor(Math.random() * 1e9);
    let synced = false;
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`guest agent: no answer to ${command} within ${timeoutMs} ms`)); }, timeoutMs);
    const retry = setInterval(() => { if (!synced) sock.write(JSON.stringify({ execute: 'guest-sync', arguments: { id: syncId } }) + '\n'); }, 2000);
    const done = (fn: () => void) => { clearTimeout(timer); clearInterval(retry); sock.destroy(); fn(); };
    sock.on('error', (e) => done(() => reject(e)));
    sock.on('connect', () => sock.write(JSON.stringify({ execute: 'guest-sync', arguments: { id: syncId } }) + '\n'));
    sock.on('data', (d) => {
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        const msg = JSON.parse(line) as { return?: unknown; error?: unknown };
        if (!synced) {
          if (msg.return === syncId) {
            synced = true;
            // Commands like guest-shutdown send no reply on success.
            sock.write(JSON.stringify({ execute: command }) + '\n', () => { if (noReply) done(() => resolve(undefined)); });
          }
          continue;
        }
        if ('error' in msg) done(() => reject(new Error(`guest agent ${command}: ${JSON.stringify(msg.error)}`)));
        else done(() => resolve(msg.return));
      }
    });
  });
}

/** Waits until the console shell has printed its prompt after the last QVIRT-GUEST-READY. */
async function waitForPrompt(vm: Vm, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const out = vm.log.output;
    if (/# [^\n]*$/.test(out.slice(out.lastIndexOf(markers.ready)))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no shell prompt on the console within ${timeoutMs} ms:\n${vm.log.output.slice(-1000)}`);
}

const secs = (ms: number) => (ms / 1000).toFixed(1);

// ---- tests ---------------------------------------------------------------------------------------------
let guest: GuestArtifacts;

test.before(async () => {
  guest = await ensureGuest();
});

test('parseMarker reads names and fields, also after a prompt', () => {
  const table: Array<[string, string | undefined, Record<string, string>]> = [
    ['QVIRT-DISK name=vda serial=VDISK1 size=2048 ro=0 bus=virtio', markers.disk, { name: 'vda', serial: 'VDISK1', size: '2048', ro: '0', bus: 'virtio' }],
    ['myvm:/# \x1b[6nQVIRT-DISK-ADDED name=sda serial= size=8 ro=1 bus=scsi\r', markers.diskAdded, { name: 'sda', serial: '', size: '8', ro: '1', bus: 'scsi' }],
    ['QVIRT-GUEST-READY uptime=7.10', markers.ready, { uptime: '7.10' }],
    ['QVIRT-USERDATA-START', markers.userdataStart, {}],
    ['QVIRT-NOT-A-MARKER x=1', undefined, {}],
    ['echo QVIRT-DISKS', undefined, {}],
    ['plain text', undefined, {}],
  ];
  for (const [line, name, fields] of table) {
    const m = parseMarker(line);
    assert.is(m?.name, name, line);
    if (name) assert.equal(m!.fields, fields, line);
  }
});

test('MarkerLog: waits see past and future markers, split chunks, and fail when the console ends', async () => {
  const log = new MarkerLog();
  log.push('QVIRT-GUEST-BOOTED uptime=1.00 kernel=6.1.0-56-amd64\nQVIRT-DISK name=vda ser');
  const booted = await log.waitFor(markers.booted, { timeoutMs: 10 });
  assert.is(booted.fields.kernel, '6.1.0-56-amd64');
  const disk = log.waitFor(markers.disk, { fields: { serial: 'X1' } });
  log.push('ial=X1 size=8 ro=0 bus=virtio\r\n');
  assert.is((await disk).fields.name, 'vda');
  const big = log.waitFor(markers.memoryOnline, { where: (m) => Number(m.fields['total-kb']) > 1000 });
  log.push('QVIRT-MEMORY-ONLINE block=2 total-kb=900\nQVIRT-MEMORY-ONLINE block=3 total-kb=1100\n');
  assert.is((await big).fields.block, '3');
  const never = log.waitFor(markers.ready, { timeoutMs: 60_000 });
  log.end('QEMU exited (SIGKILL)');
  await never.then(() => assert.unreachable('resolved'), (e: Error) => assert.match(e.message, /QEMU exited \(SIGKILL\)/));
  await log.waitFor(markers.ready).then(() => assert.unreachable('resolved'), (e: Error) => assert.match(e.message, /QEMU exited/));
  assert.is((await log.waitFor(markers.disk)).fields.serial, 'X1'); // what was seen still answers
});

test('build.sh is cached: a second run prints the same paths at once', () => {
  const t0 = Date.now();
  const out = execFileSync('bash', [new URL('../../src/local/guest/build.sh', import.meta.url).pathname], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(out, [guest.kernel, guest.initrd]);
  assert.ok(Date.now() - t0 < 5000, `cached build took ${Date.now() - t0} ms`);
  assert.ok(existsSync(guest.kernel) && existsSync(guest.initrd) && existsSync(guest.bzImage));
  assert.match(guest.kernel, /\/vmlinux$/); // the Debian kernel has CONFIG_PVH
});

test('boot (bzImage): disks by serial (virtio + SATA), NoCloud user-data, ACPI power button', async () => {
  const tmp = tempDir('qvg');
  let vm: Vm | undefined;
  try {
    const iso = makeIso(tmp.path, 'nocloud', 'cidata', {
      'meta-data': 'instance-id: iid-qvirt-guest-1\nlocal-hostname: guest-one\n',
      'user-data': '#!/bin/sh\necho "userdata says $(hostname)"\nexit 7\n',
    });
    vm = await bootVm(guest, tmp.path, [
      '-drive', `if=none,id=vd1,file=${rawDisk(tmp.path, 'vd1', 4)},format=raw`,
      '-device', 'virtio-blk-pci,drive=vd1,serial=VDISK1',
      '-drive', `if=none,id=sd1,file=${rawDisk(tmp.path, 'sd1', 8)},format=raw`,
      '-device', 'ide-hd,bus=ide.1,drive=sd1,serial=SATADISK1',
      '-drive', `if=none,id=ci,file=${iso},format=raw,readonly=on`,
      '-device', 'ide-cd,bus=ide.2,drive=ci,serial=CIDATA',
    ], kernelCmdline, true);
    const booted = await vm.log.waitFor(markers.booted, { timeoutMs: bootTimeoutMs });
    const bootMs = Date.now() - vm.started;
    const vd = await vm.log.waitFor(markers.disk, { fields: { serial: 'VDISK1' } });
    assert.equal(vd.fields, { name: 'vda', serial: 'VDISK1', size: String(4 * 2048), ro: '0', bus: 'virtio' });
    const sd = await vm.log.waitFor(markers.disk, { fields: { serial: 'SATADISK1' } });
    assert.equal(sd.fields, { name: 'sda', serial: 'SATADISK1', size: String(8 * 2048), ro: '0', bus: 'sata' });
    const cd = await vm.log.waitFor(markers.disk, { fields: { serial: 'CIDATA' } });
    assert.is(cd.fields.name, 'sr0');
    assert.is(cd.fields.ro, '1');
    const ci = await vm.log.waitFor(markers.cidata);
    assert.equal(ci.fields, { 'instance-id': 'iid-qvirt-guest-1', source: 'nocloud', dev: 'sr0', hostname: 'guest-one' });
    await vm.log.waitFor(markers.userdataStart);
    const exit = await vm.log.waitFor(markers.userdataExit);
    assert.is(exit.fields.code, '7');
    assert.match(vm.log.output, /userdata says guest-one/);
    const ready = await vm.log.waitFor(markers.ready);
    const readyMs = Date.now() - vm.started;
    console.log(`  boot (bzImage): QVIRT-GUEST-BOOTED after ${secs(bootMs)} s (guest uptime ${booted.fields.uptime} s), READY after ${secs(readyMs)} s (uptime ${ready.fields.uptime} s)`);

    await vm.qmp.execute('system_powerdown');
    await vm.log.waitFor(markers.poweroff, { timeoutMs: 30_000 });
    const shutdown = await vm.qmp.waitEvent('SHUTDOWN', SHUTDOWN_MS);
    assert.is(shutdown.data?.guest, true);
    assert.is(shutdown.data?.reason, 'guest-shutdown');
    assert.is(await vm.exited, 0);
  } finally {
    await stopVm(vm);
    tmp.cleanup();
  }
});

test('boot (PVH vmlinux): ConfigDrive, guest agent, disk and vCPU hotplug, shutdown through qemu-ga', async () => {
  const tmp = tempDir('qvg');
  let vm: Vm | undefined;
  try {
    const iso = makeIso(tmp.path, 'configdrive', 'config-2', {
      'openstack/latest/meta_data.json': JSON.stringify({ uuid: '6f1c3a1e-1111-4e4e-9d9d-000000000002', hostname: 'guest-two.example' }),
      'openstack/latest/user_data': '#cloud-config\npassword: fedora\nchpasswd: { expire: False }\n',
    });
    const gaPath = join(tmp.path, 'ga.sock');
    vm = await bootVm(guest, tmp.path, [
      '-smp', '1,maxcpus=2', '-m', '256,slots=2,maxmem=1G',
      '-device', 'pcie-root-port,id=rp1,chassis=1,port=1,bus=pcie.0,addr=0x2',
      '-device', 'pcie-root-port,id=rp2,chassis=2,port=2,bus=pcie.0,addr=0x3',
      '-drive', `if=none,id=ci,file=${iso},format=raw,readonly=on`,
      '-device', 'ide-cd,bus=ide.2,drive=ci',
      '-device', 'virtio-serial-pci,id=vser0',
      '-chardev', `socket,id=ga0,path=${gaPath},server=on,wait=off`,
      '-device', 'virtserialport,bus=vser0.0,nr=1,chardev=ga0,name=org.qemu.guest_agent.0',
      '-netdev', 'user,id=net0', '-device', 'virtio-net-pci,netdev=net0,mac=52:54:00:00:00:42',
    ]);
    const ci = await vm.log.waitFor(markers.cidata, { timeoutMs: bootTimeoutMs });
    assert.equal(ci.fields, { 'instance-id': '6f1c3a1e-1111-4e4e-9d9d-000000000002', source: 'configdrive', dev: 'sr0', hostname: 'guest-two' });
    const skipped = await vm.log.waitFor(markers.userdataSkipped);
    assert.equal(skipped.fields, { reason: 'not-a-script', 'first-line': '#cloud-config' });
    const nic = await vm.log.waitFor(markers.nic);
    assert.equal(nic.fields, { name: 'eth0', mac: '52:54:00:00:00:42', driver: 'virtio_net' });
    await vm.log.waitFor(markers.gaStarted);
    const cpus = await vm.log.waitFor(markers.cpus);
    assert.equal(cpus.fields, { online: '0', possible: '0-1' });
    const ready = await vm.log.waitFor(markers.ready);
    console.log(`  boot (PVH vmlinux): READY after ${secs(Date.now() - vm.started)} s (uptime ${ready.fields.uptime} s)`);

    const osinfo = await agentCall(gaPath, 'guest-get-osinfo') as Record<string, string>;
    assert.is(osinfo.id, 'qvirt-guest');
    assert.match(osinfo['kernel-release'] ?? '', /-amd64$/);
    const host = await agentCall(gaPath, 'guest-get-host-name') as Record<string, string>;
    assert.is(host['host-name'], 'guest-two');

    // `reboot` typed into the console shell: the guest says so, QEMU resets, the guest boots again.
    const beforeReboot = vm.log.seen.length;
    await waitForPrompt(vm);
    vm.qemu.stdin!.write('reboot\n');
    await vm.log.waitFor(markers.reboot, { since: beforeReboot, timeoutMs: 30_000 });
    await vm.qmp.waitEvent('RESET', 30_000);
    const again = await vm.log.waitFor(markers.ready, { since: beforeReboot, timeoutMs: bootTimeoutMs });
    assert.ok(Number(again.fields.uptime) < Number(ready.fields.uptime) + 60, 'a fresh boot');
    await vm.log.waitFor(markers.gaStarted, { since: beforeReboot });

    // Disk hotplug and unplug on a PCIe root port.
    const mark = vm.log.seen.length;
    await vm.qmp.execute('blockdev-add', { 'node-name': 'hot1', driver: 'file', filename: rawDisk(tmp.path, 'hot1', 2) });
    await vm.qmp.execute('device_add', { driver: 'virtio-blk-pci', bus: 'rp1', drive: 'hot1', id: 'hotdisk1', serial: 'HOT1' });
    const added = await vm.log.waitFor(markers.diskAdded, { fields: { serial: 'HOT1' }, since: mark, timeoutMs: 30_000 });
    assert.equal(added.fields, { name: 'vda', serial: 'HOT1', size: String(2 * 2048), ro: '0', bus: 'virtio' });
    await vm.qmp.execute('block_resize', { 'node-name': 'hot1', size: 4 << 20 });
    const grown = await vm.log.waitFor(markers.diskChanged, { fields: { name: 'vda' }, since: mark, timeoutMs: 30_000 });
    assert.equal(grown.fields, { name: 'vda', serial: 'HOT1', size: String(4 * 2048), ro: '0', bus: 'virtio' });
    await vm.qmp.execute('device_del', { id: 'hotdisk1' });
    await vm.qmp.waitEvent('DEVICE_DELETED', 30_000);
    const removed = await vm.log.waitFor(markers.diskRemoved, { since: mark, timeoutMs: 30_000 });
    assert.equal(removed.fields, { name: 'vda', serial: 'HOT1' });

    // vCPU hotplug: the guest onlines it.
    const slots = await vm.qmp.execute('query-hotpluggable-cpus') as Array<{ type: string; props: Record<string, number>; 'qom-path'?: string }>;
    const free = slots.find((s) => !s['qom-path']);
    assert.ok(free, 'a free vCPU slot');
    await vm.qmp.execute('device_add', { driver: free!.type, id: 'vcpu1', ...free!.props });
    const online = await vm.log.waitFor(markers.cpuOnline, { since: mark, timeoutMs: 30_000 });
    assert.equal(online.fields, { cpu: '1', online: '0-1' });

    // NIC hotplug on the second root port.
    await vm.qmp.execute('netdev_add', { type: 'user', id: 'net1' });
    await vm.qmp.execute('device_add', { driver: 'virtio-net-pci', bus: 'rp2', netdev: 'net1', id: 'hotnic1', mac: '52:54:00:00:00:43' });
    const nicAdded = await vm.log.waitFor(markers.nicAdded, { since: mark, timeoutMs: 30_000 });
    assert.equal(nicAdded.fields, { name: 'eth1', mac: '52:54:00:00:00:43', driver: 'virtio_net' });

    // Memory hotplug: a 256 MiB DIMM comes online (movable), one marker per memory block.
    const before = Number((await vm.log.waitFor(markers.memory)).fields['total-kb']);
    await vm.qmp.execute('object-add', { 'qom-type': 'memory-backend-ram', id: 'mem1', size: 256 << 20 });
    await vm.qmp.execute('device_add', { driver: 'pc-dimm', id: 'dimm1', memdev: 'mem1' });
    const grownMem = await vm.log.waitFor(markers.memoryOnline, {
      since: mark, timeoutMs: 30_000, where: (m) => Number(m.fields['total-kb']) >= before + 250 * 1024,
    });
    assert.match(grownMem.fields.block ?? '', /^\d+$/);

    // Power off from inside, as KubeVirt's guest-agent shutdown would.
    await agentCall(gaPath, 'guest-shutdown', { noReply: true });
    await vm.log.waitFor(markers.poweroff, { timeoutMs: 30_000 });
    const shutdown = await vm.qmp.waitEvent('SHUTDOWN', SHUTDOWN_MS);
    assert.is(shutdown.data?.guest, true);
    assert.is(await vm.exited, 0);
  } finally {
    await stopVm(vm);
    tmp.cleanup();
  }
});

test.run();

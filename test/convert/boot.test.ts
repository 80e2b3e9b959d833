// End to end: a kernel-boot VMI with disks on every bus, a NIC, 2 of 4 vCPUs and the guest agent
// is converted, started with QEMU 7.2 under TCG and booted (the test guest). The guest must see
// what the VMI asked for: each disk with its serial, bus and read-only flag, the NIC's MAC and a
// DHCP lease, the vCPU topology, its memory, and the guest agent port. The console is read from
// the plan's serial log file, as virt-launcher's guest-console-log sidecar does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readSync, closeSync } from 'node:fs';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { convertVMI } from '../../launcher/convert/index.ts';
import { ensureGuest, kernelCmdline, markers, MarkerLog } from '../../src/local/guest/guest.ts';
import { tempDir } from '../lib/tmp.ts';
import { defaultedVMI, fixtureContext } from './fixtures.ts';
import { startPlan, type QmpSession } from './qemu-check.ts';

const disks = [
  { name: 'vdisk', bus: 'virtio', serial: 'QV-VIRTIO' },
  { name: 'rodisk', bus: 'virtio', serial: 'QV-RO', readonly: true },
  { name: 'sdisk', bus: 'sata', serial: 'QV-SATA' },
  { name: 'scsidisk', bus: 'scsi', serial: 'QV-SCSI' },
  { name: 'usbdisk', bus: 'usb', serial: 'QV-USB' },
] as const;

function bootVMI(): VirtualMachineInstance {
  const v = defaultedVMI({
    name: 'vmi-boot',
    memory: '256Mi',
    domain: {
      cpu: { sockets: 2, cores: 1, threads: 1, maxSockets: 4, model: 'host-model' },
      firmware: { uuid: '8795fe87-6b9e-5a1b-9a0c-2f4e6d8c1a3b', kernelBoot: { kernelArgs: kernelCmdline, container: { image: 'guest', kernelPath: '/vmlinuz', initrdPath: '/initrd.img' } } },
    },
    devices: {
      disks: disks.map((d) => ({ name: d.name, serial: d.serial, disk: { bus: d.bus, ...('readonly' in d ? { readonly: true } : {}) } })),
      interfaces: [{ name: 'default', masquerade: {}, macAddress: '02:00:00:12:34:56' }],
      rng: {},
    },
    spec: { volumes: disks.map((d) => ({ name: d.name, emptyDisk: { capacity: '8Mi' } })) },
  });
  return v;
}

test('the test guest boots from the plan and sees the VMI devices', async () => {
  const guest = await ensureGuest();
  const tmp = tempDir('qvb');
  let s: QmpSession | undefined;
  try {
    const vmi = bootVMI();
    const images = Object.fromEntries(disks.map((d) => [d.name, { path: `/disks/${d.name}.img`, format: 'raw' as const, size: '8M' }]));
    const ctx = fixtureContext({ name: 'boot', vmi, images }, tmp.path, { kernelBoot: { kernel: guest.kernel, initrd: guest.initrd } });
    const plan = convertVMI(vmi, ctx);
    mkdirSync(`${tmp.path}/disks`, { recursive: true });
    mkdirSync(ctx.paths.privateDir, { recursive: true });
    for (const d of disks) execFileSync('qemu-img', ['create', '-f', 'raw', `${tmp.path}/disks/${d.name}.img`, '8M'], { stdio: 'ignore' });

    s = await startPlan(plan);
    for (const c of plan.setupCommands) await s.execute(c.execute, c.arguments);
    await s.execute('cont');

    const log = new MarkerLog();
    let offset = 0;
    const buf = Buffer.alloc(65536);
    const poll = setInterval(() => {
      if (!plan.serialLog || !existsSync(plan.serialLog)) return;
      const fd = openSync(plan.serialLog, 'r');
      try {
        for (;;) {
          const n = readSync(fd, buf, 0, buf.length, offset);
          if (n <= 0) break;
          offset += n;
          log.push(buf.subarray(0, n).toString('utf8'));
        }
      } finally { closeSync(fd); }
    }, 100);
    try {
      // Generous: TCG on a shared 2-core host boots in 3-15 s idle, minutes under heavy load.
      await log.waitFor(markers.ready, { timeoutMs: 360_000 }).catch(async (err: Error) => {
        // Once seen in a loaded CI run: the console empty for the whole wait. Where QEMU and its vCPUs were.
        const what = async (cmd: string, args?: Record<string, unknown>) => JSON.stringify(await s!.execute(cmd, args).catch((e: Error) => `${cmd} failed: ${e.message}`)).slice(0, 1500);
        const regs = await what('human-monitor-command', { 'command-line': 'info registers -a' });
        throw new Error(`${err.message}; console ${offset} bytes; query-status ${await what('query-status')}; query-cpus-fast ${await what('query-cpus-fast')}; registers ${regs}`);
      });
      for (const d of disks) {
        // usb-storage enumerates late (often after READY, as DISK-ADDED), and the guest's serial
        // lookup reads no VPD page through it: match USB disks by bus.
        const m = d.bus === 'usb'
          ? log.seen.find((x) => x.name === markers.disk && x.fields['bus'] === 'usb')
            ?? await log.waitFor(markers.diskAdded, { fields: { bus: 'usb' }, timeoutMs: 30_000 })
          : await log.waitFor(markers.disk, { fields: { serial: d.serial }, timeoutMs: 1000 });
        assert.is(m.fields['bus'], d.bus, `${d.name} bus`);
        assert.is(m.fields['ro'], 'readonly' in d ? '1' : '0', `${d.name} ro`);
        assert.is(m.fields['size'], String((8 * 1024 * 1024) / 512), `${d.name} size`);
      }
      const nic = await log.waitFor(markers.nic, { fields: { mac: '02:00:00:12:34:56' }, timeoutMs: 1000 });
      assert.is(nic.fields['driver'], 'virtio_net');
      const ip = await log.waitFor(markers.nicIp, { timeoutMs: 30_000 });
      assert.match(ip.fields['ip'] ?? '', /^10\.0\.2\.15\//);
      const cpus = await log.waitFor(markers.cpus, { timeoutMs: 1000 });
      assert.is(cpus.fields['online'], '0-1');
      assert.is(cpus.fields['possible'], '0-3');
      const mem = await log.waitFor(markers.memory, { timeoutMs: 1000 });
      const kb = Number(mem.fields['total-kb']);
      assert.ok(kb > 150_000 && kb <= 262_144, `MemTotal ${kb} kB for 256Mi`);
      await log.waitFor(markers.gaStarted, { timeoutMs: 30_000 });
    } finally {
      clearInterval(poll);
    }
    assert.is(await s.quit(), 0);
  } finally {
    s?.kill();
    tmp.cleanup();
  }
});

test.run();

// Volume hotplug latency, beside QEMU alone in the same run on the same machine:
//  figure:   `addvolume` accepted (the VM status.volumeRequests patch the CLI sends, answered by the
//            API server) → the guest reports the disk (QVIRT-DISK-ADDED with its serial), through the
//            whole local mode: VM controller → VMI spec → node agent mounts the claim → launcher
//            SyncVirtualMachine → blockdev-add + device_add → guest. Median of 10.
//  baseline: a bare QEMU booting the same test guest: raw QMP blockdev-add + device_add onto a spare
//            root port → QVIRT-DISK-ADDED. Median of 10.
// Target ≤ 1 s for the figure.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QmpClient } from '../qmp/index.ts';
import { ensureGuest, importTestGuest, MarkerLog, markers } from '../src/local/guest/guest.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode } from '../src/local/up.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../src/api/types.ts';
import { addVolumeOptions } from '../src/cli/hotplug.ts';
import { volumeRequestPatch } from '../src/virt-api/volumes.ts';
import { median, report, saveResults } from './lib.ts';

const RUNS = 10;
const work = mkdtempSync('/tmp/qvhb-');
const children = new Set<ChildProcess>();
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); rmSync(work, { recursive: true, force: true }); });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Feeds a growing console log file into a MarkerLog. */
function follow(file: () => string | undefined): { log: MarkerLog; stop(): void } {
  const log = new MarkerLog();
  let offset = 0;
  const t = setInterval(() => {
    const f = file();
    if (!f || !existsSync(f)) return;
    const buf = readFileSync(f);
    if (buf.length > offset) { log.push(buf.subarray(offset)); offset = buf.length; }
  }, 10);
  return { log, stop: () => clearInterval(t) };
}

// ——— baseline: QEMU alone ———
async function baseline(): Promise<number[]> {
  const g = await ensureGuest();
  const dir = join(work, 'bare');
  const serial = join(dir, 'serial.log');
  const qmpSock = join(dir, 'qmp.sock');
  mkdirSync(dir, { recursive: true });
  const ports = Array.from({ length: 4 }, (_, i) => ['-device', `pcie-root-port,id=pci.${i + 1},bus=pcie.0,chassis=${i + 1},port=${16 + i},addr=0x2.${i}${i === 0 ? ',multifunction=on' : ''}`]).flat();
  const qemu = spawn('qemu-system-x86_64', [
    '-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-m', '256', '-smp', '1', '-nodefaults', '-no-user-config', '-display', 'none',
    '-kernel', g.kernel, '-initrd', g.initrd, '-append', 'console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0 qvirt.ga=0',
    '-chardev', `file,id=s0,path=${serial}`, '-device', 'isa-serial,chardev=s0',
    ...ports,
    '-qmp', `unix:${qmpSock},server=on,wait=off`,
  ], { stdio: 'ignore' });
  children.add(qemu);
  const con = follow(() => serial);
  try {
    await con.log.waitFor(markers.ready, { timeoutMs: 120_000 });
    const qmp = await QmpClient.connect({ path: qmpSock });
    const out: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const img = join(dir, `d${i}.img`);
      writeFileSync(img, '');
      truncateSync(img, 16 * 2 ** 20);
      const since = con.log.seen.length;
      const t0 = performance.now();
      await qmp.execute('blockdev-add', { driver: 'file', filename: img, 'node-name': `hp${i}`, 'auto-read-only': true, discard: 'unmap', cache: { direct: false, 'no-flush': false } });
      await qmp.execute('device_add', { driver: 'virtio-blk-pci-non-transitional', bus: 'pci.1', addr: '0x0', drive: `hp${i}`, id: `ua-hp${i}`, serial: `BARE${i}` });
      await con.log.waitFor(markers.diskAdded, { fields: { serial: `BARE${i}` }, since, timeoutMs: 30_000 });
      out.push(performance.now() - t0);
      await qmp.executeThenEvent('device_del', { id: `ua-hp${i}` }, 'DEVICE_DELETED', { filter: (e) => e.data?.['device'] === `ua-hp${i}`, timeout: 30_000 });
      await qmp.execute('blockdev-del', { 'node-name': `hp${i}` });
    }
    await qmp.execute('quit').catch(() => undefined);
    qmp.close();
    return out;
  } finally {
    con.stop();
    qemu.kill('SIGKILL');
    children.delete(qemu);
  }
}

// ——— figure: the whole local mode ———
async function localMode(): Promise<number[]> {
  const store = new ImageStore(join(work, 'store'));
  await importTestGuest(store);
  const local = await startLocalMode({ dataDir: join(work, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('bench', { level: 'error' }) });
  try {
    const c = local.client;
    const claims = Array.from({ length: RUNS }, (_, i) => `bench-claim-${i}`);
    for (const name of claims) {
      await c.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '16Mi' } } } });
    }
    await c.create(Resources.virtualMachines, {
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'bench-vm', namespace: 'default' },
      spec: { runStrategy: 'Always', template: { spec: { terminationGracePeriodSeconds: 0, domain: { firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0 qvirt.ga=0', container: { image: 'qvirt/test-guest:latest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } }, devices: {}, resources: { requests: { memory: '256Mi' } } } } } },
    } as VirtualMachine & { metadata: { name: string } });
    let vmi: VirtualMachineInstance | undefined;
    for (let i = 0; i < 1200 && vmi?.status?.phase !== 'Running'; i++) {
      vmi = await c.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, 'default', 'bench-vm').catch(() => undefined);
      await sleep(100);
    }
    if (vmi?.status?.phase !== 'Running') throw new Error('the bench VM never ran');
    const podsDir = join(work, 'data', 'pods');
    const con = follow(() => {
      for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
        const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', vmi!.metadata!.uid!, 'virt-serial0-log');
        if (existsSync(f)) return f;
      }
      return undefined;
    });
    try {
      await con.log.waitFor(markers.ready, { timeoutMs: 120_000 });
      const out: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const name = claims[i]!;
        for (let k = 0; k < 100; k++) {
          const pvc = await c.get<{ status?: { phase?: string } } & { metadata?: object }>(Resources.persistentVolumeClaims, 'default', name);
          if (pvc.status?.phase === 'Bound') break;
          await sleep(50);
        }
        // What `qvirt addvolume bench-vm --volume-name=<claim> --serial=BENCH<i> --bus=virtio` sends.
        const vm = await c.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, 'default', 'bench-vm');
        const opts = addVolumeOptions({ volumeName: name, serial: `BENCH${i}`, diskType: 'disk', bus: 'virtio', dataVolume: false });
        const p = volumeRequestPatch({ kind: 'vm', vm }, { addVolumeOptions: opts });
        const since = con.log.seen.length;
        await c.patch(p.resource, 'default', 'bench-vm', p.ops, 'json', p.subresource);
        const accepted = performance.now();
        await con.log.waitFor(markers.diskAdded, { fields: { serial: `BENCH${i}` }, since, timeoutMs: 30_000 });
        out.push(performance.now() - accepted);
        // Remove it again (not timed), so the spare root ports never run out.
        const since2 = con.log.seen.length;
        for (let k = 0; ; k++) {
          const vm2 = await c.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, 'default', 'bench-vm');
          if (vm2.status?.volumeRequests?.length) { await sleep(50); continue; }
          const r = volumeRequestPatch({ kind: 'vm', vm: vm2 }, { removeVolumeOptions: { name } });
          try { await c.patch(r.resource, 'default', 'bench-vm', r.ops, 'json', r.subresource); break; } catch (err) { if (k > 50) throw err; await sleep(50); }
        }
        await con.log.waitFor(markers.diskRemoved, { fields: { serial: `BENCH${i}` }, since: since2, timeoutMs: 30_000 });
        for (let k = 0; k < 200; k++) {
          const v = await c.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, 'default', 'bench-vm');
          if (!v.status?.volumeStatus?.some((s) => s.name === name)) break;
          await sleep(50);
        }
      }
      return out;
    } finally {
      con.stop();
    }
  } finally {
    await local.stop();
  }
}

const base = await baseline();
const fig = await localMode();
report({
  name: 'addvolume accepted → disk in the guest',
  value: median(fig),
  unit: 'ms',
  baseline: median(base),
  baselineName: 'raw QMP blockdev-add+device_add',
  target: { maxValue: 1000 },
  details: { runs: RUNS, min: Math.min(...fig), max: Math.max(...fig), baselineMin: Math.min(...base), baselineMax: Math.max(...base) },
});
process.exit(saveResults('hotplug') ? 0 : 2);

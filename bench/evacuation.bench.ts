// Node drain of a VM with evictionStrategy LiveMigrate (256 MiB idle test guest, TCG), median of 3,
// beside the same live migration started directly, measured in the same run on the same VM.
//  Drain: `kubectl drain NODE --delete-emptydir-data --ignore-daemonsets` until it exits — kubectl's
//  eviction (refused with 429, the VMI marked), the evacuation controller's migration, the migration
//  itself, the source launcher pod completing, kubectl's retried eviction deleting it (kubectl
//  retries every 5 s), then `kubectl uncordon`.
//  Baseline: a VirtualMachineInstanceMigration created → Succeeded, the source pod completed and
//  deleted — the same work without the eviction round trips.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { importTestGuest, TEST_GUEST_IMAGE } from '../src/local/guest/guest.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { componentLogger } from '../src/log/logger.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode } from '../src/local/up.ts';
import { Resources } from '../src/kube/resource.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../src/api/types.ts';
import { median, report, saveResults } from './lib.ts';

const RUNS = 3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = componentLogger('bench', { level: 'error' });
interface PodView { metadata?: { uid?: string; name?: string }; status?: { phase?: string } }

const t = tempDir('qeb');
const direct: number[] = [];
const drained: number[] = [];
const phases: Record<string, number[]> = {};
try {
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const dataDir = join(t.path, 'data');
  const local = await startLocalMode({ dataDir, port: 0, nodes: 2, emulation: true, imageStore: store, log });
  const kubectl = (...args: string[]) => promisify(execFile)('kubectl', args, { env: { KUBECONFIG: local.kubeconfig, HOME: t.path, PATH: process.env.PATH ?? '' }, timeout: 300_000 });
  try {
    const c = local.client;
    await c.create(Resources.virtualMachineInstances, {
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'bench', namespace: 'default' },
      spec: { evictionStrategy: 'LiveMigrate', terminationGracePeriodSeconds: 5, domain: { firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests qvirt.ga=0', container: { image: TEST_GUEST_IMAGE, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } }, devices: { interfaces: [{ name: 'default', masquerade: {} }] }, resources: { requests: { memory: '256Mi' } } }, networks: [{ name: 'default', pod: {} }] },
    });
    const get = () => c.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'bench');
    for (let i = 0; i < 1800 && !((await get()).status?.conditions ?? []).some((x) => x.type === 'LiveMigratable' && x.status === 'True'); i++) await sleep(100);
    await sleep(15_000); // the guest finishes booting: idle from here on
    const settle = async () => {
      for (let i = 0; i < 600; i++) {
        const v = await get();
        const pods = (await c.list<PodView>(Resources.pods, { namespace: 'default' })).items;
        if (v.status?.phase === 'Running' && !v.status.migrationState?.targetNode || (v.status?.migrationState?.completed && pods.length === 1)) return;
        await sleep(100);
      }
      throw new Error('the VM did not settle');
    };
    for (let r = 0; r < RUNS; r++) {
      // Direct: migration created → Succeeded → source pod completed and deleted.
      let vmi = await get();
      let srcPod = Object.entries(vmi.status!.activePods ?? {}).find(([, n]) => n === vmi.status!.nodeName)![0];
      let t0 = performance.now();
      const m = await c.create<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: `bench-${r}`, namespace: 'default' }, spec: { vmiName: 'bench' } } as VirtualMachineInstanceMigration);
      for (let phase = ''; phase !== 'Succeeded'; await sleep(20)) {
        phase = (await c.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', m.metadata!.name!)).status?.phase ?? '';
        if (phase === 'Failed') throw new Error(`migration ${r} failed: ${JSON.stringify((await get()).status?.migrationState)}`);
      }
      for (;; await sleep(20)) {
        const p = (await c.list<PodView>(Resources.pods, { namespace: 'default' })).items.find((x) => x.metadata?.uid === srcPod);
        if (!p) break;
        if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') { await c.delete(Resources.pods, 'default', p.metadata!.name!).catch(() => undefined); }
      }
      direct.push(performance.now() - t0);
      await settle();
      // Drain the node the VM is on now.
      vmi = await get();
      srcPod = Object.entries(vmi.status!.activePods ?? {}).find(([, n]) => n === vmi.status!.nodeName)![0];
      const before = new Set((await c.list<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { namespace: 'default' })).items.map((x) => x.metadata?.uid));
      t0 = performance.now();
      // Phases, first seen by polling every 100 ms while kubectl runs.
      const seen: Record<string, number> = {};
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const at = performance.now() - t0;
          const v = await get().catch(() => undefined);
          const migs = (await c.list<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { namespace: 'default' }).catch(() => ({ items: [] as VirtualMachineInstanceMigration[] }))).items.filter((x) => !before.has(x.metadata?.uid) && x.metadata?.annotations?.['kubevirt.io/evacuationMigration'] === vmi.status!.nodeName);
          const src = (await c.list<PodView>(Resources.pods, { namespace: 'default' }).catch(() => ({ items: [] as PodView[] }))).items.find((x) => x.metadata?.uid === srcPod);
          const mark = (k: string, cond: boolean) => { if (cond && seen[k] === undefined) seen[k] = at; };
          mark('marked', !!v?.status?.evacuationNodeName);
          mark('migration created', migs.length > 0);
          mark('migration Running', migs.some((x) => x.status?.phase === 'Running' || x.status?.phase === 'Succeeded'));
          mark('migration Succeeded', migs.some((x) => x.status?.phase === 'Succeeded'));
          mark('source pod Succeeded', src?.status?.phase === 'Succeeded');
          mark('source pod gone', !src);
          await sleep(100);
        }
      })();
      try {
        await kubectl('drain', vmi.status!.nodeName!, '--delete-emptydir-data', '--ignore-daemonsets', '--timeout=280s');
      } finally { polling = false; await poller; }
      drained.push(performance.now() - t0);
      for (const [k, v] of Object.entries(seen)) (phases[k] ??= []).push(v);
      await kubectl('uncordon', vmi.status!.nodeName!);
      await settle();
    }
  } finally {
    await local.stop();
  }
  for (const [k, v] of Object.entries(phases)) console.log(`  drain phase '${k}' at ${v.map((x) => (x / 1000).toFixed(1)).join(', ')} s`);
  report({ name: 'kubectl drain of a LiveMigrate VM (wall)', value: median(drained), unit: 'ms', baseline: median(direct), baselineName: 'VMIM → Succeeded + source pod gone', details: { runs: drained.length, min: Math.min(...drained), max: Math.max(...drained), baselineMin: Math.min(...direct), baselineMax: Math.max(...direct) } });
} finally {
  t.cleanup();
}
process.exitCode = saveResults('evacuation') ? 0 : 1;

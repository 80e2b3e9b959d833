// Inbound TCP after a live migration, passt beside masquerade measured in the same run: two VMs of
// the test guest (TCG) on a local mode with two nodes and a pod network, each migrated back and
// forth ROUNDS times; after each migration the host connects to the forwarded port on the TARGET
// pod's IPv4 every 100 ms, from the moment the migration is seen Succeeded until the guest answers.
// The guest sends nothing on its own in between, so for passt this is the time until its
// migration target delivers to the address the guest kept (its first pod's, recorded on the VMI:
// src/net/passt-guest-addresses.ts); masquerade's guest keeps 10.0.2.2 behind the pod's NAT.
// Also the migrations' own durations (created → Succeeded), for scale.
//
//   node bench/passt-migration.bench.ts      (root: network namespaces, bridges, nftables)
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { importTestGuest } from '../src/local/guest/guest.ts';
import { ensureBuiltPasst, getVmi, guestVmi, tcpRead, tcpServer, waitFor } from '../test/net/lib.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../src/local/up.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import type { Interface, VirtualMachineInstanceMigration } from '../src/api/types.ts';
import { median, report, saveResults } from './lib.ts';

const ROUNDS = Number(process.env.PASST_MIGRATION_ROUNDS ?? 3);
const INBOUND_LIMIT_MS = 60_000;

interface Sample { migrationS: number; inboundS: number }

type Pod = { metadata?: { name?: string }; status?: { podIP?: string; phase?: string } };

async function migrateAndReach(local: LocalMode, vmi: string, name: string): Promise<Sample> {
  const t0 = performance.now();
  await local.client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: 'default' }, spec: { vmiName: vmi } } as VirtualMachineInstanceMigration);
  const done = await waitFor(`${name} final`, async () => {
    const m = await local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', name).catch(() => undefined);
    return m?.status?.phase === 'Succeeded' || m?.status?.phase === 'Failed' ? m : undefined;
  }, 300_000, 100);
  const t1 = performance.now();
  if (done.status?.phase !== 'Succeeded') throw new Error(`${name}: ${JSON.stringify(done.status)}`);
  const targetPod = (await getVmi(local, vmi))?.status?.migrationState?.targetPod;
  if (!targetPod) throw new Error(`${name}: no target pod in the VMI's migration state`);
  const ip = await waitFor(`${targetPod} IP`, async () => (await local.client.get<Pod>(Resources.pods, 'default', targetPod).catch(() => undefined))?.status?.podIP, 30_000, 50);
  for (;;) {
    if ((await tcpRead(ip, 8080, 1000))?.trim() === `hello-from-${vmi}`) break;
    if (performance.now() - t1 > INBOUND_LIMIT_MS) throw new Error(`${name}: no answer over ${ip}:8080 within ${INBOUND_LIMIT_MS / 1000} s of the migration's success`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { migrationS: (t1 - t0) / 1000, inboundS: (performance.now() - t1) / 1000 };
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) { console.log('passt-migration bench: needs root (pod network); skipped'); return; }
  const t = tempDir('qbpm');
  chmodSync(t.path, 0o755); // passt, started by a root launcher, runs as nobody
  ensureBuiltPasst();
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const octet = 100 + (process.pid % 100);
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, nodes: 2, emulation: true, imageStore: store, podNetwork: { bridge: `qbp${process.pid % 10000}`, subnet: `10.249.${octet}.0/24`, subnet6: `fd00:249:${octet.toString(16)}::/64`, stateDir: join(t.path, 'cni') }, log: componentLogger('bench', { level: 'error' }) });
  const samples: Record<'passt' | 'masquerade', Sample[]> = { passt: [], masquerade: [] };
  try {
    const vms: Array<['passt' | 'masquerade', string, Partial<Interface>]> = [['passt', 'pst', { passtBinding: {}, ports: [{ port: 8080 }] }], ['masquerade', 'msq', { masquerade: {}, ports: [{ port: 8080 }] }]];
    for (const [, vmi, iface] of vms) await local.client.create(Resources.virtualMachineInstances, guestVmi(vmi, iface, tcpServer(8080, `hello-from-${vmi}`)));
    for (const [, vmi] of vms) {
      const ip = await waitFor(`${vmi} Running with a pod IP`, async () => { const v = await getVmi(local, vmi); return v?.status?.phase === 'Running' ? v.status.interfaces?.[0]?.ipAddress : undefined; }, 300_000, 500);
      await waitFor(`${vmi} answering on ${ip}`, async () => (await tcpRead(ip, 8080))?.trim() === `hello-from-${vmi}` || undefined, 180_000, 500);
    }
    // Alternate the two so both see the same background load.
    for (let i = 0; i < ROUNDS; i++) {
      for (const [kind, vmi] of vms) {
        const s = await migrateAndReach(local, vmi, `${vmi}-mig-${i}`);
        samples[kind].push(s);
        console.log(`  ${kind} round ${i + 1}: migration ${s.migrationS.toFixed(1)} s, inbound TCP over the target pod IP ${s.inboundS.toFixed(2)} s after`);
      }
    }
  } finally {
    await local.stop();
    t.cleanup();
  }
  const p = samples.passt;
  const m = samples.masquerade;
  const details = (xs: Sample[]) => ({ rounds: xs.length, min: Math.min(...xs.map((s) => s.inboundS)), max: Math.max(...xs.map((s) => s.inboundS)) });
  report({ name: 'inbound TCP after migration, passt', value: median(p.map((s) => s.inboundS)), unit: 's', baseline: median(m.map((s) => s.inboundS)), baselineName: 'masquerade', target: { maxValue: 5 }, details: details(p) });
  report({ name: 'live migration created → Succeeded, passt', value: median(p.map((s) => s.migrationS)), unit: 's', baseline: median(m.map((s) => s.migrationS)), baselineName: 'masquerade', details: { rounds: p.length } });
  if (!saveResults('passt-migration')) process.exitCode = 2;
}

await main();

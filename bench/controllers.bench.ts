// The cluster controllers at scale: 1 000 VirtualMachines (runStrategy Always) created at once
// against the embedded API server; `qvirt controller` (a child process, so its RSS is its own)
// turns them into 1 000 VMIs, defaulted, each with its launcher pod and phase Scheduling.
//  (a) wall time from the first VM create to the last launcher pod and the last VMI in
//      Scheduling, beside the API floor measured in the same run: the time the same client takes
//      to create 1 000 plain objects (ConfigMaps) through the same server. Target ≤ 20 s.
//  (b) the controller process's peak RSS (VmHWM), beside an idle `qvirt controller` that has
//      synced empty caches. Target ≤ 200 MiB. The controller runs with CONTROLLER_NODE_FLAGS, as its
//      deployment should (QVIRT_CONTROLLER_NODE_FLAGS="" measures it without).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startCluster, eventually, type Cluster } from '../test/controller-integration/lib.ts';
import { Informer } from '../src/kube/informer.ts';
import { Resources } from '../src/kube/resource.ts';
import type { KubeClient } from '../src/kube/client.ts';
import type { Lease } from '../src/kube/leader-election.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../src/api/types.ts';
import type { Pod } from '../controller/pod.ts';
import { report, saveResults } from './lib.ts';
import { CONTROLLER_NODE_FLAGS } from '../controller/manager.ts';

const N = 1000;
const CONCURRENCY = 32;
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const NS = 'default';
/** V8 flags for the controller process (the deployment's container command line carries them too). */
const NODE_FLAGS = process.env.QVIRT_CONTROLLER_NODE_FLAGS !== undefined ? process.env.QVIRT_CONTROLLER_NODE_FLAGS.split(' ').filter(Boolean) : [...CONTROLLER_NODE_FLAGS];

const vm = (name: string): VirtualMachine => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine',
  metadata: { name, namespace: NS },
  spec: {
    runStrategy: 'Always',
    template: {
      metadata: { labels: { 'kubevirt.io/vm': name } },
      spec: {
        domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }, { name: 'cloudinitdisk', disk: { bus: 'virtio' } }] }, memory: { guest: '128Mi' } },
        terminationGracePeriodSeconds: 0,
        volumes: [
          { name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest' } },
          { name: 'cloudinitdisk', cloudInitNoCloud: { userData: '#!/bin/sh\necho hi\n' } },
        ],
      },
    },
  },
} as VirtualMachine);

async function createAll(client: KubeClient, n: number, make: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next < n) await make(next++); }));
  void client;
  return performance.now() - t0;
}

function kb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

function startController(cluster: Cluster, lease: string): ChildProcess {
  return spawn(process.execPath, [...NODE_FLAGS, MAIN, 'controller', '--kubeconfig', cluster.kubeconfig, '--lease-name', lease, '--retry-period', '200ms'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, QVIRT_LOG_LEVEL: 'warn', KUBECONFIG: '' },
  });
}

async function stopController(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(t);
}

const leaseHolder = (cluster: Cluster, name: string) => cluster.client.get<Lease>(Resources.leases, 'kubevirt', name).then((l) => l.spec?.holderIdentity, () => undefined);

const cluster = await startCluster();
const children: ChildProcess[] = [];
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });
let ok = true;
try {
  const client = cluster.client;
  // API floor: 1 000 plain creates through the same client and server.
  const floorMs = await createAll(client, N, (i) => client.create(Resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `floor-${i}`, namespace: NS }, data: { i: String(i) } } as never));

  // Idle controller: synced on empty caches (no VMs yet), then its peak RSS.
  const idle = startController(cluster, 'bench-idle');
  children.push(idle);
  await eventually(() => leaseHolder(cluster, 'bench-idle'), 15_000, 'idle controller leads');
  await new Promise((r) => setTimeout(r, 1500));
  const idleHWM = kb(idle.pid!, 'VmHWM');
  await stopController(idle);

  const ctl = startController(cluster, 'bench');
  children.push(ctl);
  await eventually(() => leaseHolder(cluster, 'bench'), 15_000, 'controller leads');
  await new Promise((r) => setTimeout(r, 500)); // caches synced

  // Watch the outcome from here (an informer each; no repeated lists of 1 000 objects).
  const pods = new Informer<Pod>(cluster.newClient(), Resources.pods, { labelSelector: 'kubevirt.io=virt-launcher' });
  const vmis = new Informer<VirtualMachineInstance>(cluster.newClient(), Resources.virtualMachineInstances);
  await Promise.all([pods.start(), vmis.start()]);
  let scheduling = 0;
  let lastPodAt = 0;
  let lastSchedulingAt = 0;
  const seenScheduling = new Set<string>();
  pods.on('add', () => { if (pods.list().length >= N && !lastPodAt) lastPodAt = performance.now(); });
  vmis.on('update', (_o, v) => {
    if (v.status?.phase === 'Scheduling' && !seenScheduling.has(v.metadata!.uid!)) {
      seenScheduling.add(v.metadata!.uid!);
      if (++scheduling >= N && !lastSchedulingAt) lastSchedulingAt = performance.now();
    }
  });
  let peakRSS = 0;
  const sampler = setInterval(() => { try { peakRSS = Math.max(peakRSS, kb(ctl.pid!, 'VmRSS')); } catch { /* exited */ } }, 100);

  const t0 = performance.now();
  const createMs = await createAll(client, N, (i) => client.create(Resources.virtualMachines, vm(`vm-${String(i).padStart(4, '0')}`)));
  await eventually(() => lastPodAt > 0 && lastSchedulingAt > 0, 120_000, `${N} launcher pods and ${N} VMIs in Scheduling (pods ${pods.list().length}, scheduling ${scheduling})`);
  const wallMs = Math.max(lastPodAt, lastSchedulingAt) - t0;
  clearInterval(sampler);
  const hwm = kb(ctl.pid!, 'VmHWM');

  // Exactly one VMI per VM and one pod per VMI.
  const byVMI = new Map<string, number>();
  for (const p of pods.list()) { const uid = p.metadata?.ownerReferences?.[0]?.uid ?? ''; byVMI.set(uid, (byVMI.get(uid) ?? 0) + 1); }
  const dupes = [...byVMI.values()].filter((n) => n > 1).length;
  if (vmis.list().length !== N || pods.list().length !== N || dupes > 0) {
    console.error(`wrong outcome: ${vmis.list().length} VMIs, ${pods.list().length} pods, ${dupes} VMIs with more than one pod`);
    ok = false;
  }
  pods.stop();
  vmis.stop();
  await stopController(ctl);

  report({
    name: `${N} VMs → VMIs + launcher pods (wall)`,
    value: wallMs / 1000, unit: 's',
    baseline: floorMs / 1000, baselineName: `${N} ConfigMap creates`,
    target: { maxValue: 20 },
    details: { vmCreatesSeconds: +(createMs / 1000).toFixed(2), lastPodSeconds: +((lastPodAt - t0) / 1000).toFixed(2), lastSchedulingSeconds: +((lastSchedulingAt - t0) / 1000).toFixed(2) },
  });
  report({
    name: 'controller peak RSS (VmHWM)',
    value: hwm / 1024, unit: 'MiB',
    baseline: idleHWM / 1024, baselineName: 'idle controller',
    target: { maxValue: 200 },
    details: { sampledPeakRssMiB: +(peakRSS / 1024).toFixed(1) },
  });
} finally {
  for (const c of children) await stopController(c);
  await cluster.close();
}
const met = saveResults('controllers');
process.exitCode = ok && met ? 0 : 2;

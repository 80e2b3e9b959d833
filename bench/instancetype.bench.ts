// The VM controller with instance types at scale (issue 18): 1 000 VirtualMachines (runStrategy
// Always) naming an instance type and a preference (KubeVirt's csmall and virtio examples) created at
// once against the embedded API server; `qvirt controller` (a child process) finds both, pins each
// in a ControllerRevision per VM, records the status refs and creates 1 000 VMIs sized by csmall —
// beside the same 1 000 VMs sized by their own template, in the same run, each on a fresh server
// and controller. The figure: wall time from the first VM create to the last VMI with its launcher
// pod in Scheduling, instance types beside none. Target ≤ 1.3×.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { startCluster, eventually, type Cluster } from '../test/controller-integration/lib.ts';
import { Informer } from '../src/kube/informer.ts';
import { Resources } from '../src/kube/resource.ts';
import type { KubeClient, KubeObject } from '../src/kube/client.ts';
import type { Lease } from '../src/kube/leader-election.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../src/api/types.ts';
import { report, saveResults } from './lib.ts';
import { CONTROLLER_NODE_FLAGS } from '../controller/manager.ts';

const N = Number(process.env.QVIRT_BENCH_VMS ?? 1000);
const CONCURRENCY = 32;
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const NS = 'default';
const EXAMPLES = new URL('../test/fixtures/kubevirt-examples/instancetype/', import.meta.url);
const example = (f: string) => yaml.load(readFileSync(new URL(f, EXAMPLES), 'utf8')) as KubeObject & Record<string, unknown>;

const vm = (name: string, sized: boolean): VirtualMachine => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine',
  metadata: { name, namespace: NS },
  spec: {
    runStrategy: 'Always',
    ...(sized ? { instancetype: { kind: 'VirtualMachineInstancetype', name: 'csmall' }, preference: { kind: 'VirtualMachinePreference', name: 'virtio' } } : {}),
    template: {
      metadata: { labels: { 'kubevirt.io/vm': name } },
      spec: {
        domain: { devices: { disks: [{ name: 'containerdisk', disk: {} }, { name: 'cloudinitdisk', disk: {} }] }, ...(sized ? {} : { memory: { guest: '128Mi' } }) },
        terminationGracePeriodSeconds: 0,
        volumes: [
          { name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest' } },
          { name: 'cloudinitdisk', cloudInitNoCloud: { userData: '#!/bin/sh\necho hi\n' } },
        ],
      },
    },
  },
} as VirtualMachine);

async function createAll(n: number, make: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (next < n) await make(next++); }));
}

function startController(cluster: Cluster): ChildProcess {
  return spawn(process.execPath, [...CONTROLLER_NODE_FLAGS, MAIN, 'controller', '--kubeconfig', cluster.kubeconfig, '--lease-name', 'bench', '--retry-period', '200ms'], {
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

const children: ChildProcess[] = [];
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });

/** Seconds from the first create to the last of N VMIs in Scheduling; and what the VMIs look like. */
async function run(sized: boolean): Promise<{ seconds: number; wrong: string[] }> {
  const cluster = await startCluster();
  const client: KubeClient = cluster.client;
  try {
    if (sized) {
      await client.create(Resources.virtualMachineInstancetypes, { ...example('csmall.yaml'), metadata: { name: 'csmall', namespace: NS } });
      await client.create(Resources.virtualMachinePreferences, { ...example('virtio.yaml'), metadata: { name: 'virtio', namespace: NS } });
    }
    const ctl = startController(cluster);
    children.push(ctl);
    await eventually(() => client.get<Lease>(Resources.leases, 'kubevirt', 'bench').then((l) => l.spec?.holderIdentity, () => undefined), 15_000, 'controller leads');
    await new Promise((r) => setTimeout(r, 500)); // caches synced
    const vmis = new Informer<VirtualMachineInstance>(cluster.newClient(), Resources.virtualMachineInstances);
    await vmis.start();
    const seen = new Set<string>();
    let lastAt = 0;
    vmis.on('update', (_o, v) => {
      if (v.status?.phase === 'Scheduling' && !seen.has(v.metadata!.uid!)) {
        seen.add(v.metadata!.uid!);
        if (seen.size >= N && !lastAt) lastAt = performance.now();
      }
    });
    const t0 = performance.now();
    await createAll(N, (i) => client.create(Resources.virtualMachines, vm(`vm-${String(i).padStart(4, '0')}`, sized)));
    await eventually(() => lastAt > 0, 180_000, `${N} VMIs in Scheduling (${seen.size} so far)`);
    const wrong: string[] = [];
    for (const v of vmis.list()) {
      const got = [v.spec.domain.cpu?.sockets, v.spec.domain.memory?.guest, v.spec.domain.devices.disks?.[0]?.disk?.bus].join('/');
      if (sized && got !== '1/128Mi/virtio') wrong.push(`${v.metadata?.name}: ${got}`);
    }
    if (vmis.list().length !== N) wrong.push(`${vmis.list().length} VMIs`);
    if (sized) {
      const revisions = (await client.list(Resources.controllerRevisions, { namespace: NS })).items.length;
      if (revisions !== 2 * N) wrong.push(`${revisions} ControllerRevisions, not ${2 * N}`);
    }
    vmis.stop();
    await stopController(ctl);
    return { seconds: (lastAt - t0) / 1000, wrong };
  } finally {
    await cluster.close();
  }
}

const plain = await run(false);
const sized = await run(true);
const wrong = [...plain.wrong, ...sized.wrong];
if (wrong.length) console.error(`wrong outcome: ${wrong.slice(0, 10).join('; ')}`);
report({
  name: `${N} VMs naming csmall + virtio → VMIs (wall)`,
  value: sized.seconds, unit: 's',
  baseline: plain.seconds, baselineName: `${N} VMs sized by their template`,
  target: { maxRatio: 1.3 },
});
const met = saveResults('instancetype');
process.exitCode = wrong.length === 0 && met ? 0 : 2;

// Controllers surviving their own failures: `qvirt controller` in a child process leads; a second
// replica waits; the leader is SIGKILLed and the standby takes over once the lease expires; a clean
// stop releases the lease so a restarted replica takes over at once; the API server restarting
// under the controllers makes their informers relist (410) — and through it all no VM ever gets a
// second VMI, no VMI a second launcher pod.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Resources } from '../../src/kube/resource.ts';
import type { Lease } from '../../src/kube/leader-election.ts';
import { eventually, newManager, SimulatedNode, sleep, startCluster, type Cluster } from './lib.ts';
import type { ControllerManager } from '../../controller/manager.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const NS = 'default';
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const TIMING = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 200 };

const vm = (name: string): VirtualMachine => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine',
  metadata: { name, namespace: NS },
  spec: {
    runStrategy: 'Always',
    template: {
      metadata: { labels: { 'kubevirt.io/vm': name } },
      spec: {
        domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '64M' } } },
        volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest' } }],
      },
    },
  },
} as VirtualMachine);

const lease = (c: Cluster) => c.client.get<Lease>(Resources.leases, 'kubevirt', 'qvirt-controller').catch(() => undefined);

/** Every VM Running with exactly one VMI, every VMI with exactly one launcher pod. */
async function allRunningOnce(c: Cluster, names: string[]): Promise<void> {
  await eventually(async () => {
    const vms = (await c.client.list<VirtualMachine>(Resources.virtualMachines, { namespace: NS })).items;
    return names.every((n) => vms.find((v) => v.metadata?.name === n)?.status?.printableStatus === 'Running');
  }, 15_000, `${names.join(',')} Running`);
  const vmis = (await c.client.list<VirtualMachineInstance>(Resources.virtualMachineInstances, { namespace: NS })).items;
  const pods = (await c.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: 'kubevirt.io=virt-launcher' })).items;
  assert.is(vmis.length, names.length, 'one VMI per VM');
  for (const vmi of vmis) {
    const mine = pods.filter((p) => p.metadata?.ownerReferences?.[0]?.uid === vmi.metadata?.uid);
    assert.is(mine.length, 1, `one launcher pod for ${vmi.metadata?.name}`);
  }
  assert.is(pods.length, names.length, 'no stray pods');
}

function spawnController(c: Cluster): ChildProcess {
  return spawn(process.execPath, [MAIN, 'controller', '--kubeconfig', c.kubeconfig, '--lease-duration', '2s', '--renew-deadline', '1500ms', '--retry-period', '200ms'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, QVIRT_LOG_LEVEL: process.env.QVIRT_LOG_LEVEL ?? 'warn', KUBECONFIG: '' },
  });
}

test('leader hand-over: SIGKILL the leader, the standby takes over, clean stop releases the lease; no duplicates', async () => {
  const cluster = await startCluster();
  const node = new SimulatedNode(cluster);
  let child: ChildProcess | undefined;
  const managers: ControllerManager[] = [];
  try {
    await node.start();
    child = spawnController(cluster);
    const exited = new Promise<void>((r) => child!.once('exit', () => r()));
    const first = await eventually(async () => (await lease(cluster))?.spec?.holderIdentity, 10_000, 'the child to take the lease');
    const standby = newManager(cluster, { leaderElect: true, identity: 'standby', ...TIMING });
    managers.push(standby);
    await standby.start();
    await cluster.client.create(Resources.virtualMachines, vm('vm-a'));
    await cluster.client.create(Resources.virtualMachines, vm('vm-b'));
    await allRunningOnce(cluster, ['vm-a', 'vm-b']);
    assert.is(standby.isLeader, false, 'the standby does not reconcile');
    assert.is((await lease(cluster))?.spec?.holderIdentity, first);

    child.kill('SIGKILL');
    await exited;
    const t0 = Date.now();
    await cluster.client.create(Resources.virtualMachines, vm('vm-c'));
    await standby.leading;
    const took = Date.now() - t0;
    assert.ok(took < 6000, `took over in ${took} ms`);
    assert.is((await lease(cluster))?.spec?.holderIdentity, 'standby');
    await allRunningOnce(cluster, ['vm-a', 'vm-b', 'vm-c']);

    // Clean stop: the lease is released; a new replica (a controller restart) leads at once.
    await standby.stop();
    assert.is((await lease(cluster))?.spec?.holderIdentity, '');
    const restarted = newManager(cluster, { leaderElect: true, identity: 'restarted', ...TIMING, leaseDurationMs: 30_000 });
    managers.push(restarted);
    const t1 = Date.now();
    await restarted.start();
    await restarted.leading;
    assert.ok(Date.now() - t1 < 3000, 'no wait for expiry after a release');
    await cluster.client.create(Resources.virtualMachines, vm('vm-d'));
    await allRunningOnce(cluster, ['vm-a', 'vm-b', 'vm-c', 'vm-d']);
    await sleep(300);
    await allRunningOnce(cluster, ['vm-a', 'vm-b', 'vm-c', 'vm-d']);
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const m of managers) await m.stop();
    await node.stop();
    await cluster.close();
  }
});

test('qvirt controller stops cleanly on SIGTERM and releases its lease', async () => {
  const cluster = await startCluster();
  let child: ChildProcess | undefined;
  try {
    child = spawnController(cluster);
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    await eventually(async () => (await lease(cluster))?.spec?.holderIdentity, 10_000, 'the child to take the lease');
    child.kill('SIGTERM');
    assert.is(await exited, 0);
    assert.is((await lease(cluster))?.spec?.holderIdentity, '');
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await cluster.close();
  }
});

test('API server restart: informers relist after 410, reconciling goes on without duplicates', async () => {
  const cluster = await startCluster({ persistent: true });
  const node = new SimulatedNode(cluster);
  const manager = newManager(cluster);
  try {
    await node.start();
    await manager.start();
    await manager.leading;
    await cluster.client.create(Resources.virtualMachines, vm('vm-x'));
    await allRunningOnce(cluster, ['vm-x']);
    const lists = manager.current!.informers.vms.listCount;
    // Churn the informers do not see, then restart: their resourceVersion is not replayable (410).
    for (let i = 0; i < 10; i++) await cluster.client.create(Resources.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: NS } });
    await cluster.restart();
    await eventually(() => manager.current!.informers.vms.listCount > lists, 10_000, 'VM informer relist');
    await eventually(async () => node['pods'].listCount > 1, 10_000, 'node informer relist');
    await cluster.client.create(Resources.virtualMachines, vm('vm-y'));
    await allRunningOnce(cluster, ['vm-x', 'vm-y']);
  } finally {
    await manager.stop();
    await node.stop();
    await cluster.close();
  }
});

test.run();

// qvirt on a real Kubernetes cluster (QVIRT_E2E_KUBECONFIG's, else ../shared/k8s started and
// stopped here), in one run:
//  (a) `qvirt install --use-emulation` → components ready and serving, beside the same cluster's own
//      rollout of a plain Deployment of two busybox replicas (created → 2/2 ready), in the same run;
//  (b) 10 VMs created 1 s apart, creation → VMI Running, p50 and p95, beside 10 plain pods created
//      1 s apart, creation → Running (both as one 200 ms poller sees them), every image preloaded (KubeVirt's own scale job sees
//      p50 ≈ 18 s, p95 ≈ 27 s on real hardware);
//  (c) the memory (RSS) of the qvirt components on the node (two virt-controller replicas and
//      virt-handler) beside the kubelet's.
import { readFileSync, readdirSync } from 'node:fs';
import { report, saveResults, percentile } from './lib.ts';
import { withRealCluster, kubectl, loadImages } from '../test/lib/real-cluster.ts';
import { apply, buildGuestImages, buildQvirtImages, getJson, qvirt, sleep } from '../test/cluster/lib.ts';
import { waitFor } from '../test/lib/within.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { KubeClient, loadKubeConfig, type KubeObject } from '../src/kube/client.ts';
import { Resources, type ResourceType } from '../src/kube/resource.ts';

const N = 10;
const NS = 'qvirt-bench';
const c = await withRealCluster();
const work = tempDir('qvbc');

/** Resident memory (MiB) of the processes whose command line matches `re`, summed. */
function rssMiB(re: RegExp): { mib: number; pids: number[] } {
  let mib = 0;
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!re.test(cmd)) continue;
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${d}/status`, 'utf8'));
      if (m) { mib += Number(m[1]) / 1024; pids.push(Number(d)); }
    } catch { /* gone */ }
  }
  return { mib, pids };
}


try {
  const built = await buildQvirtImages();
  const guest = await buildGuestImages(work.path);
  loadImages(c, [...built.map((b) => b.archive), ...guest.archives]);

  // (a) the cluster's own rollout of a two-replica Deployment, then qvirt's install.
  kubectl(c, ['create', 'namespace', NS]);
  const t0 = Date.now();
  apply(c, [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'plain', namespace: NS }, spec: { replicas: 2, selector: { matchLabels: { app: 'plain' } }, template: { metadata: { labels: { app: 'plain' } }, spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'localhost/busybox:1', imagePullPolicy: 'Never', command: ['sleep', '3600'] }] } } } }]);
  await waitFor('plain Deployment ready', () => getJson(c, ['deployment', 'plain', '-n', NS])?.status?.readyReplicas === 2, 120_000, 200);
  const plainRollout = (Date.now() - t0) / 1000;
  kubectl(c, ['delete', 'deployment', 'plain', '-n', NS, '--wait=true']);
  const t1 = Date.now();
  const inst = await qvirt(c, ['install', '--use-emulation', '--timeout', '300s']);
  if (inst.code !== 0) throw new Error(`qvirt install failed: ${inst.out}`);
  const installS = (Date.now() - t1) / 1000;
  report({ name: 'qvirt install → ready and serving (s)', value: installS, unit: 's', baseline: plainRollout, baselineName: '2-replica busybox Deployment rollout', details: {} });

  // (b) pods, then VMs, 1 s apart; creation → Running as seen by one poller (every 200 ms, through
  // the API) for both, since the API's timestamps have a resolution of one second.
  const client = new KubeClient(loadKubeConfig(c.kubeconfig));
  const startLatencies = async (resource: ResourceType, create: (i: number) => KubeObject): Promise<number[]> => {
    const createdAt = new Map<string, number>();
    const runningAt = new Map<string, number>();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const now = Date.now();
        for (const o of (await client.list<KubeObject & { status?: { phase?: string } }>(resource, { namespace: NS })).items) {
          if (o.status?.phase === 'Running' && !runningAt.has(o.metadata!.name!)) runningAt.set(o.metadata!.name!, now);
        }
        await sleep(200);
      }
    })();
    for (let i = 0; i < N; i++) {
      const obj = create(i);
      createdAt.set(obj.metadata!.name!, Date.now());
      await client.create(obj.kind === 'VirtualMachine' ? Resources.virtualMachines : resource, obj);
      await sleep(1000);
    }
    await waitFor(`${N} ${resource.kind} Running`, () => runningAt.size >= N, 600_000, 500);
    polling = false;
    await poller;
    return [...createdAt].map(([name, t]) => ((runningAt.get(name) ?? t) - t) / 1000);
  };
  const podStart = await startLatencies(Resources.pods, (i) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${i}`, namespace: NS }, spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'localhost/busybox:1', imagePullPolicy: 'Never', command: ['sleep', '3600'] }] } } as KubeObject));
  kubectl(c, ['delete', 'pods', '--all', '-n', NS, '--wait=true']);

  const vm = (i: number) => ({
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: `vm-${i}`, namespace: NS },
    spec: { runStrategy: 'Always', template: { spec: {
      domain: { firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0 qvirt.ga=0', container: { image: guest.kernel, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img', imagePullPolicy: 'IfNotPresent' } } }, devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '192Mi' } } },
      volumes: [{ name: 'containerdisk', containerDisk: { image: guest.disk, imagePullPolicy: 'IfNotPresent' } }],
    } } },
  } as KubeObject);
  const vmiStart = await startLatencies(Resources.virtualMachineInstances, vm);
  await client.close();
  report({ name: `VM create → VMI Running, p50 of ${N} (s)`, value: percentile(vmiStart, 50), unit: 's', baseline: percentile(podStart, 50), baselineName: 'plain pod create → Running p50', details: { kubevirtScaleJobP50: 18, samples: vmiStart.map((x) => x.toFixed(1)).join(' ') } });
  report({ name: `VM create → VMI Running, p95 of ${N} (s)`, value: percentile(vmiStart, 95), unit: 's', baseline: percentile(podStart, 95), baselineName: 'plain pod create → Running p95', details: { kubevirtScaleJobP95: 27, podSamples: podStart.map((x) => x.toFixed(1)).join(' ') } });

  // (c) memory on the node with the 10 VMs running.
  const controllers = rssMiB(/qvirt(\.mjs)? controller/);
  const handler = rssMiB(/qvirt(\.mjs)? handler/);
  const kubelet = rssMiB(/(^|\/)kubelet /);
  report({ name: 'qvirt components RSS on the node (MiB)', value: controllers.mib + handler.mib, unit: 'MiB', baseline: kubelet.mib, baselineName: 'kubelet RSS', details: { virtControllerMiB: +controllers.mib.toFixed(1), virtControllerProcesses: controllers.pids.length, virtHandlerMiB: +handler.mib.toFixed(1) } });

  kubectl(c, ['delete', 'vm', '--all', '-n', NS, '--wait=true', '--timeout=180s']);
  await waitFor('VMIs gone', () => getJson<{ items: any[] }>(c, ['vmi', '-n', NS])!.items.length === 0, 180_000, 2000);
  kubectl(c, ['delete', 'namespace', NS, '--wait=true', '--timeout=120s']);
  const un = await qvirt(c, ['uninstall', '--timeout', '180s']);
  if (un.code !== 0) throw new Error(`qvirt uninstall failed: ${un.out}`);
} finally {
  work.cleanup();
}
process.exitCode = saveResults('cluster') ? 0 : 2;

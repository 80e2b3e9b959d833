// qvirt on a real Kubernetes cluster (QVIRT_E2E_KUBECONFIG's, else ../shared/k8s started and
// stopped here), in one run:
//  (a) `qvirt install --use-emulation` → components ready and serving, beside the same cluster's own
//      rollout of a plain Deployment of two busybox replicas (created → 2/2 ready), in the same run;
//  (b) 10 VMs created 1 s apart, creation → VMI Running, p50 and p95, beside 10 plain pods created
//      1 s apart, creation → Running, with every image preloaded (KubeVirt's own scale job sees
//      p50 ≈ 18 s, p95 ≈ 27 s on real hardware);
//  (c) the memory (RSS) of the qvirt components on the node (two virt-controller replicas and
//      virt-handler) beside the kubelet's.
import { readFileSync, readdirSync } from 'node:fs';
import { report, saveResults, percentile } from './lib.ts';
import { withRealCluster, kubectl, loadImages } from '../test/lib/real-cluster.ts';
import { apply, buildGuestImages, buildQvirtImages, getJson, qvirt, sleep, waitFor } from '../test/cluster/lib.ts';
import { tempDir } from '../test/lib/tmp.ts';

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

const created = (o: any) => Date.parse(o.metadata.creationTimestamp);

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

  // (b) pods, then VMs, 1 s apart.
  const podStart: number[] = [];
  for (let i = 0; i < N; i++) {
    apply(c, [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${i}`, namespace: NS }, spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'localhost/busybox:1', imagePullPolicy: 'Never', command: ['sleep', '3600'] }] } }]);
    await sleep(1000);
  }
  await waitFor('all pods Running', () => getJson<{ items: any[] }>(c, ['pods', '-n', NS])!.items.filter((p) => p.status.phase === 'Running').length === N, 300_000, 1000);
  for (const p of getJson<{ items: any[] }>(c, ['pods', '-n', NS])!.items) {
    const running = (p.status.conditions ?? []).find((x: any) => x.type === 'Ready')?.lastTransitionTime;
    podStart.push((Date.parse(running) - created(p)) / 1000);
  }
  kubectl(c, ['delete', 'pods', '--all', '-n', NS, '--wait=true']);

  const vm = (i: number) => ({
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: `vm-${i}`, namespace: NS },
    spec: { runStrategy: 'Always', template: { spec: {
      domain: { firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet qvirt.dhcp=0 qvirt.ga=0', container: { image: guest.kernel, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img', imagePullPolicy: 'IfNotPresent' } } }, devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '192Mi' } } },
      volumes: [{ name: 'containerdisk', containerDisk: { image: guest.disk, imagePullPolicy: 'IfNotPresent' } }],
    } } },
  });
  for (let i = 0; i < N; i++) { apply(c, [vm(i)]); await sleep(1000); }
  const vmiStart: number[] = [];
  await waitFor('all VMIs Running', () => getJson<{ items: any[] }>(c, ['vmi', '-n', NS])!.items.filter((v) => v.status?.phase === 'Running').length === N, 600_000, 1000);
  for (const v of getJson<{ items: any[] }>(c, ['vmi', '-n', NS])!.items) {
    const running = (v.status.phaseTransitionTimestamps ?? []).find((x: any) => x.phase === 'Running')?.phaseTransitionTimestamp;
    const vmObj = getJson(c, ['vm', v.metadata.name, '-n', NS])!;
    vmiStart.push((Date.parse(running) - created(vmObj)) / 1000);
  }
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

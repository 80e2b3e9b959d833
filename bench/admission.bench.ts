// What virt-api's validating webhooks cost inside the embedded API server: the same requests
// through two servers in this process, one with kubeVirtWebhooks() and one without (the baseline),
// run alternately so both see the same machine load. Per request, median wall time over N of:
//  (a) VM create (KubeVirt's vm-cirros example shape) — virtualmachine-validator parses, defaults a
//      copy of the template and validates it;
//  (b) VMI create — virtualmachineinstances-create-validator (mutator-defaulted copy, validation);
//  (c) VMI status update through the main resource, as virt-handler writes it —
//      virtualmachineinstances-update-validator parses old and new and compares the specs.
import { startApiServer, type ApiServer } from '../src/apiserver/index.ts';
import { kubeVirtWebhooks } from '../src/admission/kubevirt-webhooks.ts';
import { applyCrdFiles } from '../src/deploy/crds.ts';
import { KubeClient } from '../src/kube/client.ts';
import { kubeConfigForServer } from '../src/kube/kubeconfig.ts';
import { Resources } from '../src/kube/resource.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../src/api/types.ts';
import { componentLogger } from '../src/log/logger.ts';
import { median, report, saveResults } from './lib.ts';

const N = Number(process.env.QVIRT_BENCH_N ?? 300);
const log = componentLogger('bench', { level: 'warn' });
const spec = () => ({
  domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }, { name: 'cloudinitdisk', disk: { bus: 'virtio' } }] }, memory: { guest: '128Mi' } },
  terminationGracePeriodSeconds: 0,
  volumes: [
    { name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo:latest' } },
    { name: 'cloudinitdisk', cloudInitNoCloud: { userData: '#!/bin/sh\necho hi\n' } },
  ],
});

interface Side { api: ApiServer; client: KubeClient; times: { vm: number[]; vmi: number[]; status: number[] } }

async function side(withWebhooks: boolean): Promise<Side> {
  const api = await startApiServer({ tls: false, log, ...(withWebhooks ? { admission: kubeVirtWebhooks({}) } : {}) });
  const client = new KubeClient(kubeConfigForServer(api.url));
  await applyCrdFiles(client);
  return { api, client, times: { vm: [], vmi: [], status: [] } };
}

async function timed(into: number[], fn: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await fn();
  into.push(performance.now() - t0);
}

const sides = [await side(true), await side(false)] as const;
try {
  for (let i = 0; i < N; i++) {
    for (const s of i % 2 ? [...sides].reverse() : sides) {
      const name = `b${i}`;
      await timed(s.times.vm, () => s.client.create(Resources.virtualMachines, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: 'default' }, spec: { runStrategy: 'Halted', template: { metadata: { labels: { 'kubevirt.io/vm': name } }, spec: spec() } } } as unknown as VirtualMachine));
      await timed(s.times.vmi, () => s.client.create(Resources.virtualMachineInstances, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' }, spec: spec() } as unknown as VirtualMachineInstance));
      await timed(s.times.status, () => s.client.patch(Resources.virtualMachineInstances, 'default', name, { status: { phase: 'Scheduling', nodeName: 'n1' } }, 'merge'));
    }
  }
  const [w, wo] = sides;
  const row = (name: string, a: number[], b: number[]) => report({ name, value: median(a), unit: 'ms', baseline: median(b), baselineName: 'without webhooks', target: { maxRatio: 2 }, details: { n: a.length } });
  row('VM create with webhooks (median)', w.times.vm, wo.times.vm);
  row('VMI create with webhooks (median)', w.times.vmi, wo.times.vmi);
  row('VMI status update with webhooks (median)', w.times.status, wo.times.status);
} finally {
  for (const s of sides) { await s.client.close(); await s.api.stop(); }
}
process.exitCode = saveResults('admission') ? 0 : 1;

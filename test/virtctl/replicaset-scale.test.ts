// A VirtualMachineInstanceReplicaSet of 3 in the local mode, scaled to 1 with `kubectl scale`
// (the CRD's scale subresource): three guests boot, two are removed, one keeps running.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { eventually, startEnv, testVm, type Env } from './lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvr'); });
test.after(async () => { await env?.stop(); });

const vmis = async () => (await env.local.client.list<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, { namespace: 'default', labelSelector: 'app=rs-guest' })).items;

test('VMIRS of 3 → 3 Running VMIs → kubectl scale --replicas=1 → 1 Running VMI, the others gone', async () => {
  const template = testVm('x', 'Always').spec.template;
  await env.local.client.create(Resources.virtualMachineInstanceReplicaSets, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', metadata: { name: 'rs', namespace: 'default' },
    spec: { replicas: 3, selector: { matchLabels: { app: 'rs-guest' } }, template: { ...template, metadata: { labels: { app: 'rs-guest' } }, spec: { ...template.spec, domain: { ...template.spec!.domain, resources: { requests: { memory: '128Mi' } } } } } },
  } as never);
  const three = await eventually(async () => { const l = await vmis(); return l.length === 3 && l.every((v) => v.status?.phase === 'Running') ? l : undefined; }, 240_000, '3 Running VMIs');
  const kubectl = (...args: string[]) => promisify(execFile)('kubectl', ['--kubeconfig', env.local.kubeconfig, ...args], { timeout: 30_000 });
  const out = (await kubectl('scale', 'vmirs', 'rs', '--replicas=1')).stdout;
  assert.match(out, /scaled/);
  const one = await eventually(async () => { const l = await vmis(); return l.length === 1 && l[0]!.status?.phase === 'Running' && l[0]!.metadata?.deletionTimestamp == null ? l : undefined; }, 120_000, '1 Running VMI left');
  assert.ok(three.some((v) => v.metadata!.uid === one[0]!.metadata!.uid), 'the survivor is one of the three');
  const rs = await eventually(async () => { const r = await env.local.client.get<{ status?: { replicas?: number; readyReplicas?: number }; metadata?: object }>(Resources.virtualMachineInstanceReplicaSets, 'default', 'rs'); return r.status?.replicas === 1 ? r : undefined; }, 30_000, 'RS status.replicas 1');
  assert.is(rs.status?.replicas, 1);
  await env.local.client.delete(Resources.virtualMachineInstanceReplicaSets, 'default', 'rs');
  await eventually(async () => (await vmis()).length === 0, 90_000, 'the VMIs gone with their RS');
});

test.run();

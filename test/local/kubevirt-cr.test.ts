// The local mode keeps its cluster configuration in the KubeVirt CR kubevirt/kubevirt, as KubeVirt
// does: a feature gate switched on there (KubeVirt's documented `kubectl patch kubevirt ...`) lets
// the next VMI that needs it through admission, with no restart; the VM controller sees the
// change too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { eventually, startEnv, type Env } from '../virtctl/lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvkcr'); });
test.after(async () => { await env?.stop(); });

const hostDiskVmi = (name: string) => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
  metadata: { name, namespace: 'default' },
  spec: {
    domain: { devices: { disks: [{ name: 'hd', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '64Mi' } } },
    volumes: [{ name: 'hd', hostDisk: { path: `/tmp/${name}.img`, type: 'DiskOrCreate', capacity: '16Mi' } }],
  },
});

test('the KubeVirt CR exists; a feature gate patched into it takes effect without a restart', async () => {
  const cr = await env.local.client.get<any>(Resources.kubeVirts, 'kubevirt', 'kubevirt');
  assert.is(cr.metadata.name, 'kubevirt');
  const refused = await env.local.client.create(Resources.virtualMachineInstances, hostDiskVmi('hd1') as never).then(() => '', (e: Error) => e.message);
  assert.match(refused, /HostDisk feature gate is not enabled/);
  await env.local.client.patch(Resources.kubeVirts, 'kubevirt', 'kubevirt', { spec: { configuration: { developerConfiguration: { featureGates: ['HostDisk'] } } } }, 'merge');
  await eventually(async () => {
    try { await env.local.client.create(Resources.virtualMachineInstances, hostDiskVmi('hd2') as never, { dryRun: true }); return true; } catch { return false; }
  }, 30_000, 'a hostDisk VMI admitted after the gate was switched on in the KubeVirt CR');
  // Emulation stays this machine's decision whatever the CR says.
  const after = await env.local.client.get<any>(Resources.kubeVirts, 'kubevirt', 'kubevirt');
  assert.equal(after.spec.configuration.developerConfiguration.featureGates, ['HostDisk']);
});

test.run();

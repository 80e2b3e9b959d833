// Volume hotplug's attachment pods with the VMI controller running against the embedded API server
// and a simulated kubelet: a claim added to a running VMI gets an `hp-volume-` pod owned by the
// launcher pod on its node, its volumeStatus goes AttachedToNode with the pod's name and, once the
// pod runs, its UID; a second claim replaces the pod by one with both (the old one deleted once the
// new one runs); removing the claims deletes it; a local-path claim gets none; a finished VMI none.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Resources } from '../../src/kube/resource.ts';
import { eventually, handlerPhasePatch, startControlPlane, type Cluster, type ControlPlane } from './lib.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance, Volume } from '../../src/api/types.ts';

const NS = 'default';
let plane: ControlPlane;
let cluster: Cluster;

const getVMI = (name: string) => cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, NS, name);
const attachmentPods = async () => (await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: 'kubevirt.io=hotplug-disk' })).items;
const launcherPod = async (vmi: VirtualMachineInstance) => (await cluster.client.list<Pod>(Resources.pods, { namespace: NS, labelSelector: `kubevirt.io/created-by=${vmi.metadata!.uid}` })).items[0]!;

async function claim(name: string, annotations: Record<string, string> = {}): Promise<void> {
  const c = await cluster.client.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: NS, annotations }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } }, volumeName: `pv-${name}` } });
  await cluster.client.updateStatus(Resources.persistentVolumeClaims, { ...c, status: { phase: 'Bound', capacity: { storage: '64Mi' }, accessModes: ['ReadWriteOnce'] } });
}

/** What the VM controller does for `addvolume`/`removevolume`: the VMI spec's volumes. */
async function setHotplugVolumes(name: string, claims: string[]): Promise<void> {
  const vmi = await getVMI(name);
  const cold = (vmi.spec.volumes ?? []).filter((v) => !v.persistentVolumeClaim?.hotpluggable);
  const hot: Volume[] = claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c, hotpluggable: true } }));
  await cluster.client.update(Resources.virtualMachineInstances, { ...vmi, spec: { ...vmi.spec, volumes: [...cold, ...hot] } });
}

test.before(async () => {
  plane = await startControlPlane({});
  ({ cluster } = plane);
});

test.after(async () => {
  await plane?.stop();
});

test('a hotplugged claim gets an hp-volume pod on the VMI\'s node; a second one replaces it; removal deletes it', async () => {
  await cluster.client.create(Resources.virtualMachineInstances, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'hp', namespace: NS },
    spec: { domain: { devices: {}, resources: { requests: { memory: '64Mi' } } }, volumes: [{ name: 'cd', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }] },
  } as VirtualMachineInstance);
  let vmi = await eventually(async () => { const v = await getVMI('hp'); return v.status?.phase === 'Running' && v; }, 10_000, 'VMI Running');
  const launcher = await launcherPod(vmi);

  await claim('data1');
  await setHotplugVolumes('hp', ['data1']);
  const [first] = await eventually(async () => { const p = await attachmentPods(); return p.length === 1 && p[0]!.status?.phase === 'Running' && p; }, 10_000, 'one running attachment pod');
  assert.match(first!.metadata!.name!, /^hp-volume-/);
  assert.equal(first!.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [['Pod', launcher.metadata!.name, launcher.metadata!.uid, true]]);
  assert.equal(first!.metadata?.annotations, { 'kubevirt.io/owner-vmi-name': 'hp', 'kubevirt.io/owner-vmi-uid': vmi.metadata!.uid });
  assert.equal(first!.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values, ['node01']);
  assert.equal(first!.spec?.volumes?.filter((v) => v.persistentVolumeClaim).map((v) => v.persistentVolumeClaim!.claimName), ['data1']);
  vmi = await eventually(async () => { const v = await getVMI('hp'); return !!v.status?.volumeStatus?.find((s) => s.name === 'data1')?.hotplugVolume?.attachPodUID && v; }, 10_000, 'attachPodUID recorded');
  const st = vmi.status!.volumeStatus!.find((s) => s.name === 'data1')!;
  assert.equal([st.phase, st.reason, st.hotplugVolume?.attachPodName, st.hotplugVolume?.attachPodUID], ['AttachedToNode', 'SuccessfulCreate', first!.metadata!.name, first!.metadata!.uid]);
  assert.is(st.persistentVolumeClaimInfo?.claimName, 'data1');

  await claim('data2');
  await setHotplugVolumes('hp', ['data1', 'data2']);
  const [second] = await eventually(async () => {
    const p = await attachmentPods();
    return p.length === 1 && p[0]!.metadata!.uid !== first!.metadata!.uid && p[0]!.status?.phase === 'Running' && p;
  }, 10_000, 'the pod replaced by one with both claims, the old one deleted');
  assert.equal(second!.spec?.volumes?.filter((v) => v.persistentVolumeClaim).map((v) => v.name).sort(), ['data1', 'data2']);
  vmi = await eventually(async () => { const v = await getVMI('hp'); return v.status?.volumeStatus?.every((s) => !s.hotplugVolume || s.hotplugVolume.attachPodUID === second!.metadata!.uid) && v; }, 10_000, 'both volumes on the new pod');

  await setHotplugVolumes('hp', []);
  await eventually(async () => (await attachmentPods()).length === 0, 10_000, 'no attachment pod left');
});

test('a local-path claim (local mode) gets no attachment pod', async () => {
  await claim('local1', { 'local.qvirt.io/path': '/var/lib/qvirt/pv/default_local1' });
  await setHotplugVolumes('hp', ['local1']);
  await eventually(async () => (await getVMI('hp')).status?.volumeStatus?.find((s) => s.name === 'local1')?.persistentVolumeClaimInfo, 10_000, 'the claim looked at');
  assert.is((await attachmentPods()).length, 0);
  assert.is((await getVMI('hp')).status?.volumeStatus?.find((s) => s.name === 'local1')?.phase, undefined, 'its phases are the node agent\'s');
});

test('a finished VMI\'s attachment pods are deleted', async () => {
  await setHotplugVolumes('hp', ['data1']);
  await eventually(async () => (await attachmentPods()).length === 1, 10_000, 'an attachment pod');
  const vmi = await getVMI('hp');
  await cluster.client.patch(Resources.virtualMachineInstances, NS, 'hp', handlerPhasePatch(vmi, 'Failed'), 'json');
  await eventually(async () => (await attachmentPods()).length === 0, 10_000, 'attachment pods deleted');
});

test.run();

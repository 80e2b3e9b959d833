// The VM controller with instance types and preferences, against the embedded API server (no
// webhooks here: what the controller itself does): KubeVirt's clarge/virtio/cluster-csmall examples
// applied as written; a VM naming them starts a VMI sized by the instance type, with the
// preference's buses, the reference annotations, two ControllerRevisions named and labelled as
// KubeVirt's and the VM's status refs naming them; a restart keeps what the revision pinned though
// the instance type changed; a VM naming a missing instance type does not start (Failure condition
// FailedFindInstancetype with the API's NotFound message, Stopped) until it appears; a template that
// conflicts is refused at the revision store (FailedCreate, KubeVirt's message and event);
// inferFromVolume takes the names from the claim's labels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { Resources } from '../../src/kube/resource.ts';
import { isNotFound, type KubeObject } from '../../src/kube/client.ts';
import { eventually, startControlPlane, type Cluster, type ControlPlane } from './lib.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import type { ControllerRevision } from '../../src/api/instancetype/revision.ts';

const NS = 'default';
const example = (file: string) => yaml.load(readFileSync(new URL(`../fixtures/kubevirt-examples/instancetype/${file}`, import.meta.url), 'utf8')) as KubeObject & Record<string, any>;

let plane: ControlPlane;
let cluster: Cluster;

const getVM = (name: string) => cluster.client.get<VirtualMachine & KubeObject>(Resources.virtualMachines, NS, name);
const getVMI = (name: string) => cluster.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, NS, name).catch((err: unknown) => { if (isNotFound(err)) return undefined; throw err; });
const events = async (name: string) => (await cluster.client.list<KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }>(Resources.events, { namespace: NS })).items.filter((e) => e.involvedObject?.name === name);

/** A VM of KubeVirt's vm-cirros-* shape (a container disk and cloud-init), without the template memory the examples carry. */
function vmNaming(name: string, matchers: Record<string, unknown>, runStrategy = 'Always'): VirtualMachine & KubeObject {
  const vm = example('vm-cirros-clarge-virtio.yaml');
  vm.metadata = { name, namespace: NS };
  delete vm.spec.instancetype;
  delete vm.spec.preference;
  delete vm.spec.template.spec.domain.memory;
  delete vm.spec.template.spec.domain.resources;
  return { ...vm, spec: { ...vm.spec, ...matchers, runStrategy } } as VirtualMachine & KubeObject;
}

test.before(async () => {
  plane = await startControlPlane({ node: false });
  ({ cluster } = plane);
  for (const f of ['clarge.yaml', 'csmall.yaml', 'virtio.yaml']) await cluster.client.create(Resources[f === 'virtio.yaml' ? 'virtualMachinePreferences' : 'virtualMachineInstancetypes'], { ...example(f), metadata: { ...example(f).metadata, namespace: NS } });
  await cluster.client.create(Resources.virtualMachineClusterInstancetypes, example('cluster-csmall.yaml'));
});

test.after(async () => {
  await plane?.stop();
});

test('clarge + virtio: the VMI is sized by the instance type, takes the preference, names both; two revisions pinned in the status', async () => {
  await cluster.client.create(Resources.virtualMachines, vmNaming('sized', { instancetype: { kind: 'VirtualMachineInstancetype', name: 'clarge' }, preference: { kind: 'VirtualMachinePreference', name: 'virtio' } }));
  const vmi = await eventually(() => getVMI('sized'), 10_000, 'the VMI of sized');
  assert.equal(vmi.spec.domain.cpu && [vmi.spec.domain.cpu.sockets, vmi.spec.domain.cpu.cores, vmi.spec.domain.cpu.threads], [4, 1, 1]);
  assert.is(vmi.spec.domain.memory?.guest, '2Gi');
  assert.equal(vmi.spec.domain.devices.disks?.map((d) => d.disk?.bus), ['virtio', 'virtio']);
  assert.equal(vmi.spec.domain.devices.interfaces?.map((i) => [i.name, i.model]), [['default', 'virtio']]);
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/instancetype-name'], 'clarge');
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/preference-name'], 'virtio');

  const vm = await eventually(async () => { const v = await getVM('sized'); return v.status?.instancetypeRef?.controllerRevisionRef && v.status.preferenceRef?.controllerRevisionRef && v; }, 10_000, 'the status refs');
  const clarge = await cluster.client.get<KubeObject>(Resources.virtualMachineInstancetypes, NS, 'clarge');
  const itRev = `sized-clarge-v1beta1-${clarge.metadata!.uid}-${clarge.metadata!.generation}`;
  assert.equal(vm.status?.instancetypeRef, { name: 'clarge', kind: 'VirtualMachineInstancetype', controllerRevisionRef: { name: itRev } });
  assert.is(vm.status?.preferenceRef?.name, 'virtio');
  const rev = await cluster.client.get<KubeObject & ControllerRevision>(Resources.controllerRevisions, NS, itRev);
  assert.equal(rev.metadata?.labels, {
    'instancetype.kubevirt.io/object-generation': String(clarge.metadata!.generation),
    'instancetype.kubevirt.io/object-kind': 'VirtualMachineInstancetype',
    'instancetype.kubevirt.io/object-name': 'clarge',
    'instancetype.kubevirt.io/object-uid': clarge.metadata!.uid,
    'instancetype.kubevirt.io/object-version': 'v1beta1',
  });
  assert.equal(rev.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]), [['VirtualMachine', 'sized', vm.metadata!.uid, true]]);
  assert.equal((rev.data as { spec: unknown }).spec, { cpu: { guest: 4 }, memory: { guest: '2Gi' } });
  assert.is((rev.data as { metadata: { labels?: unknown } }).metadata.labels, undefined);
});

test('a restart keeps what the revision pinned, though the instance type changed since', async () => {
  const clarge = await cluster.client.get<KubeObject & { spec: { cpu: { guest: number } } }>(Resources.virtualMachineInstancetypes, NS, 'clarge');
  await cluster.client.update(Resources.virtualMachineInstancetypes, { ...clarge, spec: { ...clarge.spec, cpu: { guest: 2 } } });
  const before = (await getVMI('sized'))!;
  await cluster.client.delete(Resources.virtualMachineInstances, NS, 'sized');
  const after = await eventually(async () => { const v = await getVMI('sized'); return v && v.metadata?.uid !== before.metadata?.uid && v; }, 45_000, 'a new VMI of sized');
  assert.is(after.spec.domain.cpu?.sockets, 4, 'the pinned 4 vCPUs, not the instance type\'s 2 now');
});

test('a cluster instance type by its kind, or with no kind at all', async () => {
  await cluster.client.create(Resources.virtualMachines, vmNaming('clustered', { instancetype: { name: 'cluster-csmall' } }));
  const vmi = await eventually(() => getVMI('clustered'), 10_000, 'the VMI of clustered');
  assert.equal([vmi.spec.domain.cpu?.sockets, vmi.spec.domain.memory?.guest], [1, '128Mi']);
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/cluster-instancetype-name'], 'cluster-csmall');
});

test('a missing instance type: Failure FailedFindInstancetype with the API\'s message, Stopped, no VMI — until it is created', async () => {
  await cluster.client.create(Resources.virtualMachines, vmNaming('waiting', { instancetype: { kind: 'VirtualMachineInstancetype', name: 'nonexistent' } }));
  const vm = await eventually(async () => { const v = await getVM('waiting'); return v.status?.conditions?.some((c) => c.type === 'Failure') && v; }, 10_000, 'the Failure condition');
  const failure = vm.status!.conditions!.find((c) => c.type === 'Failure')!;
  assert.equal([failure.status, failure.reason, failure.message], ['True', 'FailedFindInstancetype', 'virtualmachineinstancetypes.instancetype.kubevirt.io "nonexistent" not found']);
  assert.is(vm.status?.printableStatus, 'Stopped');
  assert.is(await getVMI('waiting'), undefined);

  await cluster.client.create(Resources.virtualMachineInstancetypes, { ...example('csmall.yaml'), metadata: { name: 'nonexistent', namespace: NS } });
  await eventually(() => getVMI('waiting'), 10_000, 'the VMI once the instance type exists');
  await eventually(async () => !(await getVM('waiting')).status?.conditions?.some((c) => c.type === 'Failure'), 10_000, 'the Failure condition gone');
});

test('a template that conflicts (no webhook to refuse it): the revision is not stored, FailedCreate with KubeVirt\'s message and event, no VMI', async () => {
  const vm = vmNaming('conflicting', { instancetype: { kind: 'VirtualMachineInstancetype', name: 'csmall' } });
  vm.spec.template.spec!.domain.cpu = { sockets: 2 };
  await cluster.client.create(Resources.virtualMachines, vm);
  const got = await eventually(async () => { const v = await getVM('conflicting'); return v.status?.conditions?.some((c) => c.type === 'Failure') && v; }, 10_000, 'the Failure condition');
  const message = 'error encountered while storing instancetype.kubevirt.io controllerRevisions: VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type';
  const failure = got.status!.conditions!.find((c) => c.type === 'Failure')!;
  assert.equal([failure.reason, failure.message], ['FailedCreate', message]);
  assert.ok((await events('conflicting')).some((e) => e.reason === 'FailedCreate' && e.message === message), 'the FailedCreate event');
  assert.is(await getVMI('conflicting'), undefined);
  assert.is(got.status?.instancetypeRef, undefined);
});

test('inferFromVolume: the instance type and preference named by the claim\'s labels are written into the VM', async () => {
  await cluster.client.create(Resources.persistentVolumeClaims, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: 'rootdisk', namespace: NS, labels: { 'instancetype.kubevirt.io/default-instancetype': 'csmall', 'instancetype.kubevirt.io/default-instancetype-kind': 'VirtualMachineInstancetype', 'instancetype.kubevirt.io/default-preference': 'virtio', 'instancetype.kubevirt.io/default-preference-kind': 'VirtualMachinePreference' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  } as KubeObject);
  const vm = vmNaming('inferred', { instancetype: { inferFromVolume: 'root' }, preference: { inferFromVolume: 'root' } }, 'Halted');
  vm.spec.template.spec!.volumes = [{ name: 'root', persistentVolumeClaim: { claimName: 'rootdisk' } }];
  vm.spec.template.spec!.domain.devices.disks = [{ name: 'root', disk: {} }];
  await cluster.client.create(Resources.virtualMachines, vm);
  const got = await eventually(async () => { const v = await getVM('inferred'); return v.status?.instancetypeRef?.controllerRevisionRef && v; }, 10_000, 'the inferred matchers pinned');
  assert.equal([got.spec.instancetype, got.spec.preference], [{ name: 'csmall', kind: 'VirtualMachineInstancetype' }, { name: 'virtio', kind: 'VirtualMachinePreference' }]);

  const bad = vmNaming('uninferable', { instancetype: { inferFromVolume: 'nope' } }, 'Halted');
  await cluster.client.create(Resources.virtualMachines, bad);
  const failed = await eventually(async () => { const v = await getVM('uninferable'); return v.status?.conditions?.find((c) => c.type === 'Failure'); }, 10_000, 'the inference failure');
  assert.equal([failed.reason, failed.message], ['FailedFindInstancetype', 'unable to find volume nope to infer defaults']);
});

test.run();

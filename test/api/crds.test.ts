// The generated CRDs: up to date with the generator, shaped as KubeVirt's (names, columns,
// subresources), structural, and — loaded into the embedded API server's CRD machinery, which
// compiles and evaluates their CEL rules — accepting KubeVirt's examples and rejecting bad objects
// with the intended messages, with no webhook involved.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { CRD_DIR, renderCrds, staleCrdFiles } from '../../scripts/gen-crds.ts';
import { resourceFromCrd } from '../../src/apiserver/crd.ts';
import { prune, validate } from '../../src/apiserver/schema-validation.ts';
import type { ResourceDef } from '../../src/apiserver/resources.ts';
import { allCelRules } from '../../src/api/schema/rules.ts';
import { loadExample, loadExamples, loadInstancetypeExamples } from './fixtures.ts';

type Obj = Record<string, any>;

const crdFiles = [...renderCrds().keys()];
const crds: Obj[] = crdFiles.map((f) => yaml.load(readFileSync(join(CRD_DIR, f), 'utf8')) as Obj);
const byKind = new Map<string, Obj>(crds.map((c) => [c.spec.names.kind, c]));

function def(kind: string): ResourceDef {
  const r = resourceFromCrd(byKind.get(kind)!);
  assert.equal(r.errors, [], `${kind} CRD accepted`);
  return r.def!;
}

/** Errors the API server reports for `obj` of `kind` (as a create: no old object). */
function apiErrors(kind: string, obj: unknown): string[] {
  const d = def(kind);
  const compiled = d.schemas.get('v1')!;
  const pruned = prune(structuredClone(obj), compiled.schema, true);
  return validate(pruned, compiled, undefined).map((e: any) => `${e.field}: ${e.detail ?? e.type}`);
}

test('deploy/crds is up to date with scripts/gen-crds.ts', () => {
  assert.equal(staleCrdFiles(), [], 'run: node scripts/gen-crds.ts');
  assert.equal(crdFiles.sort(), [
    'migrationpolicies.migrations.kubevirt.io.yaml',
    'virtualmachineclusterinstancetypes.instancetype.kubevirt.io.yaml',
    'virtualmachineclusterpreferences.instancetype.kubevirt.io.yaml',
    'virtualmachineinstancemigrations.kubevirt.io.yaml',
    'virtualmachineinstancepresets.kubevirt.io.yaml',
    'virtualmachineinstancereplicasets.kubevirt.io.yaml',
    'virtualmachineinstances.kubevirt.io.yaml',
    'virtualmachineinstancetypes.instancetype.kubevirt.io.yaml',
    'virtualmachinepools.pool.kubevirt.io.yaml',
    'virtualmachinepreferences.instancetype.kubevirt.io.yaml',
    'virtualmachines.kubevirt.io.yaml',
  ]);
});

test('names, scope, categories, label, versions', () => {
  const expected: Record<string, [string, string[]]> = {
    VirtualMachineInstance: ['virtualmachineinstances', ['vmi', 'vmis']],
    VirtualMachine: ['virtualmachines', ['vm', 'vms']],
    VirtualMachineInstanceReplicaSet: ['virtualmachineinstancereplicasets', ['vmirs', 'vmirss']],
    VirtualMachineInstanceMigration: ['virtualmachineinstancemigrations', ['vmim', 'vmims']],
  };
  for (const [kind, [plural, shortNames]] of Object.entries(expected)) {
    const c = byKind.get(kind)!;
    assert.is(c.metadata.name, `${plural}.kubevirt.io`);
    assert.equal(c.metadata.labels, { 'kubevirt.io': '' });
    assert.is(c.spec.group, 'kubevirt.io');
    assert.is(c.spec.scope, 'Namespaced');
    assert.equal(c.spec.names.categories, ['all']);
    assert.equal(c.spec.names.shortNames, shortNames);
    assert.is(c.spec.names.singular, plural.slice(0, -1));
    assert.is(c.spec.versions.length, 1);
    assert.equal([c.spec.versions[0].name, c.spec.versions[0].served, c.spec.versions[0].storage], ['v1', true, true]);
  }
});

test('MigrationPolicy and VirtualMachinePool: groups, versions, scope, names and subresources as crds.go', () => {
  const mp = byKind.get('MigrationPolicy')!;
  assert.equal([mp.metadata.name, mp.spec.group, mp.spec.scope, mp.spec.names.shortNames, mp.spec.names.categories], ['migrationpolicies.migrations.kubevirt.io', 'migrations.kubevirt.io', 'Cluster', undefined, undefined]);
  assert.equal(mp.spec.versions.map((v: Obj) => [v.name, v.served, v.storage, v.subresources]), [['v1alpha1', true, true, { status: {} }]]);
  const pool = byKind.get('VirtualMachinePool')!;
  assert.equal([pool.metadata.name, pool.spec.group, pool.spec.scope, pool.spec.names.shortNames, pool.spec.names.categories], ['virtualmachinepools.pool.kubevirt.io', 'pool.kubevirt.io', 'Namespaced', ['vmpool', 'vmpools'], ['all']]);
  assert.equal(pool.spec.versions.map((v: Obj) => [v.name, v.served, v.storage]), [['v1alpha1', true, false], ['v1beta1', true, true]]);
  assert.equal(pool.spec.versions[1].subresources, { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } });
  assert.equal(pool.spec.versions[1].additionalPrinterColumns.map((c: Obj) => c.name), ['Desired', 'Current', 'Ready', 'Age']);
  assert.equal(pool.spec.versions[1].schema.openAPIV3Schema.properties.spec.required, ['selector', 'virtualMachineTemplate']);
});

test('VirtualMachineInstancePreset: still served as KubeVirt serves it — v1 and v1alpha3 (stored), both deprecated with its warnings', () => {
  const c = byKind.get('VirtualMachineInstancePreset')!;
  assert.equal([c.metadata.name, c.spec.group, c.spec.scope, c.spec.names.shortNames, c.spec.names.categories], ['virtualmachineinstancepresets.kubevirt.io', 'kubevirt.io', 'Namespaced', ['vmipreset', 'vmipresets'], ['all']]);
  assert.equal(c.spec.versions.map((v: Obj) => [v.name, v.served, v.storage, v.deprecated, v.deprecationWarning]), [
    ['v1', true, false, true, 'kubevirt.io/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2.'],
    ['v1alpha3', true, true, true, 'kubevirt.io/v1alpha3 VirtualMachineInstancePresets is now deprecated and will be removed in v2.'],
  ]);
  assert.equal(c.spec.versions[0].schema.openAPIV3Schema.properties.spec.required, ['selector']);
});

test('instancetype.kubevirt.io: v1beta1 served and stored, scope, short names and categories as crds.go, no columns or subresources', () => {
  const expected: Record<string, [string, 'Namespaced' | 'Cluster', string[], string[] | undefined]> = {
    VirtualMachineInstancetype: ['virtualmachineinstancetypes', 'Namespaced', ['vminstancetype', 'vminstancetypes', 'vmf', 'vmfs'], ['all']],
    VirtualMachineClusterInstancetype: ['virtualmachineclusterinstancetypes', 'Cluster', ['vmclusterinstancetype', 'vmclusterinstancetypes', 'vmcf', 'vmcfs'], undefined],
    VirtualMachinePreference: ['virtualmachinepreferences', 'Namespaced', ['vmpref', 'vmprefs', 'vmp', 'vmps'], ['all']],
    VirtualMachineClusterPreference: ['virtualmachineclusterpreferences', 'Cluster', ['vmcp', 'vmcps'], undefined],
  };
  for (const [kind, [plural, scope, shortNames, categories]] of Object.entries(expected)) {
    const c = byKind.get(kind)!;
    assert.is(c.metadata.name, `${plural}.instancetype.kubevirt.io`);
    assert.equal(c.metadata.labels, { 'kubevirt.io': '' });
    assert.is(c.spec.group, 'instancetype.kubevirt.io');
    assert.is(c.spec.scope, scope, kind);
    assert.equal(c.spec.names.shortNames, shortNames, kind);
    assert.equal(c.spec.names.categories, categories, kind);
    assert.equal(c.spec.names.listKind, `${kind}List`);
    assert.equal(c.spec.versions.map((v: Obj) => [v.name, v.served, v.storage]), [['v1beta1', true, true]]);
    assert.is(c.spec.versions[0].additionalPrinterColumns, undefined);
    assert.is(c.spec.versions[0].subresources, undefined);
    const schema = c.spec.versions[0].schema.openAPIV3Schema;
    assert.equal(schema.required, ['spec']);
  }
  const it = byKind.get('VirtualMachineInstancetype')!.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  assert.equal(it.required, ['cpu', 'memory']);
  assert.equal(it.properties.cpu.required, ['guest']);
  assert.equal(it.properties.memory.required, ['guest']);
  assert.equal([it.properties.memory.properties.overcommitPercent.minimum, it.properties.memory.properties.overcommitPercent.maximum], [0, 100]);
});

/** Errors the API server reports for `obj` of an instancetype.kubevirt.io kind. */
function instancetypeErrors(kind: string, obj: unknown): string[] {
  const d = def(kind);
  const compiled = d.schemas.get('v1beta1')!;
  const pruned = prune(structuredClone(obj), compiled.schema, true);
  return validate(pruned, compiled, undefined).map((e: any) => `${e.field}: ${e.detail ?? e.type}`);
}

test('KubeVirt\'s instancetype examples are accepted by their CRDs as written; cpu.guest and memory.guest are required', () => {
  for (const { file, doc } of loadInstancetypeExamples()) {
    const kind = doc.kind as string;
    const errors = kind === 'VirtualMachine' ? apiErrors(kind, doc) : instancetypeErrors(kind, doc);
    assert.equal(errors, [], file);
  }
  const noGuest = instancetypeErrors('VirtualMachineInstancetype', { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineInstancetype', metadata: { name: 'x' }, spec: { cpu: {}, memory: { guest: '1Gi', overcommitPercent: 101 } } });
  assert.ok(noGuest.some((e) => e.startsWith('spec.cpu.guest')), noGuest.join('\n'));
  assert.ok(noGuest.some((e) => e.startsWith('spec.memory.overcommitPercent')), noGuest.join('\n'));
});

test('a VM template needs no memory when the VM names an instance type (it sizes the VM); without one it does', () => {
  const vm = loadExample('vm-cirros.yaml') as Obj;
  delete vm.spec.template.spec.domain.memory;
  delete vm.spec.template.spec.domain.resources;
  assert.ok(apiErrors('VirtualMachine', vm).some((e) => e.startsWith('spec.template.spec:') && e.includes('no memory requested')), apiErrors('VirtualMachine', vm).join('\n'));
  vm.spec.instancetype = { name: 'u1.medium' };
  assert.equal(apiErrors('VirtualMachine', vm), []);
});

test('subresources: VMI none, VM status, VMIRS status+scale, VMIM status', () => {
  const sub = (k: string) => byKind.get(k)!.spec.versions[0].subresources;
  assert.is(sub('VirtualMachineInstance'), undefined);
  assert.equal(sub('VirtualMachine'), { status: {} });
  assert.equal(sub('VirtualMachineInstanceReplicaSet'), {
    status: {},
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
  });
  assert.equal(sub('VirtualMachineInstanceMigration'), { status: {} });
});

test('printer columns as KubeVirt declares them', () => {
  const cols = (k: string) => byKind.get(k)!.spec.versions[0].additionalPrinterColumns.map((c: Obj) => [c.name, c.type, c.jsonPath, c.priority ?? 0]);
  assert.equal(cols('VirtualMachineInstance'), [
    ['Age', 'date', '.metadata.creationTimestamp', 0],
    ['Phase', 'string', '.status.phase', 0],
    ['IP', 'string', '.status.interfaces[0].ipAddress', 0],
    ['NodeName', 'string', '.status.nodeName', 0],
    ['Ready', 'string', ".status.conditions[?(@.type=='Ready')].status", 0],
    ['Live-Migratable', 'string', ".status.conditions[?(@.type=='LiveMigratable')].status", 1],
    ['Paused', 'string', ".status.conditions[?(@.type=='Paused')].status", 1],
  ]);
  assert.equal(cols('VirtualMachine'), [
    ['Age', 'date', '.metadata.creationTimestamp', 0],
    ['Status', 'string', '.status.printableStatus', 0],
    ['Ready', 'string', ".status.conditions[?(@.type=='Ready')].status", 0],
  ]);
  assert.equal(cols('VirtualMachineInstanceReplicaSet'), [
    ['Desired', 'integer', '.spec.replicas', 0],
    ['Current', 'integer', '.status.replicas', 0],
    ['Ready', 'integer', '.status.readyReplicas', 0],
    ['Age', 'date', '.metadata.creationTimestamp', 0],
  ]);
  assert.equal(cols('VirtualMachineInstanceMigration'), [
    ['Phase', 'string', '.status.phase', 0],
    ['VMI', 'string', '.spec.vmiName', 0],
  ]);
});

/** Structural-schema rules kube-apiserver enforces on CRDs. */
function structuralProblems(s: Obj, path: string, out: string[]): void {
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (!s.type && !intOrString) out.push(`${path}: no type`);
  if (s.anyOf && !intOrString) out.push(`${path}: anyOf outside int-or-string`);
  if (s.type === 'object' && s.properties && s.additionalProperties) out.push(`${path}: properties and additionalProperties`);
  if (s.type === 'array' && !s.items) out.push(`${path}: array without items`);
  for (const [k, v] of Object.entries(s.properties ?? {})) structuralProblems(v as Obj, `${path}.${k}`, out);
  if (s.items) structuralProblems(s.items, `${path}[]`, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') structuralProblems(s.additionalProperties, `${path}{}`, out);
  for (const r of s['x-kubernetes-validations'] ?? []) {
    if (typeof r.rule !== 'string' || typeof r.message !== 'string' || r.message === '') out.push(`${path}: rule without message`);
  }
}

test('schemas are structural; metadata opaque at the root; quantities int-or-string; 256-item lists', () => {
  for (const c of crds) {
    const s = c.spec.versions[0].schema.openAPIV3Schema;
    const problems: string[] = [];
    structuralProblems(s, c.spec.names.kind, problems);
    assert.equal(problems, [], c.spec.names.kind);
    assert.equal(s.properties.metadata, { type: 'object' });
  }
  const vmi = byKind.get('VirtualMachineInstance')!.spec.versions[0].schema.openAPIV3Schema;
  const spec = vmi.properties.spec;
  assert.equal(spec.properties.domain.properties.memory.properties.guest['x-kubernetes-int-or-string'], true);
  assert.is(spec.properties.volumes.maxItems, 256);
  assert.is(spec.properties.networks.maxItems, 256);
  assert.is(spec.properties.domain.properties.devices.properties.disks.maxItems, 256);
  assert.is(spec.properties.domain.properties.devices.properties.interfaces.maxItems, 256);
  assert.equal(spec.properties.domain.properties.clock['x-kubernetes-preserve-unknown-fields'], true);
  const vm = byKind.get('VirtualMachine')!.spec.versions[0].schema.openAPIV3Schema;
  const tmeta = vm.properties.spec.properties.template.properties.metadata;
  assert.equal([tmeta.nullable, tmeta['x-kubernetes-preserve-unknown-fields']], [true, true]);
});

test('every CEL rule compiles in the API server and each carries a message', () => {
  for (const kind of byKind.keys()) def(kind);
  assert.ok(allCelRules().length >= 40, `${allCelRules().length} rules`);
});

test('every KubeVirt example is accepted by its CRD as written (no webhook)', () => {
  for (const { file, doc } of loadExamples()) {
    assert.equal(apiErrors(doc.kind as string, doc), [], file);
  }
});

// [name, kind, example, mutation, expected error substrings]
const rejections: [string, string, string, (o: Obj) => void, string[]][] = [
  ['bad disk bus', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.domain.devices.disks[1].disk.bus = 'ide'), ['spec.domain.devices.disks[1].disk.bus: supported values: "virtio", "sata", "scsi", "usb"']],
  ['no memory requested', 'VirtualMachineInstance', 'vmi-ephemeral.yaml', (o) => delete o.spec.domain.memory, ['no memory requested']],
  ['memory from limits is enough', 'VirtualMachineInstance', 'vmi-ephemeral.yaml', (o) => { delete o.spec.domain.memory; o.spec.domain.resources = { limits: { memory: '1Gi' } }; }, []],
  ['disk without volume', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => o.spec.domain.devices.disks.push({ name: 'ghost', disk: {} }), ['every disk must name a volume']],
  ['empty cdrom disk needs no volume', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => o.spec.domain.devices.disks.push({ name: 'cd', cdrom: {} }), []],
  ['volume without disk is accepted (defaulting adds the disk)', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => o.spec.volumes.push({ name: 'lonely', emptyDisk: { capacity: '1Gi' } }), []],
  ['vmi-sata: volumes without disks are legal only after defaulting', 'VirtualMachineInstance', 'vmi-sata.yaml', () => {}, []],
  ['duplicate disk names', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.domain.devices.disks[2].name = 'containerdisk'), ['disk names must be unique']],
  ['duplicate volume names', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.volumes[2].name = 'containerdisk'), ['volume names must be unique']],
  ['two targets', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.domain.devices.disks[0].cdrom = {}), ['single target type']],
  ['two sources', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.volumes[2].containerDisk = { image: 'x' }), ['exactly one source type']],
  ['disk name not a DNS label', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => { o.spec.domain.devices.disks[0].name = 'Disk_0'; o.spec.volumes[0].name = 'Disk_0'; }, ['spec.domain.devices.disks[0].name']],
  ['boot order 0', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.domain.devices.disks[0].bootOrder = 0), ['spec.domain.devices.disks[0].bootOrder']],
  ['duplicate boot order', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => { o.spec.domain.devices.disks[0].bootOrder = 1; o.spec.domain.devices.disks[1].bootOrder = 1; }, ['Boot order already set']],
  ['distinct boot orders are fine', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => { o.spec.domain.devices.disks[0].bootOrder = 2; o.spec.domain.devices.interfaces[0].bootOrder = 1; }, []],
  ['disk and interface share a boot order', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => { o.spec.domain.devices.disks[0].bootOrder = 1; o.spec.domain.devices.interfaces[0].bootOrder = 1; }, ['Boot order already set']],
  ['two interfaces share a boot order', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => { o.spec.networks.push({ name: 'm', multus: { networkName: 'n' } }); o.spec.domain.devices.interfaces.push({ name: 'm', bridge: {}, bootOrder: 3 }); o.spec.domain.devices.interfaces[0].bootOrder = 3; }, ['Boot order already set']],
  ['boot orders unique across three disks and two interfaces', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => { o.spec.domain.devices.disks.forEach((d: Obj, i: number) => (d.bootOrder = i + 1)); o.spec.networks = [{ name: 'default', pod: {} }, { name: 'm', multus: { networkName: 'n' } }]; o.spec.domain.devices.interfaces = [{ name: 'default', masquerade: {}, bootOrder: 9 }, { name: 'm', bridge: {}, bootOrder: 8 }]; }, []],
  ['virtio cdrom', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.domain.devices.disks[2] = { name: 'emptydisk', cdrom: { bus: 'virtio' } }), ['invalid for CD-ROM']],
  ['cloud-init without data', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.volumes[1].cloudInitNoCloud = {}), ['at least one userdatasource']],
  ['cloud-init userData too long', 'VirtualMachineInstance', 'vmi-nocloud.yaml', (o) => (o.spec.volumes[1].cloudInitNoCloud.userData = 'x'.repeat(2049)), ['spec.volumes[1].cloudInitNoCloud.userData']],
  ['hostDisk Disk with capacity', 'VirtualMachineInstance', 'vmi-host-disk.yaml', (o) => (o.spec.volumes[0].hostDisk.type = 'Disk'), ["only with hostDisk.type equal to 'DiskOrCreate'"]],
  ['hostDisk bad type', 'VirtualMachineInstance', 'vmi-host-disk.yaml', (o) => (o.spec.volumes[0].hostDisk.type = 'File'), ['spec.volumes[0].hostDisk.type']],
  ['interface without network', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => o.spec.domain.devices.interfaces.push({ name: 'x', bridge: {} }), ['every interface must name a network']],
  ['network without interface', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => o.spec.networks.push({ name: 'x', multus: { networkName: 'n' } }), ['every network must be used']],
  ['two pod networks', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => { o.spec.networks.push({ name: 'p2', pod: {} }); o.spec.domain.devices.interfaces.push({ name: 'p2', masquerade: {} }); }, ['more than one interface is connected to a pod network']],
  ['two bindings', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => (o.spec.domain.devices.interfaces[0].bridge = {}), ['exactly one binding method']],
  ['slirp discontinued', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => { delete o.spec.domain.devices.interfaces[0].masquerade; o.spec.domain.devices.interfaces[0].slirp = {}; }, ['Slirp interface support has been discontinued']],
  ['bad MAC', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => (o.spec.domain.devices.interfaces[0].macAddress = '02:00:00:00:00'), ['macAddress']],
  ['reserved MAC on masquerade', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => (o.spec.domain.devices.interfaces[0].macAddress = '02:00:00:00:00:00'), ['reserved for the in-pod bridge']],
  ['port out of range', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => (o.spec.domain.devices.interfaces[0].ports = [{ port: 70000 }]), ['ports[0].port']],
  ['unknown NIC model', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => (o.spec.domain.devices.interfaces[0].model = 'vmxnet3'), ['interfaces[0].model']],
  ['sockets above maxSockets', 'VirtualMachineInstance', 'vmi-ephemeral.yaml', (o) => (o.spec.domain.cpu = { sockets: 4, maxSockets: 2 }), ['greater than the maximum sockets']],
  ['tcp probe with the defaulted pod network', 'VirtualMachineInstance', 'vmi-ephemeral.yaml', (o) => (o.spec.readinessProbe = { tcpSocket: { port: 22 } }), []],
  ['tcp probe without a pod network', 'VirtualMachineInstance', 'vmi-ephemeral.yaml', (o) => { o.spec.domain.devices.autoattachPodInterface = false; o.spec.readinessProbe = { tcpSocket: { port: 22 } }; }, ['only allowed if the Pod Network is attached']],
  ['tcp probe on a multus-only VMI', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => { o.spec.networks = [{ name: 'default', multus: { networkName: 'n' } }]; o.spec.domain.devices.interfaces = [{ name: 'default', bridge: {} }]; o.spec.readinessProbe = { tcpSocket: { port: 22 } }; }, ['only allowed if the Pod Network is attached']],
  ['probe with two handlers', 'VirtualMachineInstance', 'vmi-masquerade.yaml', (o) => (o.spec.readinessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 22 } }), ['exactly one probe type']],
  ['EFI and BIOS', 'VirtualMachineInstance', 'vmi-alpine-efi.yaml', (o) => (o.spec.domain.firmware.bootloader.bios = {}), ['mutually exclusive']],
  ['secure boot without SMM', 'VirtualMachineInstance', 'vmi-alpine-efi.yaml', (o) => delete o.spec.domain.firmware.bootloader.efi.secureBoot, ['SecureBoot requires SMM']],
  ['kernel boot without paths', 'VirtualMachineInstance', 'vmi-kernel-boot.yaml', (o) => { delete o.spec.domain.firmware.kernelBoot.container.kernelPath; delete o.spec.domain.firmware.kernelBoot.container.initrdPath; }, ['at least one of the following: kernelPath, initrdPath']],
  ['keyboard input', 'VirtualMachineInstance', 'vmi-ephemeral.yaml', (o) => (o.spec.domain.devices.inputs = [{ name: 'k', type: 'keyboard' }]), ['only tablet type']],
  ['a bad quantity', 'VirtualMachineInstance', 'vmi-ephemeral.yaml', (o) => (o.spec.domain.memory.guest = '128MB'), ['spec.domain.memory.guest']],
  ['VM: running and runStrategy', 'VirtualMachine', 'vm-cirros.yaml', (o) => (o.spec.running = false), ['mutually exclusive']],
  ['VM: neither running nor runStrategy', 'VirtualMachine', 'vm-cirros.yaml', (o) => delete o.spec.runStrategy, ['RunStrategy must be specified']],
  ['VM: unknown runStrategy', 'VirtualMachine', 'vm-cirros.yaml', (o) => (o.spec.runStrategy = 'Sometimes'), ['spec.runStrategy']],
  ['VM: template rules apply', 'VirtualMachine', 'vm-cirros.yaml', (o) => o.spec.template.spec.domain.devices.disks.push({ name: 'ghost' }), ['every disk must name a volume']],
  ['RS: selector does not match', 'VirtualMachineInstanceReplicaSet', 'vmi-replicaset-cirros.yaml', (o) => (o.spec.template.metadata.labels = { other: 'x' }), ['selector does not match labels.']],
  ['RS: matchExpressions In matches', 'VirtualMachineInstanceReplicaSet', 'vmi-replicaset-cirros.yaml', (o) => (o.spec.selector = { matchExpressions: [{ key: 'kubevirt.io/vmReplicaSet', operator: 'In', values: ['vmi-replicaset-cirros'] }] }), []],
  ['RS: matchExpressions NotIn excludes', 'VirtualMachineInstanceReplicaSet', 'vmi-replicaset-cirros.yaml', (o) => (o.spec.selector = { matchExpressions: [{ key: 'kubevirt.io/vmReplicaSet', operator: 'NotIn', values: ['vmi-replicaset-cirros'] }] }), ['selector does not match labels.']],
  ['RS: negative replicas', 'VirtualMachineInstanceReplicaSet', 'vmi-replicaset-cirros.yaml', (o) => (o.spec.replicas = -1), ['spec.replicas']],
  ['VMIM: vmiName missing', 'VirtualMachineInstanceMigration', 'migration-job.yaml', (o) => delete o.spec.vmiName, ['vmiName is missing']],
];

for (const [name, kind, example, mutate, expected] of rejections) {
  test(`API server without webhook: ${name}`, () => {
    const o = loadExample(example);
    mutate(o);
    const errs = apiErrors(kind, o);
    if (expected.length === 0) assert.equal(errs, [], name);
    else {
      const text = errs.join('\n');
      for (const e of expected) assert.ok(text.includes(e), `expected ${JSON.stringify(e)} in:\n${text}`);
    }
  });
}

test('the RS example is consistent with the ReplicaSet template label the selector names', () => {
  const rs: Obj = loadExample('vmi-replicaset-cirros.yaml');
  assert.ok(rs.spec.selector.matchLabels);
});

test.run();

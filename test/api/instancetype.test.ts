// Instance types and preferences as KubeVirt's pkg/instancetype decides them, table by table: the
// guest CPU topology, what an instance type writes into a VMI spec and which template fields it
// refuses (KubeVirt's message and field path), what a preference fills in, which revision or object
// a VM's matcher finds, the ControllerRevision that pins it and the status ref naming it, the
// spread and requirements checks, the VM admitter's part, expand, and inferFromVolume.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyToNewVMI, applyToVMISpec, guestCPUTopology, InstancetypeApplyError, overcommittedMemoryRequest } from '../../src/api/instancetype/apply.ts';
import { conflictCauses } from '../../src/api/instancetype/conflict.ts';
import { findInstancetypeSpec, findPreferenceSpec, InstancetypeFindError, referencedObjects, referenceKey, sourceFromFetched } from '../../src/api/instancetype/find.ts';
import { controllerRevisionFor, instancetypeSpecFromRevision, preferenceSpecFromRevision, sameRevisionData, syncStatusRef } from '../../src/api/instancetype/revision.ts';
import { checkPreferenceRequirements, checkSpreadCPUTopology } from '../../src/api/instancetype/requirements.ts';
import { admitInstancetypes, validateMatchers } from '../../src/api/instancetype/vm-webhook.ts';
import { expandVirtualMachine } from '../../src/api/instancetype/expand.ts';
import { inferMatchers, InferenceError, type InferSource } from '../../src/api/instancetype/infer.ts';
import { decodeInstancetypeObject } from '../../src/api/instancetype/parse.ts';
import { validateInstancetypeSpec, validatePreferenceSpec } from '../../src/api/instancetype/admitters.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { formatFieldError } from '../../src/api/field-error.ts';
import type { VirtualMachinePreferenceSpec, VirtualMachineInstancetypeSpec } from '../../src/api/instancetype/types.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../src/api/types.ts';
import { loadInstancetypeExamples } from './fixtures.ts';

type Obj = Record<string, any>;
const it = (guest = 2, memory = '1Gi', extra: Partial<VirtualMachineInstancetypeSpec> = {}): VirtualMachineInstancetypeSpec => ({ cpu: { guest }, memory: { guest: memory }, ...extra });
const spec = (extra: Obj = {}): VirtualMachineInstanceSpec => ({ domain: { devices: {}, ...(extra.domain ?? {}) }, ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'domain')) }) as VirtualMachineInstanceSpec;
const example = (file: string): Obj => structuredClone(loadInstancetypeExamples().find((e) => e.file === file)!.doc);

test('guest CPU topology: 1 vCPU is 1/1/1; else per preferredCPUTopology (default sockets), spread by ratio and across', () => {
  const table: [number, VirtualMachinePreferenceSpec | undefined, [number, number, number]][] = [
    [1, { cpu: { preferredCPUTopology: 'cores' } }, [1, 1, 1]],
    [4, undefined, [4, 1, 1]],
    [4, {}, [4, 1, 1]],
    [4, { cpu: { preferredCPUTopology: 'sockets' } }, [4, 1, 1]],
    [4, { cpu: { preferredCPUTopology: 'preferSockets' } }, [4, 1, 1]],
    [4, { cpu: { preferredCPUTopology: 'any' } }, [4, 1, 1]],
    [4, { cpu: { preferredCPUTopology: 'cores' } }, [1, 4, 1]],
    [4, { cpu: { preferredCPUTopology: 'preferCores' } }, [1, 4, 1]],
    [4, { cpu: { preferredCPUTopology: 'threads' } }, [1, 1, 4]],
    [8, { cpu: { preferredCPUTopology: 'spread' } }, [4, 2, 1]],
    [12, { cpu: { preferredCPUTopology: 'spread' }, preferSpreadSocketToCoreRatio: 3 }, [4, 3, 1]],
    [12, { cpu: { preferredCPUTopology: 'spread', spreadOptions: { ratio: 6 } }, preferSpreadSocketToCoreRatio: 3 }, [2, 6, 1]],
    [8, { cpu: { preferredCPUTopology: 'spread', spreadOptions: { across: 'CoresThreads' } } }, [1, 4, 2]],
    [16, { cpu: { preferredCPUTopology: 'spread', spreadOptions: { across: 'SocketsCoresThreads', ratio: 4 } } }, [2, 4, 2]],
    [4, { cpu: { preferredCPUTopology: 'unknown' } }, [1, 1, 1]],
  ];
  for (const [vcpus, pref, [sockets, cores, threads]] of table) {
    assert.equal(guestCPUTopology(vcpus, pref), { sockets, cores, threads }, `${vcpus} vCPUs, ${JSON.stringify(pref)}`);
  }
});

test('an instance type sizes the VMI: vCPUs as topology, guest memory, model, placement, max sockets/guest, selector, scheduler, devices, annotations', () => {
  const r = applyToVMISpec('spec', it(4, '2Gi', {
    cpu: { guest: 4, model: 'Haswell', dedicatedCPUPlacement: true, isolateEmulatorThread: true, maxSockets: 8, numa: { guestMappingPassthrough: {} }, realtime: { mask: '0' } },
    memory: { guest: '2Gi', maxGuest: '8Gi', hugepages: { pageSize: '2Mi' } },
    nodeSelector: { zone: 'a' }, schedulerName: 'mine', ioThreadsPolicy: 'auto', ioThreads: { supplementalPoolThreadCount: 2 },
    gpus: [{ name: 'g', deviceName: 'nvidia' }], hostDevices: [{ name: 'h', deviceName: 'x' }], annotations: { a: '1' },
  }), undefined, spec(), { annotations: { b: '2' } });
  assert.equal(r.conflicts, []);
  assert.equal(r.spec.domain.cpu, { model: 'Haswell', dedicatedCpuPlacement: true, isolateEmulatorThread: true, numa: { guestMappingPassthrough: {} }, realtime: { mask: '0' }, maxSockets: 8, sockets: 4, cores: 1, threads: 1 });
  assert.equal(r.spec.domain.memory, { guest: '2Gi', hugepages: { pageSize: '2Mi' }, maxGuest: '8Gi' });
  assert.equal([r.spec.nodeSelector, r.spec.schedulerName, r.spec.domain.ioThreadsPolicy, r.spec.domain.ioThreads], [{ zone: 'a' }, 'mine', 'auto', { supplementalPoolThreadCount: 2 }]);
  assert.equal(r.spec.domain.devices.gpus, [{ name: 'g', deviceName: 'nvidia' }]);
  assert.equal(r.spec.domain.devices.hostDevices, [{ name: 'h', deviceName: 'x' }]);
  assert.equal(r.metadata.annotations, { b: '2', a: '1' });
  assert.is(r.spec.domain.resources, undefined, 'no overcommit: no memory request');
});

test('memory overcommit: the request is the guest less the percentage, computed in float32 as KubeVirt, in the guest\'s format', () => {
  assert.is(overcommittedMemoryRequest('1Gi', 10), '966367616', 'float32: 0.9 × 2^30 rounded to a 64-byte step');
  assert.is(overcommittedMemoryRequest('2Gi', 50), '1Gi');
  assert.is(overcommittedMemoryRequest('1G', 50), '500M');
  const r = applyToVMISpec('spec', it(1, '2Gi', { memory: { guest: '2Gi', overcommitPercent: 25 } }), undefined, spec(), undefined);
  assert.equal(r.spec.domain.resources, { requests: { memory: '1536Mi' } });
});

test('what the template sets itself conflicts: KubeVirt\'s message at the field\'s path under the base path', () => {
  const table: [string, Obj, Partial<VirtualMachineInstancetypeSpec>, string[]][] = [
    ['cpu sockets', { domain: { cpu: { sockets: 2 } } }, {}, ['spec.template.spec.domain.cpu.sockets']],
    ['cores and threads', { domain: { cpu: { cores: 2, threads: 2 } } }, {}, ['spec.template.spec.domain.cpu.cores', 'spec.template.spec.domain.cpu.threads']],
    ['cpu request and limit', { domain: { resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } } }, {}, ['spec.template.spec.domain.resources.requests.cpu', 'spec.template.spec.domain.resources.limits.cpu']],
    ['model only when both set', { domain: { cpu: { model: 'x' } } }, { cpu: { guest: 1, model: 'y' } }, ['spec.template.spec.domain.cpu.model']],
    ['model of the template alone is kept', { domain: { cpu: { model: 'x' } } }, {}, []],
    ['dedicated placement', { domain: { cpu: { dedicatedCpuPlacement: true } } }, { cpu: { guest: 1, dedicatedCPUPlacement: true } }, ['spec.template.spec.domain.cpu.dedicatedCPUPlacement']],
    ['memory guest', { domain: { memory: { guest: '128Mi' } } }, {}, ['spec.template.spec.domain.memory.guest']],
    ['memory request', { domain: { resources: { requests: { memory: '1Gi' } } } }, {}, ['spec.template.spec.domain.resources.requests.memory']],
    ['memory limit', { domain: { resources: { limits: { memory: '1Gi' } } } }, {}, ['spec.template.spec.domain.resources.limits.memory']],
    ['memory: only the first', { domain: { memory: { guest: '1Gi' }, resources: { requests: { memory: '1Gi' } } } }, {}, ['spec.template.spec.domain.memory.guest']],
    ['hugepages in both', { domain: { memory: { hugepages: { pageSize: '2Mi' } } } }, { memory: { guest: '1Gi', hugepages: { pageSize: '1Gi' } } }, ['spec.template.spec.domain.memory.hugepages']],
    ['node selector', { nodeSelector: { a: 'b' } }, { nodeSelector: { c: 'd' } }, ['spec.template.spec.nodeSelector']],
    ['scheduler', { schedulerName: 'x' }, { schedulerName: 'y' }, ['spec.template.spec.schedulerName']],
    ['gpus', { domain: { devices: { gpus: [{ name: 'a', deviceName: 'b' }] } } }, { gpus: [{ name: 'c', deviceName: 'd' }] }, ['spec.template.spec.domain.devices.gpus']],
    ['ioThreadsPolicy', { domain: { ioThreadsPolicy: 'shared' } }, { ioThreadsPolicy: 'auto' }, ['spec.template.spec.domain.ioThreadsPolicy']],
    ['cpu and memory both', { domain: { cpu: { sockets: 1 }, memory: { guest: '1Gi' } } }, {}, ['spec.template.spec.domain.cpu.sockets', 'spec.template.spec.domain.memory.guest']],
  ];
  for (const [what, s, extra, paths] of table) {
    const r = applyToVMISpec('spec.template.spec', { ...it(2), ...extra } as VirtualMachineInstancetypeSpec, undefined, spec(s), undefined);
    assert.equal(r.conflicts.map((c) => c.path), paths, what);
  }
  const causes = conflictCauses([{ path: 'spec.template.spec.domain.cpu.sockets' }]);
  assert.equal(causes, [{ type: 'FieldValueInvalid', field: 'spec.template.spec.domain.cpu.sockets', reason: 'VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type' }]);
  const ann = applyToVMISpec('spec', it(1, '1Gi', { annotations: { a: '1', b: '2' } }), undefined, spec(), { annotations: { a: '1', b: 'other' } });
  assert.equal(ann.conflicts.map((c) => c.path), ['annotations.b'], 'annotations: only a different value conflicts');
});

test('with a conflict, nothing of the preference is applied', () => {
  const r = applyToVMISpec('spec', it(1), { machine: { preferredMachineType: 'pc' } }, spec({ domain: { cpu: { sockets: 2 } } }), undefined);
  assert.is(r.conflicts.length, 1);
  assert.is(r.spec.domain.machine, undefined);
});

test('a preference fills what the template leaves unset, never what it sets', () => {
  const pref: VirtualMachinePreferenceSpec = {
    devices: {
      preferredDiskBus: 'virtio', preferredCdromBus: 'sata', preferredLunBus: 'scsi', preferredInterfaceModel: 'virtio', preferredInputBus: 'virtio', preferredInputType: 'tablet',
      preferredDiskDedicatedIoThread: true, preferredDiskCache: 'none', preferredAutoattachMemBalloon: false, preferredRng: {}, preferredTPM: {}, preferredInterfaceMasquerade: {},
      preferredVideoType: 'virtio', preferredPanicDeviceModel: 'isa', preferredDisableHotplug: true,
    },
    cpu: { preferredCPUFeatures: [{ name: 'vmx', policy: 'require' }, { name: 'x2apic' }] },
    features: { preferredAcpi: {}, preferredSmm: { enabled: true }, preferredHyperv: { relaxed: {}, spinlocks: { spinlocks: 8191 } } },
    firmware: { preferredEfi: { secureBoot: true } },
    machine: { preferredMachineType: 'pc-q35-9.0' },
    clock: { preferredClockOffset: { utc: {} }, preferredTimer: { hpet: { present: false } } },
    preferredSubdomain: 'sub', preferredTerminationGracePeriodSeconds: 15, preferredArchitecture: 'amd64',
    annotations: { p: 'x', kept: 'preference' },
  };
  const s = spec({
    domain: {
      cpu: { features: [{ name: 'x2apic', policy: 'disable' }] },
      devices: {
        disks: [{ name: 'a' }, { name: 'b', disk: { bus: 'sata' } }, { name: 'c', cdrom: {} }, { name: 'd', lun: {} }],
        interfaces: [{ name: 'default' }, { name: 'm', bridge: {} }],
        inputs: [{ name: 'i' }],
      },
      features: { hyperv: { relaxed: { enabled: false } } },
    },
    networks: [{ name: 'default', pod: {} }, { name: 'm', multus: { networkName: 'n' } }],
    terminationGracePeriodSeconds: 0,
  });
  const r = applyToVMISpec('spec', undefined, pref, s, { annotations: { kept: 'vm' } });
  const d = r.spec.domain;
  assert.equal(d.devices.disks, [
    { name: 'a', disk: { bus: 'virtio' }, cache: 'none', dedicatedIOThread: true },
    { name: 'b', disk: { bus: 'sata' }, cache: 'none' },
    { name: 'c', cdrom: { bus: 'sata' } },
    { name: 'd', lun: { bus: 'scsi' } },
  ]);
  assert.equal(d.devices.interfaces, [{ name: 'default', model: 'virtio', masquerade: {} }, { name: 'm', bridge: {}, model: 'virtio' }]);
  assert.equal(d.devices.inputs, [{ name: 'i', bus: 'virtio', type: 'tablet' }]);
  assert.equal([d.devices.autoattachMemBalloon, d.devices.rng, d.devices.tpm, d.devices.video, d.devices.panicDevices, d.devices.disableHotplug], [false, {}, {}, { type: 'virtio' }, [{ model: 'isa' }], true]);
  assert.equal(d.cpu?.features, [{ name: 'x2apic', policy: 'disable' }, { name: 'vmx', policy: 'require' }]);
  assert.equal(d.features, { hyperv: { relaxed: { enabled: false }, spinlocks: { spinlocks: 8191 } }, acpi: {}, smm: { enabled: true } });
  assert.equal(d.firmware, { bootloader: { efi: { secureBoot: true } } });
  assert.equal(d.machine, { type: 'pc-q35-9.0' });
  assert.equal(d.clock, { utc: {}, timer: { hpet: { present: false } } });
  assert.equal([r.spec.subdomain, r.spec.terminationGracePeriodSeconds, r.spec.architecture], ['sub', 0, 'amd64']);
  assert.equal(r.metadata.annotations, { kept: 'vm', p: 'x' });
  // The template's own choices win.
  const own = applyToVMISpec('spec', undefined, pref, spec({ domain: { machine: { type: 'q35' }, firmware: { bootloader: { bios: {} } }, clock: { timezone: 'Europe/Berlin' } } }), undefined);
  assert.equal([own.spec.domain.machine, own.spec.domain.firmware, own.spec.domain.clock], [{ type: 'q35' }, { bootloader: { bios: {} } }, { timezone: 'Europe/Berlin', timer: { hpet: { present: false } } }]);
});

test('firmware preferences: BIOS (+serial), deprecated useEfi/useSecureBoot, preferredEfi wins over them', () => {
  const fw = (p: VirtualMachinePreferenceSpec['firmware']) => applyToVMISpec('spec', undefined, { firmware: p }, spec(), undefined).spec.domain.firmware;
  assert.equal(fw({ preferredUseBios: true, preferredUseBiosSerial: true }), { bootloader: { bios: { useSerial: true } } });
  assert.equal(fw({ preferredUseEfi: true, preferredUseSecureBoot: false }), { bootloader: { efi: { secureBoot: false } } });
  assert.equal(fw({ preferredEfi: { persistent: true }, preferredUseSecureBoot: true }), { bootloader: { efi: { persistent: true } } });
  assert.equal(fw({}), { bootloader: {} });
});

const revisionOf = (vm: VirtualMachine, kind: 'VirtualMachineInstancetype' | 'VirtualMachineClusterInstancetype' | 'VirtualMachinePreference' | 'VirtualMachineClusterPreference', name: string, s: Obj) =>
  controllerRevisionFor(vm, kind, { metadata: { name, uid: `${name}-uid`, generation: 3, resourceVersion: '9', labels: { x: 'y' }, annotations: { a: 'b' }, ownerReferences: [], finalizers: ['f'] }, spec: s } as never);

const theVM = (extra: Obj = {}): VirtualMachine => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm1', namespace: 'ns', uid: 'vm-uid' },
  spec: { runStrategy: 'Always', template: { spec: { domain: { devices: {} } } }, ...extra.spec },
  ...(extra.status ? { status: extra.status } : {}),
}) as VirtualMachine;

test('the ControllerRevision pinning an instance type: KubeVirt\'s name, labels, owner and the object with its metadata stripped', () => {
  const rev = revisionOf(theVM(), 'VirtualMachineInstancetype', 'csmall', it(1, '128Mi'));
  assert.is(rev.metadata?.name, 'vm1-csmall-v1beta1-csmall-uid-3');
  assert.is(rev.metadata?.namespace, 'ns');
  assert.equal(rev.metadata?.labels, {
    'instancetype.kubevirt.io/object-generation': '3',
    'instancetype.kubevirt.io/object-kind': 'VirtualMachineInstancetype',
    'instancetype.kubevirt.io/object-name': 'csmall',
    'instancetype.kubevirt.io/object-uid': 'csmall-uid',
    'instancetype.kubevirt.io/object-version': 'v1beta1',
  });
  assert.equal(rev.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm1', uid: 'vm-uid', controller: true, blockOwnerDeletion: true }]);
  assert.equal(rev.data, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineInstancetype', metadata: { name: 'csmall', uid: 'csmall-uid', generation: 3, resourceVersion: '9' }, spec: it(1, '128Mi') });
  assert.equal(instancetypeSpecFromRevision(rev), it(1, '128Mi'));
  assert.throws(() => preferenceSpecFromRevision(rev), /unexpected type in ControllerRevision: \*v1beta1\.VirtualMachineInstancetype/);
  assert.throws(() => instancetypeSpecFromRevision({ data: { apiVersion: 'instancetype.kubevirt.io/v1alpha1', kind: 'VirtualMachineInstancetype', spec: {} } }), /failed to decode object in ControllerRevision/);
  assert.ok(sameRevisionData(rev, structuredClone(rev)));
  assert.not.ok(sameRevisionData(rev, revisionOf(theVM(), 'VirtualMachineInstancetype', 'csmall', it(2, '128Mi'))));
});

test('status ref from the matcher: a new name, kind or volume drops the revision ref; revisionName wins; a ref kept needs no revision', () => {
  const table: [string, Obj, Obj | undefined, Obj, boolean][] = [
    ['first time', { name: 'a' }, undefined, { name: 'a' }, true],
    ['kept', { name: 'a' }, { name: 'a', controllerRevisionRef: { name: 'r1' } }, { name: 'a', controllerRevisionRef: { name: 'r1' } }, false],
    ['renamed', { name: 'b' }, { name: 'a', controllerRevisionRef: { name: 'r1' } }, { name: 'b' }, true],
    ['kind changed', { name: 'a', kind: 'VirtualMachineInstancetype' }, { name: 'a', controllerRevisionRef: { name: 'r1' } }, { name: 'a', kind: 'VirtualMachineInstancetype' }, true],
    ['revisionName', { name: 'a', revisionName: 'r2' }, { name: 'a', controllerRevisionRef: { name: 'r1' } }, { name: 'a', controllerRevisionRef: { name: 'r2' } }, false],
    ['failure policy copied', { inferFromVolume: 'v', inferFromVolumeFailurePolicy: 'Ignore' }, undefined, { inferFromVolume: 'v', inferFromVolumeFailurePolicy: 'Ignore' }, true],
  ];
  for (const [what, matcher, current, ref, needs] of table) assert.equal(syncStatusRef(matcher, current as never), { ref, needsRevision: needs }, what);
});

test('find: revisionName first, then the status ref\'s revision when it is of the named object, then the object by kind (case-insensitive, empty = cluster)', () => {
  const vm0 = theVM();
  const fetched = new Map<string, unknown>([
    ['virtualmachineinstancetypes/ns/small', { metadata: { name: 'small' }, spec: it(1) }],
    ['virtualmachineclusterinstancetypes//big', { metadata: { name: 'big' }, spec: it(8) }],
    ['virtualmachinepreferences/ns/p', { metadata: { name: 'p' }, spec: { machine: { preferredMachineType: 'pc' } } }],
    ['virtualmachineclusterpreferences//cp', { metadata: { name: 'cp' }, spec: { machine: { preferredMachineType: 'q35' } } }],
    ['controllerrevisions/ns/pinned', revisionOf(vm0, 'VirtualMachineClusterInstancetype', 'big', it(4))],
  ]);
  const src = sourceFromFetched(fetched);
  const find = (extra: Obj) => findInstancetypeSpec(theVM(extra), src)?.cpu.guest;
  assert.is(find({ spec: { instancetype: { name: 'small', kind: 'VirtualMachineInstancetype' } } }), 1);
  assert.is(find({ spec: { instancetype: { name: 'small', kind: 'virtualmachineinstancetypes' } } }), 1);
  assert.is(find({ spec: { instancetype: { name: 'big' } } }), 8);
  assert.is(find({ spec: { instancetype: { name: 'big', kind: 'VirtualMachineClusterInstancetype' } } }), 8);
  assert.is(find({ spec: { instancetype: { name: 'small', revisionName: 'pinned', kind: 'VirtualMachineInstancetype' } } }), 4);
  assert.is(find({ spec: { instancetype: { name: 'big' } }, status: { instancetypeRef: { controllerRevisionRef: { name: 'pinned' } } } }), 4);
  assert.is(find({ spec: { instancetype: { name: 'small', kind: 'VirtualMachineInstancetype' } }, status: { instancetypeRef: { controllerRevisionRef: { name: 'pinned' } } } }), 1, 'the ref\'s revision is of another object');
  assert.is(findInstancetypeSpec(theVM(), src), undefined);
  assert.is(findPreferenceSpec(theVM({ spec: { preference: { name: 'p', kind: 'VirtualMachinePreference' } } }), src)?.machine?.preferredMachineType, 'pc');
  assert.is(findPreferenceSpec(theVM({ spec: { preference: { name: 'cp' } } }), src)?.machine?.preferredMachineType, 'q35');
  const err = (extra: Obj, pref = false) => {
    try { (pref ? findPreferenceSpec : findInstancetypeSpec)(theVM(extra), src); } catch (e) { return e instanceof InstancetypeFindError ? [e.message, e.notFound] : e; }
    return undefined;
  };
  assert.equal(err({ spec: { instancetype: { name: 'nonexistent' } } }), ['virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nonexistent" not found', true]);
  assert.equal(err({ spec: { instancetype: { name: 'nonexistent', kind: 'VirtualMachineInstancetype' } } }), ['virtualmachineinstancetypes.instancetype.kubevirt.io "nonexistent" not found', true]);
  assert.equal(err({ spec: { preference: { name: 'nonexistent' } } }, true), ['virtualmachineclusterpreferences.instancetype.kubevirt.io "nonexistent" not found', true]);
  assert.equal(err({ spec: { instancetype: { name: 'x', kind: 'Pod' } } }), ['got unexpected kind in InstancetypeMatcher: Pod', false]);
  assert.equal(err({ spec: { instancetype: { name: 'x', revisionName: 'gone' } } }), ['controllerrevisions.apps "gone" not found', true]);
  assert.equal(err({ spec: { preference: { name: 'p', revisionName: 'pinned' } } }, true), ['unexpected type in ControllerRevision: *v1beta1.VirtualMachineClusterInstancetype', false]);
  assert.equal(referencedObjects(theVM({ spec: { instancetype: { name: 'small', kind: 'VirtualMachineInstancetype', revisionName: 'r' }, preference: { name: 'cp' } }, status: { preferenceRef: { controllerRevisionRef: { name: 'r2' } } } })).map(referenceKey), [
    'controllerrevisions/ns/r', 'virtualmachineinstancetypes/ns/small', 'controllerrevisions/ns/r2', 'virtualmachineclusterpreferences//cp',
  ]);
});

test('spread topology the instance type\'s vCPUs do not divide into; preference requirements', () => {
  const spread = (guest: number, cpu: Obj, ratio?: number) => checkSpreadCPUTopology(it(guest), { cpu: { preferredCPUTopology: 'spread', ...cpu }, ...(ratio ? { preferSpreadSocketToCoreRatio: ratio } : {}) })?.message;
  assert.is(spread(4, {}), undefined);
  assert.is(spread(5, {}), '5 vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 2 provided by the preference');
  assert.is(spread(6, { spreadOptions: { across: 'CoresThreads' } }), undefined);
  assert.is(spread(3, { spreadOptions: { across: 'CoresThreads' } }), '3 vCPUs provided by the instance type are not divisible by the number of threads per core 2');
  assert.is(spread(6, { spreadOptions: { across: 'SocketsCoresThreads' } }, 2), '6 vCPUs provided by the instance type are not divisible by the number of threads per core 2 and Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 2');
  assert.is(checkSpreadCPUTopology(it(5), { cpu: { preferredCPUTopology: 'cores' } }), undefined);
  const req = (instancetype: VirtualMachineInstancetypeSpec | undefined, requirements: Obj, s: Obj = {}, pref: Obj = {}) => {
    const f = checkPreferenceRequirements(instancetype, { requirements, ...pref }, spec(s));
    return f && [f.conflicts.map((c) => c.path).join(', '), f.message];
  };
  assert.is(req(it(2), { cpu: { guest: 2 } }), undefined);
  assert.equal(req(it(1), { cpu: { guest: 2 } }), ['spec.instancetype', 'insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU']);
  assert.equal(req(it(2, '1Gi'), { memory: { guest: '2Gi' } }), ['spec.instancetype', 'insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi']);
  assert.equal(req(undefined, { cpu: { guest: 2 } }, { domain: { cpu: { sockets: 1, cores: 1, threads: 1 } } }), ['spec.template.spec.domain.cpu.sockets', 'insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as sockets']);
  assert.equal(req(undefined, { cpu: { guest: 2 } }), ['spec.template.spec.domain.cpu', 'no CPU resources provided by VirtualMachine, preference requires 2 vCPU']);
  assert.equal(req(undefined, { cpu: { guest: 4 } }, { domain: { cpu: { sockets: 1, cores: 2, threads: 1 } } }, { cpu: { preferredCPUTopology: 'spread' } }), ['spec.template.spec.domain.cpu.sockets, spec.template.spec.domain.cpu.cores', 'insufficient CPU resources of 2 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as SocketsCores']);
  assert.equal(req(undefined, { memory: { guest: '1Gi' } }, { domain: { memory: { guest: '512Mi' } } }), ['spec.template.spec.domain.memory', 'insufficient Memory resources of 512Mi provided by VirtualMachine, preference requires 1Gi']);
  assert.equal(req(undefined, { architecture: 'arm64' }, { architecture: 'amd64' }), ['spec.template.spec.architecture', 'preference requires architecture arm64 but amd64 is being requested']);
});

test('VM admission: the matchers as KubeVirt\'s mutator checks them', () => {
  const causes = (spec: Obj, old?: Obj) => validateMatchers(theVM({ spec }), old ? theVM({ spec: old }) : undefined).map((e) => [e.type, e.field, e.reason]);
  assert.equal(causes({ instancetype: { name: 'a' } }), []);
  assert.equal(causes({ instancetype: { kind: 'VirtualMachineInstancetype' } }), [['FieldValueNotFound', 'spec.instancetype', 'Either Name or InferFromVolume should be provided within the InstancetypeMatcher']]);
  assert.equal(causes({ preference: {} }), [['FieldValueNotFound', 'spec.preference', 'Either Name or InferFromVolume should be provided within the PreferenceMatcher']]);
  assert.equal(causes({ instancetype: { name: 'a', kind: 'b', inferFromVolume: 'v' } }), [
    ['FieldValueNotSupported', 'spec.instancetype.name', 'Name already set, should be cleared before setting inferFromVolume'],
    ['FieldValueNotSupported', 'spec.instancetype.kind', 'Kind already set, should be cleared before setting inferFromVolume'],
  ]);
  assert.equal(causes({ preference: { inferFromVolume: 'v', inferFromVolumeFailurePolicy: 'Maybe' } }), [['FieldValueInvalid', 'spec.preference.inferFromVolumeFailurePolicy', "Invalid value 'Maybe' for InferFromVolumeFailurePolicy"]]);
  assert.equal(causes({ instancetype: { name: 'b', revisionName: 'r' } }, { instancetype: { name: 'a', revisionName: 'r' } }), [['FieldValueInvalid', 'spec.instancetype.revisionName', 'the Matcher Name has been updated without updating the RevisionName']]);
  assert.equal(causes({ instancetype: { name: 'b' } }, { instancetype: { name: 'a', revisionName: 'r' } }), []);
});

test('VM admission: instance type applied to a copy — conflicts refused at their path; the copy has the vCPUs and memory; requirements checked', () => {
  const config = defaultClusterConfig();
  const vm = example('vm-cirros-csmall.yaml') as VirtualMachine;
  const conflicting = admitInstancetypes(vm, it(1, '128Mi'), undefined, config);
  assert.equal(conflicting.errors.map(formatFieldError), ['spec.template.spec.domain.memory.guest: VM field(s) spec.template.spec.domain.memory.guest conflicts with selected instance type']);
  delete vm.spec.template.spec!.domain.memory;
  const ok = admitInstancetypes(vm, it(4, '2Gi'), { devices: { preferredDiskBus: 'virtio' } }, config);
  assert.equal(ok.errors, []);
  assert.equal([ok.vm.spec.template.spec?.domain.cpu?.sockets, ok.vm.spec.template.spec?.domain.memory?.guest], [4, '2Gi']);
  assert.is(vm.spec.template.spec?.domain.cpu, undefined, 'the VM itself is not changed');
  const spreadRefused = admitInstancetypes(vm, it(3), { cpu: { preferredCPUTopology: 'spread' } }, config);
  assert.equal(spreadRefused.errors.map((e) => [e.field, e.type]), [['instancetype.spec.cpu.guest', 'FieldValueInvalid']]);
  const req = admitInstancetypes(vm, it(1), { requirements: { cpu: { guest: 2 } } }, config);
  assert.equal(req.errors.map((e) => [e.type, e.field, e.reason]), [['FieldValueNotFound', 'spec.instancetype', 'failure checking preference requirements: insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU']]);
  assert.equal(admitInstancetypes(vm, undefined, undefined, config), { errors: [], vm });
});

test('the VM controller\'s ApplyToVMI: reference annotations, then the specs; a conflict is KubeVirt\'s VMI error', () => {
  const vm = theVM({ spec: { instancetype: { name: 'small', kind: 'VirtualMachineInstancetype' }, preference: { name: 'cp' } } });
  const vmi: VirtualMachineInstance = { metadata: { name: 'vm1' }, spec: spec() };
  applyToNewVMI(vm, vmi, it(2, '1Gi'), { machine: { preferredMachineType: 'pc' } });
  assert.equal(vmi.metadata?.annotations, { 'kubevirt.io/instancetype-name': 'small', 'kubevirt.io/cluster-preference-name': 'cp' });
  assert.equal([vmi.spec.domain.cpu?.sockets, vmi.spec.domain.memory?.guest, vmi.spec.domain.machine?.type], [2, '1Gi', 'pc']);
  const bad: VirtualMachineInstance = { spec: spec({ domain: { memory: { guest: '1Gi' }, cpu: { cores: 2 } } }) };
  try {
    applyToNewVMI(vm, bad, it(2), undefined);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, InstancetypeApplyError);
    assert.is((e as Error).message, 'VMI conflicts with instancetype spec in fields: [spec.domain.cpu.cores, spec.domain.memory.guest]');
  }
});

test('expand: disks for volumes, the default interface, the specs, defaults; matchers and refs gone; conflicts thrown', () => {
  const config = defaultClusterConfig();
  const vm = theVM({ spec: { instancetype: { name: 'small' }, preference: { name: 'p' } }, status: { instancetypeRef: { name: 'small' } } });
  vm.spec.template.spec!.volumes = [{ name: 'd', containerDisk: { image: 'x' } }];
  const out = expandVirtualMachine(vm, it(2, '1Gi'), { devices: { preferredDiskBus: 'virtio', preferredInterfaceModel: 'e1000' } }, config);
  const s = out.spec.template.spec!;
  assert.equal(s.domain.devices.disks, [{ name: 'd', disk: { bus: 'virtio' } }]);
  assert.equal(s.domain.devices.interfaces, [{ name: 'default', bridge: {}, model: 'e1000' }], 'the cluster default binding (bridge)');
  assert.equal([s.domain.cpu?.sockets, s.domain.memory?.guest, s.domain.machine?.type, s.architecture], [2, '1Gi', 'q35', 'amd64']);
  assert.equal([out.spec.instancetype, out.spec.preference, out.status?.instancetypeRef], [undefined, undefined, undefined]);
  assert.is(vm.spec.instancetype?.name, 'small', 'the VM is not changed');
  const plain = theVM();
  assert.is(expandVirtualMachine(plain, undefined, undefined, config), plain);
  vm.spec.template.spec!.domain.memory = { guest: '1Gi' };
  assert.throws(() => expandVirtualMachine(vm, it(2), undefined, config), /VM field\(s\) spec\.template\.spec\.domain\.memory\.guest conflicts with selected instance type/);
});

test('inferFromVolume: from the claim\'s labels; Ignore drops the matcher on an ignorable failure and the template memory on success', async () => {
  const claims: Record<string, Obj> = {
    labelled: { metadata: { labels: { 'instancetype.kubevirt.io/default-instancetype': 'u1.medium', 'instancetype.kubevirt.io/default-preference': 'fedora', 'instancetype.kubevirt.io/default-preference-kind': 'VirtualMachinePreference' } } },
    bare: { metadata: {} },
  };
  const source: InferSource = {
    persistentVolumeClaim: async (_ns, name) => claims[name],
    dataVolume: async () => undefined,
    dataSource: async () => undefined,
    volumeSnapshot: async () => undefined,
  };
  const vmWith = (claim: string, policy?: 'Ignore' | 'Reject', volume = 'root') => {
    const v = theVM({ spec: { instancetype: { inferFromVolume: volume, ...(policy ? { inferFromVolumeFailurePolicy: policy } : {}) }, preference: { inferFromVolume: volume } } });
    v.spec.template.spec!.volumes = [{ name: 'root', persistentVolumeClaim: { claimName: claim } }, { name: 'cd', containerDisk: { image: 'x' } }];
    v.spec.template.spec!.domain.memory = { guest: '1Gi' };
    return v;
  };
  const ok = await inferMatchers(vmWith('labelled'), source);
  assert.equal([ok.spec.instancetype, ok.spec.preference], [{ name: 'u1.medium' }, { name: 'fedora', kind: 'VirtualMachinePreference' }]);
  assert.equal(ok.spec.template.spec?.domain.memory, { guest: '1Gi' });
  assert.is((await inferMatchers(vmWith('labelled', 'Ignore'), source)).spec.template.spec?.domain.memory, undefined);
  const refuse = async (v: VirtualMachine) => { try { await inferMatchers(v, source); } catch (e) { return e instanceof InferenceError ? [e.message, e.ignorable] : e; } return undefined; };
  assert.equal(await refuse(vmWith('bare')), ['unable to find required instancetype.kubevirt.io/default-instancetype label on the volume', true]);
  assert.equal(await refuse(vmWith('gone', 'Ignore')), ['persistentvolumeclaims "gone" not found', false]);
  assert.equal(await refuse(vmWith('labelled', undefined, 'missing')), ['unable to find volume missing to infer defaults', false]);
  assert.equal(await refuse(vmWith('labelled', 'Ignore', 'cd')), ['unable to infer defaults from volume cd as type is not supported', true], 'the preference matcher has no Ignore');
  const v = vmWith('bare', 'Ignore');
  v.spec.preference = { inferFromVolume: 'root', inferFromVolumeFailurePolicy: 'Ignore' };
  const dropped = await inferMatchers(v, source);
  assert.equal([dropped.spec.instancetype, dropped.spec.preference], [undefined, undefined]);
});

test('instance type and preference admitters: KubeVirt\'s rules and deprecation warnings', () => {
  const its: [Partial<VirtualMachineInstancetypeSpec['memory']>, Obj, string[], string[]][] = [
    [{}, {}, [], []],
    [{ overcommitPercent: 101 }, {}, ["spec.memory.overcommitPercent: spec.memory.overcommitPercent '101': must be in range between 0 and 100."], []],
    [{ overcommitPercent: 10, hugepages: { pageSize: '2Mi' } }, {}, ['spec.memory.overcommitPercent: spec.memory.overcommitPercent and spec.memory.hugepages should not be requested together.'], []],
    [{ hugepages: { pageSize: '2Mi' } }, {}, [], []],
    [{}, { launchSecurity: {} }, [], ['launchSecurity is deprecated and will be removed in a future release. Use preference instead.']],
  ];
  for (const [memory, extra, errors, warnings] of its) {
    const r = validateInstancetypeSpec({ ...it(1), memory: { guest: '1Gi', ...memory }, ...extra } as VirtualMachineInstancetypeSpec);
    assert.equal([r.errors.map(formatFieldError), r.warnings], [errors, warnings], JSON.stringify([memory, extra]));
  }
  const prefs: [Obj, string[], string[]][] = [
    [{}, [], []],
    [{ cpu: { preferredCPUTopology: 'cores' } }, [], []],
    [{ cpu: { preferredCPUTopology: 'preferThreads' } }, [], ['PreferredCPUTopology preferThreads is deprecated for removal in a future release, please use threads instead']],
    [{ cpu: { preferredCPUTopology: 'diagonal' } }, ['spec.cpu.preferredCPUTopology: unknown preferredCPUTopology diagonal'], []],
    [{ cpu: { preferredCPUTopology: 'spread', spreadOptions: { across: 'Sideways' } } }, ['spec.cpu.spreadOptions.across: across Sideways is not supported'], []],
    [{ cpu: { preferredCPUTopology: 'spread', spreadOptions: { across: 'CoresThreads', ratio: 3 } } }, ['spec.cpu.spreadOptions.ratio: only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs over cores and threads'], []],
    [{ cpu: { preferredCPUTopology: 'spread', spreadOptions: { across: 'SocketsCores', ratio: 3 } } }, [], []],
  ];
  for (const [p, errors, warnings] of prefs) {
    const r = validatePreferenceSpec(p);
    assert.equal([r.errors.map(formatFieldError), r.warnings], [errors, warnings], JSON.stringify(p));
  }
});

test('KubeVirt\'s instancetype and preference examples parse as their kinds', () => {
  for (const { file, doc } of loadInstancetypeExamples()) {
    if (doc.kind === 'VirtualMachine') continue;
    const o = decodeInstancetypeObject(doc.kind as 'VirtualMachineInstancetype', doc);
    assert.ok(o.spec, file);
  }
  assert.throws(() => decodeInstancetypeObject('VirtualMachineInstancetype', { spec: { cpu: {}, memory: { guest: '1Gi' } } }), /spec\.cpu\.guest/);
});

test.run();

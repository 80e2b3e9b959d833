import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultClusterConfig, mergeClusterConfig, type PartialClusterConfig } from '../../src/api/cluster-config.ts';
import {
  DefaultingError,
  defaultNewVirtualMachine,
  defaultNewVirtualMachineInstance,
  formatTime,
  liveUpdateMemoryIncompatibility,
  protectVirtualMachineInstanceStatus,
  setDefaultVolumeDisk,
  supportsPCIeHotplug,
  uuidV5,
  vmiFirmwareUUID,
  type DefaultingEnv,
} from '../../src/api/defaults.ts';
import { decodeKubeVirtObject, decodeVirtualMachineInstance } from '../../src/api/parse.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceSpec } from '../../src/api/types.ts';
import { loadExample, loadExamples } from './fixtures.ts';

function env(config: PartialClusterConfig = {}): DefaultingEnv {
  let n = 0;
  return {
    config: mergeClusterConfig(config),
    now: () => new Date('2026-01-02T03:04:05.678Z'),
    randomUUID: () => `00000000-0000-4000-8000-${String(n++).padStart(12, '0')}`,
  };
}

/** A VMI with `spec` merged over a minimal valid one. */
function vmi(spec: Omit<Partial<VirtualMachineInstanceSpec>, 'domain'> & { domain?: any } = {}, metadata: any = { name: 't' }): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata,
    spec: { ...spec, domain: { devices: {}, memory: { guest: '128Mi' }, ...spec.domain } },
  };
}

const def = (v: VirtualMachineInstance, config: PartialClusterConfig = {}) => defaultNewVirtualMachineInstance(v, env(config));

test('vmi-sata: the full defaulted object, as KubeVirt produces it', () => {
  const out = def(decodeVirtualMachineInstance(loadExample('vmi-sata.yaml')));
  assert.equal(out, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      labels: { special: 'vmi-sata' },
      name: 'vmi-sata',
      annotations: { 'kubevirt.io/pci-topology-version': 'v3' },
      finalizers: ['kubevirt.io/foregroundDeleteVirtualMachine'],
    },
    spec: {
      domain: {
        devices: {
          interfaces: [{ name: 'default', bridge: {} }],
          disks: [{ name: 'containerdisk', disk: { bus: 'sata' } }],
        },
        memory: { guest: '128Mi' },
        resources: {},
        machine: { type: 'q35' },
        cpu: { sockets: 1, cores: 1, threads: 1, model: 'host-model', maxSockets: 4 },
        firmware: { uuid: '00000000-0000-4000-8000-000000000000' },
        features: { acpi: { enabled: true } },
      },
      terminationGracePeriodSeconds: 0,
      volumes: [
        {
          containerDisk: { image: 'registry:5000/kubevirt/cirros-container-disk-demo:devel', imagePullPolicy: 'IfNotPresent' },
          name: 'containerdisk',
        },
      ],
      architecture: 'amd64',
      evictionStrategy: 'None',
      networks: [{ name: 'default', pod: {} }],
    },
    status: {
      memory: { guestAtBoot: '128Mi', guestCurrent: '128Mi', guestRequested: '128Mi' },
      currentCPUTopology: { sockets: 1, cores: 1, threads: 1 },
      runtimeUser: 107,
      phase: 'Pending',
      phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: '2026-01-02T03:04:05Z' }],
    },
  });
});

test('every example: defaulting is idempotent, does not modify its input, and keeps the object parseable', () => {
  for (const { file, doc } of loadExamples()) {
    const parsed = decodeKubeVirtObject(doc);
    if (parsed.kind === 'VirtualMachineInstance') {
      const before = structuredClone(parsed.object);
      const once = def(parsed.object);
      assert.equal(parsed.object, before, `${file}: input untouched`);
      assert.equal(def(once), once, `${file}: idempotent`);
      assert.equal(decodeVirtualMachineInstance(once), once, `${file}: still parses`);
    } else if (parsed.kind === 'VirtualMachine') {
      const e = env();
      const once = defaultNewVirtualMachine(parsed.object, e);
      assert.equal(defaultNewVirtualMachine(once, e), once, `${file}: VM idempotent`);
      // the VMI the VM controller would create from the template, through the VMI webhook
      const tmpl = once.spec.template;
      const child: VirtualMachineInstance = { metadata: { ...tmpl.metadata, name: 'x' }, spec: tmpl.spec! };
      const vmiOnce = def(child);
      assert.equal(def(vmiOnce), vmiOnce, `${file}: template VMI idempotent`);
    } else if (parsed.kind === 'VirtualMachineInstanceReplicaSet') {
      const tmpl = parsed.object.spec.template;
      const child: VirtualMachineInstance = { metadata: { ...tmpl.metadata, name: 'x' }, spec: tmpl.spec! };
      const once = def(child);
      assert.equal(def(once), once, `${file}: RS template VMI idempotent`);
    }
  }
});

test('vmi-nocloud: explicit virtio buses kept, emptyDisk untouched', () => {
  const out = def(decodeVirtualMachineInstance(loadExample('vmi-nocloud.yaml')));
  assert.equal(out.spec.domain.devices.disks?.map((d) => d.disk?.bus), ['virtio', 'virtio', 'virtio']);
  assert.equal(out.spec.volumes?.[2], { emptyDisk: { capacity: '2Gi' }, name: 'emptydisk' });
});

test('vmi-kernel-boot: no volumes, no disks added; 1Gi guest gets maxGuest 4Gi (memory hotplug)', () => {
  const out = def(decodeVirtualMachineInstance(loadExample('vmi-kernel-boot.yaml')));
  assert.is(out.spec.domain.devices.disks, undefined);
  assert.is(out.spec.domain.memory?.maxGuest, '4Gi');
  assert.is(out.spec.domain.firmware?.kernelBoot?.container?.imagePullPolicy, undefined);
});

const pullPolicies: [string, string][] = [
  ['registry:5000/kubevirt/cirros:devel', 'IfNotPresent'],
  ['quay.io/containerdisks/fedora:latest', 'Always'],
  ['fedora', 'Always'],
  ['quay.io/containerdisks/fedora', 'Always'],
  ['quay.io/x/y@sha256:abcd', 'IfNotPresent'],
  ['localhost:5000/img', 'IfNotPresent'],
];
for (const [image, policy] of pullPolicies) {
  test(`containerDisk ${image} → imagePullPolicy ${policy}`, () => {
    const out = def(vmi({ volumes: [{ name: 'd', containerDisk: { image } }] }));
    assert.is(out.spec.volumes?.[0]?.containerDisk?.imagePullPolicy, policy);
  });
}

test('explicit imagePullPolicy is kept', () => {
  const out = def(vmi({ volumes: [{ name: 'd', containerDisk: { image: 'a:latest', imagePullPolicy: 'Never' } }] }));
  assert.is(out.spec.volumes?.[0]?.containerDisk?.imagePullPolicy, 'Never');
});

const guestMemory: [string, any, string | undefined][] = [
  ['from requests', { resources: { requests: { memory: '256Mi' }, limits: { memory: '1Gi' } } }, '256Mi'],
  ['from limits when no request', { resources: { limits: { memory: '1Gi' } } }, '1Gi'],
  ['zero request falls through to limits', { resources: { requests: { memory: '0' }, limits: { memory: '64Mi' } } }, '64Mi'],
  ['from hugepages page size', { memory: { hugepages: { pageSize: '2Mi' } } }, '2Mi'],
  ['explicit guest wins', { memory: { guest: '512Mi' }, resources: { requests: { memory: '1Gi' } } }, '512Mi'],
  ['none at all', { memory: undefined }, undefined],
];
for (const [name, domain, expected] of guestMemory) {
  test(`memory.guest ${name}`, () => {
    const out = def(vmi({ domain: { memory: undefined, ...domain } }));
    assert.is(out.spec.domain.memory?.guest, expected);
    assert.is(out.status?.memory?.guestAtBoot, expected);
  });
}

const topology: [string, any, any][] = [
  ['no cpu → 1/1/1', {}, { sockets: 1, cores: 1, threads: 1 }],
  ['cpu limit → sockets', { resources: { limits: { cpu: '3' } } }, { sockets: 3, cores: 1, threads: 1 }],
  ['cpu request → sockets (rounded up)', { resources: { requests: { cpu: '1500m' } } }, { sockets: 2, cores: 1, threads: 1 }],
  ['limit beats request', { resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } }, { sockets: 2, cores: 1, threads: 1 }],
  ['explicit cores kept, rest untouched', { cpu: { cores: 2 } }, { cores: 2 }],
  ['model only → topology added', { cpu: { model: 'Haswell' } }, { model: 'Haswell', sockets: 1, cores: 1, threads: 1 }],
];
for (const [name, domain, cpu] of topology) {
  test(`CPU topology: ${name}`, () => {
    const out = def(vmi({ domain }));
    const got = out.spec.domain.cpu!;
    for (const [k, v] of Object.entries(cpu)) assert.is((got as any)[k], v, k);
    assert.equal(out.status?.currentCPUTopology, { sockets: got.sockets ?? 0, cores: got.cores ?? 0, threads: got.threads ?? 0 });
  });
}

test('CPU request: limit copied to request; cluster cpuRequest injected only when not 100m and not dedicated', () => {
  assert.equal(def(vmi({ domain: { resources: { limits: { cpu: '2' } } } })).spec.domain.resources?.requests, { cpu: '2' });
  assert.is(def(vmi()).spec.domain.resources?.requests, undefined);
  assert.equal(def(vmi(), { cpuRequest: '250m' }).spec.domain.resources?.requests, { cpu: '250m' });
  assert.equal(def(vmi({ domain: { resources: { requests: { cpu: '1' } } } }), { cpuRequest: '250m' }).spec.domain.resources?.requests, { cpu: '1' });
  assert.is(def(vmi({ domain: { cpu: { dedicatedCpuPlacement: true } } }), { cpuRequest: '250m' }).spec.domain.resources?.requests, undefined);
});

test('CPU hotplug: maxSockets = sockets × 4, capped at 512 vCPUs; cluster maxCpuSockets; Stage rollout disables', () => {
  assert.is(def(vmi({ domain: { cpu: { sockets: 2, cores: 1, threads: 1 } } })).spec.domain.cpu?.maxSockets, 8);
  assert.is(def(vmi({ domain: { cpu: { sockets: 4, cores: 64, threads: 2 } } })).spec.domain.cpu?.maxSockets, 4);
  assert.is(def(vmi({ domain: { cpu: { sockets: 1, cores: 100, threads: 1 } } })).spec.domain.cpu?.maxSockets, 4);
  assert.is(def(vmi({ domain: { cpu: { sockets: 1, cores: 200, threads: 1 } } })).spec.domain.cpu?.maxSockets, 2);
  assert.is(def(vmi(), { liveUpdateConfiguration: { maxCpuSockets: 6 } }).spec.domain.cpu?.maxSockets, 6);
  assert.is(def(vmi({ domain: { cpu: { sockets: 8 } } }), { liveUpdateConfiguration: { maxCpuSockets: 6 } }).spec.domain.cpu?.maxSockets, 8);
  assert.is(def(vmi({ domain: { cpu: { maxSockets: 2 } } })).spec.domain.cpu?.maxSockets, 2);
  assert.is(def(vmi(), { vmRolloutStrategy: 'Stage' }).spec.domain.cpu?.maxSockets, undefined);
  assert.is(def(vmi({ domain: { memory: { guest: '2Gi' } } }), { vmRolloutStrategy: 'Stage' }).spec.domain.memory?.maxGuest, undefined);
});

test('memory hotplug compatibility (ValidateLiveUpdateMemory)', () => {
  const s = (domain: any, arch = 'amd64'): VirtualMachineInstanceSpec => ({ architecture: arch, domain: { devices: {}, ...domain } });
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '1Gi' } }), '4Gi'), undefined);
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '128Mi' } }), '512Mi'), 'Memory hotplug is only available for VMs with at least 1Gi of guest memory');
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '1025Mi' } }), '4Gi'), 'Guest memory must be 2Mi aligned');
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '2Gi' } }), '1Gi'), 'Guest memory is greater than the configured maxGuest memory');
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '2Gi', hugepages: { pageSize: '1Gi' } } }), '5Gi'), undefined);
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '2Gi', hugepages: { pageSize: '1Gi' } } }), '4609Mi'), 'MaxGuest must be 1Gi aligned');
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '2Gi' } }, 'arm64'), '4Gi'), 'Memory hotplug is only available for x86_64 VMs');
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '2Gi' }, cpu: { realtime: {} } }), '4Gi'), 'Memory hotplug is not compatible with realtime VMs');
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '2Gi' }, launchSecurity: {} }), '4Gi'), 'Memory hotplug is not compatible with encrypted VMs');
  assert.is(liveUpdateMemoryIncompatibility(s({}), '4Gi'), 'Guest memory must be configured when memory hotplug is enabled');
  assert.is(liveUpdateMemoryIncompatibility(s({ memory: { guest: '2Gi' } }), undefined), 'Max guest memory must be configured when memory hotplug is enabled');
  assert.is(def(vmi({ domain: { memory: { guest: '2Gi' } } }), { liveUpdateConfiguration: { maxGuest: '16Gi' } }).spec.domain.memory?.maxGuest, '16Gi');
});

test('default network: bridge by default, masquerade when configured, none with autoattachPodInterface=false or explicit networks', () => {
  let out = def(vmi());
  assert.equal(out.spec.domain.devices.interfaces, [{ name: 'default', bridge: {} }]);
  assert.equal(out.spec.networks, [{ name: 'default', pod: {} }]);
  out = def(vmi(), { network: { defaultNetworkInterface: 'masquerade' } });
  assert.equal(out.spec.domain.devices.interfaces, [{ name: 'default', masquerade: {} }]);
  out = def(vmi({ domain: { devices: { autoattachPodInterface: false } } }));
  assert.is(out.spec.domain.devices.interfaces, undefined);
  assert.is(out.spec.networks, undefined);
  out = def(vmi({ networks: [{ name: 'n', multus: { networkName: 'x' } }], domain: { devices: { interfaces: [{ name: 'n', bridge: {} }] } } }));
  assert.equal(out.spec.networks, [{ name: 'n', multus: { networkName: 'x' } }]);
});

test('default network refusals are DefaultingErrors with KubeVirt\'s messages', () => {
  assert.throws(() => def(vmi(), { network: { defaultNetworkInterface: 'slirp' } }), (e: unknown) => e instanceof DefaultingError && e.message === 'slirp interface is deprecated as of v1.3');
  assert.throws(() => def(vmi(), { network: { permitBridgeInterfaceOnPodNetwork: false } }), /bridge interface is not enabled in kubevirt-config/);
});

test('SetDefaultVolumeDisk: disks for volumes without a disk or filesystem, in volume order', () => {
  const spec: VirtualMachineInstanceSpec = {
    domain: { devices: { disks: [{ name: 'b', cdrom: {} }], filesystems: [{ name: 'fs', virtiofs: {} }] } },
    volumes: [{ name: 'a', emptyDisk: { capacity: '1Gi' } }, { name: 'b', emptyDisk: { capacity: '1Gi' } }, { name: 'fs', configMap: { name: 'c' } }, { name: 'c', emptyDisk: { capacity: '1Gi' } }],
  };
  const out = setDefaultVolumeDisk(spec);
  assert.equal(out.domain.devices.disks, [{ name: 'b', cdrom: {} }, { name: 'a' }, { name: 'c' }]);
  assert.equal(spec.domain.devices.disks, [{ name: 'b', cdrom: {} }], 'input untouched');
});

test('disk targets: disk {} when none; cdrom readonly/tray; amd64 bus sata on disk, cdrom and lun', () => {
  const out = def(vmi({ domain: { devices: { disks: [{ name: 'a' }, { name: 'b', cdrom: {} }, { name: 'c', lun: {} }, { name: 'd', disk: { bus: 'virtio' } }] } } }));
  assert.equal(out.spec.domain.devices.disks, [
    { name: 'a', disk: { bus: 'sata' } },
    { name: 'b', cdrom: { bus: 'sata', readonly: true, tray: 'closed' } },
    { name: 'c', lun: { bus: 'sata' } },
    { name: 'd', disk: { bus: 'virtio' } },
  ]);
});

test('arm64: virtio bus, host-passthrough, EFI without secure boot, no memory hotplug', () => {
  const out = def(vmi({ architecture: 'arm64', domain: { devices: { disks: [{ name: 'a' }] }, memory: { guest: '2Gi' } } }));
  assert.equal(out.spec.domain.devices.disks, [{ name: 'a', disk: { bus: 'virtio' } }]);
  assert.is(out.spec.domain.cpu?.model, 'host-passthrough');
  assert.equal(out.spec.domain.firmware?.bootloader, { efi: { secureBoot: false } });
  assert.is(out.spec.domain.machine?.type, 'virt');
  assert.is(out.spec.domain.memory?.maxGuest, undefined);
  assert.is(out.spec.domain.cpu?.maxSockets, undefined);
});

test('inputs, watchdog, probes, timers and feature states', () => {
  const out = def(vmi({
    domain: {
      devices: { inputs: [{ name: 'i' }, { name: 'k', type: 'keyboard', bus: 'virtio' }], watchdog: { name: 'w' } },
      clock: { utc: {}, timer: { hpet: { present: false }, rtc: { tickPolicy: 'catchup' } } },
      features: { apic: {}, smm: { enabled: false }, hyperv: { relaxed: {}, spinlocks: {}, synictimer: { direct: {} }, ipi: {}, evmcs: {} } },
    },
    readinessProbe: { tcpSocket: { port: 22 } },
    livenessProbe: { guestAgentPing: {}, periodSeconds: 5, failureThreshold: 0 },
  }));
  const d = out.spec.domain;
  assert.equal(d.devices.inputs, [{ name: 'i', bus: 'usb', type: 'tablet' }, { name: 'k', type: 'keyboard', bus: 'virtio' }]);
  assert.equal(d.devices.watchdog, { name: 'w', i6300esb: { action: 'reset' } });
  assert.equal(d.clock?.timer, { hpet: { present: false }, rtc: { tickPolicy: 'catchup', present: true } });
  assert.equal(d.features?.acpi, { enabled: true });
  assert.equal(d.features?.apic, { enabled: true });
  assert.equal(d.features?.smm, { enabled: false });
  const hv = d.features?.hyperv!;
  assert.equal(hv.relaxed, { enabled: true });
  assert.equal(hv.spinlocks, { enabled: true, spinlocks: 4096 });
  assert.equal(hv.synictimer, { enabled: true, direct: { enabled: true } });
  assert.equal(hv.synic, { enabled: true }, 'synictimer requires synic');
  assert.equal(hv.vpindex, { enabled: true }, 'ipi and synic require vpindex');
  assert.equal(hv.vapic, { enabled: true }, 'evmcs requires vapic');
  assert.equal(d.cpu?.features, [{ name: 'vmx', policy: 'require' }], 'evmcs requires vmx');
  assert.equal(out.spec.readinessProbe, { tcpSocket: { port: 22 }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  assert.equal(out.spec.livenessProbe, { guestAgentPing: {}, periodSeconds: 5, failureThreshold: 3, timeoutSeconds: 1, successThreshold: 1 });
});

test('a disabled Hyper-V requirement is left alone (validation reports it)', () => {
  const out = def(vmi({ domain: { features: { hyperv: { synic: {}, vpindex: { enabled: false } } } } }));
  assert.equal(out.spec.domain.features?.hyperv?.vpindex, { enabled: false });
});

test('cluster cpuModel, machineType, evictionStrategy and the Root gate', () => {
  const out = def(vmi(), { cpuModel: 'Skylake', machineType: 'pc-q35-7.2', evictionStrategy: 'LiveMigrate', developerConfiguration: { featureGates: ['Root'] } });
  assert.is(out.spec.domain.cpu?.model, 'Skylake');
  assert.is(out.spec.domain.machine?.type, 'pc-q35-7.2');
  assert.is(out.spec.evictionStrategy, 'LiveMigrate');
  assert.is(out.status?.runtimeUser, undefined);
  assert.is(def(vmi({ evictionStrategy: 'External' }), { evictionStrategy: 'LiveMigrate' }).spec.evictionStrategy, 'External');
});

test('PCI topology annotation only for q35/virt machines; an existing one is kept', () => {
  assert.is(def(vmi({ domain: { machine: { type: 'pc-i440fx-7.2' } } })).metadata?.annotations, undefined);
  assert.equal(def(vmi({}, { name: 't', annotations: { 'kubevirt.io/pci-topology-version': 'v2' } })).metadata?.annotations, { 'kubevirt.io/pci-topology-version': 'v2' });
  assert.ok(supportsPCIeHotplug({ domain: { devices: {} } }));
  assert.not.ok(supportsPCIeHotplug({ architecture: 's390x', domain: { devices: {} } }));
});

test('finalizer appended once; phase and timestamp only when the phase is unset', () => {
  const out = def(vmi({}, { name: 't', finalizers: ['other'] }));
  assert.equal(out.metadata?.finalizers, ['other', 'kubevirt.io/foregroundDeleteVirtualMachine']);
  const pre = vmi();
  pre.status = { phase: 'Scheduling' };
  const out2 = def(pre);
  assert.is(out2.status?.phase, 'Scheduling');
  assert.is(out2.status?.phaseTransitionTimestamps, undefined);
});

test('quantities come out canonical, as the Go webhook re-marshals them', () => {
  const out = def(vmi({ domain: { memory: { guest: '1.5Gi' }, resources: { requests: { memory: '1536Mi', cpu: '1000m' } } }, volumes: [{ name: 'e', emptyDisk: { capacity: '1024Mi' } }] }));
  assert.is(out.spec.domain.memory?.guest, '1536Mi');
  assert.equal(out.spec.domain.resources?.requests, { memory: '1536Mi', cpu: '1' });
  assert.equal(out.spec.volumes?.[0]?.emptyDisk, { capacity: '1Gi' });
  assert.is(out.status?.memory?.guestAtBoot, '1536Mi', 'status is re-marshalled too');
});

test('VM create: firmware uuid and serial, architecture, machine type, template annotation; existing values kept', () => {
  const vm: any = loadExample('vm-cirros.yaml');
  const e = env();
  const out = defaultNewVirtualMachine(vm, e);
  const t = out.spec.template;
  assert.is(t.spec?.domain.firmware?.uuid, '00000000-0000-4000-8000-000000000000');
  assert.is(t.spec?.domain.firmware?.serial, '00000000-0000-4000-8000-000000000001');
  assert.is(t.spec?.architecture, 'amd64');
  assert.equal(t.spec?.domain.machine, { type: 'q35' });
  assert.is(t.metadata?.annotations?.['kubevirt.io/pci-topology-version'], 'v3');
  assert.is(vm.spec.template.spec.domain.firmware, undefined, 'input untouched');
  vm.spec.template.spec.domain.firmware = { uuid: 'u', serial: 's' };
  const kept = defaultNewVirtualMachine(vm, env());
  assert.equal(kept.spec.template.spec?.domain.firmware, { uuid: 'u', serial: 's' });
});

test('uuid.NewSHA1: RFC 4122 v5 vectors and the VM firmware namespace', () => {
  assert.is(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org'), '886313e1-3b8a-5372-9b90-0c9aee199e5d');
  assert.is(vmiFirmwareUUID('testvm'), '5a9fc181-957e-5c32-9e5a-2de5e9673531');
  assert.is(vmiFirmwareUUID('vm-cirros'), '0d2a2043-41c0-59c3-9b17-025022203668');
  assert.is(vmiFirmwareUUID(''), '2eb17a2d-ccc6-58e5-84e2-5684c434c9f0');
  assert.throws(() => uuidV5('nope', 'x'), /not a UUID/);
});

test('metav1.Time formatting drops milliseconds', () => {
  assert.is(formatTime(new Date('2026-01-02T03:04:05.999Z')), '2026-01-02T03:04:05Z');
});

test('default config object is not shared between calls', () => {
  assert.equal(defaultClusterConfig(), defaultClusterConfig());
  assert.is.not(defaultClusterConfig(), defaultClusterConfig());
});

test('VMI update: a user\'s status change is reverted; KubeVirt service accounts keep theirs', () => {
  const old = def(vmi());
  const mine: any = structuredClone(old);
  mine.status.phase = 'Running';
  mine.metadata.labels = { a: 'b' };
  const reverted = protectVirtualMachineInstanceStatus(old, mine, false);
  assert.equal(reverted.status, old.status);
  assert.equal(reverted.metadata?.labels, { a: 'b' }, 'only status is reset');
  assert.is(mine.status.phase, 'Running', 'input untouched');
  assert.is(protectVirtualMachineInstanceStatus(old, mine, true), mine);
  const equal: any = structuredClone(old);
  equal.status.memory.guestAtBoot = '134217728';
  assert.is(protectVirtualMachineInstanceStatus(old, equal, false), equal, 'same values in other spellings are not a change');
});

test.run();

// Golden launcher pods: each VMI of golden-vmis.ts rendered with fixed cluster settings and a
// fixed jitter, compared with test/controller/golden/<case>[.<variant>].json.
// Regenerate with QVIRT_UPDATE_GOLDEN=1 (then review the diff).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderLaunchManifest, sanitizeHostname, launcherArgs, LaunchManifestError } from '../../controller/vmi/launcher-pod.ts';
import { virtualMachineInstanceID } from '../../src/api/vmi-id.ts';
import { DEFAULT_RENDER_CONFIG, renderConfigFromClusterConfig, type RenderConfig } from '../../controller/vmi/render-config.ts';
import { defaultClusterConfig, mergeClusterConfig } from '../../src/api/cluster-config.ts';
import { PvcNotFoundError, type PVCInfo } from '../../controller/vmi/volumes.ts';
import { goldenVMIs } from './golden-vmis.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const GOLDEN_DIR = new URL('./golden/', import.meta.url).pathname;
const update = process.env.QVIRT_UPDATE_GOLDEN === '1';

const cfg: RenderConfig = { ...DEFAULT_RENDER_CONFIG, launcherImage: 'quay.io/qvirt/qvirt:v0.1.0', nodeSelectors: { 'node-role.kubernetes.io/worker': '' } };
const pvcs = new Map<string, PVCInfo>([
  ['disk-alpine', { volumeMode: 'Filesystem', accessModes: ['ReadWriteMany'] }],
  ['disk-block', { volumeMode: 'Block', accessModes: ['ReadWriteOnce'] }],
]);

function render(vmi: VirtualMachineInstance, c: RenderConfig = cfg): Pod {
  return renderLaunchManifest(vmi, c, { pvcs, randomInt: () => 17 });
}

function golden(file: string, pod: Pod) {
  const path = join(GOLDEN_DIR, file);
  const text = JSON.stringify(pod, null, 2) + '\n';
  if (update || !existsSync(path)) {
    if (!update) throw new Error(`golden file ${file} is missing; run with QVIRT_UPDATE_GOLDEN=1 to create it`);
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(path, text);
    return;
  }
  assert.fixture(text, readFileSync(path, 'utf8'), `${file} differs from the golden pod (QVIRT_UPDATE_GOLDEN=1 regenerates)`);
}

for (const [name, vmi] of Object.entries(goldenVMIs)) {
  test(`golden pod: ${name}`, () => golden(`${name}.json`, render(vmi)));
}
test('golden pod: ephemeral with useEmulation (no kvm/vhost-net, --allow-emulation)', () => {
  golden('ephemeral.emulation.json', render(goldenVMIs['ephemeral']!, { ...cfg, useEmulation: true }));
});

// --- targeted properties (readable without the golden files) -----------------------------------
const ephemeral = () => render(goldenVMIs['ephemeral']!);

test('pod identity: generateName, labels, annotations, owner reference', () => {
  const p = ephemeral();
  assert.is(p.metadata?.generateName, 'virt-launcher-vmi-ephemeral-');
  assert.equal(p.metadata?.labels, {
    special: 'vmi-ephemeral',
    'kubevirt.io': 'virt-launcher',
    'kubevirt.io/created-by': '11111111-0000-0000-0000-000000000001',
    'vm.kubevirt.io/name': 'vmi-ephemeral',
    'vmi.kubevirt.io/id': 'vmi-ephemeral',
  });
  assert.equal(p.metadata?.annotations, {
    'kubevirt.io/domain': 'vmi-ephemeral',
    'example.com/owner': 'team-a',
    'kubectl.kubernetes.io/default-container': 'compute',
    'kubevirt.io/migrationTransportUnix': 'true',
    'descheduler.alpha.kubernetes.io/request-evict-only': '',
  });
  assert.equal(p.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vmi-ephemeral', uid: '11111111-0000-0000-0000-000000000001', controller: true, blockOwnerDeletion: true }]);
});

test('compute: qvirt launcher with virt-launcher\'s flags; grace +15 in the launcher, +30 on the pod', () => {
  const p = ephemeral();
  const compute = p.spec!.containers[0]!;
  assert.is(compute.name, 'compute');
  assert.equal(compute.command, ['/usr/bin/qvirt', 'launcher']);
  assert.equal(compute.args, [
    '--qemu-timeout', '257s', '--name', 'vmi-ephemeral', '--uid', '11111111-0000-0000-0000-000000000001', '--namespace', 'default',
    '--kubevirt-share-dir', '/var/run/kubevirt', '--ephemeral-disk-dir', '/var/run/kubevirt-ephemeral-disks', '--container-disk-dir', '/var/run/kubevirt/container-disks',
    '--grace-period-seconds', '15', '--hook-sidecars', '0', '--ovmf-path', '/usr/share/edk2/ovmf', '--disk-memory-limit', '2097152000', '--hypervisor', 'kvm', '--run-as-nonroot',
  ]);
  assert.is(p.spec!.terminationGracePeriodSeconds, 30);
  assert.is(render(goldenVMIs['root-grace']!).spec!.terminationGracePeriodSeconds, 210);
  const noGrace = structuredClone(goldenVMIs['ephemeral']!);
  delete noGrace.spec.terminationGracePeriodSeconds;
  assert.is(render(noGrace).spec!.terminationGracePeriodSeconds, 60, 'default 30 + 15 + 15');
  assert.ok(launcherArgs(noGrace, cfg, () => 0).includes('45'));
});

test('compute resources: 1 vCPU / 128Mi guest → 100m CPU, 128Mi + qvirt overhead, kvm/tun/vhost-net, 50M ephemeral storage', () => {
  const r = ephemeral().spec!.containers[0]!.resources!;
  assert.equal(r.requests, { cpu: '100m', 'ephemeral-storage': '50M', memory: '346Mi' });
  assert.equal(r.limits, { 'devices.kubevirt.io/kvm': '1', 'devices.kubevirt.io/tun': '1', 'devices.kubevirt.io/vhost-net': '1' });
});

test('useEmulation: no kvm and no vhost-net; tun stays; --allow-emulation', () => {
  const p = render(goldenVMIs['ephemeral']!, { ...cfg, useEmulation: true });
  assert.equal(p.spec!.containers[0]!.resources!.limits, { 'devices.kubevirt.io/tun': '1' });
  assert.ok(p.spec!.containers[0]!.args!.includes('--allow-emulation'));
});

test('no interfaces and autoattachPodInterface false: no tun, no vhost-net', () => {
  const v = structuredClone(goldenVMIs['ephemeral']!);
  v.spec.domain.devices.interfaces = [];
  v.spec.networks = [];
  v.spec.domain.devices.autoattachPodInterface = false;
  assert.equal(render(v).spec!.containers[0]!.resources!.limits, { 'devices.kubevirt.io/kvm': '1' });
  const e1000 = structuredClone(goldenVMIs['ephemeral']!);
  e1000.spec.domain.devices.interfaces = [{ name: 'default', bridge: {}, model: 'e1000' }];
  assert.equal(render(e1000).spec!.containers[0]!.resources!.limits, { 'devices.kubevirt.io/kvm': '1', 'devices.kubevirt.io/tun': '1' }, 'no virtio NIC → no vhost-net');
});

test('security: non-root pod runs as 107 with caps dropped; root pod as 0 with SYS_NICE', () => {
  const nonRoot = ephemeral();
  assert.equal(nonRoot.spec!.securityContext, { fsGroup: 107, runAsUser: 107, runAsGroup: 107, runAsNonRoot: true });
  assert.equal(nonRoot.spec!.containers[0]!.securityContext, { runAsUser: 107, runAsNonRoot: true, capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] }, runAsGroup: 107, allowPrivilegeEscalation: false });
  assert.ok(nonRoot.spec!.containers[0]!.env!.some((e) => e.name === 'XDG_RUNTIME_DIR'));
  const root = render(goldenVMIs['root-grace']!);
  assert.equal(root.spec!.securityContext, { fsGroup: 107, runAsUser: 0 });
  assert.equal(root.spec!.containers[0]!.securityContext, { runAsUser: 0, runAsNonRoot: false, capabilities: { add: ['NET_BIND_SERVICE', 'SYS_NICE'] } });
  assert.not.ok(root.spec!.containers[0]!.args!.includes('--run-as-nonroot'));
  assert.not.ok(root.spec!.containers[0]!.env!.some((e) => e.name.startsWith('XDG_')));
});

test('scheduling: schedulable + arch + cluster + VMI node selectors, machine type, readiness gate, no service links', () => {
  const p = render(goldenVMIs['interfaces-ports']!);
  assert.equal(p.spec!.nodeSelector, {
    'kubevirt.io/schedulable': 'true',
    'kubernetes.io/arch': 'amd64',
    'node-role.kubernetes.io/worker': '',
    'topology.kubernetes.io/zone': 'a',
    'machine-type.node.kubevirt.io/q35': 'true',
  });
  assert.equal(p.spec!.readinessGates, [{ conditionType: 'kubevirt.io/virtual-machine-unpaused' }]);
  assert.is(p.spec!.enableServiceLinks, false);
  assert.equal(p.spec!.affinity, { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'node-labeller.kubevirt.io/obsolete-host-model', operator: 'DoesNotExist' }] }] } } });
  const dedicated = render(goldenVMIs['dedicated-cpu']!);
  assert.is(dedicated.spec!.nodeSelector!['kubevirt.io/cpumanager'], 'true');
  const root = render(goldenVMIs['root-grace']!);
  assert.is(root.spec!.nodeSelector!['cpu-model.node.kubevirt.io/Haswell-noTSX'], 'true');
  assert.is(root.spec!.nodeSelector!['cpu-feature.node.kubevirt.io/vmx'], 'true');
  assert.equal(root.spec!.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchExpressions, [{ key: 'cpu-feature.node.kubevirt.io/pcid', operator: 'DoesNotExist' }]);
});

test('hostname: name up to the first dot, subdomain kept; service account volume turns the token on', () => {
  const p = render(goldenVMIs['interfaces-ports']!);
  assert.is(p.spec!.hostname, 'vmi');
  assert.is(p.spec!.subdomain, 'mysub');
  assert.is(p.metadata!.labels!['vm.kubevirt.io/name'], 'vmi');
  assert.is(p.spec!.serviceAccountName, 'vm-sa');
  assert.is(p.spec!.automountServiceAccountToken, true);
  assert.is(ephemeral().spec!.automountServiceAccountToken, false);
  const v = structuredClone(goldenVMIs['ephemeral']!);
  v.metadata!.name = 'a'.repeat(70) + '.x';
  assert.is(sanitizeHostname(v), 'a'.repeat(63));
  v.spec.hostname = 'custom';
  assert.is(sanitizeHostname(v), 'custom');
  assert.is(virtualMachineInstanceID('a'.repeat(64)).length, 63);
  assert.match(virtualMachineInstanceID('a'.repeat(64)), /^a{54}-[0-9a-f]{8}$/);
});

test('ports and probes: interface ports on compute (TCP default); probes wrapped by qvirt probe, +10s delay, +1s timeout', () => {
  const c = render(goldenVMIs['interfaces-ports']!).spec!.containers[0]!;
  assert.equal(c.ports, [{ name: 'http', containerPort: 80, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }]);
  assert.equal(c.readinessProbe, {
    initialDelaySeconds: 15, timeoutSeconds: 2, periodSeconds: 10, successThreshold: 1, failureThreshold: 3,
    exec: { command: ['/usr/bin/qvirt', 'probe', '--domainName', 'default_vmi.masquerade.example', '--timeoutSeconds', '1', '--command', 'cat', '--', '/tmp/healthy'] },
  });
  assert.equal(c.livenessProbe?.exec?.command, ['/usr/bin/qvirt', 'probe', '--domainName', 'default_vmi.masquerade.example', '--timeoutSeconds', '1', '--guestAgentPing']);
  assert.is(c.livenessProbe?.periodSeconds, 20);
});

test('init containers: guest-console-log sidecar (qvirt tail), container-disk-binary, then volume<name>-init; disk containers after compute', () => {
  const p = ephemeral();
  assert.equal(p.spec!.initContainers!.map((c) => c.name), ['guest-console-log', 'container-disk-binary', 'volumecontainerdisk-init']);
  const log = p.spec!.initContainers![0]!;
  assert.equal(log.command, ['/usr/bin/qvirt', 'tail']);
  assert.equal(log.args, ['--logfile', '/var/run/kubevirt-private/11111111-0000-0000-0000-000000000001/virt-serial0-log']);
  assert.is(log.restartPolicy, 'Always');
  assert.equal(p.spec!.containers.map((c) => c.name), ['compute', 'volumecontainerdisk']);
  assert.equal(p.spec!.containers[1]!.args, ['--copy-path', '/var/run/kubevirt/container-disks/11111111-0000-0000-0000-000000000001/disk_0']);
  const noLog = render(goldenVMIs['interfaces-ports']!);
  assert.not.ok(noLog.spec!.initContainers!.some((c) => c.name === 'guest-console-log'), 'logSerialConsole: false');
  const kb = render(goldenVMIs['kernel-boot']!);
  assert.equal(kb.spec!.initContainers!.map((c) => c.name), ['guest-console-log', 'container-disk-binary', 'volumekernel-boot-volume-init']);
  assert.equal(kb.spec!.containers.map((c) => c.name), ['compute', 'volumekernel-boot-volume']);
  assert.equal(kb.spec!.containers[1]!.args, ['--copy-path', '/var/run/kubevirt/container-disks/11111111-0000-0000-0000-000000000005/kernel-boot']);
  assert.equal(kb.spec!.imagePullSecrets, [{ name: 'regcred' }]);
});

test('volumes: base emptyDirs and mounts in KubeVirt\'s order, hotplug dir', () => {
  const p = ephemeral();
  assert.equal(p.spec!.volumes!.map((v) => v.name), ['private', 'public', 'sockets', 'virt-bin-share-dir', 'libvirt-runtime', 'ephemeral-disks', 'container-disks', 'hotplug-disks']);
  assert.equal(p.spec!.containers[0]!.volumeMounts, [
    { name: 'private', mountPath: '/var/run/kubevirt-private' },
    { name: 'public', mountPath: '/var/run/kubevirt' },
    { name: 'ephemeral-disks', mountPath: '/var/run/kubevirt-ephemeral-disks' },
    { name: 'libvirt-runtime', mountPath: '/var/run/libvirt' },
    { name: 'sockets', mountPath: '/var/run/kubevirt/sockets' },
    { name: 'container-disks', mountPath: '/var/run/kubevirt/container-disks', mountPropagation: 'HostToContainer' },
    { name: 'hotplug-disks', mountPath: '/var/run/kubevirt/hotplug-disks', mountPropagation: 'HostToContainer' },
  ]);
});

test('volumes: PVC filesystem mount (RWX shared path) and block device; hostDisk hostPath dir; cloud-init secrets', () => {
  const pvc = render(goldenVMIs['pvc']!);
  const c = pvc.spec!.containers[0]!;
  assert.equal(c.volumeDevices, [{ name: 'blockdisk', devicePath: '/dev/blockdisk' }]);
  assert.ok(c.volumeMounts!.some((m) => m.name === 'pvcdisk' && m.mountPath === '/var/run/kubevirt-private/vmi-disks/pvcdisk'));
  assert.ok(c.env!.some((e) => e.name === 'SHARED_FILESYSTEM_PATHS' && e.value === '/var/run/kubevirt-private/vmi-disks/pvcdisk'));
  assert.ok(pvc.spec!.volumes!.some((v) => v.name === 'blockdisk' && v.persistentVolumeClaim?.claimName === 'disk-block' && v.persistentVolumeClaim.readOnly === true));
  const host = render(goldenVMIs['host-disk']!);
  assert.ok(host.spec!.volumes!.some((v) => v.name === 'host-disk' && v.hostPath?.path === '/data' && v.hostPath.type === 'DirectoryOrCreate'));
  const nocloud = render(goldenVMIs['nocloud']!);
  const names = nocloud.spec!.volumes!.map((v) => v.name);
  assert.ok(names.includes('cloudinitdisk-udata') && names.includes('cloudinitdisk-ndata'));
  assert.ok(nocloud.spec!.containers[0]!.volumeMounts!.some((m) => m.mountPath === '/var/run/kubevirt-private/secret/cloudinitdisk/userData' && m.subPath === 'userData' && m.readOnly));
});

test('volumes: a missing PVC is a PvcNotFoundError (reason FailedPvcNotFound) naming the claim', () => {
  assert.throws(() => renderLaunchManifest(goldenVMIs['pvc']!, cfg, { pvcs: new Map() }), (e: unknown) => e instanceof PvcNotFoundError && e.reason === 'FailedPvcNotFound' && /disk-alpine/.test(e.message));
});

test('annotations drive flags: keep-after-failure, verbosity env from label', () => {
  const c = render(goldenVMIs['config-volumes']!).spec!.containers[0]!;
  assert.ok(c.args!.includes('--keep-after-failure'));
  assert.ok(c.env!.some((e) => e.name === 'VIRT_LAUNCHER_LOG_VERBOSITY' && e.value === '6'));
  assert.ok(c.env!.some((e) => e.name === 'LIBVIRT_DEBUG_LOGS'), 'verbosity > 5');
  const bad = structuredClone(goldenVMIs['config-volumes']!);
  bad.metadata!.labels!['logVerbosity'] = 'loud';
  assert.throws(() => render(bad), (e: unknown) => e instanceof LaunchManifestError && /logVerbosity/.test((e as Error).message));
});

test('dedicated CPU: request = limit (2 vCPUs + emulator thread), memory request = limit incl. overhead, guaranteed sidecars', () => {
  const p = render(goldenVMIs['dedicated-cpu']!);
  const r = p.spec!.containers[0]!.resources!;
  assert.is(r.requests!['cpu'], '3');
  assert.is(r.limits!['cpu'], '3');
  assert.is(r.requests!['memory'], r.limits!['memory']);
  for (const c of [...p.spec!.initContainers!, ...p.spec!.containers.slice(1)]) {
    assert.is(c.resources!.requests!['cpu'], c.resources!.limits!['cpu'], `${c.name} cpu request = limit`);
    assert.is(c.resources!.requests!['memory'], c.resources!.limits!['memory'], `${c.name} memory request = limit`);
  }
});

test('render config from the KubeVirt CR configuration: defaults equal KubeVirt\'s, overrides flow through', () => {
  assert.equal(renderConfigFromClusterConfig(defaultClusterConfig(), DEFAULT_RENDER_CONFIG.launcherImage), { ...DEFAULT_RENDER_CONFIG, additionalGuestMemoryOverheadRatio: undefined, imagePullSecret: undefined, defaultRuntimeClass: undefined, virtLauncherLogVerbosity: 2, selinuxLauncherType: undefined, supportContainerResources: [] });
  const c = renderConfigFromClusterConfig(
    mergeClusterConfig({ developerConfiguration: { useEmulation: true, cpuAllocationRatio: 4, nodeSelectors: { a: 'b' } }, additionalGuestMemoryOverheadRatio: '1.2', virtualMachineOptions: { disableSerialConsoleLog: {} } }),
    'img:1',
  );
  assert.equal([c.launcherImage, c.useEmulation, c.cpuAllocationRatio, c.nodeSelectors, c.additionalGuestMemoryOverheadRatio, c.serialConsoleLogDisabled], ['img:1', true, 4, { a: 'b' }, '1.2', true]);
  const p = render(goldenVMIs['ephemeral']!, c);
  assert.is(p.spec!.containers[0]!.resources!.requests!['cpu'], '250m');
  assert.not.ok(p.spec!.initContainers!.some((x) => x.name === 'guest-console-log'));
  const sized = render(goldenVMIs['ephemeral']!, { ...cfg, supportContainerResources: [{ type: 'guest-console-log', resources: { limits: { memory: '80M' } } }, { type: 'container-disk', resources: { requests: { cpu: '2m' } } }] });
  assert.equal(sized.spec!.initContainers![0]!.resources, { requests: { cpu: '5m', memory: '35M' }, limits: { cpu: '15m', memory: '80M' } });
  assert.equal(sized.spec!.containers[1]!.resources!.requests, { cpu: '2m', 'ephemeral-storage': '50M', memory: '1M' });
  const se = render(goldenVMIs['ephemeral']!, { ...cfg, selinuxLauncherType: 'virt_launcher.process' });
  assert.equal(se.spec!.securityContext, { fsGroup: 107, runAsUser: 107, runAsGroup: 107, runAsNonRoot: true, seLinuxOptions: { type: 'virt_launcher.process' } });
});

test.run();

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KUBEVIRT_FIXED_OVERHEADS, memoryOverhead, memoryOverheadString, overheadVCPUs, QVIRT_FIXED_OVERHEADS, QVIRT_LAUNCHER_OVERHEAD, wantsGuaranteedQOS } from '../../controller/vmi/overhead.ts';
import { cpuRequestForRatio, renderComputeResources } from '../../controller/vmi/resources.ts';
import { DEFAULT_RENDER_CONFIG } from '../../controller/vmi/render-config.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const Mi = 1024n * 1024n;
const mi = (bytes: bigint) => Number(bytes) / Number(Mi);

function vmi(mut: (v: VirtualMachineInstance) => void = () => {}): VirtualMachineInstance {
  const v: VirtualMachineInstance = {
    metadata: { name: 'o', namespace: 'default', uid: 'u' },
    spec: { domain: { cpu: { cores: 1, sockets: 1, threads: 1 }, memory: { guest: '128Mi' }, devices: { interfaces: [{ name: 'default', bridge: {} }] } } },
  };
  mut(v);
  return v;
}

test('worked example (1 vCPU, 128Mi guest, VGA): KubeVirt 288Mi vs qvirt 218Mi', () => {
  const kubevirt = memoryOverhead(vmi(), { fixed: KUBEVIRT_FIXED_OVERHEADS });
  const qvirt = memoryOverhead(vmi());
  assert.is(mi(kubevirt.bytes), 288);
  assert.is(mi(qvirt.bytes), 218);
  assert.is(mi(kubevirt.bytes - qvirt.bytes), 70, 'virt-launcher-monitor+virt-launcher+virtlogd+virtqemud (190Mi) replaced by one 120Mi launcher');
  assert.equal(qvirt.terms.map((t) => [t.name, mi(t.bytes)]), [
    ['pagetables', 0], ['qvirt-launcher', 120], ['qemu', 50], ['vcpus (1)', 8], ['iothread', 8], ['video', 32],
  ]);
  // the pod request KubeVirt would render: 128 + 288 = 416Mi; qvirt: 128 + 218 = 346Mi
  assert.is(renderComputeResources(vmi(), DEFAULT_RENDER_CONFIG, kubevirt).requests!['memory'], '416Mi');
  assert.is(renderComputeResources(vmi(), DEFAULT_RENDER_CONFIG, qvirt).requests!['memory'], '346Mi');
});

test('KubeVirt\'s unit test anchor: 1Gi request → 2Mi page tables; fixed terms sum to 240Mi (KubeVirt) / 170Mi (qvirt)', () => {
  const v = vmi((x) => (x.spec.domain.resources = { requests: { memory: '1Gi' } }));
  assert.is(memoryOverhead(v, { fixed: KUBEVIRT_FIXED_OVERHEADS }).terms[0]!.bytes, 2n * Mi);
  assert.is(mi(Object.values(KUBEVIRT_FIXED_OVERHEADS).reduce((a, b) => a + b, 0n)), 240);
  assert.is(mi(Object.values(QVIRT_FIXED_OVERHEADS).reduce((a, b) => a + b, 0n)), 170);
  assert.is(QVIRT_LAUNCHER_OVERHEAD, 120n * Mi);
  assert.is(mi(memoryOverhead(v, { fixed: KUBEVIRT_FIXED_OVERHEADS }).bytes), 290, 'anchors A2: 1 vCPU / 1 GiB / VGA ≈ 290 MiB');
});

type Row = [string, (v: VirtualMachineInstance) => void, number];
const rows: Row[] = [
  ['baseline', () => {}, 218],
  ['page tables: 16Gi request → 32Mi + 1 byte (ceil to kilo, then /512)', (v) => (v.spec.domain.resources = { requests: { memory: '16Gi' } }), 250 + 1 / 1048576],
  ['page tables: decimal request rounds through kilo: 1G → 1953125 bytes', (v) => (v.spec.domain.resources = { requests: { memory: '1G' } }), 218 + 1953125 / 1048576],
  ['4 vCPUs (2 sockets × 2 cores)', (v) => (v.spec.domain.cpu = { sockets: 2, cores: 2 }), 242],
  ['threads only', (v) => (v.spec.domain.cpu = { threads: 3 }), 234],
  ['no cpu: vCPUs from the CPU limit', (v) => { delete v.spec.domain.cpu; v.spec.domain.resources = { limits: { cpu: '3' } }; }, 234],
  ['no cpu: vCPUs from the CPU request, rounded up', (v) => { delete v.spec.domain.cpu; v.spec.domain.resources = { requests: { cpu: '1500m' } }; }, 226],
  ['no cpu and no CPU resources: 1 vCPU', (v) => delete v.spec.domain.cpu, 218],
  ['no graphics', (v) => (v.spec.domain.devices.autoattachGraphicsDevice = false), 186],
  ['explicit graphics true', (v) => (v.spec.domain.devices.autoattachGraphicsDevice = true), 218],
  ['arm64 firmware', (v) => (v.spec.architecture = 'arm64'), 346],
  ['VFIO host device', (v) => (v.spec.domain.devices.hostDevices = [{ name: 'gpu', deviceName: 'nvidia.com/GP102' }]), 218 + 1024],
  ['downward metrics volume', (v) => (v.spec.volumes = [{ name: 'm', downwardMetrics: {} }]), 219],
  ['one exec probe', (v) => (v.spec.readinessProbe = { exec: { command: ['true'] } }), 328],
  ['two exec probes', (v) => { v.spec.readinessProbe = { exec: { command: ['true'] } }; v.spec.livenessProbe = { exec: { command: ['true'] } }; }, 338],
  ['guest-agent ping probe is not exec', (v) => (v.spec.readinessProbe = { guestAgentPing: {} }), 218],
  ['SEV', (v) => (v.spec.domain.launchSecurity = { sev: {} }), 474],
  ['TPM', (v) => (v.spec.domain.devices.tpm = {}), 271],
  ['TPM disabled', (v) => (v.spec.domain.devices.tpm = { enabled: false }), 218],
  ['dedicated CPU', (v) => (v.spec.domain.cpu = { cores: 1, dedicatedCpuPlacement: true }), 318],
  ['guaranteed QoS (requests = limits)', (v) => (v.spec.domain.resources = { requests: { cpu: '1', memory: '128Mi' }, limits: { cpu: '1', memory: '128Mi' } }), 318 + 0.25],
  ['reservedOverhead.addedOverhead', (v) => (v.spec.domain.memory = { guest: '128Mi', reservedOverhead: { addedOverhead: '64Mi' } }), 282],
  ['passt binding', (v) => (v.spec.domain.devices.interfaces = [{ name: 'default', passtBinding: {} }]), 468],
];
for (const [name, mut, want] of rows) {
  test(`overhead: ${name} → ${want}Mi`, () => assert.is(mi(memoryOverhead(vmi(mut)).bytes), want));
}

test('overhead: additionalGuestMemoryOverheadRatio scales all but the network term, in kilo steps', () => {
  const plain = memoryOverhead(vmi()).bytes;
  const scaled = memoryOverhead(vmi(), { additionalGuestMemoryOverheadRatio: '1.5' }).bytes;
  const kilo = (plain + 999n) / 1000n;
  assert.is(scaled, plain + BigInt(Math.trunc(Number(kilo) * 0.5)) * 1000n);
  assert.is(memoryOverhead(vmi(), { additionalGuestMemoryOverheadRatio: 'lots' }).bytes, plain, 'unparsable ratio is ignored');
  const passt = vmi((v) => (v.spec.domain.devices.interfaces = [{ name: 'd', passtBinding: {} }]));
  assert.is(memoryOverhead(passt, { additionalGuestMemoryOverheadRatio: '2' }).bytes, plain + kilo * 1000n + 250n * Mi, 'passt is added after scaling');
});

test('overhead: canonical quantity string (decimal SI, as KubeVirt builds it)', () => {
  assert.is(memoryOverheadString(vmi()), String(218n * Mi));
  assert.is(memoryOverheadString(vmi((v) => (v.spec.domain.resources = { requests: { memory: '1G' } }))), String(218n * Mi + 1953125n));
});

test('vCPU count and QoS helpers', () => {
  assert.is(overheadVCPUs(vmi((v) => (v.spec.domain.cpu = { cores: 0, sockets: 0, threads: 0 }))), 1);
  assert.ok(wantsGuaranteedQOS(vmi((v) => (v.spec.domain.resources = { limits: { memory: '1Gi', cpu: '2' }, requests: { cpu: '2' } }))));
  assert.not.ok(wantsGuaranteedQOS(vmi((v) => (v.spec.domain.resources = { requests: { memory: '1Gi', cpu: '2' } }))));
});

test('CPU request from the allocation ratio, formatted like KubeVirt', () => {
  assert.is(cpuRequestForRatio(1, 10), '100m');
  assert.is(cpuRequestForRatio(4, 10), '400m');
  assert.is(cpuRequestForRatio(15, 10), '1.5');
  assert.is(cpuRequestForRatio(10, 10), '1');
  assert.is(cpuRequestForRatio(1, 4), '250m');
  assert.is(cpuRequestForRatio(1, 0), undefined);
  const r = renderComputeResources(vmi((v) => (v.spec.domain.cpu = { cores: 15 })), DEFAULT_RENDER_CONFIG, memoryOverhead(vmi()));
  assert.is(r.requests!['cpu'], '1500m', 'canonical quantity of "1.5"');
});

test('memory request: overcommit, overcommitGuestOverhead, explicit limit, hugepages', () => {
  const o = memoryOverhead(vmi());
  const over = renderComputeResources(vmi(), { ...DEFAULT_RENDER_CONFIG, memoryOvercommit: 150 }, o);
  assert.is(over.requests!['memory'], String((128n * Mi * 100n) / 150n + 218n * Mi), '128Mi×100/150 + overhead (not binary-aligned → decimal)');
  const og = renderComputeResources(vmi((v) => (v.spec.domain.resources = { overcommitGuestOverhead: true })), DEFAULT_RENDER_CONFIG, o);
  assert.is(og.requests!['memory'], '128Mi');
  const lim = renderComputeResources(vmi((v) => (v.spec.domain.resources = { limits: { memory: '512Mi' } })), DEFAULT_RENDER_CONFIG, o);
  assert.is(lim.requests!['memory'], '730Mi');
  assert.is(lim.limits!['memory'], '730Mi');
  const hp = renderComputeResources(vmi((v) => (v.spec.domain.memory = { guest: '1Gi', hugepages: { pageSize: '2Mi' } })), DEFAULT_RENDER_CONFIG, o);
  assert.is(hp.requests!['hugepages-2Mi'], '1Gi');
  assert.is(hp.limits!['hugepages-2Mi'], '1Gi');
  assert.is(hp.requests!['memory'], String(218n * Mi));
});

test.run();

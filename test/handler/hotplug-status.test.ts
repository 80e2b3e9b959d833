// The hotplug parts of the VMI status the handler writes: volume phases from the node's mounts and
// the launcher's domain, Detaching with the launcher's reason, currentCPUTopology/memory and the
// HotVCPUChange/HotMemoryChange conditions; and the domain JSON → view parsing they rely on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachineInstance, VolumeStatus } from '../../src/api/types.ts';
import { liveDevices, liveSyncFingerprint, volumeStatusEvents, withHotplugInterfaces, withHotplugVolumeStatus, withLiveUpdateStatus, type MountResult } from '../../handler/hotplug/status.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { Domain } from '../../src/api/domain/domain.ts';
import { buildDomain } from '../../launcher/domain/domain.ts';
import { hotplugDomainSpec, type HotplugReport } from '../../launcher/supervise/hotplug.ts';

function vmi(volumes: string[], extra: Partial<VirtualMachineInstance['spec']['domain']> = {}, status: VolumeStatus[] = []): VirtualMachineInstance {
  return {
    metadata: { name: 'v', namespace: 'ns', uid: 'u' },
    spec: {
      domain: { devices: { disks: volumes.map((name) => ({ name, disk: { bus: 'scsi' as const } })) }, ...extra },
      volumes: volumes.map((name) => (name === 'root' ? { name, containerDisk: { image: 'x' } } : { name, persistentVolumeClaim: { claimName: `c-${name}`, hotpluggable: true } })),
    },
    status: { volumeStatus: status },
  } as VirtualMachineInstance;
}

/** A reported domain built the way the launcher builds it, then decoded the way the handler decodes it. */
function domain(r: Partial<HotplugReport>): Domain {
  const report: HotplugReport = { disks: [], interfaces: [], detaching: [], refused: [], vcpus: { current: 1, max: 1 }, memory: { guestBytes: 256 * 2 ** 20, requestedBytes: 0 }, ...r };
  const d = buildDomain({ namespace: 'ns', name: 'v', uid: 'u', acpi: true, status: 'Running', reason: 'Unknown', gracePeriod: null, specExtras: hotplugDomainSpec(report) });
  return decodeDomain(JSON.stringify(d));
}
const disk = (name: string, target = 'sda') => ({ name, qemuId: `ua-${name}`, kind: 'disk', target, bus: 'scsi', source: `/x/${name}.img`, hotplugged: name !== 'root' });
const mounted = (...names: string[]) => new Map<string, MountResult>(names.map((n) => [n, { mounted: true, pvc: { claimName: `c-${n}` } }]));
const base = (...names: string[]): VolumeStatus[] => names.map((name) => ({ name, target: '' }));
const phases = (l: VolumeStatus[]) => l.map((s) => `${s.name}:${s.phase ?? '-'}:${s.target}`);

test('domain view: disks, detaching, refused, vCPUs and memory survive the launcher → handler JSON', () => {
  const d = domain({ disks: [disk('root', 'vda'), disk('hp')], detaching: [{ alias: 'hp', qemuId: 'ua-hp', kind: 'disk', since: 't', reason: 'why' }], refused: ['spec.domain.cpu: no'], vcpus: { current: 2, max: 4 }, memory: { guestBytes: 2 ** 30, requestedBytes: 0 } });
  const live = liveDevices(d);
  assert.equal(live?.disks, [{ name: 'root', target: 'vda', hotplugged: false }, { name: 'hp', target: 'sda', hotplugged: true }]);
  assert.equal(live?.detaching, [{ name: 'hp', kind: 'disk', reason: 'why' }]);
  assert.equal(live?.refused, ['spec.domain.cpu: no']);
  assert.equal(live?.vcpus, { current: 2, max: 4 });
  assert.equal(liveDevices(domain({ interfaces: [{ name: 'net1', qemuId: 'ua-net1', mac: '02:00:00:00:00:01' }] }))?.interfaces, [{ name: 'net1', mac: '02:00:00:00:00:01' }]);
  assert.is(live?.currentMemoryBytes, 2 ** 30);
});

const volumeCases: Array<{ name: string; vmi: VirtualMachineInstance; base: VolumeStatus[]; domain: Domain; mounts: Map<string, MountResult>; want: string[]; reason?: RegExp; attachPod?: string }> = [
  { name: 'not mounted yet: Pending with the node\'s reason', vmi: vmi(['root', 'hp']), base: base('root', 'hp'), domain: domain({ disks: [disk('root', 'vda')] }), mounts: new Map([['hp', { mounted: false, message: 'claim c-hp is not bound yet' }]]), want: ['hp:Pending:', 'root:-:'], reason: /not bound yet/ },
  { name: 'mounted, not in the domain yet: MountedToPod', vmi: vmi(['root', 'hp']), base: base('root', 'hp'), domain: domain({ disks: [disk('root', 'vda')] }), mounts: mounted('hp'), want: ['hp:MountedToPod:', 'root:-:'] },
  { name: 'in the domain: Ready with its target', vmi: vmi(['root', 'hp']), base: base('root', 'hp'), domain: domain({ disks: [disk('root', 'vda'), disk('hp', 'sdb')] }), mounts: mounted('hp'), want: ['hp:Ready:sdb', 'root:-:'] },
  { name: 'removed from the spec, still in the domain: Detaching with the launcher\'s reason', vmi: vmi(['root']), base: base('root'), domain: domain({ disks: [disk('root', 'vda'), disk('hp')], detaching: [{ alias: 'hp', qemuId: 'ua-hp', kind: 'disk', since: 't', reason: 'the guest has not acknowledged the unplug' }] }), mounts: new Map(), want: ['hp:Detaching:sda', 'root:-:'], reason: /not acknowledged/ },
  { name: 'removed and released: the status is gone', vmi: vmi(['root']), base: base('root'), domain: domain({ disks: [disk('root', 'vda')] }), mounts: new Map(), want: ['root:-:'] },
  { name: 'waiting for its attachment pod: the VMI controller\'s AttachedToNode stands', vmi: vmi(['root', 'hp'], {}, [{ name: 'hp', target: '', phase: 'AttachedToNode', reason: 'SuccessfulCreate', message: 'Created hotplug attachment pod hp-volume-x, for volume hp', hotplugVolume: { attachPodName: 'hp-volume-x' } }]), base: base('root', 'hp'), domain: domain({ disks: [disk('root', 'vda')] }), mounts: new Map([['hp', { mounted: false, waiting: true, message: 'Volume hp is waiting for its attachment pod' }]]), want: ['hp:AttachedToNode:', 'root:-:'], reason: /Created hotplug attachment pod/, attachPod: 'hp-volume-x' },
  { name: 'waiting, the controller has written nothing yet: Pending with why', vmi: vmi(['root', 'hp']), base: base('root', 'hp'), domain: domain({ disks: [disk('root', 'vda')] }), mounts: new Map([['hp', { mounted: false, waiting: true, message: 'Volume hp is waiting for its attachment pod' }]]), want: ['hp:Pending:', 'root:-:'], reason: /waiting for its attachment pod/ },
  { name: 'the node failed to mount: Pending with the node\'s reason over the controller\'s phase', vmi: vmi(['root', 'hp'], {}, [{ name: 'hp', target: '', phase: 'AttachedToNode', hotplugVolume: { attachPodName: 'hp-volume-x', attachPodUID: 'u1' } }]), base: base('root', 'hp'), domain: domain({ disks: [disk('root', 'vda')] }), mounts: new Map([['hp', { mounted: false, message: 'mount --bind failed' }]]), want: ['hp:Pending:', 'root:-:'], reason: /mount --bind failed/, attachPod: 'hp-volume-x' },
];
for (const c of volumeCases) {
  test(`volumeStatus: ${c.name}`, () => {
    const got = withHotplugVolumeStatus(c.base, c.vmi, c.domain, c.mounts);
    assert.equal(phases(got), c.want);
    const hp = got.find((s) => s.name === 'hp');
    if (hp) assert.is(hp.hotplugVolume?.attachPodName, c.attachPod, 'the attachment pod the controller recorded is kept');
    if (c.reason) assert.match(hp?.message ?? '', c.reason);
  });
}

test('live status: currentCPUTopology; HotVCPUChange removed when done, False with the reason when refused', () => {
  const v = vmi([], { cpu: { sockets: 2, maxSockets: 4 } });
  const running = { conditions: [{ type: 'HotVCPUChange' as const, status: 'True' as const }] };
  const done = withLiveUpdateStatus(running, v, domain({ vcpus: { current: 2, max: 4 } }), 'now');
  assert.equal(done.currentCPUTopology, { sockets: 2, cores: 1, threads: 1 });
  assert.not.ok(done.conditions?.some((c) => c.type === 'HotVCPUChange'));
  const pending = withLiveUpdateStatus(running, v, domain({ vcpus: { current: 1, max: 4 } }), 'now');
  assert.equal(pending.conditions?.find((c) => c.type === 'HotVCPUChange')?.status, 'True');
  const refused = withLiveUpdateStatus(running, vmi([], { cpu: { sockets: 1, maxSockets: 4 } }), domain({ vcpus: { current: 2, max: 4 }, refused: ['spec.domain.cpu: lowering vCPUs from 2 to 1 is refused under software emulation (TCG)'] }), 'now');
  const cond = refused.conditions?.find((c) => c.type === 'HotVCPUChange');
  assert.equal([cond?.status, cond?.reason], ['False', 'LiveUpdateRefused']);
  assert.match(cond?.message ?? '', /TCG/);
});

test('live status: status.memory from the domain; HotMemoryChange removed once guestCurrent = guest', () => {
  const v = vmi([], { memory: { guest: '1536Mi', maxGuest: '2Gi' } });
  const s = { conditions: [{ type: 'HotMemoryChange' as const, status: 'True' as const }], memory: { guestAtBoot: '1Gi' } };
  const during = withLiveUpdateStatus(s, v, domain({ memory: { guestBytes: 2 ** 30, requestedBytes: 0 } }), 'now');
  assert.equal(during.memory, { guestAtBoot: '1Gi', guestCurrent: String(2 ** 30), guestRequested: '1536Mi' });
  assert.ok(during.conditions?.some((c) => c.type === 'HotMemoryChange'));
  const after = withLiveUpdateStatus(s, v, domain({ memory: { guestBytes: 1536 * 2 ** 20, requestedBytes: 512 * 2 ** 20 } }), 'now');
  assert.not.ok(after.conditions?.some((c) => c.type === 'HotMemoryChange'));
});

test('live sync fingerprint changes with the spec and the mounts, not with unrelated status', () => {
  const v = vmi(['root', 'hp']);
  const f0 = liveSyncFingerprint(v, new Map());
  assert.is.not(liveSyncFingerprint(v, mounted('hp')), f0);
  assert.is(liveSyncFingerprint({ ...v, status: { phase: 'Running' } }, new Map()), f0);
  assert.is.not(liveSyncFingerprint(vmi(['root']), new Map()), f0);
  assert.is.not(liveSyncFingerprint(vmi(['root', 'hp'], { cpu: { sockets: 2 } }), new Map()), f0);
});

test('volume events: one per phase change of a hotplug volume, VolumeUnplugged when its status goes', () => {
  const s = (name: string, phase: VolumeStatus['phase'], reason: string, hot = true): VolumeStatus => ({ name, target: '', phase, reason, message: `${name} ${phase}`, ...(hot ? { hotplugVolume: {} } : {}) });
  assert.equal(volumeStatusEvents([], [s('a', 'MountedToPod', 'VolumeMountedToPod'), s('root', 'Ready', 'x', false)]), [{ reason: 'VolumeMountedToPod', message: 'a MountedToPod' }]);
  assert.equal(volumeStatusEvents([s('a', 'MountedToPod', 'VolumeMountedToPod')], [s('a', 'MountedToPod', 'VolumeMountedToPod')]), []);
  assert.equal(volumeStatusEvents([s('a', 'MountedToPod', 'VolumeMountedToPod')], [s('a', 'Ready', 'VolumeReady')]), [{ reason: 'VolumeReady', message: 'a Ready' }]);
  assert.equal(volumeStatusEvents([s('a', 'Detaching', 'VolumeDetaching')], []), [{ reason: 'VolumeUnplugged', message: 'Volume a has been unplugged' }]);
});

test('status.interfaces: a hot-plugged NIC appears; an unplugged one (state absent) goes once the domain dropped it', () => {
  const v = (ifaces: Array<[string, string?]>) => ({ ...vmi([]), spec: { ...vmi([]).spec, domain: { devices: { interfaces: ifaces.map(([name, state]) => ({ name, masquerade: {}, ...(state ? { state: state as 'absent' } : {}) })) } } } }) as VirtualMachineInstance;
  const plugged = domain({ interfaces: [{ name: 'default', qemuId: 'ua-default', mac: '02:00:00:00:00:aa' }, { name: 'hot', qemuId: 'ua-hot', mac: '02:00:00:00:00:bb' }] });
  const base = [{ name: 'default', mac: '02:00:00:00:00:aa', infoSource: 'domain' }];
  assert.equal(withHotplugInterfaces(base, v([['default'], ['hot']]), plugged), [...base, { name: 'hot', mac: '02:00:00:00:00:bb', infoSource: 'domain' }]);
  const withHot = [...base, { name: 'hot', mac: '02:00:00:00:00:bb', infoSource: 'domain' }];
  assert.equal(withHotplugInterfaces(withHot, v([['default'], ['hot', 'absent']]), plugged), withHot, 'still plugged: still listed');
  const unplugged = domain({ interfaces: [{ name: 'default', qemuId: 'ua-default', mac: '02:00:00:00:00:aa' }] });
  assert.equal(withHotplugInterfaces(withHot, v([['default'], ['hot', 'absent']]), unplugged), base);
});

test.run();

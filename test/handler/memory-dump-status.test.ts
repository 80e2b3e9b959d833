// The node agent's memory dump steps (virt-handler's updateMemoryDumpInfo / getMemoryDump) as
// tables: a memoryDump volume mounted → InProgress with its file name; in progress → Completed or
// Failed from what the launcher reports for that file; the dumps to ask the launcher for; and the
// launcher's MemoryDump metadata surviving the launcher → handler domain JSON.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachineInstance, VolumeStatus } from '../../src/api/types.ts';
import { memoryDumpFileName, memoryDumpPath, pendingMemoryDumps, withMemoryDumpStatus } from '../../handler/memory-dump-status.ts';
import type { MemoryDumpMetadata } from '../../src/api/domain/domain.ts';
import { hotplugVolumes, withHotplugVolumeStatus, type MountResult } from '../../handler/hotplug/status.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import { buildDomain } from '../../launcher/domain/domain.ts';

const NOW = new Date('2026-03-04T05:06:07.890Z');
const FILE = 'v-dump-20260304-050607.memory.dump';
const vmi = (status: VolumeStatus[] = []): VirtualMachineInstance => ({
  metadata: { name: 'v', namespace: 'ns', uid: 'u' },
  spec: { domain: { devices: { disks: [{ name: 'root' }] } }, volumes: [{ name: 'root', containerDisk: { image: 'x' } }, { name: 'dump', memoryDump: { claimName: 'dump', hotpluggable: true } }] },
  status: { volumeStatus: status },
}) as VirtualMachineInstance;
const hp = { hotplugVolume: {} };
const st = (phase: VolumeStatus['phase'], extra: Partial<VolumeStatus> = {}): VolumeStatus => ({ name: 'dump', target: '', ...hp, phase, ...extra });
const inProgress = st('MemoryDumpInProgress', { reason: 'VolumeMountedToPod', message: 'Memory dump Volume dump is attached, getting memory dump', memoryDumpVolume: { claimName: 'dump', targetFileName: FILE } });
const reported = (r: Partial<MemoryDumpMetadata>): MemoryDumpMetadata => ({ FileName: FILE, Completed: false, Failed: false, FailureReason: '', StartTimestamp: '2026-03-04T05:06:08Z', EndTimestamp: null, ...r });

test('the dump file name and where the launcher writes it', () => {
  assert.is(memoryDumpFileName('v', 'dump', NOW), FILE);
  assert.is(memoryDumpPath('dump', FILE), `/var/run/kubevirt/hotplug-disks/dump/${FILE}`);
});

test('updateMemoryDumpInfo (withMemoryDumpStatus)', () => {
  const dump = (s: VolumeStatus, r?: MemoryDumpMetadata) => withMemoryDumpStatus([{ name: 'root', target: 'vda' }, s], vmi([s]), r, NOW)[1];
  const cases: Array<[string, VolumeStatus | undefined, VolumeStatus]> = [
    ['Pending: only the claim noted', dump(st('Pending')), st('Pending', { memoryDumpVolume: { claimName: 'dump' } })],
    ['MountedToPod → InProgress with the file name', dump(st('MountedToPod', { reason: 'VolumeMountedToPod', message: 'Volume dump has been mounted in virt-launcher pod' })), inProgress],
    ['InProgress, the launcher reports nothing yet', dump(inProgress), inProgress],
    ['InProgress, the launcher reports another file', dump(inProgress, reported({ FileName: 'older.memory.dump', Completed: true })), inProgress],
    ['InProgress, started: start time', dump(inProgress, reported({})), { ...inProgress, memoryDumpVolume: { claimName: 'dump', targetFileName: FILE, startTimestamp: '2026-03-04T05:06:08Z' } }],
    ['InProgress → Completed', dump(inProgress, reported({ Completed: true, EndTimestamp: '2026-03-04T05:06:10Z' })),
      { ...inProgress, phase: 'MemoryDumpCompleted', reason: 'VolumeReady', message: 'Memory dump to Volume dump has completed successfully', memoryDumpVolume: { claimName: 'dump', targetFileName: FILE, startTimestamp: '2026-03-04T05:06:08Z', endTimestamp: '2026-03-04T05:06:10Z' } }],
    ['InProgress → Failed with the launcher\'s reason', dump(inProgress, reported({ Completed: true, Failed: true, FailureReason: 'Domain memory dump failed: disk full', EndTimestamp: '2026-03-04T05:06:10Z' })),
      { ...inProgress, phase: 'MemoryDumpFailed', message: 'Memory dump to pvc dump failed: Domain memory dump failed: disk full', memoryDumpVolume: { claimName: 'dump', targetFileName: FILE, startTimestamp: '2026-03-04T05:06:08Z', endTimestamp: '2026-03-04T05:06:10Z' } }],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
  assert.equal(withMemoryDumpStatus([{ name: 'root', target: 'vda' }], { ...vmi(), spec: { ...vmi().spec, volumes: [] } }, undefined, NOW), [{ name: 'root', target: 'vda' }], 'no memoryDump volume: unchanged');
});

test('getMemoryDump (pendingMemoryDumps): only volumes in progress with a file', () => {
  assert.equal(pendingMemoryDumps(vmi([inProgress])), [{ volume: 'dump', path: `/var/run/kubevirt/hotplug-disks/dump/${FILE}` }]);
  assert.equal(pendingMemoryDumps(vmi([st('MountedToPod')])), []);
  assert.equal(pendingMemoryDumps(vmi([{ ...inProgress, phase: 'MemoryDumpCompleted' }])), []);
});

test('a memoryDump volume is mounted like a hotplug claim, and mounting does not reset its dump phases', () => {
  assert.equal(hotplugVolumes(vmi()), [{ name: 'dump', claimName: 'dump', memoryDump: true }]);
  const mounts = new Map<string, MountResult>([['dump', { mounted: true, pvc: { claimName: 'dump' } }]]);
  const base = [{ name: 'root', target: '' }, { name: 'dump', target: '' }];
  const first = withHotplugVolumeStatus(base, vmi([st('Pending')]), undefined, mounts).find((s) => s.name === 'dump');
  assert.is(first?.phase, 'MountedToPod');
  for (const prev of [inProgress, { ...inProgress, phase: 'MemoryDumpCompleted' as const }, { ...inProgress, phase: 'MemoryDumpFailed' as const, message: 'x' }]) {
    const next = withHotplugVolumeStatus(base, vmi([prev]), undefined, mounts).find((s) => s.name === 'dump');
    assert.equal([next?.phase, next?.message, next?.memoryDumpVolume], [prev.phase, prev.message, prev.memoryDumpVolume], prev.phase);
  }
  const unmounted = withHotplugVolumeStatus(base, vmi([inProgress]), undefined, new Map([['dump', { mounted: false, message: 'claim gone' }]])).find((s) => s.name === 'dump');
  assert.equal([unmounted?.phase, unmounted?.message], ['Pending', 'claim gone']);
});

test('the launcher\'s MemoryDump metadata survives the domain JSON', () => {
  const d = buildDomain({ namespace: 'ns', name: 'v', uid: 'u', acpi: true, status: 'Running', reason: 'Unknown', gracePeriod: null,
    memoryDump: { FileName: FILE, StartTimestamp: '2026-03-04T05:06:08Z', EndTimestamp: '2026-03-04T05:06:10Z', Completed: true, Failed: true, FailureReason: 'why' } });
  assert.equal(decodeDomain(JSON.stringify(d)).Spec.Metadata.KubeVirt.MemoryDump, { FileName: FILE, StartTimestamp: '2026-03-04T05:06:08Z', EndTimestamp: '2026-03-04T05:06:10Z', Completed: true, Failed: true, FailureReason: 'why' });
  const none = buildDomain({ namespace: 'ns', name: 'v', uid: 'u', acpi: true, status: 'Running', reason: 'Unknown', gracePeriod: null });
  assert.is(decodeDomain(JSON.stringify(none)).Spec.Metadata.KubeVirt.MemoryDump, null);
  assert.is(none.Spec.Metadata.KubeVirt.MemoryDump, null);
});

test.run();

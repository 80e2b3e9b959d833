// LiveMigratable, StorageLiveMigratable and status.migrationMethod as virt-handler computes them
// (calculateLiveMigrationCondition, checkVolumesForMigration, VerifyVMIMigratable): a table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { migratability } from '../../handler/live-migratable.ts';
import { computeStatus } from '../../handler/status.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { PersistentVolumeAccessMode, VirtualMachineInstance } from '../../src/api/types.ts';

type Spec = VirtualMachineInstance['spec'];
type Status = NonNullable<VirtualMachineInstance['status']>;
const vmi = (spec: Partial<Spec> & { devices?: Spec['domain']['devices'] } = {}, status: Status = {}, annotations?: Record<string, string>): VirtualMachineInstance => {
  const { devices, ...rest } = spec;
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: 'v', namespace: 'ns', ...(annotations ? { annotations } : {}) },
    spec: { ...rest, domain: { ...(rest.domain ?? {}), devices: devices ?? rest.domain?.devices ?? {} } },
    status,
  } as VirtualMachineInstance;
};
const podNet = { networks: [{ name: 'default', pod: {} }] };
const iface = (binding: Record<string, unknown>) => ({ ...podNet, devices: { interfaces: [{ name: 'default', ...binding }] } });
const pvcVol = (claim: string) => ({ name: claim, persistentVolumeClaim: { claimName: claim } });
const pvcStatus = (claim: string, modes: PersistentVolumeAccessMode[]) => ({ name: claim, target: 'vda', persistentVolumeClaimInfo: { claimName: claim, accessModes: modes } });
const IFACE_MSG = 'cannot migrate VMI which does not use masquerade or a migratable plugin to connect to the pod network';
const PVC_MSG = (c: string) => `cannot migrate VMI: PVC ${c} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`;

const cases: Array<{ name: string; vmi: VirtualMachineInstance; reason?: string; message?: string; method: 'LiveMigration' | 'BlockMigration'; storage?: string }> = [
  { name: 'nothing at all', vmi: vmi(), method: 'LiveMigration' },
  { name: 'masquerade on the pod network', vmi: vmi(iface({ masquerade: {} })), method: 'LiveMigration' },
  { name: 'passt on the pod network', vmi: vmi(iface({ passtBinding: {} })), method: 'LiveMigration' },
  { name: 'bridge on the pod network', vmi: vmi(iface({ bridge: {} })), reason: 'InterfaceNotLiveMigratable', message: IFACE_MSG, method: 'LiveMigration', storage: `InterfaceNotLiveMigratable: ${IFACE_MSG}` },
  { name: 'bridge with the allow annotation', vmi: vmi(iface({ bridge: {} }), {}, { 'kubevirt.io/allow-pod-bridge-network-live-migration': '' }), method: 'LiveMigration' },
  { name: 'a binding plugin nobody configured for migration', vmi: vmi(iface({ binding: { name: 'mine' } })), reason: 'InterfaceNotLiveMigratable', message: IFACE_MSG, method: 'LiveMigration', storage: `InterfaceNotLiveMigratable: ${IFACE_MSG}` },
  { name: 'bridge on a multus network only', vmi: vmi({ networks: [{ name: 'm', multus: { networkName: 'x' } }], devices: { interfaces: [{ name: 'm', bridge: {} }] } }), method: 'LiveMigration' },
  { name: 'the pod network without its interface', vmi: vmi({ ...podNet, devices: { interfaces: [{ name: 'other', masquerade: {} }] } }), reason: 'InterfaceNotLiveMigratable', message: 'no primary interface found for network default', method: 'LiveMigration', storage: 'InterfaceNotLiveMigratable: no primary interface found for network default' },
  { name: 'a containerDisk: block migration', vmi: vmi({ volumes: [{ name: 'cd', containerDisk: { image: 'x' } }], devices: { disks: [{ name: 'cd', disk: { bus: 'virtio' } }] } }), method: 'BlockMigration' },
  { name: 'a read-only CD-ROM only', vmi: vmi({ volumes: [{ name: 'cd', containerDisk: { image: 'x' } }], devices: { disks: [{ name: 'cd', cdrom: { bus: 'sata' } }] } }), method: 'LiveMigration' },
  { name: 'a writable CD-ROM copies', vmi: vmi({ volumes: [{ name: 'cd', containerDisk: { image: 'x' } }], devices: { disks: [{ name: 'cd', cdrom: { bus: 'sata', readonly: false } }] } }), method: 'BlockMigration' },
  { name: 'cloud-init copies', vmi: vmi({ volumes: [{ name: 'ci', cloudInitNoCloud: { userData: '#cloud-config' } }] }), method: 'BlockMigration' },
  { name: 'a virtiofs filesystem does not', vmi: vmi({ volumes: [{ name: 'fs', persistentVolumeClaim: { claimName: 'fs' } }], devices: { filesystems: [{ name: 'fs', virtiofs: {} }] } }, { volumeStatus: [pvcStatus('fs', ['ReadWriteMany'])] }), method: 'LiveMigration' },
  { name: 'an RWX claim', vmi: vmi({ volumes: [pvcVol('data')] }, { volumeStatus: [pvcStatus('data', ['ReadWriteMany'])] }), method: 'LiveMigration' },
  { name: 'an RWO claim', vmi: vmi({ volumes: [pvcVol('data')] }, { volumeStatus: [pvcStatus('data', ['ReadWriteOnce'])] }), reason: 'DisksNotLiveMigratable', message: PVC_MSG('data'), method: 'BlockMigration' },
  { name: 'a claim not yet looked up', vmi: vmi({ volumes: [pvcVol('data')] }), reason: 'DisksNotLiveMigratable', message: 'cannot migrate VMI: Unable to determine if PVC data is shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)', method: 'BlockMigration' },
  { name: 'an RWO claim being storage-migrated', vmi: vmi({ volumes: [pvcVol('data')] }, { volumeStatus: [pvcStatus('data', ['ReadWriteOnce'])], migratedVolumes: [{ volumeName: 'data' }] }), method: 'BlockMigration' },
  { name: 'a non-shared hostDisk', vmi: vmi({ volumes: [{ name: 'h', hostDisk: { path: '/x', type: 'Disk' } }] }), reason: 'DisksNotLiveMigratable', message: 'cannot migrate VMI with non-shared HostDisk', method: 'BlockMigration' },
  { name: 'a shared hostDisk', vmi: vmi({ volumes: [{ name: 'h', hostDisk: { path: '/x', type: 'Disk', shared: true } }] }), method: 'LiveMigration' },
  { name: 'a host device', vmi: vmi({ devices: { hostDevices: [{ name: 'h', deviceName: 'x/y' }] } }), reason: 'HostDeviceNotLiveMigratable', message: 'VMI specifies non-migratable generic PCI host device', method: 'LiveMigration', storage: 'HostDeviceNotLiveMigratable: VMI specifies non-migratable generic PCI host device' },
  { name: 'SEV', vmi: vmi({ domain: { devices: {}, launchSecurity: { sev: {} } } }), reason: 'SEVNotLiveMigratable', message: 'VMI uses SEV', method: 'LiveMigration', storage: 'SEVNotLiveMigratable: VMI uses SEV' },
  { name: 'Hyper-V passthrough', vmi: vmi({ domain: { devices: {}, features: { hypervPassthrough: { enabled: true } } } }), reason: 'HypervPassthroughNotLiveMigratable', message: 'VMI uses hyperv passthrough', method: 'LiveMigration', storage: 'HypervPassthroughNotLiveMigratable: VMI uses hyperv passthrough' },
  { name: 'Hyper-V reenlightenment without a TSC frequency hint', vmi: vmi({ domain: { devices: {}, features: { hyperv: { reenlightenment: { enabled: true } } } } }), reason: 'NoTSCFrequencyNotLiveMigratable', method: 'LiveMigration', storage: 'NoTSCFrequencyNotLiveMigratable: HyperV Reenlightenment VMIs cannot migrate when TSC Frequency is not exposed on the cluster: guest timers might be inconsistent' },
  { name: 'Hyper-V reenlightenment with a hint', vmi: vmi({ domain: { devices: {}, features: { hyperv: { reenlightenment: { enabled: true } } } } }, { topologyHints: { tscFrequency: 2_000_000_000 } }), method: 'LiveMigration' },
  { name: 'the interface wins over the disks', vmi: vmi({ ...iface({ bridge: {} }), volumes: [pvcVol('data')] }, { volumeStatus: [pvcStatus('data', ['ReadWriteOnce'])] }), reason: 'InterfaceNotLiveMigratable', message: IFACE_MSG, method: 'BlockMigration', storage: `InterfaceNotLiveMigratable: ${IFACE_MSG}` },
  { name: 'persistent reservation: storage only', vmi: vmi({ devices: { disks: [{ name: 'l', lun: { reservation: true } }] } }), method: 'LiveMigration', storage: 'PersistentReservationNotLiveMigratable: VMI uses SCSI persistent reservation' },
];

for (const c of cases) {
  test(`migratability: ${c.name}`, () => {
    const m = migratability(c.vmi);
    assert.is(m.liveMigratable.status, c.reason ? 'False' : 'True');
    assert.is(m.liveMigratable.reason, c.reason);
    if (c.message !== undefined) assert.is(m.liveMigratable.message, c.message);
    assert.is(m.migrationMethod, c.method);
    assert.is(m.storageLiveMigratable.status, c.storage ? 'False' : 'True');
    if (c.storage) {
      assert.is(m.storageLiveMigratable.reason, 'NotMigratable');
      assert.is(m.storageLiveMigratable.message, c.storage);
    }
  });
}

test('migratability: host-model on a node that could not name its host model', () => {
  const v = vmi({ domain: { devices: {}, cpu: { model: 'host-model' } } }, { nodeName: 'n1' });
  assert.is(migratability(v).liveMigratable.status, 'True');
  const m = migratability(v, { hostModelKnown: false });
  assert.is(m.liveMigratable.reason, 'CPUModeLiveMigratable');
  assert.is(m.liveMigratable.message, 'the node "n1" does not allow migration with host-model');
});

test('migratability: a binding plugin configured for migration', () => {
  assert.is(migratability(vmi(iface({ binding: { name: 'mine' } })), { migratableBindingPlugins: new Set(['mine']) }).liveMigratable.status, 'True');
});

test('status: the node agent writes LiveMigratable, StorageLiveMigratable and migrationMethod for a live domain only', () => {
  const v = vmi({ ...iface({ masquerade: {} }), volumes: [{ name: 'cd', containerDisk: { image: 'x' } }] }, { phase: 'Scheduled' });
  const domain = decodeDomain({ Status: { Status: 'Running', Reason: 'Unknown' } });
  const s = computeStatus({ vmi: v, domain, phase: 'Running', now: '2026-11-22T00:00:00Z' });
  assert.is(s.migrationMethod, 'BlockMigration');
  assert.equal(s.conditions?.filter((c) => c.type.endsWith('LiveMigratable')).map((c) => [c.type, c.status]), [['LiveMigratable', 'True'], ['StorageLiveMigratable', 'True']]);
  const none = computeStatus({ vmi: v, domain: undefined, phase: 'Scheduled', now: '2026-11-22T00:00:00Z' });
  assert.is(none.migrationMethod, undefined);
  assert.is(none.conditions?.some((c) => c.type === 'LiveMigratable'), false);
});

test.run();

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { computeStatus, USER_MODE_NETWORK_INFO_SOURCE } from '../../handler/status.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { Domain, InterfaceStatus } from '../../src/api/domain/domain.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const vmi = (): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name: 'v', namespace: 'default', uid: 'u1' },
  spec: {
    domain: { devices: { interfaces: [{ name: 'default', masquerade: {}, macAddress: '02:00:00:00:00:01' }, { name: 'sec', bridge: {} }] } },
    networks: [{ name: 'default', pod: {} }, { name: 'sec', multus: { networkName: 'x' } }],
  },
  status: { phase: 'Running' },
} as VirtualMachineInstance);

const domain = (interfaces?: InterfaceStatus[], fsFreezeStatus?: string): Domain => decodeDomain({
  ObjectMeta: { name: 'v', namespace: 'default' }, Spec: { Type: 'qemu', Features: { ACPI: {} }, Metadata: { KubeVirt: { UID: 'u1' } } },
  Status: { Status: 'Running', Reason: 'Unknown', Interfaces: interfaces ?? null, FSFreezeStatus: { Status: fsFreezeStatus ?? '' } },
});

test('pod-network interfaces say in infoSource that they use QEMU user-mode networking', () => {
  const s = computeStatus({ vmi: vmi(), domain: domain(), phase: 'Running', now: new Date().toISOString() });
  assert.equal(s.interfaces, [{ name: 'default', mac: '02:00:00:00:00:01', infoSource: `domain, ${USER_MODE_NETWORK_INFO_SOURCE}` }]);
});

test('with NICs reported by the launcher and guest agent, the pod one keeps the marker, others do not', () => {
  const s = computeStatus({
    vmi: vmi(),
    domain: domain([
      { Mac: '02:00:00:00:00:01', Ip: '10.0.2.15', IPs: ['10.0.2.15'], InterfaceName: 'eth0' },
      { Mac: '02:00:00:00:00:02', Ip: '', IPs: [], InterfaceName: '' },
    ]),
    phase: 'Running',
    now: new Date().toISOString(),
  });
  assert.is(s.interfaces?.[0]?.infoSource, `domain, guest-agent, ${USER_MODE_NETWORK_INFO_SOURCE}`);
  assert.is(s.interfaces?.[0]?.ipAddress, '10.0.2.15');
  assert.is(s.interfaces?.[1]?.name, 'sec');
  assert.is(s.interfaces?.[1]?.infoSource, 'domain');
});

test('no domain yet: the status interfaces are left as they were', () => {
  const v = vmi();
  v.status!.interfaces = [{ name: 'default', mac: 'x' }];
  const s = computeStatus({ vmi: v, domain: undefined, phase: 'Scheduled', now: new Date().toISOString() });
  assert.equal(s.interfaces, [{ name: 'default', mac: 'x' }]);
});

const freezeRows: Array<[string, string | undefined, string | undefined, string | undefined]> = [
  ['frozen is reported', undefined, 'frozen', 'frozen'],
  ['thawed clears it', 'frozen', 'thawed', undefined],
  ['no report keeps it', 'frozen', undefined, 'frozen'],
  ['nothing stays nothing', undefined, undefined, undefined],
];
for (const [name, before, reported, want] of freezeRows) {
  test(`fsFreezeStatus (KubeVirt's updateFSFreezeStatus): ${name}`, () => {
    const v = vmi();
    if (before) v.status!.fsFreezeStatus = before;
    const s = computeStatus({ vmi: v, domain: domain(undefined, reported), phase: 'Running', now: new Date().toISOString() });
    assert.is(s.fsFreezeStatus, want);
  });
}

test.run();

// The passt guest's address record, table-tested: the annotation's format and parser (bad values
// named by key), what the node agent records from the pod it set up and when it writes it (only
// before the VMI ever migrated), and what the launcher starts passt with (the record on a
// migration target only). The whole path runs in test/net/passt-migration.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PASST_GUEST_ADDRESSES_ANNOTATION } from '../../src/api/constants.ts';
import { formatPasstGuestAddresses, parsePasstGuestAddresses, PasstGuestAddressesError, recordedPasstGuestAddresses, type PasstGuestAddresses } from '../../src/net/passt-guest-addresses.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { passtGuestOf, passtRecordToWrite, withPasstRecord } from '../../handler/network/passt-record.ts';
import type { PodInterfaceState } from '../../handler/network/plan.ts';
import type { PodInterfaceStatus } from '../../handler/status.ts';
import { passtGuestAddresses } from '../../launcher/network/pod-network.ts';

const ANN = PASST_GUEST_ADDRESSES_ANNOTATION;
const dual: PasstGuestAddresses = { ipv4: '10.244.0.7/24', gateway4: '10.244.0.1', ipv6: 'fd00:10:244::7' };
const dualText = '{"ipv4":"10.244.0.7/24","gateway4":"10.244.0.1","ipv6":"fd00:10:244::7"}';

function vmi(annotation?: string, migrated = false): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: 'v', namespace: 'default', uid: 'u1', ...(annotation !== undefined ? { annotations: { other: 'x', [ANN]: annotation } } : { annotations: { other: 'x' } }) },
    spec: { domain: { devices: { interfaces: [{ name: 'default', passtBinding: {} }] } }, networks: [{ name: 'default', pod: {} }] },
    ...(migrated ? { status: { migrationState: { migrationUid: 'm1', targetNode: 'node-b', sourceNode: 'node-a' } } } : {}),
  } as VirtualMachineInstance;
}

test('format: fixed key order, absent keys left out; parse reads it back', () => {
  assert.is(formatPasstGuestAddresses({ ipv6: 'fd00:10:244::7', gateway4: '10.244.0.1', ipv4: '10.244.0.7/24' }), dualText);
  assert.is(formatPasstGuestAddresses({ ipv6: 'fd00::1' }), '{"ipv6":"fd00::1"}');
  assert.equal(parsePasstGuestAddresses(dualText), dual);
  assert.equal(parsePasstGuestAddresses('{"ipv4":"192.168.1.2/32"}'), { ipv4: '192.168.1.2/32' });
  assert.equal(parsePasstGuestAddresses('{}'), {});
});

const bad: Array<[string, string, RegExp]> = [
  ['not JSON', 'ipv4=10.0.0.1', /qvirt\.io\/passt-guest-addresses\]: not JSON/],
  ['an array', '["10.0.0.1/24"]', /: not a JSON object/],
  ['an unknown key', '{"ipv4":"10.0.0.1/24","mac":"x"}', /unknown key "mac" \(known: ipv4, gateway4, ipv6\)/],
  ['a number', '{"ipv4":7}', /\.ipv4: must be a non-empty string/],
  ['an IPv4 address without prefix', '{"ipv4":"10.0.0.1"}', /\.ipv4: "10\.0\.0\.1" is not an IPv4 address with a prefix length/],
  ['a prefix over 32', '{"ipv4":"10.0.0.1/33"}', /\.ipv4: "10\.0\.0\.1\/33" is not/],
  ['an IPv6 address as ipv4', '{"ipv4":"fd00::1/64"}', /\.ipv4: "fd00::1\/64" is not/],
  ['a bad gateway', '{"ipv4":"10.0.0.1/24","gateway4":"10.0.0"}', /\.gateway4: "10\.0\.0" is not an IPv4 address/],
  ['a gateway without address', '{"gateway4":"10.0.0.1"}', /\.gateway4: given without ipv4/],
  ['an IPv4 address as ipv6', '{"ipv6":"10.0.0.1"}', /\.ipv6: "10\.0\.0\.1" is not an IPv6 address/],
];
for (const [name, text, re] of bad) {
  test(`parse refuses ${name}, naming the annotation and key`, () => {
    assert.throws(() => parsePasstGuestAddresses(text), (e: Error) => e instanceof PasstGuestAddressesError && re.test(e.message));
  });
}

const podA: PodInterfaceState = { name: 'eth0', mac: 'b6:a4:97:6f:73:89', mtu: 1500, ipv4: { address: '10.244.0.7', prefix: 24 }, ipv6: { address: 'fd00:10:244::7', prefix: 64 }, gateway4: '10.244.0.1' };
const guestOf: Array<[string, PodInterfaceState | undefined, PasstGuestAddresses | undefined]> = [
  ['dual stack: address/prefix, gateway, IPv6 address', podA, dual],
  ['IPv4 only without a default route', { name: 'eth0', mac: 'm', mtu: 1500, ipv4: { address: '10.1.2.3', prefix: 16 } }, { ipv4: '10.1.2.3/16' }],
  ['IPv6 only (no IPv4 gateway recorded)', { name: 'eth0', mac: 'm', mtu: 1500, ipv6: { address: 'fd00::3', prefix: 64 }, gateway4: '10.0.0.1' }, { ipv6: 'fd00::3' }],
  ['no addresses', { name: 'eth0', mac: 'm', mtu: 1500 }, undefined],
  ['no pod interface', undefined, undefined],
];
for (const [name, pod, want] of guestOf) test(`what passt gives the guest in a pod: ${name}`, () => assert.equal(passtGuestOf(pod), want));

const passtNet = (guest: PasstGuestAddresses | undefined): Map<string, PodInterfaceStatus> => new Map([['default', { binding: 'passt', podIPs: ['10.244.0.7'], passtGuest: guest }]]);
const otherGuest: PasstGuestAddresses = { ipv4: '10.244.0.9/24', gateway4: '10.244.0.1', ipv6: 'fd00:10:244::9' };
const toWrite: Array<[string, VirtualMachineInstance, ReadonlyMap<string, PodInterfaceStatus> | undefined, string | undefined]> = [
  ['first run, no record yet: write the pod\'s', vmi(), passtNet(dual), dualText],
  ['first run, the same record: nothing', vmi(dualText), passtNet(dual), undefined],
  ['first run, a record from elsewhere (a VM template): replaced by the truth', vmi('{"ipv4":"1.2.3.4/8"}'), passtNet(dual), dualText],
  ['first run, a malformed record: replaced', vmi('junk'), passtNet(dual), dualText],
  ['after a migration (the target\'s own addresses): never', vmi(dualText, true), passtNet(otherGuest), undefined],
  ['a VMI that migrated without a record: none invented from a later pod', vmi(undefined, true), passtNet(otherGuest), undefined],
  ['pod network not known yet: nothing', vmi(), undefined, undefined],
  ['masquerade: nothing', vmi(), new Map([['default', { binding: 'masquerade', podIPs: ['10.244.0.7'] }]]), undefined],
  ['a pod with no addresses: nothing', vmi(), passtNet(undefined), undefined],
];
for (const [name, v, net, want] of toWrite) test(`node agent records: ${name}`, () => assert.is(passtRecordToWrite(v, net), want));

test('the record is set beside the other annotations', () => {
  assert.equal(withPasstRecord(vmi(), dualText).annotations, { other: 'x', [ANN]: dualText });
  assert.equal(withPasstRecord({ ...vmi(), metadata: { name: 'v' } }, dualText), { name: 'v', annotations: { [ANN]: dualText } });
});

const launcher: Array<[string, VirtualMachineInstance, ReturnType<typeof passtGuestAddresses>]> = [
  ['first run: passt takes the pod\'s own (the record, if any, is ignored)', vmi('{"ipv4":"1.2.3.4/8"}'), { missing: false }],
  ['first run without a record', vmi(), { missing: false }],
  ['migration target: the first pod\'s addresses', vmi(dualText, true), { guest: dual, missing: false }],
  ['migration target without a record (a VMI started before it was kept)', vmi(undefined, true), { missing: true }],
];
for (const [name, v, want] of launcher) test(`launcher starts passt with: ${name}`, () => assert.equal(passtGuestAddresses(v), want));

test('launcher: a malformed record on a migration target is an error naming the annotation', () => {
  assert.throws(() => passtGuestAddresses(vmi('{"ipv4":"10.0.0.1"}', true)), /metadata\.annotations\[qvirt\.io\/passt-guest-addresses\]\.ipv4: "10\.0\.0\.1" is not an IPv4 address with a prefix length/);
  assert.is(recordedPasstGuestAddresses(vmi()), undefined);
});

test.run();

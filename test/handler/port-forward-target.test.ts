// Where a port-forward goes (handler/endpoint/port-forward-target.ts), as KubeVirt's virt-api decides it:
// status.interfaces[0].ipAddress, nothing for a paused VMI or one without interfaces; a QEMU
// user-mode network goes through a host forward.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { portForwardTarget } from '../../handler/endpoint/port-forward-target.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceNetworkInterface } from '../../src/api/types.ts';

const vmi = (interfaces: VirtualMachineInstanceNetworkInterface[] | undefined, paused = false) => ({
  metadata: { name: 'vm1', namespace: 'ns1' },
  spec: { domain: { devices: {} } },
  status: {
    phase: 'Running',
    ...(interfaces ? { interfaces } : {}),
    conditions: paused ? [{ type: 'Paused', status: 'True', reason: 'PausedByUser' }] : [{ type: 'Ready', status: 'True' }],
  },
}) as unknown as VirtualMachineInstance;

const rows: Array<[string, VirtualMachineInstance, 'tcp' | 'udp', string]> = [
  ['masquerade: the pod IP', vmi([{ name: 'default', ipAddress: '10.244.0.7', ipAddresses: ['10.244.0.7', 'fd00::7'], infoSource: 'domain, guest-agent' }]), 'tcp', 'dial 10.244.0.7:22/tcp via default'],
  ['udp to the pod IP', vmi([{ name: 'default', ipAddress: '10.244.0.7', infoSource: 'domain' }]), 'udp', 'dial 10.244.0.7:22/udp via default'],
  ['IPv6 only', vmi([{ name: 'default', ipAddress: 'fd00::7' }]), 'tcp', 'dial fd00::7:22/tcp via default'],
  ['the first interface, as KubeVirt', vmi([{ name: 'a', ipAddress: '10.0.0.1' }, { name: 'b', ipAddress: '10.0.0.2' }]), 'tcp', 'dial 10.0.0.1:22/tcp via a'],
  ['user-mode networking', vmi([{ name: 'default', mac: '52:54:00:00:00:01', infoSource: 'domain, user-mode-network' }]), 'tcp', 'user-mode 22/tcp via default'],
  ['user-mode networking with a guest-agent address (10.0.2.15 is not reachable)', vmi([{ name: 'default', ipAddress: '10.0.2.15', infoSource: 'domain, guest-agent, user-mode-network' }]), 'udp', 'user-mode 22/udp via default'],
  ['paused', vmi([{ name: 'default', ipAddress: '10.244.0.7' }], true), 'tcp', '409 VMI ns1/vm1 is paused'],
  ['no interfaces', vmi(undefined), 'tcp', '400 VMI ns1/vm1: no network interfaces are present'],
  ['an empty interface list', vmi([]), 'tcp', '400 no network interfaces are present'],
  ['no address yet', vmi([{ name: 'default', mac: '52:54:00:00:00:01', infoSource: 'domain' }]), 'tcp', '400 its first interface "default" has no IP address yet'],
];
for (const [name, v, protocol, want] of rows) {
  test(`portForwardTarget: ${name}`, () => {
    const t = portForwardTarget(v, { port: 22, protocol });
    const got = t.kind === 'refuse' ? `${t.code} ${t.message}`
      : t.kind === 'dial' ? `dial ${t.host}:${t.port}/${t.protocol} via ${t.interfaceName}`
        : `user-mode ${t.port}/${t.protocol} via ${t.interfaceName}`;
    if (t.kind === 'refuse') {
      const [code, ...words] = want.split(' ');
      assert.is(String(t.code), code);
      assert.match(t.message, words.join(' '));
    } else {
      assert.is(got, want);
    }
  });
}

test.run();

// The Service `qvirt expose` creates, decided as virtctl v1.9.0's expose decides it
// (pkg/virtctl/expose): the flags' conversions and messages, the pod network's ports, the
// selectors, and the object field for field as virtctl's client sends it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UserError } from '../../src/kube/user-error.ts';
import { UsageError } from '../../src/flags/flags.ts';
import {
  convertIPFamily, convertIPFamilyPolicy, convertProtocol, convertServiceType, exposeKind, exposeService, parseIntOrString, podNetworkPorts, replicaSetSelector, vmiSelector,
  type ExposeOptions,
} from '../../src/cli/expose-service.ts';

const refused = (fn: () => unknown, cls: new (message: string) => Error, re: RegExp) => assert.throws(fn, (e: Error) => e instanceof cls && re.test(e.message));

test('the types virtctl accepts, case-insensitive, singular and plural', () => {
  for (const t of ['vmi', 'VMIs', 'virtualmachineinstance', 'virtualmachineinstances']) assert.is(exposeKind(t), 'vmi');
  for (const t of ['vm', 'vms', 'VirtualMachine', 'virtualmachines']) assert.is(exposeKind(t), 'vm');
  for (const t of ['vmirs', 'vmirss', 'virtualmachineinstancereplicaset', 'virtualmachineinstancereplicasets']) assert.is(exposeKind(t), 'vmirs');
  refused(() => exposeKind('Pod'), UsageError, /^unsupported resource type: pod;/);
});

test('flag conversions with virtctl\'s messages', () => {
  assert.is(convertProtocol('udp'), 'UDP');
  assert.is(convertProtocol('TCP'), 'TCP');
  refused(() => convertProtocol('sctp'), UsageError, /^unknown protocol: sctp/);
  assert.is(convertServiceType('nodeport'), 'NodePort');
  assert.is(convertServiceType('LoadBalancer'), 'LoadBalancer');
  assert.is(convertServiceType('clusterIP'), 'ClusterIP');
  refused(() => convertServiceType('ExternalName'), UsageError, /^type: ExternalName not supported/);
  refused(() => convertServiceType('foo'), UsageError, /^unknown service type: foo/);
  assert.equal(convertIPFamily(''), []);
  assert.equal(convertIPFamily('ipv6,IPv4'), ['IPv6', 'IPv4']);
  refused(() => convertIPFamily('x'), UsageError, /^unknown IPFamily\/s: x/);
  assert.is(convertIPFamilyPolicy('', ['IPv4', 'IPv6']), 'PreferDualStack');
  assert.is(convertIPFamilyPolicy('', ['IPv4']), '');
  assert.is(convertIPFamilyPolicy('requiredualstack', []), 'RequireDualStack');
  refused(() => convertIPFamilyPolicy('x', []), UsageError, /^unknown IPFamilyPolicy\/s: x/);
});

test('intstr.Parse: numbers as numbers, anything else (and "") as a string', () => {
  assert.is(parseIntOrString('8080'), 8080);
  assert.is(parseIntOrString('+80'), 80);
  assert.is(parseIntOrString('http'), 'http');
  assert.is(parseIntOrString(''), '');
});

test('the ports of the pod network\'s interface', () => {
  const spec = {
    networks: [{ name: 'multus', multus: {} }, { name: 'default', pod: {} }],
    domain: { devices: { interfaces: [{ name: 'multus', ports: [{ port: 1 }] }, { name: 'default', ports: [{ port: 22 }, { port: 53, protocol: 'UDP' }] }] } },
  };
  assert.equal(podNetworkPorts(spec), [{ name: 'port-1', port: 22, targetPort: 0 }, { name: 'port-2', protocol: 'UDP', port: 53, targetPort: 0 }]);
  assert.equal(podNetworkPorts({ networks: [{ name: 'default', pod: {} }], domain: { devices: { interfaces: [{ name: 'default' }] } } }), []);
  assert.is(podNetworkPorts({ domain: {} }), undefined);
  assert.is(podNetworkPorts(undefined), undefined);
});

test('selectors: the VMI id label (hashed past 63 characters); a replica set\'s matchLabels only', () => {
  assert.equal(vmiSelector('vm1'), { 'vmi.kubevirt.io/id': 'vm1' });
  const long = 'a'.repeat(70);
  assert.is(vmiSelector(long)['vmi.kubevirt.io/id']!.length, 63);
  assert.equal(replicaSetSelector({ matchLabels: { app: 'x' } }), { app: 'x' });
  refused(() => replicaSetSelector({ matchLabels: {} }), UserError, /without any selector labels/);
  refused(() => replicaSetSelector({ matchLabels: { a: 'b' }, matchExpressions: [{}] }), UserError, /with match expressions/);
});

const base: ExposeOptions = { serviceName: 's1', namespace: 'default', port: 0, portName: '', protocol: 'TCP', targetPort: '', type: 'ClusterIP', clusterIP: '', externalIP: '', ipFamilies: [], ipFamilyPolicy: '' };
const owner = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm1', uid: 'u-1' } as const;
const ownerRef = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm1', uid: 'u-1', controller: true, blockOwnerDeletion: false };

test('the Service of `virtctl expose vm vm1 --name s1 --port 22` (as virtctl v1.9.0 created it on the local mode)', () => {
  assert.equal(exposeService({ ...base, port: 22 }, owner, vmiSelector('vm1'), undefined), {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 's1', namespace: 'default', ownerReferences: [ownerRef] },
    spec: { ports: [{ protocol: 'TCP', port: 22, targetPort: '' }], selector: { 'vmi.kubevirt.io/id': 'vm1' }, type: 'ClusterIP' },
    status: { loadBalancer: {} },
  });
});

test('every flag (`--port 80 --target-port http --type nodeport --protocol udp --port-name web --ip-family ipv4,ipv6 --external-ip 1.2.3.4 --cluster-ip None`)', () => {
  const s = exposeService({ ...base, port: 80, targetPort: 'http', type: 'NodePort', protocol: 'UDP', portName: 'web', ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'PreferDualStack', externalIP: '1.2.3.4', clusterIP: 'None' }, owner, { a: 'b' }, [{ port: 1, targetPort: 0 }]);
  assert.equal(s.spec, {
    ports: [{ name: 'web', protocol: 'UDP', port: 80, targetPort: 'http' }], selector: { a: 'b' }, clusterIP: 'None', type: 'NodePort',
    externalIPs: ['1.2.3.4'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'PreferDualStack',
  });
});

test('without --port: the ports found, else the refusal', () => {
  assert.equal(exposeService(base, owner, {}, [{ name: 'port-1', port: 22, targetPort: 0 }]).spec.ports, [{ name: 'port-1', port: 22, targetPort: 0 }]);
  refused(() => exposeService(base, owner, {}, undefined), UserError, /^couldn't find port via --port flag or introspection/);
  refused(() => exposeService(base, owner, {}, []), UserError, /^couldn't find port/);
});

test.run();

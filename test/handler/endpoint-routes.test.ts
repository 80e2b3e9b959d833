import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { advertisedHost, endpointUrl, parseListen, routeOf } from '../../handler/endpoint/routes.ts';
import { describeAccess, subresourceAccess } from '../../handler/endpoint/auth.ts';

const P = '/v1/namespaces/default/virtualmachineinstances/vm1';
const routes: Array<[string, string, string, string | undefined, string]> = [
  ['PUT pause', 'PUT', `${P}/pause`, undefined, 'ok command pause'],
  ['PUT softreboot', 'PUT', `${P}/softreboot`, undefined, 'ok command softreboot'],
  ['GET guestosinfo', 'GET', `${P}/guestosinfo`, undefined, 'ok info guestosinfo'],
  ['GET vnc with the upgrade', 'GET', `${P}/vnc`, 'plain.kubevirt.io', 'ok stream vnc'],
  ['GET console, upgrade header in other case', 'GET', `${P}/console`, 'Plain.KubeVirt.io', 'ok stream console'],
  ['GET vnc without the upgrade', 'GET', `${P}/vnc`, undefined, '400'],
  ['GET console with a websocket upgrade', 'GET', `${P}/console`, 'websocket', '400'],
  ['POST qmp', 'POST', `${P}/qmp`, undefined, 'ok qmp qmp'],
  ['GET vnc/screenshot', 'GET', `${P}/vnc/screenshot`, undefined, 'ok screenshot vnc/screenshot'],
  ['PUT vnc/screenshot: wrong method', 'PUT', `${P}/vnc/screenshot`, undefined, '405'],
  ['a segment past vnc/screenshot', 'GET', `${P}/vnc/screenshot/x`, undefined, '404'],
  ['GET pause: wrong method', 'GET', `${P}/pause`, undefined, '405'],
  ['PUT qmp: wrong method', 'PUT', `${P}/qmp`, undefined, '405'],
  ['unknown subresource', 'PUT', `${P}/migrate`, undefined, '404'],
  ['not a subresource path', 'GET', '/apis/kubevirt.io/v1', undefined, '404'],
  ['a name that is not a DNS name', 'PUT', '/v1/namespaces/default/virtualmachineinstances/Bad_Name/pause', undefined, '400'],
  ['bad percent-encoding', 'PUT', '/v1/namespaces/default/virtualmachineinstances/%E0%A4%A/pause', undefined, '400'],
];
for (const [name, method, path, upgrade, want] of routes) {
  test(`routeOf: ${name}`, () => {
    const r = routeOf(method, path, upgrade);
    assert.is(r.ok ? `ok ${r.route.kind} ${r.route.subresource}` : String(r.code), want);
    if (r.ok) assert.equal([r.route.namespace, r.route.name], ['default', 'vm1']);
    else assert.ok(r.message.length > 10, 'the error says why');
  });
}

// portforward/PORT[/PROTOCOL]: what the request asks for, or the status and the bad part the error names.
const portForwards: Array<[string, string, string | undefined, string]> = [
  ['a port, tcp by default', `${P}/portforward/22`, 'plain.kubevirt.io', 'ok 22/tcp'],
  ['tcp given', `${P}/portforward/22/tcp`, 'plain.kubevirt.io', 'ok 22/tcp'],
  ['udp', `${P}/portforward/53/udp`, 'plain.kubevirt.io', 'ok 53/udp'],
  ['the lowest port', `${P}/portforward/1`, 'plain.kubevirt.io', 'ok 1/tcp'],
  ['the highest port', `${P}/portforward/65535/udp`, 'plain.kubevirt.io', 'ok 65535/udp'],
  ['port 0', `${P}/portforward/0`, 'plain.kubevirt.io', '400 port "0" is not a port number (1..65535)'],
  ['port over 65535', `${P}/portforward/65536`, 'plain.kubevirt.io', '400 port "65536" is not a port number'],
  ['a port with a leading zero', `${P}/portforward/022`, 'plain.kubevirt.io', '400 port "022"'],
  ['a port that is not a number', `${P}/portforward/ssh`, 'plain.kubevirt.io', '400 port "ssh"'],
  ['a negative port', `${P}/portforward/-1`, 'plain.kubevirt.io', '400 port "-1"'],
  ['an unknown protocol', `${P}/portforward/22/sctp`, 'plain.kubevirt.io', '400 protocol "sctp" is not tcp or udp'],
  ['a protocol in capitals', `${P}/portforward/22/TCP`, 'plain.kubevirt.io', '400 protocol "TCP" is not tcp or udp'],
  ['no port', `${P}/portforward`, 'plain.kubevirt.io', '404 expected portforward/PORT or portforward/PORT/PROTOCOL'],
  ['a segment too many', `${P}/portforward/22/tcp/x`, 'plain.kubevirt.io', '404 portforward/22/tcp/x: no such subresource'],
  ['an empty segment', `${P}/portforward//tcp`, 'plain.kubevirt.io', '404 not a subresource path'],
  ['without the upgrade', `${P}/portforward/22`, undefined, '400 portforward/22 is a byte stream'],
  ['parameters on another subresource', `${P}/console/screenshot`, 'plain.kubevirt.io', '404 unknown subresource "console/screenshot"'],
];
for (const [name, path, upgrade, want] of portForwards) {
  test(`routeOf portforward: ${name}`, () => {
    const r = routeOf('GET', path, upgrade);
    if (want.startsWith('ok ')) {
      assert.ok(r.ok, r.ok ? '' : r.message);
      if (!r.ok) return;
      assert.is(`${r.route.kind} ${r.route.subresource}`, 'stream portforward');
      assert.is(`ok ${r.route.portForward?.port}/${r.route.portForward?.protocol}`, want);
    } else {
      assert.not.ok(r.ok, 'refused');
      if (r.ok) return;
      const [code, ...words] = want.split(' ');
      assert.is(String(r.code), code);
      assert.match(r.message, words.join(' '));
    }
  });
}

test('routeOf portforward: a PUT is refused with the method it takes', () => {
  const r = routeOf('PUT', `${P}/portforward/22`, 'plain.kubevirt.io');
  assert.equal(r.ok ? 'ok' : [r.code, r.message], [405, 'portforward/22 takes GET, not PUT']);
});

const access: Array<[string, boolean, string]> = [
  ['console', false, 'get console'],
  ['vnc', false, 'get vnc'],
  ['vnc/screenshot', false, 'get vnc/screenshot'],
  ['guestosinfo', false, 'get guestosinfo'],
  ['userlist', false, 'get userlist'],
  ['filesystemlist', false, 'get filesystemlist'],
  ['qmp', false, 'get qmp'],
  ['qmp', true, 'update qmp-unsafe'],
  ['pause', false, 'update pause'],
  ['unpause', false, 'update unpause'],
  ['freeze', false, 'update freeze'],
  ['unfreeze', false, 'update unfreeze'],
  ['reset', false, 'update reset'],
  ['softreboot', false, 'update softreboot'],
];
for (const [sub, unsafe, want] of access) {
  test(`subresourceAccess: ${sub}${unsafe ? ' unsafe' : ''} → ${want}`, () => {
    const a = subresourceAccess(sub, unsafe);
    assert.is(`${a.verb} ${a.subresource}`, want);
  });
}

test('subresourceAccess: usage is read by whoever may get the VMI itself (group kubevirt.io, no subresource)', () => {
  const a = subresourceAccess('usage');
  assert.equal(a, { verb: 'get', subresource: '', group: 'kubevirt.io' });
  assert.is(describeAccess(a), 'get virtualmachineinstances in group kubevirt.io');
  assert.is(describeAccess(subresourceAccess('pause')), 'update virtualmachineinstances/pause in group subresources.kubevirt.io');
});

test('parseListen: HOST:PORT, IPv6 in brackets, errors name the flag', () => {
  assert.equal(parseListen('0.0.0.0:8186'), { host: '0.0.0.0', port: 8186 });
  assert.equal(parseListen('[::1]:0'), { host: '::1', port: 0 });
  assert.throws(() => parseListen('8186'), /--listen 8186: expected HOST:PORT/);
  assert.throws(() => parseListen(':8186'), /--listen/);
  assert.throws(() => parseListen('h:99999'), /--listen/);
});

test('advertisedHost: explicit, then the listen host, then POD_IP, then the first IPv4 address', () => {
  assert.is(advertisedHost('0.0.0.0', '10.0.0.9', '10.1.1.1', ['192.168.1.2']), '10.0.0.9');
  assert.is(advertisedHost('127.0.0.1', undefined, '10.1.1.1', []), '127.0.0.1');
  assert.is(advertisedHost('0.0.0.0', undefined, '10.1.1.1', ['192.168.1.2']), '10.1.1.1');
  assert.is(advertisedHost('::', undefined, undefined, ['fe80::1', '192.168.1.2']), '192.168.1.2');
  assert.is(advertisedHost('0.0.0.0', undefined, undefined, []), '127.0.0.1');
  assert.is(endpointUrl('::1', 8186), 'https://[::1]:8186');
  assert.is(endpointUrl('node1.example', 8186), 'https://node1.example:8186');
});

test.run();

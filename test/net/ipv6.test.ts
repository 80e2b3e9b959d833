// The pure parts of the masquerade binding's IPv6, table-tested: DHCPv6 messages (decode, the
// single-client server's answers, encode), router advertisements, what the launcher derives from
// the vif cache (lease, RA), IPv6 address arithmetic and IPv6 nameservers from resolv.conf.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  answer6, decodeMessage6, decodeOptions6, Dhcpv6CodecError, duidLL, encodeIaNa, encodeMessage6, ipv6Bytes, leasedAddress6, MessageType6, Opt6, option6, type Lease6,
} from '../../launcher/network/dhcpv6-codec.ts';
import { decodeRouterAdvert, encodeRouterAdvert } from '../../launcher/network/router-advert.ts';
import { lease6For, routerAdvertFor, LEASE6_SECONDS, ROUTER_LIFETIME_SECONDS } from '../../launcher/network/ipv6-router.ts';
import { parseResolvConf } from '../../launcher/network/resolv-conf.ts';
import { formatIpv6, network6, parseIpv6 } from '../../src/net/ipv6.ts';

const clientId = Buffer.from('000100013294ded4525400123456', 'hex');
const serverId = duidLL('02:00:00:00:00:00');
const lease: Lease6 = { address: 'fd10:0:2::2', lifetimeSeconds: LEASE6_SECONDS, serverId, dns: ['fd00::53'] };
const iaid = Buffer.from('00123456', 'hex');
const iaReq = Buffer.concat([iaid, Buffer.alloc(8)]);

/** A client message as dhcpcd sends it: client ID, elapsed time, IA_NA, plus `extra`. */
const req = (type: number, extra: Array<[number, Buffer]> = [], xid = 0x15f19e) =>
  encodeMessage6(type, xid, [[Opt6.ClientId, clientId], [Opt6.ElapsedTime, Buffer.from([0, 0])], [Opt6.IaNa, iaReq], ...extra]);

test('IPv6 text: parse, format (RFC 5952), network of a prefix', () => {
  const fmt: Array<[string, string]> = [
    ['fd10:0:2:0:0:0:0:2', 'fd10:0:2::2'], ['FD10::1', 'fd10::1'], ['0:0:0:0:0:0:0:0', '::'], ['fe80:0:0:0:ff:fe00:0:0', 'fe80::ff:fe00:0:0'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'], ['1:0:0:0:2:0:0:3', '1::2:0:0:3'], ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
  ];
  for (const [inp, want] of fmt) assert.is(formatIpv6(parseIpv6(inp)), want, inp);
  for (const bad of ['1::2::3', 'fd10:0:2::g', '1:2:3:4:5:6:7:8:9', '1:2:3']) assert.throws(() => parseIpv6(bad, 'f'), /f: ".*" is not an IPv6 address/, bad);
  const nets: Array<[string, number, string]> = [['fd10:0:2::2', 120, 'fd10:0:2::'], ['fd10:0:2::1ff', 120, 'fd10:0:2::100'], ['fd00:10:244::5', 64, 'fd00:10:244::'], ['fd00:1:2:3:4:5:6:7', 52, 'fd00:1:2::'], ['fd00::1', 128, 'fd00::1'], ['fd00::1', 0, '::']];
  for (const [a, p, want] of nets) assert.is(network6(a, p), want, `${a}/${p}`);
  assert.throws(() => network6('fd00::1', 129, 'x'), /x: prefix \/129/);
});

test('DHCPv6 decode: header, options in order; bad input names what is wrong', () => {
  const m = decodeMessage6(req(MessageType6.Solicit, [[Opt6.RapidCommit, Buffer.alloc(0)]]));
  assert.is(m.type, MessageType6.Solicit);
  assert.is(m.transactionId, 0x15f19e);
  assert.equal(m.options.map(([c]) => c), [Opt6.ClientId, Opt6.ElapsedTime, Opt6.IaNa, Opt6.RapidCommit]);
  assert.ok(option6(m, Opt6.ClientId)?.equals(clientId));
  const bad: Array<[Buffer, RegExp]> = [
    [Buffer.from([1, 0, 0]), /too short: 3 bytes/],
    [Buffer.from([12, 0, 0, 0]), /relay messages \(type 12\) are not served/],
    [Buffer.from([1, 0, 0, 1, 0, 1, 0]), /truncated option header at byte 0/],
    [Buffer.from([1, 0, 0, 1, 0, 1, 0, 9, 1, 2]), /option 1 runs past the end \(9 bytes\)/],
  ];
  for (const [b, re] of bad) assert.throws(() => decodeMessage6(b), re);
  assert.throws(() => duidLL('02:00'), /"02:00" is not a MAC address/);
  assert.throws(() => ipv6Bytes('10.0.2.2', 'lease address'), (e: Error) => e instanceof Dhcpv6CodecError && /lease address: "10.0.2.2"/.test(e.message));
});

test('DHCPv6 answers: Solicit → Advertise (Reply with Rapid Commit), others → Reply, with the IA_NA the client asked for', () => {
  const cases: Array<[string, Buffer, number | undefined, { ia: boolean; rapid?: boolean; status?: boolean }]> = [
    ['Solicit', req(MessageType6.Solicit), MessageType6.Advertise, { ia: true }],
    ['Solicit + Rapid Commit', req(MessageType6.Solicit, [[Opt6.RapidCommit, Buffer.alloc(0)]]), MessageType6.Reply, { ia: true, rapid: true }],
    ['Request', req(MessageType6.Request, [[Opt6.ServerId, serverId]]), MessageType6.Reply, { ia: true }],
    ['Renew', req(MessageType6.Renew, [[Opt6.ServerId, serverId]]), MessageType6.Reply, { ia: true }],
    ['Rebind', req(MessageType6.Rebind), MessageType6.Reply, { ia: true }],
    ['Confirm', req(MessageType6.Confirm), MessageType6.Reply, { ia: true }],
    ['Release', req(MessageType6.Release, [[Opt6.ServerId, serverId]]), MessageType6.Reply, { ia: false, status: true }],
    ['Information-request (no client ID)', encodeMessage6(MessageType6.InformationRequest, 7, []), MessageType6.Reply, { ia: false }],
    ['Request for another server', req(MessageType6.Request, [[Opt6.ServerId, duidLL('02:00:00:00:00:01')]]), undefined, { ia: false }],
    ['Solicit without a client ID', encodeMessage6(MessageType6.Solicit, 1, [[Opt6.IaNa, iaReq]]), undefined, { ia: false }],
    ['a server message (Advertise)', encodeMessage6(MessageType6.Advertise, 1, [[Opt6.ClientId, clientId]]), undefined, { ia: false }],
  ];
  for (const [name, b, wantType, want] of cases) {
    const inp = decodeMessage6(b);
    const res = answer6(inp, lease);
    assert.is(res?.type, wantType, name);
    if (!res) continue;
    const out = decodeMessage6(res.reply);
    assert.is(out.type, wantType, name);
    assert.is(out.transactionId, inp.transactionId, `${name}: transaction id echoed`);
    assert.ok(option6(out, Opt6.ServerId)?.equals(serverId), `${name}: server DUID-LL of the bridge`);
    if (option6(inp, Opt6.ClientId)) assert.ok(option6(out, Opt6.ClientId)?.equals(clientId), `${name}: client id echoed`);
    assert.is(option6(out, Opt6.RapidCommit) !== undefined, !!want.rapid, `${name}: rapid commit`);
    assert.is(leasedAddress6(out), want.ia ? 'fd10:0:2::2' : undefined, `${name}: address`);
    if (want.ia) assert.ok(option6(out, Opt6.IaNa)!.subarray(0, 4).equals(iaid), `${name}: the client's IAID`);
    assert.is(option6(out, Opt6.StatusCode) !== undefined, !!want.status, `${name}: status code`);
    assert.ok(option6(out, Opt6.DnsServers)?.equals(ipv6Bytes('fd00::53')), `${name}: DNS servers`);
  }
  // The IA_NA's bytes: IAID, T1 = T2 = 0, IAADDR(address, preferred = valid = 999 days).
  assert.is(encodeIaNa(iaid, lease).toString('hex'), `00123456${'0'.repeat(16)}00050018fd100000000200000000000000000002${'05250a80'.repeat(2)}`);
  const noDns = decodeMessage6(answer6(decodeMessage6(req(MessageType6.Solicit)), { ...lease, dns: [] })!.reply);
  assert.is(option6(noDns, Opt6.DnsServers), undefined);
  assert.equal(decodeOptions6(Buffer.alloc(0), 'x'), []);
});

test('router advertisement: default router, M and O, MTU, the CIDR on-link and not autonomous', () => {
  const ra = routerAdvertFor({ bridgeMac: '02:00:00:00:00:00', guest: { address: 'fd10:0:2::2', prefix: 120 }, mtu: 1450 });
  assert.equal(ra.onLink, ['fd10:0:2::/120']);
  const b = encodeRouterAdvert(ra);
  assert.is(b.toString('hex'),
    '8600000040c0' + '0708' + '00000000' + '00000000' + // type 134, code, checksum (kernel), hop limit 64, M|O, lifetime 1800, reachable, retrans
    '0101020000000000' + // source link-layer address
    '0501000000000' + '5aa' + // MTU 1450
    '0304788005250a8005250a800000000' + '0fd100000000200000000000000000000'); // prefix info /120, L only
  const d = decodeRouterAdvert(b);
  assert.equal({ m: d.managed, o: d.other, life: d.routerLifetime, types: d.options.map((o) => o.type) }, { m: true, o: true, life: ROUTER_LIFETIME_SECONDS, types: [1, 5, 3] });
  const bare = decodeRouterAdvert(encodeRouterAdvert({ routerLifetime: 0, managed: false, other: false, onLink: [], prefixLifetime: 0 }));
  assert.equal({ m: bare.managed, o: bare.other, life: bare.routerLifetime, n: bare.options.length }, { m: false, o: false, life: 0, n: 0 });
  const bad: Array<[Parameters<typeof encodeRouterAdvert>[0], RegExp]> = [
    [{ ...ra, routerLifetime: 9001 }, /router lifetime 9001: must be 0\.\.9000/],
    [{ ...ra, mac: 'zz' }, /"zz" is not a MAC address/],
    [{ ...ra, onLink: ['fd10::'] }, /on-link prefix "fd10::" is not an IPv6 CIDR/],
    [{ ...ra, onLink: ['fd10::/129'] }, /on-link prefix "fd10::\/129"/],
  ];
  for (const [r, re] of bad) assert.throws(() => encodeRouterAdvert(r), re);
  assert.throws(() => decodeRouterAdvert(Buffer.from([133, 0, 0, 0])), /not a router advertisement/);
});

test('launcher: the DHCPv6 lease from the vif cache; IPv6 nameservers from resolv.conf', () => {
  const l = lease6For({ bridgeMac: '02:00:00:00:00:00', guest: { address: 'fd10:0:2::2', prefix: 120 }, dns: ['fd00::a'] });
  assert.equal({ ...l, serverId: l.serverId.toString('hex') }, { address: 'fd10:0:2::2', lifetimeSeconds: 999 * 86400, serverId: '00030001020000000000', dns: ['fd00::a'] });
  assert.is(lease6For({ guest: { address: 'fd10:0:2::2', prefix: 120 }, dns: [] }).serverId.toString('hex'), '00030001020000000000', 'the masquerade bridge MAC when unknown');
  const conf: Array<[string, { nameservers: string[]; nameservers6?: string[]; search: string[] }]> = [
    ['nameserver 10.96.0.10\nnameserver FD00::53\nsearch a.svc b\n', { nameservers: ['10.96.0.10'], nameservers6: ['fd00::53'], search: ['a.svc', 'b'] }],
    ['nameserver fe80::1%eth0\nnameserver 1.1.1.1\n', { nameservers: ['1.1.1.1'], search: [] }],
    ['# nameserver ::1\n', { nameservers: [], search: [] }],
  ];
  for (const [text, want] of conf) assert.equal(parseResolvConf(text), want, text);
});

test.run();

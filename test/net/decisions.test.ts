// The pure parts of pod networking, table-tested: the masquerade NAT rules (and nft accepting them
// in a real network namespace), binding → setup plan, the DHCP codec and server answers, passt's
// arguments, resolv.conf, address arithmetic, the vif cache, the converter's backend and the
// status the node agent reports.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { renderMasqueradeNft } from '../../handler/network/nft-masquerade.ts';
import { planPodNetwork, NetworkSetupError, type PodInterfaceState } from '../../handler/network/plan.ts';
import { cgroupOfPod } from '../../handler/launcher/pod-processes.ts';
import { isLauncherCommand } from '../../handler/device-ownership.ts';
import { computeStatus } from '../../handler/status.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { InterfaceStatus } from '../../src/api/domain/domain.ts';
import { answer, decodeMessage, encodeClasslessRoutes, encodeRequest, encodeSearchDomains, leaseOptions, MessageType, Opt, ipBytes, type LeaseOptions } from '../../launcher/network/dhcp-codec.ts';
import { allPortsSpec, passtAddressArgs, passtArgs } from '../../launcher/network/passt.ts';
import type { PasstGuestAddresses } from '../../src/net/passt-guest-addresses.ts';
import { leaseFor } from '../../launcher/network/pod-network.ts';
import { parseResolvConf } from '../../launcher/network/resolv-conf.ts';
import { interfacePlan } from '../../launcher/convert/interfaces.ts';
import { parseVifCache, VifCacheError, type VifCache } from '../../src/api/vif-cache.ts';
import type { Interface, VirtualMachineInstance } from '../../src/api/types.ts';
import { parseCidr4, prefixToMask, intToIpv4 } from '../../src/net/ipv4.ts';
import { nthAddress6 } from '../../src/net/ipv6.ts';
import { nextFreeAddress, podAddress6, podNetworkNames } from '../../src/local/pod-runner/pod-network.ts';
import { ctx } from '../convert/helpers.ts';

/** A running domain as a launcher reports it, with the NICs it lists. */
const runningDomain = (interfaces: InterfaceStatus[] | null) => decodeDomain({
  ObjectMeta: { name: 'v', namespace: 'default' }, Spec: { Type: 'qemu', Features: { ACPI: {} }, Metadata: { KubeVirt: { UID: 'u1' } } },
  Status: { Status: 'Running', Reason: 'Unknown', Interfaces: interfaces },
});

const vmiWith = (iface: Partial<Interface>, pod: Record<string, string> = {}): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
  metadata: { name: 'v', namespace: 'default', uid: 'u1' },
  spec: { domain: { devices: { interfaces: [{ name: 'default', ...iface }] } }, networks: [{ name: 'default', pod }] },
} as VirtualMachineInstance);

const pod: PodInterfaceState = { name: 'eth0', mac: 'b6:a4:97:6f:73:89', mtu: 1450, ipv4: { address: '10.244.0.7', prefix: 24 }, gateway4: '10.244.0.1' };

// ---- nft rules ---------------------------------------------------------------------------------
const nftCases: Array<[string, Parameters<typeof renderMasqueradeNft>[0], RegExp[], RegExp[]]> = [
  // Everything but KubeVirt's live-migration ports (49152, 49153): a direct migration's target QEMU listens there.
  ['no ports: everything goes to the guest but the migration ports', { family: 'ip', podInterface: 'eth0', bridge: 'k6t-eth0', guestIP: '10.0.2.2', gatewayIP: '10.0.2.1', ports: [] },
    [/iifname "eth0" tcp dport \{ 49152, 49153 \} counter return\n {4}iifname "eth0" counter jump KUBEVIRT_PREINBOUND/, /chain KUBEVIRT_PREINBOUND \{\n {4}counter dnat to 10\.0\.2\.2\n/, /ip saddr \{ 127\.0\.0\.1 \} counter snat to 10\.0\.2\.1/, /ip daddr \{ 127\.0\.0\.1 \} counter dnat to 10\.0\.2\.2/, /ip saddr 10\.0\.2\.2 counter masquerade/, /iifname "eth0" counter jump KUBEVIRT_PREINBOUND/, /oifname "k6t-eth0" counter jump KUBEVIRT_POSTINBOUND/],
    [/dport (?!\{ 49152, 49153 \} counter return)/]],
  ['listed ports and a range', { family: 'ip', podInterface: 'eth0', bridge: 'k6t-eth0', guestIP: '10.0.2.2', gatewayIP: '10.0.2.1', ports: [{ protocol: 'tcp', port: 80 }, { protocol: 'udp', port: [5000, 5010] }] },
    [/tcp dport \{ 80 \} counter dnat to 10\.0\.2\.2/, /udp dport 5000-5010 counter dnat to 10\.0\.2\.2/, /tcp dport 80 ip saddr \{ 127\.0\.0\.1 \} counter snat to 10\.0\.2\.1/, /ip daddr \{ 127\.0\.0\.1 \} udp dport 5000-5010 counter dnat to 10\.0\.2\.2/],
    [/KUBEVIRT_PREINBOUND \{\n {4}counter dnat/]],
  ['IPv6', { family: 'ip6', podInterface: 'eth0', bridge: 'k6t-eth0', guestIP: 'fd10:0:2::2', gatewayIP: 'fd10:0:2::1', ports: [] },
    [/^table ip6 nat \{\}\ndelete table ip6 nat\ntable ip6 nat \{/, /ip6 saddr \{ ::1 \} counter snat to fd10:0:2::1/, /ip6 saddr fd10:0:2::2 counter masquerade/],
    [/\bip saddr/]],
];
for (const [name, input, has, hasNot] of nftCases) {
  test(`nft masquerade rules: ${name}`, () => {
    const s = renderMasqueradeNft(input);
    for (const r of has) assert.match(s, r);
    for (const r of hasNot) assert.not.match(s, r);
  });
}

test('nft accepts the rules in a real namespace, and applying them twice leaves one table', () => {
  const ns = `qvt-nft-${process.pid}`;
  execFileSync('ip', ['netns', 'add', ns]);
  try {
    for (const input of nftCases.map((c) => c[1])) {
      const script = renderMasqueradeNft(input);
      execFileSync('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], { input: script });
      execFileSync('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], { input: script });
    }
    const tables = execFileSync('ip', ['netns', 'exec', ns, 'nft', 'list', 'tables'], { encoding: 'utf8' });
    assert.equal(tables.trim().split('\n').sort(), ['table ip nat', 'table ip6 nat']);
    const rules = execFileSync('ip', ['netns', 'exec', ns, 'nft', 'list', 'chain', 'ip', 'nat', 'KUBEVIRT_PREINBOUND'], { encoding: 'utf8' });
    assert.is(rules.match(/dnat to/g)?.length, 2, 'the last script applied, once');
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
  }
});

// ---- binding → setup plan ----------------------------------------------------------------------
test('plan: masquerade on the default vmNetworkCIDR', () => {
  const p = planPodNetwork(vmiWith({ masquerade: {}, ports: [{ port: 22 }] }), pod);
  const args = p.steps.map((s) => `${s.cmd} ${s.args.join(' ')}`);
  assert.ok(args.includes('ip link add k6t-eth0 type bridge'));
  assert.ok(args.includes('ip link set k6t-eth0 address 02:00:00:00:00:00 mtu 1450'));
  assert.ok(args.includes('ip addr replace 10.0.2.1/24 dev k6t-eth0'));
  assert.ok(args.includes('ip tuntap add dev tap0 mode tap vnet_hdr'));
  assert.ok(args.includes('ip link set tap0 mtu 1450 master k6t-eth0 up'));
  assert.ok(args.includes('sysctl -q -w net.ipv4.ip_forward=1'));
  const nft = p.steps.find((s) => s.cmd === 'nft');
  assert.match(nft?.input ?? '', /tcp dport \{ 22 \} counter dnat to 10\.0\.2\.2/);
  assert.equal(p.caches, [{ file: 'vif-cache-eth0.json', cache: { iface: 'default', binding: 'masquerade', podInterface: 'eth0', tap: 'tap0', bridge: 'k6t-eth0', mtu: 1450, podIPs: ['10.244.0.7'], dhcp4: { address: '10.0.2.2', prefix: 24, server: '10.0.2.1', router: '10.0.2.1', routes: [] } } }]);
  assert.is(p.steps.find((s) => s.args.includes('tuntap'))?.unlessLink, 'tap0', 'creating the tap is skipped when it exists');
});

test('plan: masquerade honours vmNetworkCIDR and adds IPv6 when the pod has it', () => {
  const p = planPodNetwork(vmiWith({ masquerade: {} }, { vmNetworkCIDR: '10.11.0.0/16', vmIPv6NetworkCIDR: 'fd20::/64' }), { ...pod, ipv6: { address: 'fd00::7', prefix: 64 } });
  const c = p.caches[0]!.cache;
  assert.equal(c.dhcp4, { address: '10.11.0.2', prefix: 16, server: '10.11.0.1', router: '10.11.0.1', routes: [] });
  assert.equal(c.ipv6, { address: 'fd20::2', prefix: 64, gateway: 'fd20::1' });
  assert.equal(c.podIPs, ['10.244.0.7', 'fd00::7']);
  assert.is(p.steps.filter((s) => s.cmd === 'nft').length, 2);
  const dad = p.steps.findIndex((s) => s.args.includes('net.ipv6.conf.k6t-eth0.accept_dad=0'));
  const up = p.steps.findIndex((s) => s.args.join(' ') === 'link set k6t-eth0 up');
  assert.ok(dad >= 0 && dad < up, 'DAD is off on the bridge before it comes up (its link-local address serves DHCPv6 and RAs at once)');
  assert.ok(p.steps.some((s) => s.args.join(' ') === '-6 addr replace fd20::1/64 dev k6t-eth0 nodad'));
});

const planErrors: Array<[string, VirtualMachineInstance, PodInterfaceState | undefined, RegExp]> = [
  ['a bad vmNetworkCIDR', vmiWith({ masquerade: {} }, { vmNetworkCIDR: '10.0.2.0' }), pod, /spec\.networks\[0\]\.pod\.vmNetworkCIDR: "10\.0\.2\.0" is not an IPv4 CIDR/],
  ['a CIDR too small for gateway and guest', vmiWith({ masquerade: {} }, { vmNetworkCIDR: '10.0.2.0/31' }), pod, /vmNetworkCIDR: \/31 leaves no room/],
  ['no pod interface', vmiWith({ bridge: {} }), undefined, /interfaces\[0\]: the pod has no interface eth0 to bind bridge to/],
  ['an unknown port protocol', vmiWith({ masquerade: {}, ports: [{ port: 1, protocol: 'ICMP' }] }), pod, /interfaces\[0\]\.ports\[0\]\.protocol: "ICMP" is not TCP, UDP or SCTP/],
];
for (const [name, v, p, re] of planErrors) {
  test(`plan error: ${name}`, () => {
    try { planPodNetwork(v, p); assert.unreachable(); } catch (err) {
      assert.instance(err, NetworkSetupError);
      assert.match((err as Error).message, re);
    }
  });
}

test('plan: bridge moves the pod address and MAC to the guest', () => {
  const p = planPodNetwork(vmiWith({ bridge: {} }), pod);
  const args = p.steps.map((s) => `${s.cmd} ${s.args.join(' ')}`);
  assert.ok(args.includes('ip addr flush dev eth0'));
  assert.ok(args.includes('ip link set eth0 name eth0-nic'));
  assert.ok(args.includes('ip link set eth0-nic address 02:00:00:6f:73:89 master k6t-eth0 up'));
  assert.ok(args.includes('ip addr replace 169.254.75.10/32 dev k6t-eth0'));
  assert.equal(p.caches[0]!.cache, { iface: 'default', binding: 'bridge', podInterface: 'eth0', tap: 'tap0', bridge: 'k6t-eth0', mtu: 1450, mac: 'b6:a4:97:6f:73:89', podIPs: ['10.244.0.7'], dhcp4: { address: '10.244.0.7', prefix: 24, server: '169.254.75.10', router: '10.244.0.1', routes: [] } });
  assert.is(p.steps.find((s) => s.args.includes('name'))?.unlessLink, 'eth0-nic', 'the rename is skipped once done');
});

test('plan: passt needs nothing privileged but two sysctls; other networks and absent interfaces nothing', () => {
  const p = planPodNetwork(vmiWith({ passtBinding: {} }), pod);
  assert.equal(p.caches, []);
  assert.equal(p.steps.map((s) => s.args.join(' ')), ['-q -w net.ipv4.ping_group_range=107 65534', '-q -w net.ipv4.ip_unprivileged_port_start=0']);
  assert.equal(planPodNetwork(vmiWith({ masquerade: {}, state: 'absent' }), pod), { steps: [], caches: [] });
  const multus = { ...vmiWith({ bridge: {} }), spec: { ...vmiWith({ bridge: {} }).spec, networks: [{ name: 'default', multus: { networkName: 'n' } }] } } as VirtualMachineInstance;
  assert.equal(planPodNetwork(multus, pod), { steps: [], caches: [] });
});

// ---- DHCP --------------------------------------------------------------------------------------
const lease: LeaseOptions = { address: '10.0.2.2', prefix: 24, server: '10.0.2.1', router: '10.0.2.1', dns: ['10.96.0.10'], search: ['default.svc.cluster.local', 'svc.cluster.local'], mtu: 1450, hostname: 'vm1', routes: [], leaseSeconds: 86313600 };
const MAC = '52:54:00:aa:bb:cc';

test('DHCP: DISCOVER → OFFER with KubeVirt\'s options; REQUEST → ACK', () => {
  const offer = answer(decodeMessage(encodeRequest(MessageType.Discover, MAC, 0x1234)), lease);
  assert.is(offer?.type, MessageType.Offer);
  const m = decodeMessage(offer!.reply);
  assert.is(m.op, 2);
  assert.is(m.xid, 0x1234);
  assert.is(m.yiaddr, '10.0.2.2');
  assert.is(m.chaddr, MAC);
  assert.is(m.type, MessageType.Offer);
  assert.equal([...m.options.get(Opt.SubnetMask)!], [255, 255, 255, 0]);
  assert.equal([...m.options.get(Opt.Router)!], [10, 0, 2, 1]);
  assert.equal([...m.options.get(Opt.DNS)!], [10, 96, 0, 10]);
  assert.equal(m.options.get(Opt.MTU)!.readUInt16BE(0), 1450);
  assert.is(m.options.get(Opt.HostName)!.toString(), 'vm1');
  assert.is(m.options.get(Opt.DomainName)!.toString(), 'default.svc.cluster.local');
  assert.is(m.options.get(Opt.LeaseTime)!.readUInt32BE(0), 86313600);
  assert.equal([...m.options.get(Opt.ServerId)!], [10, 0, 2, 1]);
  assert.ok(offer!.reply.length >= 300, 'BOOTP minimum size');
  const ack = answer(decodeMessage(encodeRequest(MessageType.Request, MAC, 7, [[Opt.RequestedIP, ipBytes('10.0.2.2')], [Opt.ServerId, ipBytes('10.0.2.1')]])), lease);
  assert.is(ack?.type, MessageType.Ack);
  assert.is(decodeMessage(ack!.reply).yiaddr, '10.0.2.2');
  // Renewal: the client already has the address (ciaddr).
  assert.is(answer(decodeMessage(encodeRequest(MessageType.Request, MAC, 8, [], '10.0.2.2')), lease)?.type, MessageType.Ack);
});

test('DHCP: another address → NAK; another server → no answer; RELEASE and replies → no answer', () => {
  const nak = answer(decodeMessage(encodeRequest(MessageType.Request, MAC, 1, [[Opt.RequestedIP, ipBytes('10.0.2.9')]])), lease);
  assert.is(nak?.type, MessageType.Nak);
  assert.is(decodeMessage(nak!.reply).yiaddr, '0.0.0.0');
  assert.is(answer(decodeMessage(encodeRequest(MessageType.Request, MAC, 1, [[Opt.ServerId, ipBytes('10.9.9.9')]])), lease), undefined);
  assert.is(answer(decodeMessage(encodeRequest(MessageType.Release, MAC, 1)), lease), undefined);
  const reply = answer(decodeMessage(encodeRequest(MessageType.Discover, MAC, 1)), lease)!.reply;
  assert.is(answer(decodeMessage(reply), lease), undefined, 'a BOOTREPLY is never answered');
});

const encodings: Array<[string, () => Buffer, number[]]> = [
  ['search domains (RFC 1035 labels)', () => encodeSearchDomains(['example.com']), [7, 101, 120, 97, 109, 112, 108, 101, 3, 99, 111, 109, 0]],
  ['classless routes, default last (RFC 3442)', () => encodeClasslessRoutes([{ dst: '0.0.0.0/0', gateway: '10.0.0.1' }, { dst: '192.168.1.0/24', gateway: '10.0.0.2' }]), [24, 192, 168, 1, 10, 0, 0, 2, 0, 10, 0, 0, 1]],
  ['a /9 route carries two octets', () => encodeClasslessRoutes([{ dst: '10.128.0.0/9', gateway: '10.0.0.1' }]), [9, 10, 128, 10, 0, 0, 1]],
];
for (const [name, fn, bytes] of encodings) test(`DHCP encoding: ${name}`, () => assert.equal([...fn()], bytes));

test('DHCP: dhcpOptions (TFTP 66, boot file 67, NTP 42, private 224–254 only)', () => {
  const opts = new Map(leaseOptions({ ...lease, tftpServerName: 'tftp.local', bootFileName: 'pxelinux.0', ntpServers: ['10.0.0.5', '10.0.0.6'], privateOptions: [{ option: 240, value: 'extra' }, { option: 100, value: 'ignored' }] }));
  assert.is(opts.get(Opt.TFTPServer)?.toString(), 'tftp.local');
  assert.is(opts.get(Opt.BootFile)?.toString(), 'pxelinux.0');
  assert.equal([...opts.get(Opt.NTP)!], [10, 0, 0, 5, 10, 0, 0, 6]);
  assert.is(opts.get(240)?.toString(), 'extra');
  assert.is(opts.get(100), undefined);
});

const dhcpErrors: Array<[string, () => unknown, RegExp]> = [
  ['an NTP server that is not IPv4', () => leaseOptions({ ...lease, ntpServers: ['ntp.example.com'] }), /dhcpOptions\.ntpServers\[0\]: "ntp\.example\.com" is not an IPv4 address/],
  ['an invalid search domain', () => encodeSearchDomains(['bad domain']), /search domain "bad domain" is not valid/],
  ['search domains over 255 bytes', () => encodeSearchDomains(Array.from({ length: 30 }, (_, i) => `domain${i}.example`)), /at most 255/],
  ['a short message', () => decodeMessage(Buffer.alloc(100)), /too short/],
  ['no magic cookie', () => decodeMessage(Buffer.alloc(300)), /magic cookie/],
];
for (const [name, fn, re] of dhcpErrors) test(`DHCP error: ${name}`, () => assert.throws(fn, re));

test('DHCP lease for a vif cache: dhcpOptions and hostname from the VMI', () => {
  const v = vmiWith({ masquerade: {}, dhcpOptions: { bootFileName: 'boot.ipxe' } });
  v.spec.hostname = 'myhost';
  const cache: VifCache = { iface: 'default', binding: 'masquerade', podInterface: 'eth0', tap: 'tap0', bridge: 'k6t-eth0', mtu: 1400, podIPs: ['10.244.0.7'], dhcp4: { address: '10.0.2.2', prefix: 24, server: '10.0.2.1', router: '10.0.2.1', routes: [] } };
  const l = leaseFor(v, cache, 0, { nameservers: ['1.1.1.1'], search: [] })!;
  assert.equal([l.address, l.mtu, l.hostname, l.bootFileName, l.dns], ['10.0.2.2', 1400, 'myhost', 'boot.ipxe', ['1.1.1.1']]);
  assert.is(leaseFor(v, { ...cache, dhcp4: undefined } as unknown as VifCache, 0, { nameservers: [], search: [] }), undefined);
});

// ---- passt, resolv.conf, addresses, vif cache --------------------------------------------------
const passtCases: Array<[string, Partial<Interface>, number, string[]]> = [
  ['no ports: all (limit permitting)', {}, 1 << 20, ['--tcp-ports', 'all', '--udp-ports', 'all']],
  ['no ports under a low fd limit: the ports that fit', {}, 20000, ['--tcp-ports', '1-9488', '--udp-ports', '1-9488']],
  ['TCP ports only', { ports: [{ port: 80 }, { port: 443, protocol: 'TCP' }] }, 1 << 20, ['--tcp-ports', '80,443', '--udp-ports', 'none']],
  ['UDP only', { ports: [{ port: 53, protocol: 'UDP' }] }, 1 << 20, ['--tcp-ports', 'none', '--udp-ports', '53']],
];
for (const [name, iface, limit, tail] of passtCases) {
  test(`passt args: ${name}`, () => {
    assert.equal(passtArgs({ name: 'default', passtBinding: {}, ...iface }, '/s/p.sock', limit, 'f'), ['--foreground', '--quiet', '--socket', '/s/p.sock', ...tail]);
  });
}
const guestCases: Array<[string, PasstGuestAddresses | undefined, string[]]> = [
  ['first run: the pod\'s own addresses (none given)', undefined, []],
  ['migration target, dual stack: the first pod\'s addresses, netmask and gateway', { ipv4: '10.244.0.7/24', gateway4: '10.244.0.1', ipv6: 'fd00:10:244::7' }, ['--address', '10.244.0.7', '--netmask', '24', '--gateway', '10.244.0.1', '--address', 'fd00:10:244::7']],
  ['IPv4 only, no gateway', { ipv4: '10.0.0.9/16' }, ['--address', '10.0.0.9', '--netmask', '16']],
  ['IPv6 only', { ipv6: 'fd00::9' }, ['--address', 'fd00::9']],
];
for (const [name, guest, addressArgs] of guestCases) {
  test(`passt args: ${name}`, () => {
    assert.equal(passtAddressArgs(guest), addressArgs);
    assert.equal(passtArgs({ name: 'default', passtBinding: {}, ports: [{ port: 80 }] }, '/s/p.sock', 1 << 20, 'f', guest), ['--foreground', '--quiet', '--socket', '/s/p.sock', ...addressArgs, '--tcp-ports', '80', '--udp-ports', 'none']);
  });
}
test('passt args: SCTP is refused naming the field', () => {
  assert.throws(() => passtArgs({ name: 'd', passtBinding: {}, ports: [{ port: 9, protocol: 'SCTP' }] }, '/s', 1 << 20, 'spec.domain.devices.interfaces[0]'), /interfaces\[0\]\.ports\[0\]\.protocol: SCTP is not supported by passt/);
  assert.is(allPortsSpec(200_000), 'all');
});

test('resolv.conf: IPv4 nameservers (IPv6 ones apart, for DHCPv6) and the last search line', () => {
  assert.equal(parseResolvConf('# c\nnameserver 10.96.0.10\nnameserver fd00::10\nsearch a b\nsearch default.svc.cluster.local svc.cluster.local\noptions ndots:5\n'), { nameservers: ['10.96.0.10'], nameservers6: ['fd00::10'], search: ['default.svc.cluster.local', 'svc.cluster.local'] });
  assert.equal(parseResolvConf(''), { nameservers: [], search: [] });
});

test('addresses: CIDRs, masks, IPv6 offsets, free pod addresses, pod network names', () => {
  assert.equal(parseCidr4('10.0.2.9/24'), { network: 167772672, prefix: 24 });
  assert.is(intToIpv4(parseCidr4('10.0.2.9/24').network), '10.0.2.0');
  assert.is(prefixToMask(20), '255.255.240.0');
  assert.throws(() => parseCidr4('10.0.2.0/33', 'f'), /f: prefix \/33/);
  assert.equal(nthAddress6('fd10:0:2::/120', 2), { address: 'fd10:0:2::2', prefix: 120 });
  assert.throws(() => nthAddress6('fd10::/127', 1, 'v6'), /v6: .* no room/);
  assert.is(nextFreeAddress('10.244.0.0/24', new Set(['10.244.0.2', '10.244.0.3'])), '10.244.0.4');
  assert.is(nextFreeAddress('10.244.0.0/30', new Set(['10.244.0.2'])), undefined);
  // A pod's IPv6 has its IPv4's host number (one lease, both families).
  const six: Array<[string, string, string, string]> = [
    ['fd00:10:244::/64', '10.244.0.0/24', '10.244.0.2', 'fd00:10:244::2'],
    ['fd00:10:244::/64', '10.244.0.0/24', '10.244.0.254', 'fd00:10:244::fe'],
    ['fd00:1::/64', '10.245.7.0/24', '10.245.7.17', 'fd00:1::11'],
    ['fd00:1::/120', '10.0.0.0/16', '10.0.1.3', 'fd00:1::103'],
  ];
  for (const [s6, s4, ip4, want] of six) assert.is(podAddress6(s6, s4, ip4).address, want, `${ip4} in ${s6}`);
  assert.throws(() => podAddress6('fd00::ffff:ff00/120', '10.0.0.0/16', '10.0.1.3'), /subnet6: .* overflows/);
  assert.equal(podNetworkNames('0ce465e6-88ca-4b2f-9d1a-aaaaaaaaaaaa'), { netnsName: 'qvirt-0ce465e688ca', hostVeth: 'qv0ce465e688c' });
});

test('vif cache: parsed with checks that name the field', () => {
  const good = { iface: 'default', binding: 'bridge', podInterface: 'eth0', tap: 'tap0', bridge: 'k6t-eth0', mtu: 1500, mac: 'aa:bb:cc:dd:ee:ff', podIPs: ['10.244.0.3'], dhcp4: { address: '10.244.0.3', prefix: 24, server: '169.254.75.10', router: '10.244.0.1', routes: [{ dst: '0.0.0.0/0', gateway: '10.244.0.1' }] } };
  assert.equal(parseVifCache(JSON.stringify(good), 'f'), good);
  const bad: Array<[unknown, RegExp]> = [
    ['{', /f: not JSON/], [{ ...good, binding: 'sriov' }, /field "binding" must be masquerade or bridge/], [{ ...good, mtu: 9 }, /field "mtu"/],
    [{ ...good, tap: '' }, /field "tap"/], [{ ...good, dhcp4: { ...good.dhcp4, prefix: 40 } }, /dhcp4\.prefix/],
  ];
  for (const [input, re] of bad) assert.throws(() => parseVifCache(typeof input === 'string' ? input : JSON.stringify(input), 'f'), (e: Error) => e instanceof VifCacheError && re.test(e.message));
});

// ---- converter and status ----------------------------------------------------------------------
test('converter: a prepared tap or passt backend, else user-mode', () => {
  const tap = interfacePlan(vmiWith({ masquerade: {} }), 0, ctx({}, { podNetwork: { default: { kind: 'tap', tap: 'tap0', mtu: 1450, mac: 'b6:a4:97:6f:73:89' } } }));
  assert.equal(tap.netdev, { type: 'tap', id: 'hostua-default', ifname: 'tap0', script: 'no', downscript: 'no' });
  assert.is(tap.props.mac, 'b6:a4:97:6f:73:89');
  assert.is(tap.props['host_mtu'], 1450);
  assert.equal(tap.warnings, []);
  const passt = interfacePlan(vmiWith({ passtBinding: {} }), 0, ctx({}, { podNetwork: { default: { kind: 'passt', socket: '/p/0.sock' } } }));
  assert.equal(passt.netdev, { type: 'stream', id: 'hostua-default', server: false, addr: { type: 'unix', path: '/p/0.sock' } });
  // A tap prepared for the name but a passt interface (or nothing prepared): user-mode.
  assert.is(interfacePlan(vmiWith({ passtBinding: {} }), 0, ctx({}, { podNetwork: { default: { kind: 'tap', tap: 'tap0', mtu: 1500, mac: 'aa:aa:aa:aa:aa:aa' } } })).netdev['type'], 'user');
  assert.is(interfacePlan(vmiWith({ bridge: {} }), 0, ctx()).netdev['type'], 'user');
});

test('status: a bound interface reports the pod IPs and no user-mode marker', () => {
  const v = { ...vmiWith({ masquerade: {} }), status: { phase: 'Running' } } as VirtualMachineInstance;
  const domain = runningDomain([{ Mac: '52:54:00:01:02:03', Ip: '10.0.2.2', IPs: ['10.0.2.2'], InterfaceName: 'eth0' }]);
  const s = computeStatus({ vmi: v, domain, phase: 'Running', podNetwork: new Map([['default', { binding: 'masquerade', podIPs: ['10.244.0.7'] }]]), now: new Date().toISOString() });
  assert.equal(s.interfaces, [{ mac: '52:54:00:01:02:03', infoSource: 'domain, guest-agent', name: 'default', ipAddress: '10.244.0.7', ipAddresses: ['10.244.0.7'], interfaceName: 'eth0' }]);
  // Before the launcher reports NICs: the bridge binding's MAC (the pod's) from the node agent.
  const b = computeStatus({ vmi: { ...vmiWith({ bridge: {} }), status: { phase: 'Running' } } as VirtualMachineInstance, domain: runningDomain(null), phase: 'Running', podNetwork: new Map([['default', { binding: 'bridge', podIPs: ['10.244.0.8'], mac: 'b6:a4:97:6f:73:89' }]]), now: new Date().toISOString() });
  assert.equal(b.interfaces, [{ name: 'default', infoSource: 'domain', mac: 'b6:a4:97:6f:73:89', ipAddress: '10.244.0.8', ipAddresses: ['10.244.0.8'] }]);
});

test('status: a passt VMI after a migration reports the target pod\'s IPs (not the address the guest kept) and stays LiveMigratable', () => {
  const v = { ...vmiWith({ passtBinding: {} }), status: { phase: 'Running', migrationState: { migrationUid: 'm1', completed: true } } } as VirtualMachineInstance;
  // The guest agent sees the first pod's address in the guest; KubeVirt reports the pod's for passt.
  const domain = runningDomain([{ Mac: '52:54:00:01:02:03', Ip: '10.244.0.7', IPs: ['10.244.0.7', 'fd00:10:244::7'], InterfaceName: 'eth0' }]);
  const s = computeStatus({ vmi: v, domain, phase: 'Running', podNetwork: new Map([['default', { binding: 'passt', podIPs: ['10.244.1.9', 'fd00:10:244:1::9'], passtGuest: { ipv4: '10.244.1.9/24' } }]]), now: new Date().toISOString() });
  assert.equal(s.interfaces, [{ mac: '52:54:00:01:02:03', infoSource: 'domain, guest-agent', name: 'default', ipAddress: '10.244.1.9', ipAddresses: ['10.244.1.9', 'fd00:10:244:1::9'], interfaceName: 'eth0' }]);
  assert.is(s.conditions?.find((c) => c.type === 'LiveMigratable')?.status, 'True');
});

test('cgroupOfPod: a process of the launcher pod, by the pod UID in its cgroup (cgroupfs and systemd drivers)', () => {
  const uid = '69fcac6d-1f52-4228-8e84-d60b410cd01b';
  const table: Array<[string, string, boolean]> = [
    ['cgroupfs v1', `9:name=systemd:/kubepods/burstable/pod${uid}/eb50a2cd\n8:pids:/kubepods/burstable/pod${uid}/eb50a2cd`, true],
    ['systemd v2', `0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${uid.replace(/-/g, '_')}.slice/cri-containerd-1.scope`, true],
    ['another pod', '0::/kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice/x', false],
    ['a host process', '0::/system.slice/containerd.service', false],
  ];
  for (const [name, cgroup, want] of table) assert.is(cgroupOfPod(cgroup, uid), want, name);
  assert.not.ok(cgroupOfPod('0::/', ''), 'no pod UID, no match');
  // The compute container's process among the pod's (the image's /usr/bin/qvirt execs the bundle).
  assert.ok(isLauncherCommand('/usr/bin/node --max-semi-space-size=1 /usr/lib/qvirt/launcher/qvirt-launcher.cjs --name e2e-vm --uid 57ec'));
  // A launcher pod started from an image before the launcher's loader was CommonJS.
  assert.ok(isLauncherCommand('/usr/bin/node --max-semi-space-size=1 /usr/lib/qvirt/launcher/qvirt-launcher.mjs --name e2e-vm --uid 57ec'));
  assert.ok(isLauncherCommand('node bin/qvirt launcher --name x'));
  assert.not.ok(isLauncherCommand('/bin/sh /usr/lib/qvirt/launcher/virt-tail.sh --logfile /var/run/kubevirt-private/x'));
  assert.not.ok(isLauncherCommand('tail -F -n +1 -s 0.2 -- /var/run/kubevirt-private/x'));
  assert.not.ok(isLauncherCommand('/var/run/kubevirt/container-disks/container-disk --copy-path /var/run/kubevirt-ephemeral-disks/container-disk-data/u/disk_0'));
});

test.run();

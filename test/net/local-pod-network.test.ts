// `qvirt local up`'s pod network choice (default where it can work, --pod-network insists,
// --no-pod-network opts out) and the pod network's outbound NAT rules, as tables; the NAT script
// is also applied in a real network namespace and read back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { choosePodNetwork, podNetworkObstacle, probePodNetwork, type PodNetworkProbe } from '../../src/local/pod-network-choice.ts';
import { renderOutboundNat } from '../../src/local/pod-runner/outbound-nat.ts';

const able: PodNetworkProbe = { root: true, tools: { ip: true, nft: true, nsenter: true } };
const user: PodNetworkProbe = { ...able, root: false };
const noNft: PodNetworkProbe = { root: true, tools: { ip: true, nft: false, nsenter: true } };

test('pod network choice: on where it can work, a one-line reason where not, --pod-network insists, --no-pod-network opts out', () => {
  const off = { require: false, optOut: false };
  const cases: Array<[string, { require: boolean; optOut: boolean }, PodNetworkProbe, boolean, RegExp | undefined]> = [
    ['default, able', off, able, true, undefined],
    ['default, not root', off, user, false, /^pod network off: not running as root .*; VMs use QEMU user-mode networking \(--no-pod-network silences this\)$/],
    ['default, no nft', off, noNft, false, /^pod network off: nft not found on the PATH;/],
    ['opted out, able', { require: false, optOut: true }, able, false, undefined],
    ['opted out, not root', { require: false, optOut: true }, user, false, undefined],
    ['required, able', { require: true, optOut: false }, able, true, undefined],
  ];
  for (const [name, flags, probe, use, message] of cases) {
    const c = choosePodNetwork(flags, probe);
    assert.is(c.use, use, name);
    const m = c.use ? undefined : c.message;
    if (message) assert.match(m ?? '', message, name); else assert.is(m, undefined, name);
    assert.not.match(m ?? '', /\n/, `${name}: one line`);
  }
  assert.throws(() => choosePodNetwork({ require: true, optOut: false }, user), /^--pod-network: not running as root/);
  assert.throws(() => choosePodNetwork({ require: true, optOut: false }, { root: true, tools: { ip: false, nft: false, nsenter: true } }), /--pod-network: ip, nft not found on the PATH/);
  assert.throws(() => choosePodNetwork({ require: true, optOut: true }, able), /--pod-network and --no-pod-network: choose one/);
  assert.is(podNetworkObstacle(able), undefined);
});

test('pod network probe: the tools on the PATH it will run them with', async () => {
  const p = await probePodNetwork({ PATH: '/nonexistent' });
  assert.equal(p.tools, { ip: false, nft: false, nsenter: false });
  const here = await probePodNetwork();
  assert.is(here.root, process.getuid?.() === 0);
});

test('outbound NAT: masquerade what leaves the host from the pod subnets, both families; nft accepts it in a real namespace', () => {
  const script = renderOutboundNat({ bridge: 'qvirt0', subnet4: '10.244.0.0/24', subnet6: 'fd00:10:244::/64' });
  assert.is(script, [
    'table inet qvirt-qvirt0 {}',
    'delete table inet qvirt-qvirt0',
    'table inet qvirt-qvirt0 {',
    '  chain postrouting {',
    '    type nat hook postrouting priority 100;',
    '    ip saddr 10.244.0.0/24 oifname != "qvirt0" counter masquerade',
    '    ip6 saddr fd00:10:244::/64 oifname != "qvirt0" counter masquerade',
    '  }',
    '}',
    '',
  ].join('\n'));
  assert.not.match(renderOutboundNat({ bridge: 'b', subnet4: '10.0.0.0/8' }), /ip6/);
  if (process.getuid?.() !== 0) return;
  const ns = `qvnat${process.pid}`;
  execFileSync('ip', ['netns', 'add', ns]);
  try {
    // Applied twice: the second run replaces the table (idempotent).
    for (let i = 0; i < 2; i++) execFileSync('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], { input: script });
    const listed = execFileSync('ip', ['netns', 'exec', ns, 'nft', 'list', 'table', 'inet', 'qvirt-qvirt0'], { encoding: 'utf8' });
    assert.is(listed.match(/masquerade/g)?.length, 2, listed);
    assert.match(listed, /ip saddr 10\.244\.0\.0\/24 oifname != "qvirt0"/);
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
  }
});

test.run();

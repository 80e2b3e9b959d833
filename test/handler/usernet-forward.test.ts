// Host forwards into a QEMU user-mode network (handler/endpoint/usernet-forward.ts): `info usernet` parsed
// (tables of QEMU 7.2's own output), and the HMP shell against a real QEMU with two user-mode
// netdevs: forwards added on a free port, found again, accepted connections seen, removed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { acceptedState, hostForwardRule, netdevOf, newHostForward, parseUsernet, UsernetForwardError, UsernetForwards, type Hmp } from '../../handler/endpoint/usernet-forward.ts';
import { QmpClient } from '../../qmp/client.ts';
import { MACHINE_NONE, spawnQemu, waitForSocket, type TestQemu } from '../qmp/qemu.ts';

const INFO = `Hub -1 (hostua-default):
  Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ
  TCP[HOST_FORWARD]   3       127.0.0.1 35243       10.0.2.15     7     0     0
  TCP[SYN_SENT]      14       127.0.0.1 35243       10.0.2.15     7     0     0
  UDP[HOST_FORWARD]   8       127.0.0.1 42039       10.0.2.15     7     0     0
  UDP[236 sec]       15        10.0.2.15 68         10.0.2.2    67     0     0
Hub -1 (hostua-second):
  Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ
  TCP[ESTABLISHED]   16       127.0.0.1 40001       10.0.2.15    22     0     0
`;

test('parseUsernet: stacks by netdev, each socket line with its state and addresses', () => {
  const s = parseUsernet(INFO);
  assert.equal(s.map((x) => [x.netdev, x.sockets.length]), [['hostua-default', 4], ['hostua-second', 1]]);
  assert.equal(s[0]!.sockets[0], { protocol: 'TCP', state: 'HOST_FORWARD', srcAddr: '127.0.0.1', srcPort: 35243, dstAddr: '10.0.2.15', dstPort: 7 });
  assert.equal(s[0]!.sockets[3], { protocol: 'UDP', state: '236 sec', srcAddr: '10.0.2.15', srcPort: 68, dstAddr: '10.0.2.2', dstPort: 67 });
  assert.equal(parseUsernet('Hub -1 (n0):\n  Protocol[State]    FD  Source Address  Port   Dest. Address  Port RecvQ SendQ\n'), [{ netdev: 'n0', sockets: [] }]);
  assert.equal(parseUsernet(''), []);
});

const netdevs: Array<[string, string | undefined, string | undefined]> = [
  ['the netdev named for the interface', 'second', 'hostua-second'],
  ['the first netdev for an interface without one', 'nosuch', 'hostua-default'],
  ['the first netdev without an interface name', undefined, 'hostua-default'],
];
for (const [name, iface, want] of netdevs) test(`netdevOf: ${name}`, () => assert.is(netdevOf(parseUsernet(INFO), iface), want));
test('netdevOf: none without a user-mode netdev', () => assert.is(netdevOf([], 'default'), undefined));

test('hostForwardRule: 127.0.0.1, a port the kernel picks, the guest port', () => {
  assert.is(hostForwardRule('tcp', 22), 'tcp:127.0.0.1:0-:22');
  assert.is(hostForwardRule('udp', 53), 'udp:127.0.0.1:0-:53');
});

test('newHostForward: the forward that was not there before, of the protocol and guest port asked for', () => {
  const before = parseUsernet(INFO);
  const after = parseUsernet(INFO.replace('  UDP[HOST_FORWARD]', '  TCP[HOST_FORWARD]   9       127.0.0.1 45000       10.0.2.15     7     0     0\n  UDP[HOST_FORWARD]'));
  assert.is(newHostForward(before, after, 'hostua-default', 'tcp', 7), 45000);
  assert.is(newHostForward(before, after, 'hostua-default', 'udp', 7), undefined, 'the UDP forward was there before');
  assert.is(newHostForward(before, after, 'hostua-default', 'tcp', 8), undefined, 'another guest port');
  assert.is(newHostForward(before, after, 'hostua-second', 'tcp', 7), undefined, 'another netdev');
});

test('acceptedState: the TCP connection slirp accepted on the forward\'s port', () => {
  const s = parseUsernet(INFO);
  assert.is(acceptedState(s, 'hostua-default', 35243), 'SYN_SENT');
  assert.is(acceptedState(s, 'hostua-second', 40001), 'ESTABLISHED');
  assert.is(acceptedState(s, 'hostua-default', 42039), undefined, 'a UDP forward accepts nothing');
  assert.is(acceptedState(s, 'hostua-default', 1), undefined);
});

// ---- the shell against a real QEMU ---------------------------------------------------------------
let q: TestQemu | undefined;
let qmp: QmpClient | undefined;
const hmp: Hmp = async (line) => String(await qmp!.execute<string>('human-monitor-command', { 'command-line': line }));

const connects = (port: number) => new Promise<boolean>((resolve) => {
  const s = connect({ host: '127.0.0.1', port });
  s.once('connect', () => { s.destroy(); resolve(true); });
  s.once('error', () => resolve(false));
});

test('UsernetForwards against QEMU: concurrent forwards get their own ports, accept connections, and go when removed', async () => {
  q = spawnQemu({ mode: 'socket', args: [...MACHINE_NONE, '-netdev', 'user,id=hostua-default', '-netdev', 'user,id=hostua-second'] });
  try {
    await waitForSocket(q);
    qmp = await QmpClient.connect(q.socketPath, { timeout: 10_000, waitForServer: true });
    const f = new UsernetForwards();
    const [a, b, u] = await Promise.all([
      f.add('ns/vm', hmp, 'second', 'tcp', 22),
      f.add('ns/vm', hmp, 'second', 'tcp', 22),
      f.add('ns/vm', hmp, undefined, 'udp', 53),
    ]);
    assert.is(a.netdev, 'hostua-second');
    assert.is(u.netdev, 'hostua-default');
    assert.ok(a.hostPort > 0 && b.hostPort > 0 && a.hostPort !== b.hostPort, `two forwards, two ports: ${a.hostPort} ${b.hostPort}`);
    const listed = parseUsernet(await hmp('info usernet'));
    assert.ok(listed.find((s) => s.netdev === 'hostua-second')!.sockets.some((s) => s.state === 'HOST_FORWARD' && s.srcPort === b.hostPort && s.dstPort === 22));
    assert.ok(listed.find((s) => s.netdev === 'hostua-default')!.sockets.some((s) => s.protocol === 'UDP' && s.srcPort === u.hostPort && s.dstPort === 53));
    // A connection to the forward is accepted by slirp and listed; with no guest it stays in SYN_SENT.
    const sock = connect({ host: '127.0.0.1', port: a.hostPort });
    await new Promise<void>((r, j) => { sock.once('connect', () => r()); sock.once('error', j); });
    let state: string | undefined;
    for (let i = 0; i < 200 && !state; i++) {
      state = acceptedState(parseUsernet(await hmp('info usernet')), a.netdev, a.hostPort);
      if (!state) await new Promise((r) => setTimeout(r, 10));
    }
    assert.is(state, 'SYN_SENT');
    // Removing the forward leaves the accepted connection and refuses new ones.
    await UsernetForwards.remove(hmp, a);
    assert.is(await connects(a.hostPort), false, 'the removed forward no longer listens');
    assert.is(acceptedState(parseUsernet(await hmp('info usernet')), a.netdev, a.hostPort), 'SYN_SENT', 'the accepted connection stays');
    sock.destroy();
    assert.is(await connects(b.hostPort), true, 'the other forward still listens');
    await UsernetForwards.remove(hmp, b);
    await UsernetForwards.remove(hmp, u);
    assert.not.ok(parseUsernet(await hmp('info usernet')).some((s) => s.sockets.some((x) => x.state === 'HOST_FORWARD')), 'no forward left');
    // Removing one again names the rule.
    const again = await UsernetForwards.remove(hmp, b).catch((e: unknown) => e);
    assert.instance(again, UsernetForwardError);
    assert.match((again as Error).message, `hostfwd_remove hostua-second tcp:127.0.0.1:${b.hostPort}: host forwarding rule for tcp:127.0.0.1:${b.hostPort} not found`);
  } finally {
    await qmp?.close().catch(() => undefined);
    await q.stop();
  }
});

test('UsernetForwards: a QEMU without a user-mode network is named as such', async () => {
  q = spawnQemu({ mode: 'socket' });
  try {
    await waitForSocket(q);
    qmp = await QmpClient.connect(q.socketPath, { timeout: 10_000, waitForServer: true });
    const err = await new UsernetForwards().add('ns/vm', hmp, 'default', 'tcp', 22).catch((e: unknown) => e);
    assert.instance(err, UsernetForwardError);
    assert.match((err as Error).message, 'no user-mode network');
  } finally {
    await qmp?.close().catch(() => undefined);
    await q.stop();
  }
});

test.run();

// Port-forward end to end in the local mode without a pod network, where VMs have QEMU user-mode
// networking: the CLI's way to the node agent's endpoint (Node annotations, the user's credentials),
// `portforward/7` and `portforward/7/udp` to echo servers in the real test guest, through a QEMU
// host forward that lives only as long as it must.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { tcpEchoUserData, udpEchoUserData, UDP_ECHO_READY } from '../guest/udp-echo.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { UserError } from '../../src/kube/user-error.ts';
import type { HandlerEndpoint } from '../../src/kube/handler-endpoint.ts';
import { parseUsernet } from '../../handler/endpoint/usernet-forward.ts';
import { tempDir } from '../lib/tmp.ts';
import { waitFor } from '../lib/within.ts';
import { closed, endpointOf, openUntil, tcpEcho, udpEcho } from '../lib/port-forward.ts';
import { consoleLog, getVmi, guestVmi } from '../net/lib.ts';

const t = tempDir('qpfu');
let local: LocalMode;
let ep: HandlerEndpoint;
const podsDir = join(t.path, 'data', 'pods');

test.before(async () => {
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, podNetwork: false, log: componentLogger('test', { level: (process.env.QVIRT_TEST_LOG ?? 'error') as 'error' }) });
});

test.after(async () => {
  try { await local?.stop(); } finally { t.cleanup(); }
});

/** The host forwards QEMU has on the VMI's user-mode network, through the endpoint's QMP passthrough. */
async function hostForwards(): Promise<string[]> {
  const r = await ep.call<{ return?: unknown }>('POST', 'qmp', { execute: 'human-monitor-command', arguments: { 'command-line': 'info usernet' }, unsafe: true });
  return parseUsernet(String(r.return)).flatMap((s) => s.sockets.filter((x) => x.state === 'HOST_FORWARD').map((x) => `${x.protocol} ${x.srcAddr}:${x.srcPort} → ${x.dstPort}`));
}

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  assert.instance(err, UserError, `expected an error matching ${re}`);
  assert.match((err as Error).message, re);
}

test('user-mode networking: TCP and UDP echo through portforward; the host forward goes once the connection is made', async () => {
  await local.client.create(Resources.virtualMachineInstances, guestVmi('pfu', { masquerade: {} }, [tcpEchoUserData(7), udpEchoUserData(7)].join('\n')));
  const vmi = await waitFor('VMI pfu Running with its interface in status', async () => {
    const v = await getVmi(local, 'pfu');
    return v?.status?.phase === 'Running' && v.status.interfaces?.length ? v : undefined;
  }, 240_000, 500);
  assert.match(vmi.status!.interfaces![0]!.infoSource ?? '', 'user-mode-network', 'no pod network: QEMU user-mode networking');
  const uid = vmi.metadata!.uid!;
  await waitFor('the guest\'s DHCP lease and its UDP echo server', () => { const c = consoleLog(podsDir, uid); return /QVIRT-NIC-IP name=eth0/.test(c) && c.includes(UDP_ECHO_READY); }, 240_000, 500);
  ep = await endpointOf(local, 'pfu');

  // TCP: bytes both ways, more than one read's worth.
  const tcp = await openUntil(ep, 'portforward/7');
  assert.equal(await hostForwards(), [], 'the TCP forward was removed once the connection was established');
  assert.is((await tcpEcho(tcp, Buffer.from('hello through slirp\n'))).toString(), 'hello through slirp\n');
  const big = randomBytes(256 * 1024);
  assert.ok((await tcpEcho(tcp, big, 120_000)).equals(big), '256 KiB echoed unchanged');
  // The client ends its side: the guest's cat ends, the guest closes, the stream closes.
  tcp.end();
  await closed(tcp, 30_000, 'the TCP stream to close after the guest closed its side');
  // A second connection at the same time as a third: each its own forward, each its own guest connection.
  const [a, b] = await Promise.all([ep.stream('portforward/7/tcp'), ep.stream('portforward/7/tcp')]);
  assert.is((await tcpEcho(a, Buffer.from('from a'))).toString(), 'from a');
  assert.is((await tcpEcho(b, Buffer.from('from b'))).toString(), 'from b');
  a.destroy();
  b.destroy();

  // UDP: framed datagrams, each answered by one.
  const udp = await ep.stream('portforward/7/udp');
  const forwards = await hostForwards();
  assert.is(forwards.length, 1, `one UDP forward while the session lives: ${forwards.join(', ')}`);
  assert.match(forwards[0]!, /^UDP 127\.0\.0\.1:\d+ → 7$/);
  const sent = [Buffer.from('one'), Buffer.from('two'), randomBytes(1200)];
  const back = await udpEcho(udp, sent);
  for (const d of sent) assert.ok(back.some((x) => x.equals(d)), `the ${d.length}-byte datagram came back`);
  for (const x of back) assert.ok(sent.some((d) => d.equals(x)), 'nothing but echoes came back');
  udp.destroy();
  await waitFor('the UDP forward removed after the session', async () => (await hostForwards()).length === 0, 30_000, 250);

  // A port nothing listens on: the guest refuses, an HTTP error says so, no forward stays.
  await rejects(ep.stream('portforward/8'), /portforward\/8 of VirtualMachineInstance "pfu" in namespace "default" failed: tcp port 8 of VMI default\/pfu: the guest refused the connection/);
  assert.equal(await hostForwards(), []);
  // Bad parameters are named.
  await rejects(ep.stream('portforward/70000'), /port "70000" is not a port number \(1\.\.65535\)/);
  await rejects(ep.stream('portforward/7/sctp' as 'portforward/7/tcp'), /protocol "sctp" is not tcp or udp/);
  // A paused VMI refuses, as KubeVirt's does.
  await ep.call('PUT', 'pause');
  await waitFor('the Paused condition', async () => (await getVmi(local, 'pfu'))?.status?.conditions?.some((c) => c.type === 'Paused' && c.status === 'True'), 60_000, 250);
  await rejects(ep.stream('portforward/7'), /VMI default\/pfu is paused/);
  await ep.call('PUT', 'unpause');
  await waitFor('the Paused condition gone', async () => !(await getVmi(local, 'pfu'))?.status?.conditions?.some((c) => c.type === 'Paused'), 60_000, 250);
  const again = await openUntil(ep, 'portforward/7', 60_000);
  assert.is((await tcpEcho(again, Buffer.from('after unpause'))).toString(), 'after unpause');
  again.destroy();
});

test.run();

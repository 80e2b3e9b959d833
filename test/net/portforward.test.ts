// Port-forward end to end in the local mode with a pod network (root): the node agent's endpoint
// connects to status.interfaces[0].ipAddress — the pod IP — as KubeVirt's virt-api does, and the
// binding delivers it to the guest: masquerade (TCP and UDP through its DNAT), bridge (the guest
// holds the pod IP). Echo servers in the real test guest answer.
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
import { tempDir } from '../lib/tmp.ts';
import { closed, endpointOf, openUntil, tcpEcho, udpEcho } from '../lib/port-forward.ts';
import { consoleLog, getVmi, guestVmi, launcherPod, waitFor } from './lib.ts';

const t = tempDir('qpfn');
const suffix = String(process.pid % 10000);
const octet = 100 + (process.pid % 100);
let local: LocalMode;
const podsDir = join(t.path, 'data', 'pods');

test.before(async () => {
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  local = await startLocalMode({
    dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store,
    podNetwork: { bridge: `qvf${suffix}`, subnet: `10.252.${octet}.0/24`, stateDir: join(t.path, 'cni') },
    log: componentLogger('test', { level: (process.env.QVIRT_TEST_LOG ?? 'error') as 'error' }),
  });
});

test.after(async () => {
  try { await local?.stop(); } finally { t.cleanup(); }
});

/** Running, its pod IP in status.interfaces[0], the guest's lease and (when asked) its UDP echo up. */
async function ready(name: string, udp: boolean) {
  const vmi = await waitFor(`${name} Running with its pod IP in status`, async () => {
    const v = await getVmi(local, name);
    return v?.status?.phase === 'Running' && v.status.interfaces?.[0]?.ipAddress ? v : undefined;
  }, 240_000, 500);
  const pod = await launcherPod(local, vmi.metadata!.uid!);
  assert.is(vmi.status!.interfaces![0]!.ipAddress, pod?.status?.podIP, 'status.interfaces[0].ipAddress is the pod IP');
  await waitFor(`${name}'s DHCP lease${udp ? ' and UDP echo server' : ''}`, () => { const c = consoleLog(podsDir, vmi.metadata!.uid!); return /QVIRT-NIC-IP name=eth0/.test(c) && (!udp || c.includes(UDP_ECHO_READY)) ? true : undefined; }, 240_000, 500);
  return vmi;
}

test('masquerade: TCP and UDP through the pod IP; bridge: TCP to the guest holding the pod IP', async () => {
  await local.client.create(Resources.virtualMachineInstances, guestVmi('pfm', { masquerade: {} }, [tcpEchoUserData(7), udpEchoUserData(7)].join('\n')));
  await local.client.create(Resources.virtualMachineInstances, guestVmi('pfb', { bridge: {} }, tcpEchoUserData(2222)));
  await ready('pfm', true);
  const masq = await endpointOf(local, 'pfm');
  const tcp = await openUntil(masq, 'portforward/7');
  assert.is((await tcpEcho(tcp, Buffer.from('hello through masquerade\n'))).toString(), 'hello through masquerade\n');
  const big = randomBytes(256 * 1024);
  assert.ok((await tcpEcho(tcp, big, 120_000)).equals(big), '256 KiB echoed unchanged');
  tcp.end();
  await closed(tcp, 30_000, 'the TCP stream to close after the guest closed its side');
  const udp = await masq.stream('portforward/7/udp');
  const sent = [Buffer.from('one'), Buffer.alloc(0), randomBytes(1400)];
  const back = await udpEcho(udp, sent);
  for (const d of sent) assert.ok(back.some((x) => x.equals(d)), `the ${d.length}-byte datagram came back`);
  udp.destroy();
  // Nothing listens on port 8 of the guest: refused before the upgrade, with the address dialled.
  const err = await masq.stream('portforward/8').then(() => undefined, (e: unknown) => e);
  assert.instance(err, UserError);
  assert.match((err as Error).message, /tcp port 8 of VMI default\/pfm: cannot connect to 10\.252\.\d+\.\d+:8: ECONNREFUSED/);

  await ready('pfb', false);
  const brg = await endpointOf(local, 'pfb');
  const b = await openUntil(brg, 'portforward/2222/tcp');
  assert.is((await tcpEcho(b, Buffer.from('hello through the bridge'))).toString(), 'hello through the bridge');
  b.destroy();
});

test.run();

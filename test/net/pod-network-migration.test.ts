// Live migration of a masquerade VM on the local mode's pod network (two nodes, root): the guest
// keeps its addresses (10.0.2.2 and fd10:0:2::2, no new lease, no reboot) and answers through the
// target pod's new IPv4 and IPv6 once the migration succeeded; the source launcher's IPv6 router
// side ends with it, and the completed source pod's network is released.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { localNodeDirs } from '../../src/local/local-node.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import type { VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { alive, getVmi, guestVmi, launcherPod, podNetnsName, raSenders, sh, tcpRead, tcpServer, waitFor } from './lib.ts';

const t = tempDir('qnetm');
const suffix = String(process.pid % 10000);
const bridge = `qvm${suffix}`;
const octet = 100 + ((process.pid + 37) % 100);
const subnet = `10.247.${octet}.0/24`;
const subnet6 = `fd00:247:${octet.toString(16)}::/64`;
const cniDir = join(t.path, 'cni');
const dataDir = join(t.path, 'data');
let local: LocalMode;
let stopped = false;
/** Router advertisement senders seen in the source and target pods (they must end with them). */
const senders: number[] = [];

test.before(async () => {
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  local = await startLocalMode({ dataDir, port: 0, nodes: 2, emulation: true, imageStore: store, podNetwork: { bridge, subnet, subnet6, stateDir: cniDir }, log: componentLogger('test', { level: (process.env.QVIRT_TEST_LOG ?? 'error') as 'error' }) });
});

test.after(async () => {
  if (!stopped) await local?.stop();
  t.cleanup();
});

/** Every serial log of the VMI, node by node (the source pod's, then the target's). */
function serial(vmiUid: string): string[] {
  const out: string[] = [];
  local.nodeNames.forEach((name, i) => {
    const { podsDir } = localNodeDirs(dataDir, i, name);
    for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
      const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', vmiUid, 'virt-serial0-log');
      if (existsSync(f)) out.push(readFileSync(f, 'utf8'));
    }
  });
  return out;
}

const podIPsOf = (p: Awaited<ReturnType<typeof launcherPod>>) => (p?.status?.podIPs ?? []).map((x) => x.ip);

test('a masquerade VM migrates to the other node, keeps 10.0.2.2 and fd10:0:2::2, and answers on the new pod IPs', async () => {
  await local.client.create(Resources.virtualMachineInstances, guestVmi('roam', { masquerade: {}, ports: [{ port: 8080 }] }, tcpServer(8080, 'hello-from-roam')));
  const vmi = await waitFor('roam Running', async () => { const v = await getVmi(local, 'roam'); return v?.status?.phase === 'Running' ? v : undefined; });
  const uid = vmi.metadata!.uid!;
  const from = vmi.status!.nodeName!;
  const src = await waitFor('source pod IPs', async () => { const p = await launcherPod(local, uid); return podIPsOf(p).length === 2 ? p : undefined; });
  const [src4, src6] = podIPsOf(src) as [string, string];
  const console0 = () => serial(uid).join('');
  await waitFor('DHCP leases in the guest', () => (/QVIRT-NIC-IP name=eth0 ip=10\.0\.2\.2\/24/.test(console0()) && /QVIRT-NIC-IP6 name=eth0 ip=fd10:0:2::2 router=fe80::ff:fe00:0/.test(console0())) || undefined);
  assert.is(await waitFor('TCP over the source pod IPv4', async () => (await tcpRead(src4, 8080))?.trim() || undefined, 120_000, 1000), 'hello-from-roam');
  assert.is(await waitFor('TCP over the source pod IPv6', async () => (await tcpRead(src6, 8080))?.trim() || undefined, 120_000, 1000), 'hello-from-roam');
  const srcSenders = raSenders(podNetnsName(src.metadata!.uid!));
  assert.is(srcSenders.length, 1, 'the source launcher advertises the router');
  senders.push(...srcSenders);

  await local.client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'roam-mig', namespace: 'default' }, spec: { vmiName: 'roam' } } as VirtualMachineInstanceMigration);
  const done = await waitFor('migration final', async () => {
    const m = await local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'roam-mig').catch(() => undefined);
    return m?.status?.phase === 'Succeeded' || m?.status?.phase === 'Failed' ? m : undefined;
  }, 300_000, 500);
  assert.is(done.status?.phase, 'Succeeded', JSON.stringify(done.status));
  const after = await getVmi(local, 'roam');
  assert.is.not(after?.status?.nodeName, from, 'the VMI moved');
  const targetPodName = Object.keys(after?.status?.activePods ?? {}).find((k) => after?.status?.activePods?.[k] === after?.status?.nodeName);
  const dst = await waitFor('target pod IPs', async () => {
    const pods = await local.client.list<{ metadata?: { uid?: string }; spec?: { nodeName?: string }; status?: { podIPs?: Array<{ ip: string }> } }>(Resources.pods, { namespace: 'default', labelSelector: `kubevirt.io/created-by=${uid}` });
    const p = pods.items.find((x) => x.metadata?.uid === targetPodName || x.spec?.nodeName === after?.status?.nodeName);
    return (p?.status?.podIPs?.length ?? 0) === 2 ? p : undefined;
  });
  const [dst4, dst6] = (dst.status!.podIPs ?? []).map((x) => x.ip) as [string, string];
  const dstSenders = raSenders(podNetnsName(dst.metadata!.uid!));
  assert.is(dstSenders.length, 1, 'the target launcher advertises the router too');
  senders.push(...dstSenders);
  assert.is.not(dst4, src4, 'the target pod has its own IPv4');
  assert.is.not(dst6, src6, 'the target pod has its own IPv6');

  // The guest kept its addresses: it answers through the target pod's NAT on both families,
  // without having booted or taken a lease again.
  assert.is(await waitFor('TCP over the target pod IPv4', async () => (await tcpRead(dst4, 8080))?.trim() || undefined, 60_000, 500), 'hello-from-roam');
  assert.is(await waitFor('TCP over the target pod IPv6', async () => (await tcpRead(dst6, 8080))?.trim() || undefined, 60_000, 500), 'hello-from-roam');
  const logs = console0();
  assert.is(logs.match(/QVIRT-GUEST-BOOTED/g)?.length, 1, 'no reboot');
  assert.is(logs.match(/QVIRT-NIC-IP name=/g)?.length, 1, 'no new DHCPv4 lease');
  assert.is(logs.match(/QVIRT-NIC-IP6 name=/g)?.length, 1, 'no new DHCPv6 lease');
  const st = await waitFor('status.interfaces on the target', async () => {
    const v = await getVmi(local, 'roam');
    const i = v?.status?.interfaces?.[0];
    return i?.ipAddresses?.length === 2 && i.ipAddresses[0] === dst4 ? i : undefined;
  }, 60_000);
  assert.equal(st.ipAddresses, [dst4, dst6]);
  // The source launcher is done: its router advertisement sender ended with it.
  await waitFor('the source RA sender gone', () => srcSenders.every((pid) => !alive(pid)) || undefined, 60_000, 500);
  // The source pod completes, and a finished pod's network is released (kubelet's sandbox
  // teardown): its namespace and address lease go while the pod object is still there.
  await waitFor('source pod namespace gone', () => !sh('ip', ['netns', 'list']).includes(podNetnsName(src.metadata!.uid!)) || undefined, 120_000, 500).catch(async (err: Error) => {
    const p = await local.client.get<{ metadata?: { name?: string }; status?: { phase?: string; containerStatuses?: unknown; initContainerStatuses?: unknown } }>(Resources.pods, 'default', src.metadata!.name!).catch(() => undefined);
    throw new Error(`${err.message}; source pod ${p?.status?.phase}: ${JSON.stringify([p?.status?.initContainerStatuses, p?.status?.containerStatuses])}`);
  });
  assert.ok(await local.client.get(Resources.pods, 'default', src.metadata!.name!).catch(() => undefined), 'the completed source pod is still there');
  await waitFor('its address lease released', () => !readdirSync(cniDir).includes(src4) || undefined, 30_000, 250);
});

test('nothing is left after the VMI is deleted and the local mode stops', async () => {
  await local.client.delete(Resources.virtualMachineInstances, 'default', 'roam').catch(() => undefined);
  await waitFor('launcher pods gone', async () => (await local.client.list(Resources.pods, { namespace: 'default' })).items.length === 0 || undefined, 120_000, 500);
  await waitFor('address leases released', () => readdirSync(cniDir).length === 0 || undefined, 30_000, 250);
  stopped = true;
  await local.stop();
  assert.not.match(sh('ip', ['-o', 'link']), new RegExp(`\\b${bridge}\\b`));
  assert.not.match(sh('nft', ['list', 'tables']), new RegExp(`qvirt-${bridge}\\b`));
  assert.is(senders.length, 2);
  assert.equal(senders.filter(alive), [], 'the router advertisement senders ended with their launchers');
});

test.run();

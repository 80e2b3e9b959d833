// Live migration of a passt VM on the local mode's pod network (two nodes, root): the guest keeps
// the address passt gave it in the pod it first ran in (no new lease, no reboot), and inbound TCP
// to the forwarded port of the TARGET pod's IPv4 and IPv6 reaches it at once — before the guest
// sends anything itself, so passt must already know the guest's address. Migrated twice (A → B →
// A, the third pod with an address of its own) to show that address is the first pod's, not the
// previous one's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { chmodSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { importTestGuest, TEST_GUEST_IMAGE } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { localNodeDirs } from '../../src/local/local-node.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { PASST_GUEST_ADDRESSES_ANNOTATION } from '../../src/api/constants.ts';
import { tempDir } from '../lib/tmp.ts';
import { ensureBuiltPasst, getVmi, guestVmi, sh, tcpRead, waitFor, type PodView } from './lib.ts';

const t = tempDir('qnetp');
const suffix = String(process.pid % 10000);
const bridge = `qvp${suffix}`;
const octet = 100 + ((process.pid + 71) % 100);
const subnet = `10.248.${octet}.0/24`;
const subnet6 = `fd00:248:${octet.toString(16)}::/64`;
const cniDir = join(t.path, 'cni');
const dataDir = join(t.path, 'data');
let local: LocalMode;
let stopped = false;
let vmiUid = '';
/** A TCP server on the host the guest connects out to after a migration. */
let hostServer: Server;
let hostPort = 0;
/** The host's own address beyond the pod bridge (the source of its default route). */
const hostIP = /\bsrc (\S+)/.exec(sh('ip', ['-4', '-o', 'route', 'get', '1.1.1.1']))?.[1] ?? '';

test.before(async () => {
  // passt, started by a root launcher, runs as nobody and must reach its socket directory in the pod.
  chmodSync(t.path, 0o755);
  ensureBuiltPasst();
  hostServer = createServer((s) => { s.end('hello-from-host\n'); });
  await new Promise<void>((r) => hostServer.listen(0, '0.0.0.0', r));
  hostPort = (hostServer.address() as { port: number }).port;
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  local = await startLocalMode({ dataDir, port: 0, nodes: 2, emulation: true, imageStore: store, podNetwork: { bridge, subnet, subnet6, stateDir: cniDir }, log: componentLogger('test', { level: (process.env.QVIRT_TEST_LOG ?? 'error') as 'error' }) });
});

test.after(async () => {
  if (!stopped) await local?.stop();
  hostServer?.close();
  t.cleanup();
});

/** The guest's serial logs, every launcher pod's (source and targets). */
function serial(uid: string): string {
  let out = '';
  local.nodeNames.forEach((name, i) => {
    const { podsDir } = localNodeDirs(dataDir, i, name);
    for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
      const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', uid, 'virt-serial0-log');
      if (existsSync(f)) out += readFileSync(f, 'utf8');
    }
  });
  return out;
}

type Pod = PodView & { spec?: { nodeName?: string }; status?: { phase?: string } };
const ips = (p: Pod | undefined) => (p?.status?.podIPs ?? []).map((x) => x.ip);

/** The VMI's launcher pod on `node` with both its addresses. */
async function podOn(uid: string, node: string): Promise<Pod> {
  return waitFor(`launcher pod on ${node} with two addresses`, async () => {
    const pods = await local.client.list<Pod>(Resources.pods, { namespace: 'default', labelSelector: `kubevirt.io/created-by=${uid}` });
    const p = pods.items.find((x) => x.spec?.nodeName === node && x.status?.phase === 'Running');
    return ips(p).length === 2 ? p : undefined;
  }, 120_000, 500);
}

async function migrate(name: string): Promise<VirtualMachineInstance> {
  const before = await getVmi(local, 'pm');
  await local.client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: 'default' }, spec: { vmiName: 'pm' } } as VirtualMachineInstanceMigration);
  const done = await waitFor(`${name} final`, async () => {
    const m = await local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', name).catch(() => undefined);
    return m?.status?.phase === 'Succeeded' || m?.status?.phase === 'Failed' ? m : undefined;
  }, 300_000, 500);
  assert.is(done.status?.phase, 'Succeeded', JSON.stringify(done.status));
  const after = await waitFor('the VMI on its new node', async () => { const v = await getVmi(local, 'pm'); return v?.status?.nodeName && v.status.nodeName !== before?.status?.nodeName ? v : undefined; }, 60_000);
  return after;
}

/** Waits until the pod's network namespace and address lease are released (a completed source pod). */
async function released(p: Pod): Promise<void> {
  const ns = `qvirt-${p.metadata!.uid!.replace(/-/g, '').slice(0, 12)}`;
  await waitFor(`${p.metadata?.name}'s namespace gone`, () => !sh('ip', ['netns', 'list']).includes(ns) || undefined, 120_000, 500);
  await waitFor(`${p.metadata?.name}'s address lease released`, () => !readdirSync(cniDir).includes(ips(p)[0]!) || undefined, 30_000, 250);
}

/** The guest's answer on 8081: what it got connecting out to the host's server (a fresh attempt per try). */
const probe = (host: string) => waitFor(`the guest's probe over ${host}:8081`, async () => (await tcpRead(host, 8081, 20_000))?.trim() || undefined, 60_000, 1000);
const answer = (host: string) => waitFor(`TCP answer over ${host}:8080`, async () => (await tcpRead(host, 8080, 5000))?.trim() || undefined, 60_000, 1000);

test('a passt VM migrates twice, keeps its first pod\'s address, and answers on each target pod\'s IPv4 and IPv6 at once', async () => {
  assert.ok(hostIP, 'the host has an address beyond the pod bridge');
  // 8080 answers with the address the guest's eth0 has; 8081 makes the guest connect out to the
  // host; 8082 makes it renew its DHCP lease (udhcpc, SIGUSR1) and answers with its address after.
  const userData = [
    `cat > /tmp/answer <<'EOF'`,
    '#!/bin/sh',
    `echo "hello-from-pm ip=$(ifconfig eth0 | sed -n 's/.*inet addr:\\([0-9.]*\\).*/\\1/p')"`,
    'EOF',
    `cat > /tmp/probe <<'EOF'`,
    '#!/bin/sh',
    `echo "probe=$(nc -w 5 ${hostIP} ${hostPort} </dev/null 2>/dev/null)"`,
    'EOF',
    `cat > /tmp/renew <<'EOF'`,
    '#!/bin/sh',
    '# udhcpc.sh writes resolv.conf again on every ACK: its return shows the renewal was answered.',
    'rm -f /etc/resolv.conf; kill -USR1 "$(cat /run/udhcpc.eth0.pid)"',
    'for i in 1 2 3 4 5 6 7 8 9 10; do [ -e /etc/resolv.conf ] && break; sleep 1; done',
    `echo "renewed=$([ -e /etc/resolv.conf ] && echo yes || echo no) ip=$(ifconfig eth0 | sed -n 's/.*inet addr:\\([0-9.]*\\).*/\\1/p') mask=$(ifconfig eth0 | sed -n 's/.*Mask:\\([0-9.]*\\).*/\\1/p') gw=$(route -n | awk '$1 == "0.0.0.0" { print $2 }')"`,
    'EOF',
    'chmod +x /tmp/answer /tmp/probe /tmp/renew',
    'nc -ll -p 8080 -e /tmp/answer </dev/null >/dev/null 2>&1 &',
    'nc -ll -p 8081 -e /tmp/probe </dev/null >/dev/null 2>&1 &',
    'nc -ll -p 8082 -e /tmp/renew </dev/null >/dev/null 2>&1 &',
  ].join('\n');
  await local.client.create(Resources.virtualMachineInstances, guestVmi('pm', { passtBinding: {}, ports: [{ port: 8080 }, { port: 8081 }, { port: 8082 }] }, userData));
  const vmi = await waitFor('pm Running', async () => { const v = await getVmi(local, 'pm'); return v?.status?.phase === 'Running' ? v : undefined; });
  vmiUid = vmi.metadata!.uid!;
  const nodeA = vmi.status!.nodeName!;
  const first = await podOn(vmiUid, nodeA);
  const [a4, a6] = ips(first) as [string, string];
  await waitFor('the guest\'s DHCP lease from passt', () => serial(vmiUid).includes(`QVIRT-NIC-IP name=eth0 ip=${a4}/`) || undefined);
  assert.is(await answer(a4), `hello-from-pm ip=${a4}`, 'passt hands the guest the first pod\'s address');
  assert.is(await answer(a6), `hello-from-pm ip=${a4}`);
  const running = await getVmi(local, 'pm');
  const lm = running?.status?.conditions?.find((c) => c.type === 'LiveMigratable');
  assert.is(lm?.status, 'True', 'a passt VMI is live migratable');
  // The node agent recorded what passt gave the guest in this first pod, before the VMI ran.
  const record = { ipv4: `${a4}/24`, gateway4: `10.248.${octet}.1`, ipv6: a6 };
  assert.equal(JSON.parse(running?.metadata?.annotations?.[PASST_GUEST_ADDRESSES_ANNOTATION] ?? '{}'), record);

  // A → B. The guest has sent nothing since: passt on B must already deliver to the first pod's address.
  const atB = await migrate('pm-mig-1');
  const nodeB = atB.status!.nodeName!;
  const second = await podOn(vmiUid, nodeB);
  const [b4, b6] = ips(second) as [string, string];
  assert.is.not(b4, a4, 'the target pod has its own IPv4');
  assert.is(await answer(b4), `hello-from-pm ip=${a4}`, 'inbound TCP over the target pod\'s IPv4 reaches the guest, which kept its address');
  assert.is(await answer(b6), `hello-from-pm ip=${a4}`, '... and over its IPv6');
  assert.is(await probe(b4), 'probe=hello-from-host', 'the guest connects out to the host from the target pod');
  const st = await waitFor('status.interfaces on B', async () => { const i = (await getVmi(local, 'pm'))?.status?.interfaces?.[0]; return i?.ipAddress === b4 ? i : undefined; }, 60_000);
  assert.equal(st.ipAddresses, [b4, b6], 'status reports the pod\'s addresses, as KubeVirt does for passt');

  // The first pod's address goes back to the pool; a pod takes it, so the next target gets a third one.
  await released(first);
  await local.client.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'holder', namespace: 'default' }, spec: { containers: [{ name: 'hold', image: TEST_GUEST_IMAGE, command: ['/usr/bin/container-disk'], args: ['--copy-path', '/hold/kernel-boot'] }] } });
  await waitFor('the holder pod\'s address', async () => ips(await local.client.get<Pod>(Resources.pods, 'default', 'holder')).length > 0 || undefined, 60_000);

  // B → A: a new pod with a third address; the guest still has the first one.
  const atA = await migrate('pm-mig-2');
  assert.is(atA.status?.nodeName, nodeA);
  const third = await waitFor('the third launcher pod', async () => { const p = await podOn(vmiUid, nodeA); return p.metadata?.uid !== first.metadata?.uid ? p : undefined; }, 60_000);
  const [c4, c6] = ips(third) as [string, string];
  assert.ok(c4 !== a4 && c4 !== b4, `the third pod has an address of its own (${c4})`);
  assert.is(await answer(c4), `hello-from-pm ip=${a4}`, 'the second target also delivers to the first pod\'s address');
  assert.is(await answer(c6), `hello-from-pm ip=${a4}`);
  assert.is(await probe(c4), 'probe=hello-from-host');
  // A DHCP renewal on the target hands out the same address (passt's --address), not the pod's,
  // and the same netmask (--netmask: passt would take 10/8 from the address's class).
  // (A fresh connection per attempt: a TCG guest under load may take its time; each attempt renews again.)
  const renewed = await waitFor('the guest\'s answer after a DHCP renewal', async () => (await tcpRead(c4, 8082, 30_000))?.trim() || undefined, 120_000, 1000)
    .catch((err: Error) => { throw new Error(`${err.message}; console ends with: ${serial(vmiUid).slice(-1500)}`); });
  assert.is(renewed, `renewed=yes ip=${a4} mask=255.255.255.0 gw=10.248.${octet}.1`, 'with its netmask and gateway');
  assert.is(await answer(c4), `hello-from-pm ip=${a4}`);

  const final = await getVmi(local, 'pm');
  assert.equal(JSON.parse(final?.metadata?.annotations?.[PASST_GUEST_ADDRESSES_ANNOTATION] ?? '{}'), record, 'the record stays the first pod\'s');
  const logs = serial(vmiUid);
  assert.is(logs.match(/QVIRT-GUEST-BOOTED/g)?.length, 1, 'no reboot');
  assert.is(logs.match(/QVIRT-NIC-IP name=/g)?.length, 1, 'no new DHCPv4 lease');
  await released(second);
  // The finished pods' passt ended and left no socket behind.
  for (const [p, node] of [[first, nodeA], [second, nodeB]] as const) {
    const { podsDir } = localNodeDirs(dataDir, local.nodeNames.indexOf(node), node);
    const dir = join(podsDir, p.metadata!.uid!, 'volumes/kubernetes.io~empty-dir/private', vmiUid, 'passt');
    assert.equal(existsSync(dir) ? readdirSync(dir) : [], [], `nothing left in ${dir}`);
  }
});

test('nothing is left after the VMI is deleted and the local mode stops', async () => {
  await local.client.delete(Resources.virtualMachineInstances, 'default', 'pm').catch(() => undefined);
  await local.client.delete(Resources.pods, 'default', 'holder').catch(() => undefined);
  await waitFor('pods gone', async () => (await local.client.list(Resources.pods, { namespace: 'default' })).items.length === 0 || undefined, 120_000, 500);
  await waitFor('address leases released', () => readdirSync(cniDir).length === 0 || undefined, 30_000, 250);
  assert.ok(vmiUid);
  await waitFor('no passt left', () => !new RegExp(`${vmiUid}/passt/`).test(sh('pgrep', ['-af', 'passt'])) || undefined, 30_000, 250);
  stopped = true;
  await local.stop();
  assert.not.match(sh('ip', ['-o', 'link']), new RegExp(`\\b${bridge}\\b`));
  assert.not.match(sh('nft', ['list', 'tables']), new RegExp(`qvirt-${bridge}\\b`));
});

test.run();

// Pod networking end to end in the local mode with a pod network (root): each launcher pod has its
// own network namespace on a test bridge; the node agent sets up masquerade/bridge bindings in it,
// the launcher serves DHCP or runs passt, and the guests are reachable like pods.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';
import { alive, consoleLog, ensureBuiltPasst, getVmi, guestVmi, launcherPod, podNetnsName, raSenders, sh, tcpRead, tcpServer, waitFor } from './lib.ts';

const t = tempDir('qnet');
const suffix = String(process.pid % 10000);
const bridge = `qvt${suffix}`;
const octet = 100 + (process.pid % 100);
const subnet = `10.245.${octet}.0/24`;
const subnet6 = `fd00:245:${octet.toString(16)}::/64`;
const cniDir = join(t.path, 'cni');
let local: LocalMode;
let podsDir: string;
let stopped = false;
/** The router advertisement senders seen in the masquerade pod (they must end with it). */
let senders: number[] = [];
/** The network namespaces of this test's pods. */
const ourNetns: string[] = [];
/** The passt VMI's uid (its passt's socket path names it). */
let pstUid = '';

// "Beyond the host": a namespace reached through a veth from the host, with no route back to the
// pod subnet — a guest's packets get answered there only when the host masquerades them.
const outside = `qvo${suffix}`;
const outsideIP = `10.246.${octet}.2`;

test.before(async () => {
  sh('ip', ['netns', 'add', outside]);
  sh('ip', ['link', 'add', `${outside}h`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', outside]);
  sh('ip', ['addr', 'add', `10.246.${octet}.1/24`, 'dev', `${outside}h`]);
  sh('ip', ['link', 'set', `${outside}h`, 'up']);
  sh('ip', ['-n', outside, 'addr', 'add', `${outsideIP}/24`, 'dev', 'eth0']);
  sh('ip', ['-n', outside, 'link', 'set', 'eth0', 'up']);
  // passt, started by a root launcher, runs as nobody and must reach its socket directory in the pod.
  chmodSync(t.path, 0o755);
  ensureBuiltPasst();
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  podsDir = join(t.path, 'data', 'pods');
  local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, podNetwork: { bridge, subnet, subnet6, stateDir: cniDir }, log: componentLogger('test', { level: (process.env.QVIRT_TEST_LOG ?? 'error') as 'error' }) });
});

test.after(async () => {
  if (!stopped) await local?.stop();
  sh('ip', ['netns', 'del', outside]);
  t.cleanup();
});

async function runningVmi(name: string) {
  const vmi = await waitFor(`${name} Running`, async () => { const v = await getVmi(local, name); return v?.status?.phase === 'Running' ? v : undefined; });
  const pod = await waitFor(`${name}'s pod IP`, async () => { const p = await launcherPod(local, vmi.metadata!.uid!); return p?.status?.podIP && p.status.podIP !== '127.0.0.1' ? p : undefined; });
  const podIPs = (pod.status!.podIPs ?? []).map((x) => x.ip);
  if (!ourNetns.includes(podNetnsName(pod.metadata!.uid!))) ourNetns.push(podNetnsName(pod.metadata!.uid!));
  return { vmi, uid: vmi.metadata!.uid!, podIP: pod.status!.podIP!, podIP6: podIPs.find((x) => x.includes(':')), podIPs, podUid: pod.metadata!.uid! };
}

/** Waits for `re` on a guest's console; a timeout shows the console's end. */
async function onConsole(what: string, uid: string, re: RegExp): Promise<RegExpExecArray> {
  try {
    return await waitFor(what, () => re.exec(consoleLog(podsDir, uid)) ?? undefined);
  } catch (err) {
    const text = consoleLog(podsDir, uid);
    if (process.env.QVIRT_TEST_CONSOLE_DUMP) writeFileSync(process.env.QVIRT_TEST_CONSOLE_DUMP, text);
    throw new Error(`${(err as Error).message}; console ends with: ${text.slice(-1500)}`);
  }
}

const nicIp = (log: string) => /QVIRT-NIC-IP name=eth0 ip=(\S+) router=(\S*)/.exec(log);

test('masquerade: the guest gets 10.0.2.2 by DHCP and answers on the pod IP; bridge: the guest gets the pod IP and reaches the other VM', async () => {
  await local.client.create(Resources.virtualMachineInstances, guestVmi('masq', { masquerade: {}, ports: [{ port: 8080 }] }, `${tcpServer(8080, 'hello-from-masq')}
( for i in $(seq 90); do ping -c 1 -W 2 ${outsideIP} >/dev/null 2>&1 && break; sleep 1; done; echo "QVIRT-TEST-EGRESS rc=$(ping -c 2 -W 2 ${outsideIP} >/dev/null 2>&1; echo $?)" > /dev/console ) &`));
  const a = await runningVmi('masq');
  // Dual stack, as kubelet lists it: IPv4 first, then the IPv6 of the pod subnet with the same host number.
  assert.is(a.podIPs.length, 2, `podIPs ${a.podIPs.join(',')}`);
  assert.is(a.podIPs[0], a.podIP);
  assert.is(a.podIP6, `fd00:245:${octet.toString(16)}::${Number(a.podIP.split('.')[3]).toString(16)}`);
  const lease = await waitFor('masq DHCP lease', () => nicIp(consoleLog(podsDir, a.uid)) ?? undefined);
  assert.is(lease[1], '10.0.2.2/24');
  assert.is(lease[2], '10.0.2.1');
  const answer = await waitFor('TCP answer from the masquerade guest', async () => (await tcpRead(a.podIP, 8080))?.trim() || undefined, 120_000, 1000);
  assert.is(answer, 'hello-from-masq');
  // IPv6: fd10:0:2::2 by DHCPv6, the bridge as default router by router advertisement, and the
  // guest answers on the pod's IPv6 through NAT66.
  const lease6 = await onConsole('masq DHCPv6 lease', a.uid, /QVIRT-NIC-IP6 name=eth0 ip=(\S+) router=(\S*)/);
  assert.is(lease6[1], 'fd10:0:2::2');
  assert.is(lease6[2], 'fe80::ff:fe00:0', 'the default route from the RA: the masquerade bridge (02:00:00:00:00:00)');
  const answer6 = await waitFor('TCP answer from the masquerade guest over IPv6', async () => (await tcpRead(a.podIP6!, 8080))?.trim() || undefined, 120_000, 1000);
  assert.is(answer6, 'hello-from-masq');
  senders = raSenders(podNetnsName(a.podUid));
  assert.is(senders.length, 1, 'one router advertisement sender in the masquerade pod');
  // Outbound NAT on the host (the CNI bridge plugin's ipMasq): the guest reaches a network beyond
  // the host that has no route back to the pods.
  assert.match(sh('nft', ['list', 'table', 'inet', `qvirt-${bridge}`]), new RegExp(`ip saddr 10\\.245\\.${octet}\\.0/24 oifname != "${bridge}" .*masquerade`));
  assert.is((await onConsole('masq reaching beyond the host', a.uid, /QVIRT-TEST-EGRESS rc=(\d+)/))[1], '0');
  const st = await waitFor('masq status.interfaces', async () => { const v = await getVmi(local, 'masq'); return v?.status?.interfaces?.[0]?.ipAddress ? v.status.interfaces[0] : undefined; });
  assert.is(st.ipAddress, a.podIP);
  assert.equal(st.ipAddresses, a.podIPs, 'status.interfaces[].ipAddresses: both families');
  assert.is(st.name, 'default');
  assert.not.match(st.infoSource ?? '', /user-mode/);

  // Bridge binding: the guest takes over the pod's address and reaches the masquerade VM's pod IP.
  await local.client.create(Resources.virtualMachineInstances, guestVmi('brg', { bridge: {} },
    `( for i in $(seq 90); do out=$(nc -w 3 ${a.podIP} 8080 </dev/null 2>/dev/null); [ -n "$out" ] && break; sleep 1; done; echo "QVIRT-TEST-PEER answer=$out" > /dev/console ) &`));
  const b = await runningVmi('brg');
  const bl = await waitFor('brg DHCP lease', () => nicIp(consoleLog(podsDir, b.uid)) ?? undefined);
  assert.is(bl[1], `${b.podIP}/24`);
  const peer = (await onConsole('brg reaching masq', b.uid, /QVIRT-TEST-PEER answer=(\S*)/))[1];
  assert.is(peer, 'hello-from-masq');
  const bs = await waitFor('brg status.interfaces', async () => { const v = await getVmi(local, 'brg'); return v?.status?.interfaces?.[0]?.ipAddress ? v.status.interfaces[0] : undefined; });
  assert.is(bs.ipAddress, b.podIP);
});

test('passt: unprivileged user-mode networking gives the guest the pod address, forwards the interface\'s ports from the pod IP and reaches other pods (TCP, ICMP); autoattachPodInterface=false: no NIC', async () => {
  const masq = await runningVmi('masq');
  // A server-speaks-first guest on a forwarded port (the case Debian 12's passt broke), and the
  // guest's own TCP connection out to another pod.
  await local.client.create(Resources.virtualMachineInstances, guestVmi('pst', { passtBinding: {}, ports: [{ port: 8080 }] }, [
    tcpServer(8080, 'hello-from-pst'),
    `printf '#!/bin/sh\\necho not-forwarded\\n' > /tmp/other; chmod +x /tmp/other; nc -ll -p 8081 -e /tmp/other </dev/null >/dev/null 2>&1 &`,
    `( for i in $(seq 90); do out=$(nc -w 3 ${masq.podIP} 8080 </dev/null 2>/dev/null); [ -n "$out" ] && break; sleep 1; done; echo "QVIRT-TEST-PEER answer=$out" > /dev/console ) &`,
    `( for i in $(seq 60); do ping -c 1 -W 2 ${masq.podIP} >/dev/null 2>&1 && break; sleep 1; done; echo "QVIRT-TEST-PING rc=$(ping -c 2 -W 2 ${masq.podIP} >/dev/null 2>&1; echo $?)" > /dev/console ) &`,
  ].join('\n')));
  await local.client.create(Resources.virtualMachineInstances, guestVmi('nonic', undefined, 'echo no-nic-guest'));
  const p = await runningVmi('pst');
  pstUid = p.uid;
  const lease = await waitFor('pst DHCP lease from passt', () => nicIp(consoleLog(podsDir, p.uid)) ?? undefined);
  assert.is(lease[1]!.split('/')[0], p.podIP, 'passt hands the guest the pod address');
  // ... the pod's gateway as router, its 65520-byte MTU, and the pod's DNS server (resolv.conf's
  // first; a loopback one passt cannot hand out, so then only some DNS server).
  assert.is(lease[2], `10.245.${octet}.1`, 'passt hands the pod\'s gateway');
  const full = /QVIRT-NIC-IP name=eth0 ip=\S+ router=\S* mtu=(\d+) dns=(\S*)/.exec(consoleLog(podsDir, p.uid));
  assert.ok(full, 'the lease marker carries mtu= and dns=');
  assert.is(full[1], '65520', 'passt\'s MTU, applied by the guest');
  const hostDns = /^nameserver\s+(\S+)/m.exec(readFileSync('/etc/resolv.conf', 'utf8'))?.[1] ?? '';
  if (hostDns && !hostDns.startsWith('127.') && hostDns !== '::1') assert.is(full[2], hostDns, 'passt hands the pod\'s DNS server');
  else assert.ok(full[2], 'passt hands a DNS server');
  // The host connects to the pod IP: passt forwards the listed port (only that one) to the guest.
  const answer = await waitFor('TCP answer from the passt guest on its forwarded port', async () => (await tcpRead(p.podIP, 8080))?.trim() || undefined, 120_000, 1000);
  assert.is(answer, 'hello-from-pst');
  for (let i = 0; i < 3; i++) assert.is((await tcpRead(p.podIP, 8080, 10_000))?.trim(), 'hello-from-pst', `connection ${i + 2} through passt`);
  assert.is(await tcpRead(p.podIP, 8081), undefined, 'a port not in the interface\'s ports is not forwarded');
  const peer = (await onConsole('pst reaching masq over TCP', p.uid, /QVIRT-TEST-PEER answer=(\S*)/))[1];
  assert.is(peer, 'hello-from-masq', 'the passt guest connects out to another pod');
  const ping = (await onConsole('pst pinging masq', p.uid, /QVIRT-TEST-PING rc=(\d+)/))[1];
  assert.is(ping, '0', 'the passt guest reaches another pod');
  const ps = await waitFor('pst status.interfaces', async () => { const v = await getVmi(local, 'pst'); return v?.status?.interfaces?.[0]?.ipAddress ? v.status.interfaces[0] : undefined; });
  assert.is(ps.ipAddress, p.podIP);
  // The launcher's pod asks for no CAP_NET_ADMIN (KubeVirt's passt binding needs none).
  const pod = await local.client.get<KubeObject & { spec?: { containers?: Array<{ name: string; securityContext?: { capabilities?: { add?: string[] } } }> } }>(Resources.pods, 'default', (await launcherPod(local, p.uid))!.metadata!.name!);
  const compute = pod.spec?.containers?.find((c) => c.name === 'compute');
  assert.ok(compute, 'the launcher pod has a compute container');
  assert.not.ok(compute.securityContext?.capabilities?.add?.includes('NET_ADMIN'), 'no NET_ADMIN for the launcher');
  // Nothing privileged was set up in the pod for passt: no bridge, no tap, no NAT table.
  const netns = `qvirt-${p.podUid.replace(/-/g, '').slice(0, 12)}`;
  const links = sh('ip', ['-n', netns, '-o', 'link']);
  assert.not.match(links, /k6t-|tap0/);
  assert.is(sh('ip', ['netns', 'exec', netns, 'nft', 'list', 'tables']).trim(), '');
  // passt dropped to an unprivileged user (it refuses to keep root): no capabilities at all.
  const pid = sh('pgrep', ['-f', `${p.uid}/passt/0.sock`]).trim().split('\n')[0] ?? '';
  assert.ok(pid, 'passt runs');
  const status = sh('cat', [`/proc/${pid}/status`]);
  assert.match(status, /^Uid:\s+65534\s/m);
  assert.match(status, /^CapEff:\s+0+$/m);

  const n = await runningVmi('nonic');
  const text = await waitFor('nonic guest ready', () => { const c = consoleLog(podsDir, n.uid); return c.includes('QVIRT-GUEST-READY') ? c : undefined; });
  assert.not.match(text, /QVIRT-NIC /);
  const nv = await getVmi(local, 'nonic');
  assert.is(nv?.status?.interfaces?.length ?? 0, 0);
});

test('a pod that finished has its network released at once (kubelet\'s sandbox teardown) and keeps its addresses in status', async () => {
  await local.client.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done', namespace: 'default' }, spec: { restartPolicy: 'Never', containers: [{ name: 'v', image: 'quay.io/qvirt/qvirt:v0.1.0', command: ['/usr/bin/qvirt', 'version'] }] } });
  type P = { metadata?: { uid?: string }; status?: { phase?: string; podIPs?: Array<{ ip: string }> } };
  const p = await waitFor('pod done Succeeded', async () => { const x = await local.client.get<P>(Resources.pods, 'default', 'done').catch(() => undefined); return x?.status?.phase === 'Succeeded' ? x : undefined; }, 120_000, 250);
  assert.is(p.status?.podIPs?.length, 2, 'the addresses it had stay in its status');
  await waitFor('the finished pod\'s namespace gone', () => !sh('ip', ['netns', 'list']).includes(podNetnsName(p.metadata!.uid!)) || undefined, 30_000, 250);
  await waitFor('its address lease released', () => !readdirSync(cniDir).includes(p.status!.podIPs![0]!.ip) || undefined, 30_000, 250);
  await local.client.delete(Resources.pods, 'default', 'done');
});

test('nothing is left on the host after the VMIs are deleted', async () => {
  for (const n of ['masq', 'brg', 'pst', 'nonic']) await local.client.delete(Resources.virtualMachineInstances, 'default', n).catch(() => undefined);
  await waitFor('launcher pods gone', async () => (await local.client.list(Resources.pods, { namespace: 'default' })).items.length === 0 || undefined, 120_000, 500);
  // This test's pods' namespaces (other local modes may run beside it).
  await waitFor('pod namespaces gone', () => !ourNetns.some((n) => sh('ip', ['netns', 'list']).includes(n)) || undefined, 30_000, 250);
  await waitFor('address leases released', () => readdirSync(cniDir).length === 0 || undefined, 30_000, 250);
  const links = sh('ip', ['-o', 'link']);
  for (const n of ourNetns) assert.not.ok(links.includes(`qv${n.slice('qvirt-'.length, 'qvirt-'.length + 11)}`), `no veth of ${n} left`);
  assert.ok(pstUid);
  assert.not.match(sh('pgrep', ['-af', 'passt']), new RegExp(`${pstUid}/passt/\\d\\.sock`), 'no passt left');
  assert.equal(senders.filter(alive), [], 'the router advertisement sender ended with its launcher');
});

test('stopping the local mode removes the pod bridge and its outbound NAT', async () => {
  stopped = true;
  await local.stop();
  assert.not.match(sh('ip', ['-o', 'link']), new RegExp(`\\b${bridge}\\b`));
  assert.not.match(sh('nft', ['list', 'tables']), new RegExp(`qvirt-${bridge}\\b`), 'the outbound NAT table went with the bridge');
});

test.run();

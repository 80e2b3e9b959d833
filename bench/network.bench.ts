// Pod networking throughput and DHCP timing, each beside QEMU user-mode networking measured in
// the same run (TCG guests, the test guest's busybox nc as the peer):
// - host → guest and guest → host TCP throughput through the masquerade, bridge and passt bindings,
//   in a local mode with a pod network (the host talks to the pod IP; passt forwards the
//   interface's two ports), against a plain QEMU with `-netdev user,hostfwd=...` (the host talks
//   to the forwarded port on 127.0.0.1);
// - the guest's DHCP lease after boot (QVIRT-GUEST-BOOTED → QVIRT-NIC-IP on the console), served
//   by the launcher's DHCP server (passt: passt's own), against QEMU's built-in (slirp) DHCP.
// - masquerade over IPv6 (the pod's IPv6, NAT66) against IPv4 to the same guest, and the guest's
//   DHCPv6 lease (from the NIC report to QVIRT-NIC-IP6, dhcpcd against the launcher's DHCPv6
//   server and RAs) against its DHCPv4 lease from the same NIC report.
// passt is the one scripts/passt/build.sh builds (the launcher image's; see launcher/network/passt.ts).
//
//   node bench/network.bench.ts            (root: network namespaces, bridges, nftables)
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { ensureGuest, importTestGuest } from '../src/local/guest/guest.ts';
import { consoleLog, ensureBuiltPasst, getVmi, guestVmi, launcherPod, waitFor } from '../test/net/lib.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode } from '../src/local/up.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import { median, report, saveResults } from './lib.ts';

const MIB = 1 << 20;

interface Result { up: number; down: number; lease: { fromBoot: number; fromNic: number }; cpuS: Record<string, number> }
const BYTES = 16 * MIB;
const ROUNDS = 3;
const SINK = 5001;
const SOURCE = 5002;

/** Guest servers: 5001 swallows what it gets, 5002 sends BYTES of zeros. */
const guestServers = [
  `printf '#!/bin/sh\\ncat >/dev/null\\n' > /tmp/sink; chmod +x /tmp/sink; nc -ll -p ${SINK} -e /tmp/sink </dev/null >/dev/null 2>&1 &`,
  `printf '#!/bin/sh\\ndd if=/dev/zero bs=65536 count=${BYTES / 65536} 2>/dev/null\\n' > /tmp/src; chmod +x /tmp/src; nc -ll -p ${SOURCE} -e /tmp/src </dev/null >/dev/null 2>&1 &`,
].join('\n');

/** Host → guest: write BYTES and wait until the guest closes; MiB/s. */
function send(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const s = connect({ host, port });
    const chunk = Buffer.alloc(MIB);
    let sent = 0;
    const timer = setTimeout(() => { s.destroy(); resolve(undefined); }, 120_000);
    const pump = () => { while (sent < BYTES) { sent += chunk.length; if (!s.write(chunk)) { s.once('drain', pump); return; } } s.end(); };
    s.on('connect', pump);
    s.on('close', () => { clearTimeout(timer); resolve(sent >= BYTES ? (BYTES / MIB) / ((performance.now() - t0) / 1000) : undefined); });
    s.on('error', () => { clearTimeout(timer); resolve(undefined); });
  });
}

/** Guest → host: read until the guest closes; MiB/s (undefined if short). */
function receive(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let got = 0;
    const s = connect({ host, port });
    const timer = setTimeout(() => { s.destroy(); resolve(undefined); }, 120_000);
    s.on('data', (d) => { got += d.length; });
    s.on('close', () => { clearTimeout(timer); resolve(got >= BYTES ? (got / MIB) / ((performance.now() - t0) / 1000) : undefined); });
    s.on('error', () => { clearTimeout(timer); resolve(undefined); });
  });
}

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch { return 0; }
}

const pidsOf = (pattern: string): number[] => {
  try { return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number); } catch { return []; }
};

/** The CPU seconds `pids` use while `fn` runs (where the time goes: QEMU, passt, ...). */
async function withCpu<T>(pids: Record<string, number[]>, fn: () => Promise<T>): Promise<[T, Record<string, number>]> {
  const sum = (ps: number[]) => ps.reduce((a, p) => a + cpuSeconds(p), 0);
  const before = Object.fromEntries(Object.entries(pids).map(([k, ps]) => [k, sum(ps)]));
  const r = await fn();
  return [r, Object.fromEntries(Object.entries(pids).map(([k, ps]) => [k, Number((sum(ps) - before[k]!).toFixed(2))]))];
}

async function measure(host: string, sinkPort: number, sourcePort: number): Promise<{ up: number; down: number }> {
  // The first connection may race the guest's servers starting: retry until one goes through.
  await waitFor(`a first transfer to ${host}`, async () => (await send(host, sinkPort)) ?? undefined, 180_000, 1000);
  const up: number[] = [];
  const down: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const u = await send(host, sinkPort);
    const d = await receive(host, sourcePort);
    if (u === undefined || d === undefined) throw new Error(`transfer with ${host} failed`);
    up.push(u); down.push(d);
  }
  return { up: median(up), down: median(down) };
}

/**
 * Host-side times from QVIRT-GUEST-BOOTED, and from the NIC report (`QVIRT-NIC name=`, printed as
 * the guest starts udhcpc), to the lease (`QVIRT-NIC-IP`), polled every 20 ms: the lease marker
 * carries no guest uptime, so all are timed where they arrive.
 */
async function leaseDelay(read: () => string): Promise<{ fromBoot: number; fromNic: number }> {
  let booted: number | undefined;
  let nic: number | undefined;
  return waitFor('a DHCP lease', () => {
    const text = read();
    const now = performance.now();
    if (booted === undefined && text.includes('QVIRT-GUEST-BOOTED')) booted = now;
    if (nic === undefined && text.includes('QVIRT-NIC name=')) nic = now;
    if (booted !== undefined && nic !== undefined && text.includes('QVIRT-NIC-IP')) return { fromBoot: (now - booted) / 1000, fromNic: (now - nic) / 1000 };
    return undefined;
  }, 240_000, 20);
}

/** Host-side time from the NIC report to the DHCPv6 lease (`QVIRT-NIC-IP6`), polled every 20 ms. */
async function lease6Delay(read: () => string): Promise<number> {
  let nic: number | undefined;
  return waitFor('a DHCPv6 lease', () => {
    const text = read();
    const now = performance.now();
    if (nic === undefined && text.includes('QVIRT-NIC name=')) nic = now;
    return nic !== undefined && text.includes('QVIRT-NIC-IP6 ') ? (now - nic) / 1000 : undefined;
  }, 240_000, 20);
}

/** A process's nice value (/proc/<pid>/stat field 19); undefined when it is gone. */
function niceOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch { return undefined; }
}

/**
 * The baseline: a plain QEMU with user-mode networking and forwarded ports, at `nice` — the local
 * pod runner runs launcher pods at the nice value of their CPU request (100m → 10), and on a busy
 * machine a nice-0 baseline would be measured with ten times their CPU weight.
 */
async function userModeBaseline(nice: number): Promise<Result> {
  const g = await ensureGuest();
  const base = 20000 + (process.pid % 20000);
  const qemu = spawn('qemu-system-x86_64', ['-machine', 'q35', '-accel', 'tcg', '-m', '256', '-nodefaults', '-display', 'none',
    '-kernel', g.kernel, '-initrd', g.initrd, '-append', 'console=ttyS0 quiet cryptomgr.notests qvirt.ga=0', '-serial', 'stdio',
    '-netdev', `user,id=n0,hostfwd=tcp:127.0.0.1:${base}-:${SINK},hostfwd=tcp:127.0.0.1:${base + 1}-:${SOURCE}`,
    '-device', 'virtio-net-pci,netdev=n0,romfile='], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  if (qemu.pid && nice > 0) setPriority(qemu.pid, nice);
  qemu.stdout.on('data', (d: Buffer) => { out += d.toString('latin1'); });
  try {
    const lease = await leaseDelay(() => out);
    await waitFor('the baseline guest ready', () => out.includes('QVIRT-GUEST-READY') || undefined, 120_000, 100);
    await new Promise((r) => setTimeout(r, 1500)); // the console shell starts after READY
    qemu.stdin.write(`\n${guestServers}\n`);
    const [t, cpuS] = await withCpu({ qemu: qemu.pid ? [qemu.pid] : [] }, () => measure('127.0.0.1', base, base + 1));
    return { ...t, lease, cpuS };
  } finally {
    qemu.kill('SIGKILL');
    await new Promise((r) => qemu.once('exit', r));
  }
}

async function main(): Promise<void> {
  const t = tempDir('qnbench');
  chmodSync(t.path, 0o755);
  ensureBuiltPasst();
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, podNetwork: { bridge: `qvb${process.pid % 10000}`, subnet: `10.246.${process.pid % 200}.0/24`, subnet6: `fd00:246:${(process.pid % 200).toString(16)}::/64`, stateDir: join(t.path, 'cni') }, log: componentLogger('bench', { level: 'error' }) });
  const podsDir = join(t.path, 'data', 'pods');
  const results: Record<string, Result> = {};
  let user: Result;
  let v6: { up: number; down: number; lease6: number } | undefined;
  let launcherNice = 0;
  try {
    const ports = [{ port: SINK }, { port: SOURCE }];
    for (const [name, iface] of [['masquerade', { masquerade: {} }], ['bridge', { bridge: {} }], ['passt', { passtBinding: {}, ports }]] as const) {
      const vmiName = `bench-${name}`;
      await local.client.create(Resources.virtualMachineInstances, guestVmi(vmiName, iface, guestServers));
      const uid = await waitFor(`${vmiName} uid`, async () => (await getVmi(local, vmiName))?.metadata?.uid);
      const [lease, lease6] = await Promise.all([leaseDelay(() => consoleLog(podsDir, uid)), name === 'masquerade' ? lease6Delay(() => consoleLog(podsDir, uid)) : undefined]);
      const pod = await waitFor(`${vmiName} pod IP`, async () => { const p = await launcherPod(local, uid); return p?.status?.podIP !== '127.0.0.1' ? p : undefined; });
      const podIP = pod.status!.podIP!;
      const qemuPids = pidsOf(`qemu-system.*${uid}`);
      launcherNice = qemuPids.map(niceOf).find((n) => n !== undefined) ?? launcherNice;
      const [t, cpuS] = await withCpu({ qemu: qemuPids, passt: pidsOf(`${uid}/passt/`) }, () => measure(podIP, SINK, SOURCE));
      results[name] = { ...t, lease, cpuS };
      const podIP6 = pod.status?.podIPs?.find((x) => x.ip.includes(':'))?.ip;
      if (lease6 !== undefined && podIP6) v6 = { ...(await measure(podIP6, SINK, SOURCE)), lease6 };
      await local.client.delete(Resources.virtualMachineInstances, 'default', vmiName);
      await waitFor(`${vmiName} gone`, async () => (await launcherPod(local, uid)) ? undefined : true, 120_000, 500);
    }
    // The baseline runs while the local mode is up too, so both see the same background load, at
    // the launchers' nice value.
    user = await userModeBaseline(launcherNice);
  } finally {
    await local.stop();
    t.cleanup();
  }
  for (const [name, r] of Object.entries(results)) {
    // CPU seconds over all of the transfers (the first one and ROUNDS each way), beside the baseline's.
    const details: Record<string, number> = { bytes: BYTES, rounds: ROUNDS, nice: launcherNice };
    for (const [k, v] of Object.entries(r.cpuS)) details[`${k}CpuSeconds`] = v;
    for (const [k, v] of Object.entries(user.cpuS)) details[`baseline${k[0]!.toUpperCase()}${k.slice(1)}CpuSeconds`] = v;
    report({ name: `TCP host → guest, ${name}`, value: r.up, unit: 'MiB/s', baseline: user.up, baselineName: 'user-mode', details });
    report({ name: `TCP guest → host, ${name}`, value: r.down, unit: 'MiB/s', baseline: user.down, baselineName: 'user-mode', details });
    console.log(`  CPU seconds during the ${name} transfers: ${JSON.stringify(r.cpuS)} (user-mode: ${JSON.stringify(user.cpuS)})`);
    report({ name: `DHCP lease after boot, ${name}`, value: r.lease.fromBoot, unit: 's', baseline: user.lease.fromBoot, baselineName: 'user-mode' });
    report({ name: `DHCP lease after udhcpc start, ${name}`, value: r.lease.fromNic, unit: 's', baseline: user.lease.fromNic, baselineName: 'user-mode' });
  }
  const m = results['masquerade'];
  if (v6 && m) {
    report({ name: 'TCP host → guest, masquerade over IPv6', value: v6.up, unit: 'MiB/s', baseline: m.up, baselineName: 'masquerade over IPv4' });
    report({ name: 'TCP guest → host, masquerade over IPv6', value: v6.down, unit: 'MiB/s', baseline: m.down, baselineName: 'masquerade over IPv4' });
    report({ name: 'DHCPv6 lease after the NIC report, masquerade', value: v6.lease6, unit: 's', baseline: m.lease.fromNic, baselineName: 'DHCPv4 lease, same guest' });
  }
  saveResults('network');
}

await main();

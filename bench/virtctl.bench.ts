// KubeVirt's virtctl v1.9.0 (../shared/virtctl) and qvirt's own CLI against the local mode's
// subresources.kubevirt.io, each beside a baseline measured in the same run (issue 24):
// - bulk TCP throughput to a guest port through `virtctl port-forward` and `qvirt port-forward`,
//   beside a direct connection to the guest's pod IP (masquerade binding on the local mode's pod
//   network), both ways: host → guest (32 MiB) into a sink that answers once it has read every
//   byte, guest → host (64 MiB) from a source that writes them and leaves the closing to the
//   client. Target: port-forward ≥ 0.8× direct. Also the time from connecting to the first byte
//   back (the tunnel's setup: websocket, virt-api's checks, the node agent's dial).
//   The paths: direct = client → bridge → pod netns (DNAT) → QEMU → guest;
//   port-forward = client → virtctl|qvirt → websocket over TLS → embedded API server → virt-api's
//   bridge (src/virt-api/subresource-api.ts) → HTTPS upgrade → node agent → pod IP → the same guest.
//   The guest runs under TCG and is slow itself; both paths share it, so the ratio is what the
//   forwarding costs on top of a slow guest, not what it would cost against a fast one — and on
//   two cores the forwarding's CPU competes with the guest's (QEMU runs at the launcher pod's
//   nice value). Printed as well: each process's CPU per MiB moved, which does not depend on how
//   fast the guest was (where the time goes).
// - whether a transfer the guest ends by closing at once arrives whole through each path (4 MiB,
//   a few times each).
// - console attach: from spawning `virtctl console VMI` to its "Successfully connected" line, and
//   from pressing Enter to the guest's first byte back, beside `qvirt console VMI` (which goes to
//   the node agent directly, not through virt-api).
// The transfers run in a child process, so the client does not share the local mode's event loop
// (the API server, virt-api and the node agent all run in this process, as in `qvirt local up`).
//
//   node bench/virtctl.bench.ts            (root: network namespaces, bridges, nftables)
//   QVIRT_BENCH_UP_MIB, QVIRT_BENCH_DOWN_MIB, QVIRT_BENCH_ROUNDS, QVIRT_BENCH_CONSOLE_RUNS override the sizes.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { importTestGuest } from '../src/local/guest/guest.ts';
import { consoleLog, getVmi, guestVmi, launcherPod, waitFor } from '../test/net/lib.ts';
import { virtctlPath } from '../test/lib/virtctl.ts';
import { QVIRT } from '../test/virtctl/lib.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode } from '../src/local/up.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import { median, report, saveResults, type Figure } from './lib.ts';

const MIB = 1 << 20;
/** Host → guest is slow under TCG (the guest's receive path), guest → host fast: each gets a size that takes seconds. */
const BYTES = { up: Number(process.env.QVIRT_BENCH_UP_MIB ?? 32) * MIB, down: Number(process.env.QVIRT_BENCH_DOWN_MIB ?? 64) * MIB } as const;
const ROUNDS = Number(process.env.QVIRT_BENCH_ROUNDS ?? 3);
const CONSOLE_RUNS = Number(process.env.QVIRT_BENCH_CONSOLE_RUNS ?? 7);
const SINK = 5001;
const SOURCE = 5002;
const TAIL = 5003;
const TAIL_BYTES = 4 * MIB;
const TAIL_RUNS = 4;
const VMI = 'bench-pf';
/** Throughput through a port-forward at least this fraction of the direct connection's. */
const MIN_RATIO = 0.8;

/**
 * Guest servers: 5001 reads BYTES.up and answers OK; 5002 writes BYTES.down of zeros and keeps the
 * connection open (the client closes it once it has them all); 5003 writes TAIL_BYTES and closes at
 * once, for the check that a guest closing first loses nothing on the way.
 */
const guestServers = [
  `printf '#!/bin/sh\\nhead -c ${BYTES.up} >/dev/null\\necho OK\\n' > /tmp/sink; chmod +x /tmp/sink; nc -ll -p ${SINK} -e /tmp/sink </dev/null >/dev/null 2>&1 &`,
  `printf '#!/bin/sh\\ndd if=/dev/zero bs=65536 count=${BYTES.down / 65536} 2>/dev/null\\nsleep 10\\n' > /tmp/src; chmod +x /tmp/src; nc -ll -p ${SOURCE} -e /tmp/src </dev/null >/dev/null 2>&1 &`,
  `printf '#!/bin/sh\\ndd if=/dev/zero bs=65536 count=${TAIL_BYTES / 65536} 2>/dev/null\\n' > /tmp/tail; chmod +x /tmp/tail; nc -ll -p ${TAIL} -e /tmp/tail </dev/null >/dev/null 2>&1 &`,
].join('\n');

/**
 * The client, in its own Node process: `up HOST PORT BYTES` writes BYTES and waits for the sink's
 * OK; `down HOST PORT BYTES` reads BYTES. Prints {ms, firstMs, cpuMs} (from the connect call on;
 * firstMs: to the first byte read), or {error, got} (got: the bytes that came before it).
 */
const CLIENT = `
const net = require('node:net');
const [mode, host, port, n] = process.argv.slice(1);
const bytes = Number(n);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let got = 0;
let first = 0;
const done = (r) => { process.stdout.write(JSON.stringify(r)); process.exit(0); };
const finish = () => { const c = process.cpuUsage(cpu0); done({ ms: performance.now() - t0, firstMs: first - t0, cpuMs: (c.user + c.system) / 1000 }); };
const s = net.connect({ host, port: Number(port) });
setTimeout(() => done({ error: 'timed out after 120 s', got }), 120000);
s.on('error', (e) => done({ error: e.message, got }));
s.on('close', () => done({ error: 'the connection closed early', got }));
if (mode === 'up') {
  const chunk = Buffer.alloc(1 << 20);
  let sent = 0;
  const pump = () => { while (sent < bytes) { sent += chunk.length; if (!s.write(chunk)) { s.once('drain', pump); return; } } };
  s.on('connect', pump);
  let answer = '';
  s.on('data', (d) => { got += d.length; answer += d; if (answer.includes('OK')) finish(); });
} else {
  s.on('data', (d) => { if (!first) first = performance.now(); got += d.length; if (got >= bytes) finish(); });
}
`;

type ClientResult = { ok: true; ms: number; firstMs: number; cpuMs: number } | { ok: false; error: string; got: number };

function runClient(mode: 'up' | 'down', host: string, port: number, bytes: number): Promise<ClientResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', CLIENT, mode, host, String(port), String(bytes)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('exit', () => {
      let r: { ms?: unknown; firstMs?: unknown; cpuMs?: unknown; error?: unknown; got?: unknown };
      try { r = JSON.parse(out) as typeof r; } catch { r = { error: `no answer from the client: ${JSON.stringify(out)}` }; }
      if (typeof r.ms === 'number') resolve({ ok: true, ms: r.ms, firstMs: typeof r.firstMs === 'number' ? r.firstMs : 0, cpuMs: typeof r.cpuMs === 'number' ? r.cpuMs : 0 });
      else resolve({ ok: false, error: String(r.error ?? 'no time'), got: typeof r.got === 'number' ? r.got : 0 });
    });
  });
}

/** One timed transfer of BYTES[mode]; throws when it fails. */
async function transfer(mode: 'up' | 'down', host: string, port: number, label: string): Promise<{ ms: number; firstMs: number; cpuMs: number }> {
  const r = await runClient(mode, host, port, BYTES[mode]);
  if (!r.ok) throw new Error(`${mode === 'up' ? 'host → guest' : 'guest → host'} through ${label} (${host}:${port}): ${r.error} after ${r.got} bytes`);
  return r;
}

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch { return 0; }
}
const selfCpuSeconds = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1e6; };

/** QEMU of the VMI (the launcher's child), by its command line naming the VMI's uid. */
function qemuPids(uid: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `qemu-system.*${uid}`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch { return []; }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); });
  });
}

interface Spawned { readonly child: ChildProcess; out(): string; err(): string; readonly exit: Promise<void> }

function spawned(child: ChildProcess): Spawned {
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => { out += d.toString('latin1'); });
  child.stderr?.on('data', (d: Buffer) => { err += d.toString(); });
  const exit = new Promise<void>((r) => { if (child.exitCode !== null || child.signalCode !== null) r(); else child.once('exit', () => r()); });
  return { child, out: () => out, err: () => err, exit };
}

async function stopChild(s: Spawned): Promise<void> {
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
  const t = setTimeout(() => s.child.kill('SIGKILL'), 5000);
  await s.exit;
  clearTimeout(t);
}

type Path = 'direct' | 'virtctl' | 'qvirt';
const PATHS: readonly Path[] = ['direct', 'virtctl', 'qvirt'];

/** A figure that is better higher: reported as is, met when the ratio is at least `min`. */
function reportAtLeast(f: Omit<Figure, 'target'>, min: number): void {
  const r = report(f);
  r.met = r.ratio >= min;
  console.log(`${''.padEnd(44)} target ≥ ${min}× ${f.baselineName}: ${r.met ? 'met' : 'MISSED'}`);
}

/** When `s` first writes something to stderr that includes `text` (performance.now()); rejects if it exits first. */
function stderrLine(s: Spawned, text: string, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    if (s.err().includes(text)) { resolve(performance.now()); return; }
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for ${what} (stderr: ${s.err()})`)); }, 60_000);
    const on = () => { if (s.err().includes(text)) { off(); resolve(performance.now()); } };
    const gone = () => { off(); reject(new Error(`${what}: the process exited first (stderr: ${s.err()})`)); };
    const off = () => { clearTimeout(timer); s.child.stderr!.off('data', on); s.child.off('exit', gone); };
    s.child.stderr!.on('data', on);
    s.child.once('exit', gone);
  });
}

/** When `s` next writes to stdout (performance.now()). */
function nextOutput(s: Spawned, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { s.child.stdout!.off('data', on); reject(new Error(`timed out waiting for ${what}`)); }, 30_000);
    const on = () => { clearTimeout(timer); s.child.stdout!.off('data', on); resolve(performance.now()); };
    s.child.stdout!.on('data', on);
  });
}

async function main(): Promise<boolean> {
  const t = tempDir('qvcb');
  chmodSync(t.path, 0o755);
  const octet = process.pid % 200;
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const virtctl = await virtctlPath();
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, podNetwork: { bridge: `qvc${process.pid % 10000}`, subnet: `10.241.${octet}.0/24`, subnet6: false, stateDir: join(t.path, 'cni') }, log: componentLogger('bench', { level: 'error' }) });
  const podsDir = join(t.path, 'data', 'pods');
  const env = { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: local.kubeconfig, QVIRT_RUNTIME_DIR: join(t.path, 'run'), QVIRT_LOG_LEVEL: 'warn' };
  const children: Spawned[] = [];
  const mbps: Record<Path, { up: number[]; down: number[] }> = { direct: { up: [], down: [] }, virtctl: { up: [], down: [] }, qvirt: { up: [], down: [] } };
  const firstByte: Record<Path, number[]> = { direct: [], virtctl: [], qvirt: [] };
  const cpu: Record<Path, Record<'up' | 'down', Record<string, number>>> = { direct: { up: {}, down: {} }, virtctl: { up: {}, down: {} }, qvirt: { up: {}, down: {} } };
  const tails: Record<Path, number[]> = { direct: [], virtctl: [], qvirt: [] };
  const attach: Record<'virtctl' | 'qvirt', { connected: number[]; firstByte: number[] }> = { virtctl: { connected: [], firstByte: [] }, qvirt: { connected: [], firstByte: [] } };
  let nice = 0;
  try {
    await local.client.create(Resources.virtualMachineInstances, guestVmi(VMI, { masquerade: {} }, guestServers));
    const uid = await waitFor(`${VMI} uid`, async () => (await getVmi(local, VMI))?.metadata?.uid);
    await waitFor('the guest\'s DHCP lease', () => consoleLog(podsDir, uid).includes('QVIRT-NIC-IP') || undefined, 240_000, 250);
    const pod = await waitFor(`${VMI} pod IP`, async () => { const p = await launcherPod(local, uid); return p?.status?.podIP && p.status.podIP !== '127.0.0.1' ? p : undefined; });
    const podIP = pod.status!.podIP!;
    await waitFor(`${VMI} Running with its interface's address`, async () => { const v = await getVmi(local, VMI); return v?.status?.phase === 'Running' && v.status.interfaces?.[0]?.ipAddress ? true : undefined; });
    const qemu = qemuPids(uid);
    if (qemu.length === 0) throw new Error(`no QEMU process of VMI ${uid} found (pgrep -f qemu-system.*${uid})`);
    nice = Number(readFileSync(`/proc/${qemu[0]}/stat`, 'utf8').split(') ')[1]?.split(' ')[16] ?? 0);

    // The forwarders: one process each, every guest port, for the whole run (as a user leaves one open).
    type Ports = { up: number; down: number; tail: number };
    const ports: Record<Path, Ports> = { direct: { up: SINK, down: SOURCE, tail: TAIL }, virtctl: { up: await freePort(), down: await freePort(), tail: await freePort() }, qvirt: { up: await freePort(), down: await freePort(), tail: await freePort() } };
    const hosts: Record<Path, string> = { direct: podIP, virtctl: '127.0.0.1', qvirt: '127.0.0.1' };
    const forwards = (p: Ports) => [`${p.up}:${SINK}`, `${p.down}:${SOURCE}`, `${p.tail}:${TAIL}`];
    const vc = spawned(spawn(virtctl, ['--kubeconfig', local.kubeconfig, 'port-forward', `vmi/${VMI}`, ...forwards(ports.virtctl)], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    children.push(vc);
    const qv = spawned(spawn(QVIRT, ['port-forward', `vmi/${VMI}`, ...forwards(ports.qvirt)], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    children.push(qv);
    await stderrLine(vc, `127.0.0.1:${ports.virtctl.tail} to ${TAIL}`, 'virtctl port-forward listening');
    await stderrLine(qv, `127.0.0.1:${ports.qvirt.tail} to ${TAIL}`, 'qvirt port-forward listening');
    const fwdPid: Record<Path, number | undefined> = { direct: undefined, virtctl: vc.child.pid, qvirt: qv.child.pid };

    // The guest's servers start with its user-data: the first transfer each way may race them.
    await waitFor('a first transfer to the guest', () => transfer('up', podIP, SINK, 'direct').then(() => true, () => undefined), 120_000, 1000);
    await transfer('down', podIP, SOURCE, 'direct');
    for (const p of PATHS.slice(1)) { await transfer('up', hosts[p], ports[p].up, p); await transfer('down', hosts[p], ports[p].down, p); }

    // Interleaved rounds (the order rotates), so drift in the machine's load hits every path alike.
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < PATHS.length; i++) {
        const p = PATHS[(i + r) % PATHS.length]!;
        for (const dir of ['up', 'down'] as const) {
          const fwd = fwdPid[p];
          const before = { qemu: qemu.reduce((a, x) => a + cpuSeconds(x), 0), local: selfCpuSeconds(), fwd: fwd ? cpuSeconds(fwd) : 0 };
          const x = await transfer(dir, hosts[p], ports[p][dir], p);
          const add = (k: string, v: number) => { cpu[p][dir][k] = (cpu[p][dir][k] ?? 0) + v; };
          add('qemu', qemu.reduce((a, y) => a + cpuSeconds(y), 0) - before.qemu);
          add('local mode', selfCpuSeconds() - before.local);
          if (fwd) add(`${p} port-forward`, cpuSeconds(fwd) - before.fwd);
          add('client', x.cpuMs / 1000);
          add('wall', x.ms / 1000);
          add('mib', BYTES[dir] / MIB);
          mbps[p][dir].push((BYTES[dir] / MIB) / (x.ms / 1000));
          if (dir === 'down') firstByte[p].push(x.firstMs);
        }
      }
    }

    // The guest closes first: does every byte it sent before closing arrive?
    for (let i = 0; i < TAIL_RUNS; i++) {
      for (const p of PATHS) {
        const r = await runClient('down', hosts[p], ports[p].tail, TAIL_BYTES);
        tails[p].push(r.ok ? 0 : TAIL_BYTES - r.got);
      }
    }

    await stopChild(vc);
    await stopChild(qv);

    // Console attach, alternating which goes first; each session ends before the next starts (one
    // console per VMI). The first of each warms the page cache and is not counted.
    const consoleCmd = { virtctl: [virtctl, ['--kubeconfig', local.kubeconfig, 'console', VMI]], qvirt: [QVIRT, ['console', VMI]] } as const;
    for (let i = 0; i < CONSOLE_RUNS + 1; i++) {
      for (const which of (i % 2 ? ['qvirt', 'virtctl'] : ['virtctl', 'qvirt']) as Array<'virtctl' | 'qvirt'>) {
        const [cmd, args] = consoleCmd[which];
        const t0 = performance.now();
        const s = spawned(spawn(cmd, [...args], { env, stdio: ['pipe', 'pipe', 'pipe'] }));
        children.push(s);
        const connected = (await stderrLine(s, 'Successfully connected', `${which} console connected`)) - t0;
        // Whatever the attach brought settles first; then Enter, and the guest's first byte back.
        await new Promise((r) => setTimeout(r, 300));
        const answer = nextOutput(s, `${which} console: the guest's answer to Enter`);
        const t1 = performance.now();
        s.child.stdin!.write('\n');
        const firstByte = (await answer) - t1;
        await stopChild(s);
        if (i === 0) continue;
        attach[which].connected.push(connected);
        attach[which].firstByte.push(firstByte);
      }
    }
  } finally {
    for (const c of children) await stopChild(c);
    await local.stop();
    t.cleanup();
  }

  const d = mbps.direct;
  for (const p of ['virtctl', 'qvirt'] as const) {
    for (const dir of ['up', 'down'] as const) {
      const label = dir === 'up' ? 'host → guest' : 'guest → host';
      reportAtLeast({ name: `TCP ${label}, ${p} port-forward`, value: median(mbps[p][dir]), unit: 'MiB/s', baseline: median(d[dir]), baselineName: 'direct to pod IP', details: { mib: BYTES[dir] / MIB, rounds: ROUNDS, nice, samples: mbps[p][dir].map((x) => x.toFixed(1)).join(' '), directSamples: d[dir].map((x) => x.toFixed(1)).join(' ') } }, MIN_RATIO);
    }
  }
  for (const p of ['virtctl', 'qvirt'] as const) {
    report({ name: `guest → host connect → first byte, ${p}`, value: median(firstByte[p]), unit: 'ms', baseline: median(firstByte.direct), baselineName: 'direct to pod IP', details: { rounds: ROUNDS, samples: firstByte[p].map((x) => x.toFixed(0)).join(' '), directSamples: firstByte.direct.map((x) => x.toFixed(0)).join(' ') } });
  }
  // Where the time goes: CPU per MiB moved (independent of how fast the guest was) and cores busy.
  for (const dir of ['up', 'down'] as const) {
    console.log(`  ${dir === 'up' ? 'host → guest' : 'guest → host'}, CPU ms per MiB moved (cores busy):`);
    for (const p of PATHS) {
      const c = cpu[p][dir];
      const keys = Object.keys(c).filter((k) => k !== 'wall' && k !== 'mib');
      console.log(`    ${p.padEnd(8)} ${keys.map((k) => `${k} ${((1000 * (c[k] ?? 0)) / (c.mib ?? 1)).toFixed(1)} (${((c[k] ?? 0) / (c.wall ?? 1)).toFixed(2)})`).join(', ')}`);
    }
  }
  const lost = PATHS.map((p) => `${p} ${tails[p].filter((x) => x > 0).length}/${TAIL_RUNS}${tails[p].some((x) => x > 0) ? ` (lost ${tails[p].filter((x) => x > 0).join(', ')} bytes)` : ''}`);
  console.log(`  ${TAIL_BYTES / MIB} MiB guest → host, the guest closing at once: transfers short of their tail: ${lost.join('; ')}`);
  report({ name: 'virtctl console: spawn → connected, median', value: median(attach.virtctl.connected), unit: 'ms', baseline: median(attach.qvirt.connected), baselineName: 'qvirt console', details: { runs: CONSOLE_RUNS, samples: attach.virtctl.connected.map((x) => x.toFixed(0)).join(' '), baselineSamples: attach.qvirt.connected.map((x) => x.toFixed(0)).join(' ') } });
  report({ name: 'virtctl console: Enter → guest\'s first byte', value: median(attach.virtctl.firstByte), unit: 'ms', baseline: median(attach.qvirt.firstByte), baselineName: 'qvirt console', details: { runs: CONSOLE_RUNS, samples: attach.virtctl.firstByte.map((x) => x.toFixed(1)).join(' '), baselineSamples: attach.qvirt.firstByte.map((x) => x.toFixed(1)).join(' ') } });
  return saveResults('virtctl');
}

const t0 = performance.now();
const ok = await main();
console.log(`(${((performance.now() - t0) / 1000).toFixed(0)} s)`);
process.exitCode = ok ? 0 : 2;

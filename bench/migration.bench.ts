// Live migration of a 256 MiB idle test guest (TCG), median of 5, through the full stack in both
// transports beside bare QEMU → QEMU migrations over loopback TCP, plain and with QEMU's TLS
// (tls-creds-x509, verify-peer, credentials as the node agents issue them), measured in the same
// run with the same QMP settings (KubeVirt's defaults as qvirt applies them: bandwidth unlimited,
// QEMU's own 300 ms downtime limit, 8 multifd channels on KVM, one stream under TCG).
//  Full stack: `qvirt local up --nodes 2` in-process; a VirtualMachineInstanceMigration moves the VMI
//  back and forth between the two nodes (migration controller, target pod, both node agents, both
//  launchers), once with the direct transport (QEMU to QEMU, QEMU's TLS: the VMI's
//  qvirt.io/migration-transport annotation says `direct`) and once through the node agents' mutual-TLS
//  relay (`relay`). QEMU's own total-time and downtime come from the source launcher's 'live
//  migration completed' log line; the VMIM's created → Succeeded wall time is shown too, beside the
//  bare total (it also includes the target pod, its launcher and QEMU start).
//  Bare QEMU runs two machines: a minimal one (the guest on a serial port, no devices) and the one the
//  launcher builds for the full stack's VMI (its converter's argv, as bench/density's baseline:
//  KubeVirt's device set). The direct transport's target is against the second, like with like: the
//  target QEMU's main thread does nearly all of a migration's CPU (~95 MB received, decrypted and
//  written), and with KubeVirt's devices it does more of it (session 22, bench/migration-relay.md).
//  Targets: direct total ≤ 2× bare with TLS, the launcher's argv (issue 23); relay total ≤ 1.5× bare
//  tcp (issue 7); downtime ≤ 50 ms.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { ensureGuest, importTestGuest, kernelCmdline, TEST_GUEST_IMAGE } from '../src/local/guest/guest.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { componentLogger } from '../src/log/logger.ts';
import { ImageStore } from '../src/local/image-store.ts';
import { startLocalMode } from '../src/local/up.ts';
import { localNodeDirs } from '../src/local/local-node.ts';
import { Resources } from '../src/kube/resource.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../src/api/types.ts';
import { QemuProcess } from '../launcher/supervise/qemu-process.ts';
import { prepareBareQemu, type BareQemu } from './bare-qemu.ts';
import { incomingMigrationSetup, migrationTlsSetup, MIGRATION_TLS_CREDS_ID, parseMigrationOptions, sourceMigrationSetup } from '../launcher/migration/options.ts';
import { MIGRATION_TRANSPORT_ANNOTATION, type DirectMigration } from '../src/api/migration.ts';
import { issueMigrationCredentials, migrationTlsHostname, writeMigrationCredentials } from '../handler/migration/direct-credentials.ts';
import { issueCertificate } from '../src/pki/x509.ts';
import { incomingArgv } from '../launcher/migration/target.ts';
import { sourceCompleted, targetCompleted } from './bare-migration.ts';
import { median, report, saveResults } from './lib.ts';
import { copiesStoppedGuest, multifdChannels, runningAccelerator } from '../launcher/migration/accelerator.ts';

const RUNS = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = componentLogger('bench', { level: 'error' });

interface Sample { total: number; downtime: number }

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** One bare QEMU's machine: its argv (before the supervisor's additions), binary and pre-start QMP commands. */
interface BareMachine { readonly argv: readonly string[]; readonly binary?: string | undefined; readonly pidfile?: string | undefined; readonly setup: ReadonlyArray<{ execute: string; arguments?: Record<string, unknown> | undefined }> }
/** The QEMUs of a bare run: machine `i` (0 boots the guest, each next one is a migration target) and when the guest is idle. */
interface BareMachines { machine(i: number): Promise<BareMachine>; booted(): Promise<void>; cleanup(): Promise<void> }

/** A minimal machine: the test guest on the serial port, no devices (what QEMU alone needs to migrate it). */
async function minimalMachines(dir: string): Promise<BareMachines> {
  const g = await ensureGuest();
  return {
    machine: async (i) => ({
      argv: ['-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-m', '256', '-smp', '1', '-nodefaults', '-no-user-config', '-display', 'none',
        '-kernel', g.kernel, '-initrd', g.initrd, '-append', `${kernelCmdline} qvirt.shell=0 qvirt.ga=0`,
        '-chardev', `file,id=serial0,path=${join(dir, `serial${i}.log`)}`, '-device', 'isa-serial,chardev=serial0'],
      setup: [],
    }),
    booted: async () => {
      for (let i = 0; i < 600 && !readFileSync(join(dir, 'serial0.log'), 'utf8').includes('QVIRT-GUEST-READY'); i++) await sleep(100);
    },
    cleanup: async () => undefined,
  };
}

/**
 * The machine the launcher builds for the full stack's VMI (its converter, as bench/density's baseline
 * does: KubeVirt's device set — VGA with VNC, PCIe root ports, virtio-serial, the NIC...), each QEMU
 * under a root of its own; the guest idles 15 s after boot, as in fullStack.
 */
async function launcherMachines(dir: string): Promise<BareMachines> {
  const store = new ImageStore(join(dir, 'store-bare'));
  await importTestGuest(store);
  const vmi = { ...benchVmi('direct'), metadata: { name: 'bench', namespace: 'default', uid: '7d0c1a52-0000-4000-8000-00000000b3a7' } } as VirtualMachineInstance;
  const prepared: BareQemu[] = [];
  return {
    machine: async (i) => {
      const q = await prepareBareQemu(vmi, join(dir, `lm${i}`), { store, cacheDir: join(dir, 'cache'), log });
      prepared.push(q);
      return { argv: q.planArgv, binary: q.planBinary, pidfile: q.pidfile, setup: q.setupCommands };
    },
    booted: async () => { await sleep(15_000); },
    cleanup: async () => { for (const q of prepared) await q.cleanup().catch(() => undefined); },
  };
}

/**
 * Bare QEMU: A boots; then RUNS times a fresh target takes the guest over tcp loopback — with `tls`,
 * QEMU's own TLS on credentials issued per migration as the node agents do (their making is not timed).
 */
async function bare(dir: string, tls: boolean, machines: BareMachines): Promise<Sample[]> {
  const start = async (i: number, incoming: boolean): Promise<QemuProcess> => {
    const m = await machines.machine(i);
    const p = await QemuProcess.start({ argv: incoming ? incomingArgv(m.argv) : m.argv, binary: m.binary, pidfile: m.pidfile ?? join(dir, `q${i}-${tls}.pid`), log });
    for (const c of m.setup) await p.qmp.execute(c.execute, c.arguments);
    return p;
  };
  const options = parseMigrationOptions(JSON.stringify({ Bandwidth: '0Mi', MaxDowntimeMs: 900, ParallelMigrationThreads: 8 }));
  let src = await start(0, false);
  await src.qmp.execute('cont');
  // The channels qvirt uses on this accelerator (8 on KVM, one stream under TCG: launcher/migration/accelerator.ts).
  const accelerator = await runningAccelerator(src.qmp);
  const channels = multifdChannels(8, accelerator);
  // Under TCG qvirt copies a stopped guest (accelerator.ts): the baseline does the same.
  const stopped = copiesStoppedGuest(accelerator);
  await machines.booted();
  const out: Sample[] = [];
  try {
    for (let i = 1; i <= RUNS; i++) {
      const dst = await start(i, true);
      const port = await freePort();
      const uid = `bench-${i}`;
      const direct: DirectMigration | undefined = tls ? { Address: '127.0.0.1', Port: port, TLS: true, TLSHostname: migrationTlsHostname(uid) } : undefined;
      const [serverDir, clientDir] = [join(dir, `tls-server-${i}`), join(dir, `tls-client-${i}`)];
      if (tls) {
        await writeMigrationCredentials(serverDir, issueMigrationCredentials({ ca, endpoint: 'server', migrationUid: uid, podName: `target-${i}`, addresses: ['127.0.0.1'] }));
        await writeMigrationCredentials(clientDir, issueMigrationCredentials({ ca, endpoint: 'client', migrationUid: uid, podName: `source-${i}` }));
        await src.qmp.execute('object-del', { id: MIGRATION_TLS_CREDS_ID }).catch(() => undefined);
      }
      for (const s of [...incomingMigrationSetup({ allowPostCopy: false, parallelMigrationThreads: channels }), ...(tls ? migrationTlsSetup('server', direct, serverDir) : [])]) await dst.qmp.execute(s.execute, s.arguments);
      await dst.qmp.execute('migrate-incoming', { uri: `tcp:127.0.0.1:${port}` });
      const arrived = targetCompleted(dst.qmp, log, stopped);
      for (const s of [...sourceMigrationSetup({ ...options, parallelMigrationThreads: channels }), ...migrationTlsSetup('client', direct, clientDir)]) await src.qmp.execute(s.execute, s.arguments);
      const stoppedAt = performance.now();
      if (stopped) await src.qmp.execute('stop');
      await src.qmp.execute('migrate', { uri: `tcp:127.0.0.1:${port}` });
      const info = await sourceCompleted(src.qmp, 'bare');
      let downtime = info.downtime ?? 0;
      if (stopped) {
        await arrived;
        downtime = Math.max(downtime, Math.round(performance.now() - stoppedAt));
      }
      out.push({ total: info['total-time']!, downtime });
      await src.terminate();
      src = dst;
    }
  } finally {
    await src.terminate();
    await machines.cleanup();
  }
  return out;
}

/** The source launcher's 'live migration completed' numbers from its container log. */
function launcherFigures(podsDir: string, podUid: string): Sample | undefined {
  const f = join(podsDir, podUid, 'logs', 'compute', '0.log');
  if (!existsSync(f)) return undefined;
  for (const line of readFileSync(f, 'utf8').split('\n').reverse()) {
    const i = line.indexOf('{');
    if (i < 0 || !line.includes('live migration completed')) continue;
    const o = JSON.parse(line.slice(i)) as { totalTimeMs?: number; downtimeMs?: number };
    if (typeof o.totalTimeMs === 'number') return { total: o.totalTimeMs, downtime: o.downtimeMs ?? 0 };
  }
  return undefined;
}

const ca = issueCertificate({ subject: { commonName: 'qvirt-handler-ca' }, notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 864e5), ca: true });

/** The VMI both the full stack and the launcher-argv baseline run. */
function benchVmi(transport: 'direct' | 'relay'): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'bench', namespace: 'default', annotations: { [MIGRATION_TRANSPORT_ANNOTATION]: transport } },
    spec: { terminationGracePeriodSeconds: 5, domain: { firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests qvirt.ga=0', container: { image: TEST_GUEST_IMAGE, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } }, devices: { interfaces: [{ name: 'default', masquerade: {} }] }, resources: { requests: { memory: '256Mi' } } }, networks: [{ name: 'default', pod: {} }] },
  } as VirtualMachineInstance;
}

async function fullStack(dir: string, transport: 'direct' | 'relay'): Promise<{ samples: Sample[]; wall: number[] }> {
  const store = new ImageStore(join(dir, `store-${transport}`));
  await importTestGuest(store);
  const dataDir = join(dir, `data-${transport}`);
  const local = await startLocalMode({ dataDir, port: 0, nodes: 2, emulation: true, imageStore: store, log });
  const samples: Sample[] = [];
  const wall: number[] = [];
  try {
    const c = local.client;
    await c.create(Resources.virtualMachineInstances, benchVmi(transport));
    const get = () => c.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'bench');
    for (let i = 0; i < 1800 && (await get()).status?.phase !== 'Running'; i++) await sleep(100);
    await sleep(15_000); // the guest finishes booting: idle from here on
    for (let r = 0; r < RUNS; r++) {
      const vmi = await get();
      const node = vmi.status!.nodeName!;
      const idx = local.nodeNames.indexOf(node);
      const srcPod = Object.entries(vmi.status!.activePods ?? {}).find(([, n]) => n === node)![0];
      const t0 = performance.now();
      const m = await c.create<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: `bench-${r}`, namespace: 'default' }, spec: { vmiName: 'bench' } } as VirtualMachineInstanceMigration);
      let phase = '';
      while (phase !== 'Succeeded') {
        phase = (await c.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', m.metadata!.name!)).status?.phase ?? '';
        if (phase === 'Failed') throw new Error(`migration ${r} failed`);
        // Not faster: each look is a request to the control plane in this process, whose CPU weight
        // (1024) is ten times a launcher pod's (100m: 102), so polling at 50 Hz took CPU from the two
        // QEMUs doing the migration on this 2-core machine.
        await sleep(100);
      }
      wall.push(performance.now() - t0);
      const { podsDir } = localNodeDirs(dataDir, idx, node);
      let s: Sample | undefined;
      for (let i = 0; i < 100 && !(s = launcherFigures(podsDir, srcPod)); i++) await sleep(100);
      if (!s) throw new Error(`no migration figures in the source launcher's log (pod ${srcPod})`);
      samples.push(s);
      // the source pod winds down before the next round (it would block the anti-affinity)
      for (let i = 0; i < 300; i++) {
        const pods = await c.list<{ metadata?: { uid?: string }; status?: { phase?: string } }>(Resources.pods, { namespace: 'default' });
        const p = pods.items.find((x) => x.metadata?.uid === srcPod);
        if (!p || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') break;
        await sleep(100);
      }
      await c.delete(Resources.pods, 'default', (await c.list<{ metadata?: { uid?: string; name?: string } }>(Resources.pods, { namespace: 'default' })).items.find((x) => x.metadata?.uid === srcPod)?.metadata?.name ?? 'none').catch(() => undefined);
      await sleep(2000);
    }
  } finally {
    await local.stop();
  }
  return { samples, wall };
}

const t = tempDir('qmb');
try {
  const b = await bare(t.path, false, await minimalMachines(t.path));
  const bt = await bare(t.path, true, await minimalMachines(t.path));
  const btl = await bare(t.path, true, await launcherMachines(t.path));
  const direct = await fullStack(t.path, 'direct');
  const relay = await fullStack(t.path, 'relay');
  const totals = (xs: Sample[]) => xs.map((s) => s.total);
  const details = (xs: Sample[], k: keyof Sample) => ({ runs: xs.length, min: Math.min(...xs.map((x) => x[k])), max: Math.max(...xs.map((x) => x[k])) });
  const range = (xs: Sample[]) => ({ baselineMin: Math.min(...totals(xs)), baselineMax: Math.max(...totals(xs)) });
  report({ name: 'bare QEMU→QEMU with TLS vs plain tcp (total)', value: median(totals(bt)), unit: 'ms', baseline: median(totals(b)), baselineName: 'bare QEMU→QEMU tcp', details: { ...details(bt, 'total'), ...range(b) } });
  report({ name: 'bare QEMU→QEMU with TLS, the launcher\'s argv (total)', value: median(totals(btl)), unit: 'ms', baseline: median(totals(bt)), baselineName: 'bare QEMU→QEMU TLS, minimal machine', details: { ...details(btl, 'total'), ...range(bt) } });
  // The target compares like with like: the same machine (the launcher's argv, as bench/density's
  // baseline), so what is left is qvirt's own part; beside it the minimal machine, without a target.
  report({ name: 'migration total (QEMU), direct (QEMU TLS)', value: median(totals(direct.samples)), unit: 'ms', baseline: median(totals(btl)), baselineName: 'bare QEMU→QEMU TLS, the launcher\'s argv', target: { maxRatio: 2 }, details: { ...details(direct.samples, 'total'), ...range(btl) } });
  report({ name: 'migration total (QEMU), direct, against the minimal machine', value: median(totals(direct.samples)), unit: 'ms', baseline: median(totals(bt)), baselineName: 'bare QEMU→QEMU TLS, minimal machine', details: { ...details(direct.samples, 'total'), ...range(bt) } });
  report({ name: 'migration downtime, direct', value: median(direct.samples.map((s) => s.downtime)), unit: 'ms', baseline: median(btl.map((s) => s.downtime)), baselineName: 'bare QEMU→QEMU TLS, the launcher\'s argv', target: { maxValue: 50 }, details: details(direct.samples, 'downtime') });
  report({ name: 'migration total (QEMU), relay', value: median(totals(relay.samples)), unit: 'ms', baseline: median(totals(b)), baselineName: 'bare QEMU→QEMU tcp', target: { maxRatio: 1.5 }, details: { ...details(relay.samples, 'total'), ...range(b) } });
  report({ name: 'migration downtime, relay', value: median(relay.samples.map((s) => s.downtime)), unit: 'ms', baseline: median(b.map((s) => s.downtime)), baselineName: 'bare QEMU→QEMU tcp', target: { maxValue: 50 }, details: details(relay.samples, 'downtime') });
  report({ name: 'VMIM created → Succeeded (wall), direct', value: median(direct.wall), unit: 'ms', baseline: median(relay.wall), baselineName: 'relay', details: { runs: direct.wall.length, min: Math.min(...direct.wall), max: Math.max(...direct.wall) } });
} finally {
  t.cleanup();
}
process.exitCode = saveResults('migration') ? 0 : 1;

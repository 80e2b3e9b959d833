// Where a migration's time goes on the way between two QEMUs: the 256 MiB idle test guest migrated
// QEMU → QEMU (the same QMP settings as the product: unlimited bandwidth, QEMU's 300 ms downtime limit, 8
// multifd channels) over loopback TCP (the baseline), over a unix socket, and through the handlers'
// migration proxy (handler/migration/proxy.ts: unix → relay → TCP → relay → unix) without and with
// mutual TLS, with both data paths: the Node relay (worker threads, `proxy`) and socat processes
// (`socat`, the product's default). The `/1ch` rows migrate without multifd (one connection), to
// show what 8 channels cost or gain through relays on this machine. Interleaved, median of RUNS
// each. Per path: QEMU's total-time and downtime, the time until the target QEMU runs (the proxy may
// still hold the stream's tail when the source says completed), and the relay's CPU time (this
// process — its workers, or its control of the socat processes — plus the socat processes and the
// children they forked, from /proc/self/stat's cutime/cstime once they are reaped), beside the tcp
// baseline.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { ensureGuest, kernelCmdline } from '../src/local/guest/guest.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { componentLogger } from '../src/log/logger.ts';
import { QemuProcess } from '../launcher/supervise/qemu-process.ts';
import { incomingMigrationSetup, parseMigrationOptions, sourceMigrationSetup } from '../launcher/migration/options.ts';
import { incomingArgv } from '../launcher/migration/target.ts';
import { SourceListener, TargetListener } from '../handler/migration/proxy.ts';
import { ensureMigrationTls } from '../handler/migration/tls.ts';
import { median, report, saveResults } from './lib.ts';

const RUNS = Number(process.env.RUNS ?? 5);
const PATHS = ['tcp', 'unix', 'proxy', 'proxy+tls', 'socat', 'socat+tls', 'tcp/1ch', 'proxy+tls/1ch', 'socat+tls/1ch'] as const;
type Path = (typeof PATHS)[number];
/** This process's reaped children's CPU time (ms): the socat processes once they exited. */
const childrenCpuMs = () => {
  const s = readFileSync('/proc/self/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10; // cutime, cstime (fields 16, 17) in 10 ms ticks
};
interface Sample { total: number; downtime: number; targetRunning: number; cpu: number }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = componentLogger('bench', { level: 'error' });
const t = tempDir('qmt');
const dir = t.path;
const g = await ensureGuest();
const argv = (i: number) => ['-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-m', '256', '-smp', '1', '-nodefaults', '-no-user-config', '-display', 'none',
  '-kernel', g.kernel, '-initrd', g.initrd, '-append', `${kernelCmdline} qvirt.shell=0 qvirt.ga=0`,
  '-chardev', `file,id=serial0,path=${join(dir, `serial${i}.log`)}`, '-device', 'isa-serial,chardev=serial0'];
const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
});
const tls = ensureMigrationTls(join(dir, 'tls'));
const optionsFor = (channels: number | undefined) => parseMigrationOptions(JSON.stringify({ Bandwidth: '0Mi', MaxDowntimeMs: 900, ...(channels ? { ParallelMigrationThreads: channels } : {}) }));
const samples = new Map<Path, Sample[]>(PATHS.map((p) => [p, []]));

let n = 0;
let src = await QemuProcess.start({ argv: argv(0), pidfile: join(dir, 'q0.pid'), log });
try {
  await src.qmp.execute('cont');
  for (let i = 0; i < 600 && !readFileSync(join(dir, 'serial0.log'), 'utf8').includes('QVIRT-GUEST-READY'); i++) await sleep(100);
  await sleep(3000);
  for (let r = 0; r < RUNS; r++) {
    for (const path of PATHS) {
      n++;
      const dst = await QemuProcess.start({ argv: incomingArgv(argv(n)), pidfile: join(dir, `q${n}.pid`), log });
      const closers: (() => Promise<void>)[] = [];
      const channels = path.endsWith('/1ch') ? undefined : 8;
      const kind = path.replace('/1ch', '');
      try {
        for (const s of incomingMigrationSetup({ allowPostCopy: false, parallelMigrationThreads: channels })) await dst.qmp.execute(s.execute, s.arguments);
        let uri: string;
        if (kind === 'tcp') {
          uri = `tcp:127.0.0.1:${await freePort()}`;
          await dst.qmp.execute('migrate-incoming', { uri });
        } else {
          const dsock = join(dir, `d${n}.sock`);
          await dst.qmp.execute('migrate-incoming', { uri: `unix:${dsock}` });
          uri = `unix:${dsock}`;
          if (kind !== 'unix') {
            const useTls = kind.endsWith('+tls') ? tls : undefined;
            const relay = kind.startsWith('socat') ? 'socat' : 'node';
            const tl = await TargetListener.start({ address: '127.0.0.1', unixPath: dsock, tls: useTls, log, relay });
            closers.push(() => tl.close());
            const sl = await SourceListener.start({ unixPath: join(dir, `s${n}.sock`), host: '127.0.0.1', port: tl.port, multifdPort: tl.multifdPort, tls: useTls, log, relay });
            closers.unshift(() => sl.close());
            uri = `unix:${sl.unixPath}`;
          }
        }
        for (const s of sourceMigrationSetup(optionsFor(channels))) await src.qmp.execute(s.execute, s.arguments);
        const cpu0 = process.cpuUsage();
        const children0 = childrenCpuMs();
        const t0 = performance.now();
        await src.qmp.execute('migrate', { uri });
        let info: { status?: string; 'total-time'?: number; downtime?: number; 'error-desc'?: string } = {};
        for (;;) {
          info = await src.qmp.execute('query-migrate') as typeof info;
          if (info.status === 'completed' && (info['total-time'] ?? 0) > 0) break;
          if (info.status === 'failed' || info.status === 'cancelled') throw new Error(`${path}: migration ${info.status}: ${info['error-desc'] ?? ''}`);
          if (performance.now() - t0 > 60_000) throw new Error(`${path}: migration not completed after 60 s (${info.status})`);
          await sleep(5);
        }
        for (;;) {
          const st = await dst.qmp.execute('query-status') as { status?: string };
          if (st.status === 'running') break;
          if (performance.now() - t0 > 60_000) throw new Error(`${path}: target not running after 60 s (${st.status})`);
          await sleep(5);
        }
        const targetRunning = performance.now() - t0;
        // the streams' ends: the relays' connections close, socat's forked children exit and are reaped
        await sleep(300);
        for (const c of closers.splice(0)) await c();
        const cpu = process.cpuUsage(cpu0);
        samples.get(path)!.push({ total: info['total-time']!, downtime: info.downtime ?? 0, targetRunning, cpu: (cpu.user + cpu.system) / 1000 + childrenCpuMs() - children0 });
      } catch (err) {
        await dst.terminate();
        throw err;
      } finally {
        for (const c of closers) await c();
      }
      await src.terminate();
      src = dst;
    }
  }
} finally {
  await src.terminate();
  t.cleanup();
}

const med = (p: Path, k: keyof Sample) => median(samples.get(p)!.map((s) => s[k]));
for (const p of PATHS.filter((x) => x !== 'tcp')) {
  report({ name: `migration total (QEMU), ${p}`, value: med(p, 'total'), unit: 'ms', baseline: med('tcp', 'total'), baselineName: 'tcp', details: { runs: RUNS } });
  report({ name: `migration downtime (QEMU), ${p}`, value: med(p, 'downtime'), unit: 'ms', baseline: med('tcp', 'downtime'), baselineName: 'tcp', details: { runs: RUNS } });
  report({ name: `migrate → target running, ${p}`, value: med(p, 'targetRunning'), unit: 'ms', baseline: med('tcp', 'targetRunning'), baselineName: 'tcp', details: { runs: RUNS } });
}
for (const p of PATHS.filter((x) => x.startsWith('proxy') || x.startsWith('socat'))) {
  report({ name: `relay CPU time per migration, ${p}`, value: med(p, 'cpu'), unit: 'ms', baseline: med('tcp', 'total'), baselineName: 'tcp migration total', details: { runs: RUNS } });
}
// the two data paths side by side (same run)
for (const [socat, node] of [['socat', 'proxy'], ['socat+tls', 'proxy+tls'], ['socat+tls/1ch', 'proxy+tls/1ch']] as const) {
  report({ name: `migration total (QEMU), ${socat} vs Node relay`, value: med(socat, 'total'), unit: 'ms', baseline: med(node, 'total'), baselineName: node, details: { runs: RUNS } });
  report({ name: `relay CPU time, ${socat} vs Node relay`, value: med(socat, 'cpu'), unit: 'ms', baseline: med(node, 'cpu'), baselineName: node, details: { runs: RUNS } });
}
report({ name: 'migration total (QEMU), tcp without multifd', value: med('tcp/1ch', 'total'), unit: 'ms', baseline: med('tcp', 'total'), baselineName: 'tcp (8 multifd channels)', details: { runs: RUNS } });
process.exitCode = saveResults('migration-transport') ? 0 : 1;

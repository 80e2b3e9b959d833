// The test runner behind `npm test`: type-checks the tree, then runs every `*.test.ts` file under
// test/ in its own Node process (uvu suites), sums uvu's counts, checks that no file leaves a QEMU
// process behind (per file, and for the whole run), and ends with the line `N passed, N failed`.
//
//   node test/run.ts [substring ...]     only files whose path contains one of the substrings
//   QVIRT_TEST_JOBS=N                     files run at once (default 3)
//   QVIRT_TEST_TIMEOUT=S                  per-file limit in seconds (default 900)
//
// Files start longest first (as Jest orders by its cache), so the long ones do not start last and
// leave one lane running alone at the end: each file's duration from this checkout's last whole run
// (.cache/test-durations.json), else from test/durations.json (recorded on a slow CI machine, committed).
// Files neither knows go in at the median.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { startSharedCluster, stopSharedClusterAsync } from './lib/real-cluster.ts';
import { longestFirst, parseDurations } from './lib/durations.ts';
import { stripAnsi, uvuFailures } from './lib/uvu-failures.ts';
import { childrenCpuMs, machineBusy, parseProcStat, type MachineCpu } from './lib/shell-times.ts';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const jobs = Math.max(1, Number(process.env.QVIRT_TEST_JOBS ?? 3));
const timeoutMs = Math.max(10, Number(process.env.QVIRT_TEST_TIMEOUT ?? 900)) * 1000;
const lastRunDurations = join(root, '.cache/test-durations.json');
const committedDurations = join(root, 'test/durations.json');

function findTests(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'out' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) findTests(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}

interface Result { file: string; passed: number; failed: number; skipped: number; ms: number; output: string; note?: string | undefined; cpuMs?: number | undefined }

/** QEMU processes in a process group (each test file runs as its own group leader). */
function qemuPidsInGroup(pgid: number): number[] {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-g', String(pgid), '-f', '^(/usr/bin/)?qemu-system'], { encoding: 'utf8' });
  } catch {
    return [];
  }
  return out.split('\n').filter(Boolean).map(Number);
}

/** Every QEMU process on the machine (pid → command line). */
function allQemu(): Map<number, string> {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-a', '-f', '^(/usr/bin/)?qemu-system'], { encoding: 'utf8' });
  } catch {
    return new Map();
  }
  return new Map(out.split('\n').filter(Boolean).map((l) => { const i = l.indexOf(' '); return [Number(l.slice(0, i)), l.slice(i + 1)] as const; }));
}

function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/** Nobody owns it any more: QEMU, or the launcher that started it, was re-parented to init. */
const orphaned = (pid: number) => { const p = parentOf(pid); return p === 1 || parentOf(p) === 1; };

/**
 * QEMUs started during the run and orphaned at its end. Launchers the local pod runner starts lead
 * process groups of their own, so the per-file group check cannot see what they leave; this
 * whole-run check does (a QEMU whose launcher still has a live parent — another program's, on a
 * shared machine — is not counted). Waits a little for processes on their way out, kills the rest.
 */
async function leftoverQemu(before: ReadonlySet<number>): Promise<Result> {
  const started = Date.now();
  const find = () => [...allQemu()].filter(([pid]) => !before.has(pid) && orphaned(pid));
  let left = find();
  while (left.length && Date.now() - started < 15_000) {
    await new Promise((r) => setTimeout(r, 500));
    left = find();
  }
  for (const [pid] of left) {
    const launcher = parentOf(pid);
    for (const p of launcher > 1 ? [pid, launcher] : [pid]) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
  }
  const output = left.map(([pid, cmd]) => `QEMU ${pid} outlived the run: ${cmd.slice(0, 160)}`).join('\n');
  return { file: 'no QEMU left behind by the run', passed: left.length ? 0 : 1, failed: left.length ? 1 : 0, skipped: 0, ms: Date.now() - started, output };
}

const compileCachePreload = join(root, 'test/lib/compile-cache.ts');

function runFile(file: string): Promise<Result> {
  const started = Date.now();
  return new Promise((resolve) => {
    // Through a shell whose `times` reports the CPU the file's whole reaped process tree (its QEMUs,
    // launchers, pod runners) used, on fd 3: what a file costs a loaded machine, not only how long it took.
    // test/lib/compile-cache.ts turns on V8's compile cache in the file's process.
    const child = spawn('/bin/sh', ['-c', '"$0" "$@"; rc=$?; times >&3; exit $rc', process.execPath, '--import', compileCachePreload, file], {
      cwd: root,
      env: { ...process.env, QVIRT_LOG_LEVEL: process.env.QVIRT_LOG_LEVEL ?? 'warn', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    let times = '';
    child.stdout!.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { output += d.toString(); });
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => { times += d.toString(); });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Nothing a test file started may outlive it: a QEMU left in its process group is a failure.
      const leaked = child.pid ? qemuPidsInGroup(child.pid) : [];
      for (const p of leaked) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
      const text = stripAnsi(output);
      const num = (label: string) => {
        let total = 0;
        for (const m of text.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'gm'))) total += Number(m[1]);
        return total;
      };
      const total = num('Total');
      const passed = num('Passed');
      const skipped = num('Skipped');
      let failed = Math.max(0, total - passed - skipped);
      let note: string | undefined;
      if (timedOut) { failed = Math.max(failed, 1); note = `timed out after ${timeoutMs / 1000}s`; }
      else if (total === 0) { failed = Math.max(failed, 1); note = `no uvu summary (exit ${code ?? signal})`; }
      else if (code !== 0 && failed === 0) { failed = 1; note = `exit ${code ?? signal} after all tests passed`; }
      if (leaked.length) { failed += 1; note = `${note ? `${note}; ` : ''}left QEMU running (pids ${leaked.join(' ')}), killed`; }
      resolve({ file: relative(root, file), passed, failed, skipped, ms: Date.now() - started, output, note, cpuMs: childrenCpuMs(times) });
    });
  });
}

/** /proc/stat's first line (all CPUs), or undefined off Linux. */
function machineCpu(): MachineCpu | undefined {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

async function typecheck(): Promise<Result> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', root], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    child.on('close', (code) => {
      resolve({ file: 'typecheck (tsc --noEmit)', passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1, skipped: 0, ms: Date.now() - started, output });
    });
  });
}

const files = findTests(join(root, 'test')).filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
const results: Result[] = [];
const runStarted = Date.now();
const cpuAtStart = machineCpu();
const qemuBefore = new Set(allQemu().keys());

// The typecheck runs beside the lanes (it is one core for 15-30 s; the files need no type check to run).
const typechecked = typecheck().then((tc) => {
  results.push(tc);
  console.log(`${tc.failed ? 'FAIL' : 'ok  '} ${tc.file} (${tc.ms} ms)`);
  if (tc.failed) console.log(tc.output.trim());
});

function report(r: Result): void {
  results.push(r);
  const status = r.failed ? 'FAIL' : 'ok  ';
  const cpu = r.cpuMs !== undefined ? `, ${(r.cpuMs / 1000).toFixed(1)} s CPU` : '';
  console.log(`${status} ${r.file}: ${r.passed} passed, ${r.failed} failed${r.skipped ? `, ${r.skipped} skipped` : ''} (${r.ms} ms${cpu})${r.note ? ` — ${r.note}` : ''}`);
  if (r.failed) console.log(r.output.trim().split('\n').map((l) => `    ${l}`).join('\n'));
}

// Files under test/cluster/ run against one real Kubernetes cluster, one file at a time, started
// first (they are the longest): QVIRT_E2E_KUBECONFIG's, else ../shared/k8s started here and stopped
// at the end (test/lib/real-cluster.ts).
const isClusterFile = (f: string) => relative(root, f).startsWith(`test${sep}cluster${sep}`);
const clusterFiles = files.filter(isClusterFile);
const knownSeconds = parseDurations(existsSync(lastRunDurations) ? readFileSync(lastRunDurations, 'utf8') : readFileSync(committedDurations, 'utf8'));
const otherFiles = longestFirst(files.filter((f) => !isClusterFile(f)).map((f) => relative(root, f)), knownSeconds).map((f) => join(root, f));
let startedSharedCluster = false;

async function clusterWorker(): Promise<void> {
  if (clusterFiles.length === 0) return;
  if (!process.env.QVIRT_E2E_KUBECONFIG) {
    const t0 = Date.now();
    try {
      Object.assign(process.env, await startSharedCluster());
      startedSharedCluster = true;
      console.log(`real cluster: ../shared/k8s started in ${Date.now() - t0} ms (${process.env.QVIRT_E2E_KUBECONFIG})`);
    } catch (err) {
      report({ file: 'real cluster (../shared/k8s) started', passed: 0, failed: 1, skipped: 0, ms: Date.now() - t0, output: (err as Error).message });
    }
  }
  for (const file of clusterFiles) report(await runFile(file));
  // The cluster's control plane, kubelet and containerd take CPU while idle: gone before this lane
  // takes other files, so the rest of the run has the machine to itself.
  if (startedSharedCluster) {
    const t0 = Date.now();
    const clean = await stopSharedClusterAsync();
    report({ file: 'real cluster (../shared/k8s) stopped, nothing left behind', passed: clean ? 1 : 0, failed: clean ? 0 : 1, skipped: 0, ms: Date.now() - t0, output: clean ? '' : 'cluster-stop.sh reported something left behind (see its output above)' });
  }
}

let next = 0;
async function worker(): Promise<void> {
  while (next < otherFiles.length) report(await runFile(otherFiles[next++]!));
}
await Promise.all([
  clusterWorker().then(() => worker()),
  ...Array.from({ length: Math.max(0, Math.min(jobs, Math.max(1, otherFiles.length)) - 1) }, worker),
]);

await typechecked;
const leftover = await leftoverQemu(qemuBefore);
results.push(leftover);
console.log(`${leftover.failed ? 'FAIL' : 'ok  '} ${leftover.file} (${leftover.ms} ms)`);
if (leftover.failed) console.log(leftover.output.split('\n').map((l) => `    ${l}`).join('\n'));

// A whole run's durations order the next run here (a filtered run's would be partial).
if (filters.length === 0) {
  mkdirSync(join(root, '.cache'), { recursive: true });
  const seconds = Object.fromEntries(results.filter((r) => r.file.endsWith('.test.ts')).map((r) => [r.file, Math.round(r.ms / 100) / 10]));
  writeFileSync(lastRunDurations, `${JSON.stringify({ recorded: new Date().toISOString(), seconds }, null, 1)}\n`);
}

// Each failure once more, short, just before the counts: a long run's output is often kept only
// in part (its head and tail), and the files' own output above can run to thousands of lines.
const failedResults = results.filter((r) => r.failed);
if (failedResults.length) {
  console.log('failures (each file\'s output is above):');
  for (const r of failedResults) {
    console.log(`  ${r.file}: ${r.failed} failed${r.note ? ` — ${r.note}` : ''}`);
    const blocks = r.file.endsWith('.test.ts') ? uvuFailures(r.output) : [r.output.trim().split('\n').slice(-8).join('\n')];
    for (const b of blocks) if (b) console.log(b.split('\n').map((l) => `    ${l}`).join('\n'));
  }
}

const slowest = results.filter((r) => r.file.endsWith('.test.ts')).sort((a, b) => b.ms - a.ms).slice(0, 10);
console.log('slowest test files:');
for (const r of slowest) console.log(`  ${(r.ms / 1000).toFixed(1).padStart(6)} s  ${r.file}`);
const costliest = results.filter((r) => r.cpuMs !== undefined).sort((a, b) => b.cpuMs! - a.cpuMs!).slice(0, 10);
console.log('most CPU (the file\'s whole process tree):');
for (const r of costliest) console.log(`  ${(r.cpuMs! / 1000).toFixed(1).padStart(6)} s  ${r.file}`);
const cpuTotal = results.reduce((a, r) => a + (r.cpuMs ?? 0), 0);
const busy = machineBusy(cpuAtStart, machineCpu());
console.log(`whole run: ${((Date.now() - runStarted) / 1000).toFixed(0)} s; test files' CPU ${(cpuTotal / 1000).toFixed(0)} s${busy ? `; the machine's ${busy.cores} cores were busy ${(busy.fraction * 100).toFixed(0)}% of it (${busy.busySeconds.toFixed(0)} CPU-s)` : ''}`);

const passed = results.reduce((a, r) => a + r.passed, 0);
const failed = results.reduce((a, r) => a + r.failed, 0);
const skipped = results.reduce((a, r) => a + r.skipped, 0);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed ? 1 : 0;

// Is KVM usable for ordinary 64-bit guests on this node?
//
// `/dev/kvm` existing is not enough. On nested "PVM" hosts QEMU starts with `-accel kvm` and even
// runs SeaBIOS, but KVM there executes a non-PVM guest through its instruction emulator: about
// 0.45 µs per guest instruction, and the first VEX-encoded instruction (the Debian kernel's
// decompressor has one) stops the guest with "KVM internal error. Suberror: 1" (emulation failure),
// QEMU left paused. So the probe runs a tiny 64-bit guest (probe-firmware.ts) that executes a VEX
// instruction and a loop that hardware finishes in milliseconds, with a hard time limit.
//
// Where KVM works: one QEMU start plus microseconds of guest time (≈ 0.1–0.3 s in all).
// Where it does not: the internal error (killed at once), a wrong result, a reset, or the limit.
import { spawn } from 'node:child_process';
import { access, constants, mkdtemp, readFile, rename, rm, writeFile } from '../fs/async.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeExit, probeFirmware, qemuExitStatus, debugExitPort } from './probe-firmware.ts';
import { monotonicMs } from '../../qmp/monotonic.ts';

export interface KvmProbeResult {
  /** KVM can run a 64-bit guest at hardware speed. */
  usable: boolean;
  /** How the probe ended (`device` where the KVM device could not be opened, so no QEMU ran). */
  outcome: ProbeOutcome | 'device';
  /** Why, in a sentence (what was run and what happened). */
  reason: string;
  /** How long the probe took (for a cached result: how long the original probe took). */
  ms: number;
  /** The result came from the cache file. */
  cached?: boolean;
}

export interface KvmProbeOptions {
  /** QEMU binary (default `qemu-system-x86_64`). */
  qemu?: string;
  /** The KVM device node (default `/dev/kvm`). */
  kvmDevice?: string;
  /** Limit for the probe guest, from QEMU's start (default 1300 ms: the whole probe stays within ~1.5 s). */
  timeoutMs?: number;
  /**
   * A JSON file remembering the result, so a node probes once per boot: a cached result is used
   * while the host boot id, the QEMU binary, the device and the probe version are the same.
   */
  cacheFile?: string;
}

/** What one run of the probe guest did. */
export interface ProbeRun {
  /** QEMU's exit status, or null if it was killed or did not exit. */
  exitCode: number | null;
  /** The signal that ended QEMU, if one did. */
  signal?: NodeJS.Signals | null;
  /** The run was stopped because the time limit passed. */
  timedOut: boolean;
  /** The run was stopped because QEMU reported a KVM internal error. */
  internalError: boolean;
  /** QEMU's stderr (trimmed). */
  stderr: string;
  ms: number;
}

/** Bump when the probe guest or the verdicts change: cached results from older probes are ignored. */
export const probeVersion = 2;

const okStatuses = new Set([qemuExitStatus(probeExit.okWithVex), qemuExitStatus(probeExit.okWithoutVex)]);
const statusNames = new Map<number, string>([
  [qemuExitStatus(probeExit.okWithVex), 'loop and VEX instruction right'],
  [qemuExitStatus(probeExit.okWithoutVex), 'loop right, no BMI2 so no VEX instruction'],
  [qemuExitStatus(probeExit.badLoop), 'the guest computed a wrong loop sum'],
  [qemuExitStatus(probeExit.badVex), 'the guest computed a wrong shlx result'],
]);

/**
 * How a probe run ended. Every outcome but `ok` means "not usable": a failure the probe has not
 * seen before is `qemu-failed`, never a reason to try KVM anyway.
 */
export type ProbeOutcome =
  | 'ok'
  /** KVM emulates guest instructions and gave up ("KVM internal error", e.g. nested PVM). */
  | 'emulation-failure'
  /** The guest did not report within the limit: emulated at software speed, or hung. */
  | 'time-limit'
  /** The guest ran but computed a wrong result. */
  | 'wrong-result'
  /** The guest reset (triple fault) before reporting. */
  | 'reset'
  /** QEMU itself failed: no KVM module, an MSR KVM refuses, an assertion, a crash, spawn failure, ... */
  | 'qemu-failed';

export interface ProbeVerdict { usable: boolean; outcome: ProbeOutcome; reason: string }

/** The lines of QEMU's stderr that say something (not its warnings about unsupported CPU features). */
function errorLines(stderr: string): string[] {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const errors = lines.filter((l) => !/: warning: /.test(l));
  return errors.length ? errors : lines;
}

const firstLine = (s: string): string => errorLines(s)[0] ?? '';

/** QEMU's own assertion or abort line, if the run died of one (it names the failing check). */
const assertionLine = (s: string): string | undefined => errorLines(s).find((l) => /Assertion .* failed|Aborted/.test(l));

/** The verdict on one probe run (pure). `accel` only shapes the wording. The reason is one line. */
export function interpretProbeRun(run: ProbeRun, accel: 'kvm' | 'tcg' = 'kvm', timeoutMs = 1300): ProbeVerdict {
  const name = accel.toUpperCase();
  if (run.internalError) {
    return { usable: false, outcome: 'emulation-failure', reason: `${name} cannot run the 64-bit probe guest: QEMU reported "${firstLine(run.stderr)}" (KVM emulates guest instructions here, e.g. nested PVM)` };
  }
  if (run.timedOut) {
    return { usable: false, outcome: 'time-limit', reason: `${name} did not finish the 64-bit probe guest within ${timeoutMs} ms (guest instructions are emulated, or the guest hangs)` };
  }
  if (run.exitCode !== null && okStatuses.has(run.exitCode)) {
    return { usable: true, outcome: 'ok', reason: `${name} ran the 64-bit probe guest in ${run.ms} ms (${statusNames.get(run.exitCode)})` };
  }
  if (run.exitCode !== null && statusNames.has(run.exitCode)) {
    return { usable: false, outcome: 'wrong-result', reason: `${name} ran the 64-bit probe guest wrongly: ${statusNames.get(run.exitCode)}` };
  }
  if (run.exitCode === 0) {
    return { usable: false, outcome: 'reset', reason: `${name} probe guest reset before reporting (triple fault)${run.stderr ? `: ${firstLine(run.stderr)}` : ''}` };
  }
  const how = run.exitCode === null ? (run.signal ? `killed by ${run.signal}` : 'killed') : `exit status ${run.exitCode}`;
  const first = firstLine(run.stderr);
  const assertion = assertionLine(run.stderr);
  const said = [first, assertion && assertion !== first ? assertion : undefined].filter(Boolean).join('; ');
  return { usable: false, outcome: 'qemu-failed', reason: `QEMU could not run the ${name} probe guest: ${said ? `${said} (${how})` : how}` };
}

/** QEMU arguments that run the probe firmware. */
export function probeArgs(firmwarePath: string, accel: 'kvm' | 'tcg', cpu = accel === 'kvm' ? 'host' : 'max'): string[] {
  return [
    '-machine', 'q35', '-accel', accel, '-cpu', cpu, '-m', '16',
    '-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot',
    '-bios', firmwarePath,
    '-device', `isa-debug-exit,iobase=0x${debugExitPort.toString(16)},iosize=0x04`,
  ];
}

/**
 * Runs the probe firmware once under `accel` and reports what happened. Always leaves no QEMU
 * and no temporary file behind.
 */
export async function runProbeGuest(opts: { accel: 'kvm' | 'tcg'; qemu?: string; cpu?: string; timeoutMs?: number; skipVex?: boolean }): Promise<ProbeRun> {
  const { accel, qemu = 'qemu-system-x86_64', timeoutMs = 1300 } = opts;
  const dir = await mkdtemp(join(tmpdir(), 'qvirt-kvm-probe-'));
  try {
    const fw = join(dir, 'probe.bin');
    await writeFile(fw, probeFirmware({ skipVex: opts.skipVex ?? false }));
    const started = monotonicMs();
    return await new Promise<ProbeRun>((resolve) => {
      const child = spawn(qemu, probeArgs(fw, accel, opts.cpu), { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      let timedOut = false;
      let internalError = false;
      const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (!internalError && /KVM internal error|emulation failure/.test(stderr)) {
          internalError = true;
          // QEMU pauses the VM and stays; the register dump that follows is not needed.
          setTimeout(() => child.kill('SIGKILL'), 20);
        }
      });
      const finish = (exitCode: number | null, signal: NodeJS.Signals | null = null) => {
        clearTimeout(timer);
        resolve({ exitCode, signal, timedOut: timedOut && !internalError, internalError, stderr: stderr.trim(), ms: Math.round(monotonicMs() - started) });
      };
      child.on('error', (e) => { stderr += `${e.message}\n`; finish(null); });
      child.on('exit', (code, signal) => finish(code, signal));
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface CacheEntry { probeVersion: number; bootId: string; qemu: string; kvmDevice: string; result: KvmProbeResult }

async function bootId(): Promise<string> {
  try {
    return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
  } catch {
    return 'unknown';
  }
}

async function readCache(file: string, key: Omit<CacheEntry, 'result'>): Promise<KvmProbeResult | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const e = raw as Partial<CacheEntry>;
  if (e.probeVersion !== key.probeVersion || e.bootId !== key.bootId || e.qemu !== key.qemu || e.kvmDevice !== key.kvmDevice) return undefined;
  const r = e.result;
  if (!r || typeof r.usable !== 'boolean' || typeof r.outcome !== 'string' || typeof r.reason !== 'string' || typeof r.ms !== 'number') return undefined;
  return { usable: r.usable, outcome: r.outcome, reason: r.reason, ms: r.ms, cached: true };
}

async function writeCache(file: string, entry: CacheEntry): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify(entry) + '\n');
    await rename(tmp, file);
  } catch {
    await rm(tmp, { force: true });
    // A cache that cannot be written only costs a probe next time.
  }
}

/** Why the KVM device cannot be opened read-write, or undefined if it can. */
async function deviceProblem(kvmDevice: string): Promise<string | undefined> {
  try {
    await access(kvmDevice, constants.R_OK | constants.W_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'does not exist';
    if (code === 'EACCES' || code === 'EPERM') return 'is not readable and writable by this process';
    return `cannot be used (${(e as Error).message})`;
  }
}

/**
 * Tells whether KVM can run a 64-bit guest here: checks read/write access to the KVM device, then
 * boots the probe firmware with `-accel kvm -cpu host` under a time limit.
 */
export async function probeKvm(opts: KvmProbeOptions = {}): Promise<KvmProbeResult> {
  const { qemu = 'qemu-system-x86_64', kvmDevice = '/dev/kvm', timeoutMs = 1300, cacheFile } = opts;
  const started = monotonicMs();
  const key = { probeVersion, bootId: await bootId(), qemu, kvmDevice };
  if (cacheFile) {
    const hit = await readCache(cacheFile, key);
    if (hit) return hit;
  }
  let result: KvmProbeResult;
  const denied = await deviceProblem(kvmDevice);
  if (denied) {
    result = { usable: false, outcome: 'device', reason: `KVM device ${kvmDevice} ${denied}`, ms: Math.round(monotonicMs() - started) };
  } else {
    const run = await runProbeGuest({ accel: 'kvm', qemu, timeoutMs });
    result = { ...interpretProbeRun(run, 'kvm', timeoutMs), ms: Math.round(monotonicMs() - started) };
  }
  if (cacheFile) await writeCache(cacheFile, { ...key, result });
  return result;
}

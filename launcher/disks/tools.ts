// The external tools disk preparation runs: qemu-img (image info, overlays, empty disks) and
// xorrisofs (ISO images). Each call has a time limit, and a failure carries argv and stderr.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { DiskToolError } from './errors.ts';
import { TIMEOUTS } from './constants.ts';

export type ImageFormat = 'raw' | 'qcow2';

const found = new Map<string, string | undefined>();

/** The absolute path of an executable on PATH, or undefined (cached per name). */
export function findExecutable(name: string): string | undefined {
  if (found.has(name)) return found.get(name);
  let hit: string | undefined;
  for (const dir of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      hit = p;
      break;
    } catch {
      // not here
    }
  }
  found.set(name, hit);
  return hit;
}

/** What one run of a tool did. */
interface ToolRun { stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null; timedOut: boolean; spawnError?: Error }

/** Runs `file` with stdin closed, collecting its output; SIGKILL after `timeoutMs`. Never rejects. */
function run(file: string, args: readonly string[], timeoutMs: number): Promise<ToolRun> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
    child.once('error', (err) => { clearTimeout(timer); resolve({ stdout, stderr, code: null, signal: null, timedOut, spawnError: err }); });
    // 'close': the process ended and its output has been read to the end.
    child.once('close', (code, signal) => { clearTimeout(timer); resolve({ stdout, stderr, code, signal, timedOut }); });
  });
}

/**
 * Runs a tool to completion; resolves with stdout, rejects with DiskToolError. (child_process
 * directly: execa cost every launcher ≈17 ms of CPU to load, for the few tools it runs.)
 */
export async function runTool(tool: string, args: readonly string[], timeoutMs: number, argv0: readonly string[] = []): Promise<string> {
  const file = argv0[0] ?? tool;
  const fullArgs = [...argv0.slice(1), ...(argv0.length ? [tool] : []), ...args];
  const r = await run(file, fullArgs, timeoutMs);
  if (r.timedOut) throw new DiskToolError(tool, args, { stderr: r.stderr, timedOut: true, reason: `timed out after ${timeoutMs} ms` });
  if (r.spawnError) throw new DiskToolError(tool, args, { stderr: r.stderr, reason: r.spawnError.message });
  if (r.code !== 0) {
    const reason = r.code !== null ? `exited with code ${r.code}` : r.signal ? `killed by ${r.signal}` : 'failed';
    throw new DiskToolError(tool, args, { stderr: r.stderr, exitCode: r.code ?? undefined, reason });
  }
  // Without the final newline, as callers had it from execa.
  return r.stdout.endsWith('\n') ? r.stdout.slice(0, -1) : r.stdout;
}

export interface ImageInfo {
  readonly format: string;
  readonly virtualSize: number;
  readonly actualSize: number | undefined;
  readonly backingFile: string | undefined;
  readonly backingFormat: string | undefined;
}

/** Parses `qemu-img info --output=json` (one image) into the fields the launcher uses. */
export function parseImageInfo(json: string, what: string): ImageInfo {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (err) {
    throw new Error(`qemu-img info of ${what} did not print JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`qemu-img info of ${what}: expected a JSON object`);
  const o = v as Record<string, unknown>;
  if (typeof o.format !== 'string') throw new Error(`qemu-img info of ${what}: field "format" missing`);
  if (typeof o['virtual-size'] !== 'number') throw new Error(`qemu-img info of ${what}: field "virtual-size" missing`);
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  return {
    format: o.format,
    virtualSize: o['virtual-size'],
    actualSize: typeof o['actual-size'] === 'number' ? o['actual-size'] : undefined,
    backingFile: str('backing-filename'),
    backingFormat: str('backing-filename-format'),
  };
}

export interface InfoOptions {
  /** Address-space limit for qemu-img (virt-launcher `--disk-memory-limit`); applied with prlimit when present. */
  readonly memoryLimitBytes?: number;
}

/**
 * `qemu-img info <path> --output json`, under KubeVirt's limits (10 s CPU, the disk memory limit) so
 * a hostile image cannot exhaust the launcher.
 */
export async function qemuImgInfo(path: string, opts: InfoOptions = {}): Promise<ImageInfo> {
  const args = ['info', path, '--output', 'json'];
  const prlimit = opts.memoryLimitBytes ? findExecutable('prlimit') : undefined;
  const wrap = prlimit ? [prlimit, `--as=${opts.memoryLimitBytes}`, `--cpu=${TIMEOUTS.qemuImgInfoCpuSeconds}`, '--'] : [];
  const out = await runTool('qemu-img', args, TIMEOUTS.qemuImgInfoMs, wrap);
  return parseImageInfo(out, path);
}

/** `qemu-img create -f qcow2 -b <backing> -F <fmt> <overlay>` (ephemeral-disk.go createBackingDisk). */
export async function createOverlay(overlay: string, backing: string, backingFormat: ImageFormat): Promise<void> {
  await runTool('qemu-img', ['create', '-f', 'qcow2', '-b', backing, '-F', backingFormat, overlay], TIMEOUTS.qemuImgCreateMs);
}

/** `qemu-img create -f qcow2 <file> <bytes>` (emptydisk.go createQCOW). */
export async function createQcow2(file: string, sizeBytes: number): Promise<void> {
  await runTool('qemu-img', ['create', '-f', 'qcow2', file, String(sizeBytes)], TIMEOUTS.qemuImgCreateMs);
}

/** Runs xorrisofs with the given arguments (KubeVirt's exact flag sets live in constants.ts). */
export async function xorrisofs(args: readonly string[], timeoutMs: number): Promise<void> {
  await runTool('xorrisofs', args, timeoutMs);
}

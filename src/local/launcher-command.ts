// How this machine starts the processes of qvirt's pods (a launcher pod's, an attachment pod's): the
// pre-built bundles (scripts/build.ts) when they are at least as new as every source they were built
// from, else the sources through the qvirt CLI.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkoutPath } from './checkout.ts';

const LAUNCHER_SOURCES = ['launcher', 'qmp', 'src/api', 'src/proto', 'src/log', 'src/net', 'src/flags', 'src/process'];

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, e)));
  return newest;
}

/** The CLI bundle's sources: every command's (as bin/qvirt checks them). */
const CLI_SOURCES = ['src', 'launcher', 'handler', 'controller', 'qmp'];

/** Whether `built` (under dist/) exists and is at least as new as every one of `sources`. */
function fresh(built: string, sources: readonly string[]): boolean {
  try {
    const t = statSync(checkoutPath('dist', built)).mtimeMs;
    return t >= Math.max(...sources.map((d) => newestMtime(checkoutPath(d))));
  } catch { return false; }
}

/**
 * V8 flags for launcher processes. A launcher spends its life waiting on sockets, and its hot work is
 * native (JSON, sockets, child processes), so:
 * - a 1 MiB young generation (`--max-semi-space-size=1`);
 * - `--jitless`: V8 interprets and never compiles machine code, so no Sparkplug/Maglev/TurboFan code, no
 *   compiler pages or background compile jobs. Same-run A/B, 2026-11-28 (bench/launcher-memory.md): RSS with a
 *   running VM 53.7 → 50.7 MiB, PSS 33.1 → 31.3, CPU at `cont` no higher (medians ≈180 vs ≈189 ms). It changes
 *   V8's flag hash, so Node's built-ins miss their embedded code cache (requiring net, child_process, http2
 *   and the like costs ≈25 ms more), but the machine code the launcher no longer compiles makes up for it.
 *   No WebAssembly with it: the bundle uses none, but Node's TypeScript stripping does, so the sources
 *   fallback runs without it (`LAUNCHER_SOURCES_NODE_FLAGS`).
 * Not `--lite-mode`, `--no-maglev`, `--minor-ms`: the same code-cache miss with nothing to make up for it
 * (`--lite-mode`, 2026-11-22, `perf stat -r 10` on `--help`: 103–108 ms of CPU against 82–87 ms).
 */
export const LAUNCHER_NODE_FLAGS = ['--max-semi-space-size=1', '--jitless'] as const;
/** The launcher run from its TypeScript sources (no fresh bundle): Node strips types with WebAssembly, which `--jitless` turns off. */
export const LAUNCHER_SOURCES_NODE_FLAGS = ['--max-semi-space-size=1'] as const;

/** The launcher's loader and bundle in dist/launcher and in the launcher image (scripts/build.ts; CommonJS, which it says why). */
export const LAUNCHER_LOADER = 'qvirt-launcher.cjs';
export const LAUNCHER_BUNDLE = 'launcher.bundle.cjs';

let cached: string[] | undefined;

/** argv (after the node binary) that runs `qvirt launcher`, to which the launcher's flags are appended. */
export function launcherArgv(): string[] {
  if (cached) return cached;
  if (fresh(`launcher/${LAUNCHER_BUNDLE}`, LAUNCHER_SOURCES)) return (cached = [...LAUNCHER_NODE_FLAGS, checkoutPath('dist/launcher', LAUNCHER_LOADER)]);
  return (cached = [...LAUNCHER_SOURCES_NODE_FLAGS, checkoutPath('src/cli/main.ts'), 'launcher']);
}

let cliCached: string | undefined;

/** The script (after the node binary) that runs the qvirt CLI: the CLI bundle when fresh, else src/cli/main.ts. */
export function cliScript(): string {
  return (cliCached ??= fresh('cli/main.js', CLI_SOURCES) ? checkoutPath('dist/cli/qvirt.mjs') : checkoutPath('src/cli/main.ts'));
}

/**
 * `qvirt tail` (the guest-console-log container, KubeVirt's virt-tail): a shell script run by /bin/sh,
 * no Node process (launcher/virt-tail.sh says why). The launcher image carries a copy beside the bundle.
 */
export const VIRT_TAIL_SCRIPT = checkoutPath('launcher/virt-tail.sh');

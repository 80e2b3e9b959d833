// How this machine starts the processes of a launcher pod: the pre-built bundles (scripts/build.ts)
// when they are at least as new as every source they were built from, else the sources through the
// qvirt CLI.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = new URL('../../', import.meta.url).pathname;
const LAUNCHER_SOURCES = ['launcher', 'qmp', 'src/api', 'src/proto', 'src/log', 'src/cli/flags.ts'];
const TAIL_SOURCES = ['src/cli/tail.ts', 'src/cli/tail-entry.ts', 'src/cli/flags.ts'];

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, e)));
  return newest;
}

/** Whether `built` (in dist/launcher) exists and is at least as new as every one of `sources`. */
function fresh(built: string, sources: readonly string[]): boolean {
  try {
    const t = statSync(join(repoRoot, 'dist/launcher', built)).mtimeMs;
    return t >= Math.max(...sources.map((d) => newestMtime(join(repoRoot, d))));
  } catch { return false; }
}

/**
 * V8 flags for launcher processes: a launcher spends its life waiting on sockets, so it trades peak
 * JavaScript speed for memory — no optimizing compilers (`--lite-mode`: about 20 MiB less RSS per VM)
 * and a 1 MiB young generation. Measured with bench/launcher.bench.ts.
 */
export const LAUNCHER_NODE_FLAGS = ['--max-semi-space-size=1', '--lite-mode'] as const;

let cached: string[] | undefined;

/** argv (after the node binary) that runs `qvirt launcher`, to which the launcher's flags are appended. */
export function launcherArgv(): string[] {
  if (cached) return cached;
  if (fresh('launcher.bundle.mjs', LAUNCHER_SOURCES)) return (cached = [...LAUNCHER_NODE_FLAGS, join(repoRoot, 'dist/launcher/qvirt-launcher.mjs')]);
  // From the sources Node strips TypeScript types with a WebAssembly module, which --lite-mode
  // disables (ERR_WEBASSEMBLY_NOT_SUPPORTED): only the young-generation cap applies then.
  return (cached = [...LAUNCHER_NODE_FLAGS.filter((f) => f !== '--lite-mode'), join(repoRoot, 'src/cli/main.ts'), 'launcher']);
}

let cachedTail: string[] | undefined;

/**
 * argv (after the node binary) that runs `qvirt tail` (the guest-console-log container), to which its
 * flags are appended: the small virt-tail bundle when built, with the launcher's memory-lean V8 flags.
 */
export function tailArgv(): string[] {
  if (cachedTail) return cachedTail;
  if (fresh('qvirt-tail.mjs', TAIL_SOURCES)) return (cachedTail = [...LAUNCHER_NODE_FLAGS, join(repoRoot, 'dist/launcher/qvirt-tail.mjs')]);
  return (cachedTail = [join(repoRoot, 'src/cli/main.ts'), 'tail']);
}

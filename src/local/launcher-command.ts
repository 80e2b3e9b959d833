// How this machine starts a launcher process: the pre-built bundle (scripts/build.ts) when it is
// at least as new as every source it was built from, else the sources through the qvirt CLI.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = new URL('../../', import.meta.url).pathname;
const SOURCE_DIRS = ['launcher', 'qmp', 'src/api', 'src/proto', 'src/log', 'src/cli/flags.ts'];

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, e)));
  return newest;
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
  const bundle = join(repoRoot, 'dist/launcher/qvirt-launcher.mjs');
  try {
    const built = statSync(join(repoRoot, 'dist/launcher/launcher.bundle.mjs')).mtimeMs;
    const sources = Math.max(...SOURCE_DIRS.map((d) => newestMtime(join(repoRoot, d))));
    if (built >= sources) return (cached = [...LAUNCHER_NODE_FLAGS, bundle]);
  } catch { /* not built */ }
  // From the sources Node strips TypeScript types with a WebAssembly module, which --lite-mode
  // disables (ERR_WEBASSEMBLY_NOT_SUPPORTED): only the young-generation cap applies then.
  return (cached = [...LAUNCHER_NODE_FLAGS.filter((f) => f !== '--lite-mode'), join(repoRoot, 'src/cli/main.ts'), 'launcher']);
}

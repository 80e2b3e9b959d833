// What the launcher must know about the installed QEMU before it can build an argv: its version and
// the versioned q35 machine it implements (`q35` is an alias of e.g. `pc-q35-7.2`; KubeVirt records
// the versioned name so a migration target gets the same machine). Asking QEMU costs 50–150 ms of
// process start, so the answer is cached in a file keyed by the binary's identity (path, size, mtime,
// inode): a node pays once per QEMU install, not once per VM.
import { execFile } from 'node:child_process';
import { mkdir, readFile, realpath, rename, stat, writeFile } from './fs/async.ts';
import { dirname } from 'node:path';

export interface QemuFacts {
  binary: string;
  version: { major: number; minor: number; micro: number };
  /** The versioned q35 machine type, e.g. `pc-q35-7.2`. */
  q35Machine: string;
}

export class QemuFactsError extends Error {
  override name = 'QemuFactsError';
}

/** Parses `qemu-system-x86_64 -machine help`: the machine `q35` is an alias of. */
export function q35FromMachineHelp(text: string): string | undefined {
  const alias = /^q35\s+.*\(alias of (pc-q35-[\d.]+)\)/m.exec(text);
  if (alias) return alias[1];
  const versions = [...text.matchAll(/^(pc-q35-(\d+)\.(\d+))\s/gm)].map((m) => ({ name: m[1]!, v: Number(m[2]) * 1000 + Number(m[3]) }));
  versions.sort((a, b) => b.v - a.v);
  return versions[0]?.name;
}

/** Parses `QEMU emulator version 7.2.22 (...)`. */
export function versionFromBanner(text: string): QemuFacts['version'] | undefined {
  const m = /QEMU emulator version (\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), micro: Number(m[3]) } : undefined;
}

async function resolveBinary(binary: string): Promise<string> {
  if (binary.includes('/')) return realpath(binary);
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    try {
      return await realpath(`${dir}/${binary}`);
    } catch { /* next */ }
  }
  throw new QemuFactsError(`QEMU binary "${binary}" not found on PATH (install qemu-system-x86)`);
}

/**
 * `execFile` as a promise of its output. Not util.promisify: an ES import of node:util builds its
 * namespace from every export, which loads parseArgs, styleText, diff and worker_threads (~0.5 MiB of
 * RSS in every launcher: bench/launcher-memory.md).
 */
function run(file: string, args: string[]): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 10_000 }, (err, stdout) => (err ? reject(err) : resolve({ stdout })));
  });
}

async function ask(binary: string): Promise<QemuFacts> {
  const [ver, machines] = await Promise.all([
    run(binary, ['--version']),
    run(binary, ['-machine', 'help']),
  ]).catch((err: Error) => { throw new QemuFactsError(`asking ${binary} for its version and machines failed: ${err.message}`); });
  const version = versionFromBanner(ver.stdout);
  if (!version) throw new QemuFactsError(`${binary} --version printed no QEMU version: ${ver.stdout.slice(0, 200)}`);
  const q35Machine = q35FromMachineHelp(machines.stdout);
  if (!q35Machine) throw new QemuFactsError(`${binary} offers no q35 machine type`);
  return { binary, version, q35Machine };
}

/**
 * The facts about `binary`, from the cache file when it describes this very binary, else asked from
 * QEMU and written back (atomically). A cache that cannot be written is not an error.
 */
export async function loadQemuFacts(binary = 'qemu-system-x86_64', cacheFile?: string): Promise<QemuFacts> {
  const path = await resolveBinary(binary);
  const st = await stat(path);
  const identity = `${path}:${st.size}:${st.mtimeMs}:${st.ino}`;
  if (cacheFile) {
    try {
      const cached = JSON.parse(await readFile(cacheFile, 'utf8')) as { identity?: string; facts?: QemuFacts };
      if (cached.identity === identity && cached.facts?.q35Machine) return cached.facts;
    } catch { /* absent or unreadable: ask */ }
  }
  const facts = await ask(path);
  if (cacheFile) {
    try {
      await mkdir(dirname(cacheFile), { recursive: true });
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify({ identity, facts }));
      await rename(tmp, cacheFile);
    } catch { /* best effort */ }
  }
  return facts;
}

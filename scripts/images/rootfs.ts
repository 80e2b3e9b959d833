// Root filesystems for qvirt's images, assembled from files of the Debian packages installed on
// this machine (what `dpkg -x` of those .debs gives) plus the shared libraries they link, found
// with ldd: only what the binaries load, no package manager, no shell beyond dash. The layout is
// Debian's merged /usr (/bin, /lib, /lib64, /sbin are symlinks into /usr).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync, openSync, readSync, closeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** A file placed into the image from elsewhere than the same host path. */
export interface PlacedFile {
  readonly dest: string;
  readonly src?: string;
  readonly content?: string;
  readonly mode: number;
}

export interface RootfsSpec {
  /** Host paths copied to the same path (directories recursively); ELF files bring their libraries. */
  readonly hostPaths: readonly string[];
  readonly files: readonly PlacedFile[];
  readonly symlinks: readonly (readonly [path: string, target: string])[];
  readonly dirs: readonly (readonly [path: string, mode: number])[];
}

export class RootfsError extends Error {
  override name = 'RootfsError';
}

/** Debian's merged-/usr top-level symlinks. */
export const MERGED_USR_LINKS: readonly (readonly [string, string])[] = [['/bin', 'usr/bin'], ['/sbin', 'usr/sbin'], ['/lib', 'usr/lib'], ['/lib64', 'usr/lib64']];

export function isElf(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(4);
    return readSync(fd, b, 0, 4, 0) === 4 && b.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    closeSync(fd);
  }
}

/** The libraries `ldd` resolves for an ELF file (absolute paths; the vdso has none). */
export function parseLdd(output: string): string[] {
  const out: string[] = [];
  for (const line of output.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
    if (m?.[1]) out.push(m[1]);
    else if (/=>\s*not found/.test(line)) throw new RootfsError(`a library is missing: ${line.trim()}`);
  }
  return out;
}

function ldd(path: string): string[] {
  let text: string;
  try {
    text = execFileSync('ldd', [path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    // Static executables: "not a dynamic executable".
    if (/not a dynamic executable|statically linked/.test(`${e.stdout ?? ''}${e.stderr ?? ''}`)) return [];
    throw new RootfsError(`ldd ${path} failed: ${e.stderr ?? String(err)}`);
  }
  if (/statically linked/.test(text)) return [];
  try {
    return parseLdd(text);
  } catch (err) {
    throw new RootfsError(`${path}: ${(err as Error).message}`);
  }
}

/** Where a host path lives with its directory's symlinks resolved (`/lib/x/libc.so.6` → `/usr/lib/x/libc.so.6`). */
function canonical(path: string): string {
  return join(realpathSync(dirname(path)), path.slice(path.lastIndexOf('/') + 1));
}

/**
 * Copies host files into `root`, keeping symlink chains (the link and its target), directories
 * recursively, and for every ELF file its ldd closure. Returns every canonical host path copied.
 */
export class RootfsBuilder {
  readonly root: string;
  private readonly copied = new Set<string>();

  constructor(root: string) {
    this.root = root;
  }

  private into(path: string): string {
    return join(this.root, path);
  }

  /** Creates /bin → usr/bin etc. */
  mergedUsr(): void {
    for (const [link, target] of MERGED_USR_LINKS) {
      mkdirSync(this.into(`/usr/${target.slice(4)}`), { recursive: true });
      if (!existsSync(this.into(link))) symlinkSync(target, this.into(link));
    }
  }

  copyHost(path: string): void {
    if (!existsSync(path) && !isDanglingLink(path)) throw new RootfsError(`${path} is not on this machine (install its Debian package first)`);
    const c = canonical(path);
    if (this.copied.has(c)) return;
    this.copied.add(c);
    const st = lstatSync(c);
    const dest = this.into(c);
    mkdirSync(dirname(dest), { recursive: true });
    if (st.isSymbolicLink()) {
      const target = readlinkSync(c);
      if (!existsSync(dest)) symlinkSync(target, dest);
      const abs = resolve(dirname(c), target);
      if (existsSync(abs)) this.copyHost(abs);
      return;
    }
    if (st.isDirectory()) {
      mkdirSync(dest, { recursive: true });
      chmodSync(dest, st.mode & 0o7777);
      for (const e of readdirSync(c).sort()) this.copyHost(join(c, e));
      return;
    }
    if (!st.isFile()) throw new RootfsError(`${c}: only files, directories and symlinks go into an image`);
    copyFileSync(c, dest);
    chmodSync(dest, st.mode & 0o7777);
    if (st.mode & 0o111 || /\.so(\.|$)/.test(c)) {
      if (isElf(c)) for (const lib of ldd(c)) this.copyHost(lib);
    }
  }

  /** Places a file (from a path or literal content) and, for ELF files, copies their libraries. */
  place(f: PlacedFile): void {
    const dest = this.into(f.dest);
    mkdirSync(dirname(dest), { recursive: true });
    if (f.content !== undefined) writeFileSync(dest, f.content);
    else if (f.src) copyFileSync(f.src, dest);
    else throw new RootfsError(`${f.dest}: a placed file needs src or content`);
    chmodSync(dest, f.mode);
    if (f.src && isElf(f.src)) for (const lib of ldd(f.src)) this.copyHost(lib);
  }

  build(spec: RootfsSpec): void {
    this.mergedUsr();
    for (const [path, mode] of spec.dirs) {
      mkdirSync(this.into(path), { recursive: true });
      chmodSync(this.into(path), mode);
    }
    for (const p of spec.hostPaths) this.copyHost(p);
    for (const f of spec.files) this.place(f);
    for (const [path, target] of spec.symlinks) {
      mkdirSync(dirname(this.into(path)), { recursive: true });
      if (!existsSync(this.into(path)) && !isDanglingLink(this.into(path))) symlinkSync(target, this.into(path));
    }
  }
}

function isDanglingLink(path: string): boolean {
  try { return lstatSync(path).isSymbolicLink(); } catch { return false; }
}

/** Every path in a root filesystem (relative, sorted), for content checks. */
export function listTree(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      out.push(p);
      if (e.isDirectory()) walk(p);
    }
  };
  walk('');
  return out.sort();
}

/** Total bytes of regular files under root (symlinks count 0). */
export function treeBytes(root: string): number {
  let n = 0;
  for (const p of listTree(root)) {
    const st = lstatSync(join(root, p));
    if (st.isFile()) n += st.size;
  }
  return n;
}

/** `ID=` of the build machine's /etc/os-release, for the image labels. */
export function hostOsRelease(): string {
  try {
    const t = readFileSync('/etc/os-release', 'utf8');
    return /^PRETTY_NAME="?([^"\n]*)"?/m.exec(t)?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

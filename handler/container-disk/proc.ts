// Pure parsing for the container-disk mounter (handler/container-disk/mounter.ts): which unix socket
// is a containerDisk helper's `disk_<i>.sock` (/proc/<pid>/net/unix), which process holds it
// (/proc/<pid>/fd links `socket:[inode]`), and whether a path is a mount point (/proc/self/mountinfo).
// Node has no SO_PEERCRED, so the owner is found the way `ss -xp` finds it.

export interface UnixSocketEntry {
  readonly inode: number;
  /** The bound path as the binding process named it (inside its mount namespace); '' when unbound. */
  readonly path: string;
}

/** Parses /proc/net/unix: `Num RefCount Protocol Flags Type St Inode [Path]`. */
export function parseProcNetUnix(text: string): UnixSocketEntry[] {
  const out: UnixSocketEntry[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 7) continue;
    const inode = Number(f[6]);
    if (!Number.isSafeInteger(inode) || inode <= 0) continue;
    out.push({ inode, path: f.slice(7).join(' ') });
  }
  return out;
}

/** `disk_<volumeIndex>` or `kernel-boot`: the helper's socket is `<dir>/<name>.sock`. */
export function containerDiskSocketSuffix(vmiUid: string, name: string): string {
  return `/container-disks/${vmiUid}/${name}.sock`;
}

/** The inodes of the sockets bound at `.../container-disks/<vmiUid>/<name>.sock` (listening ones first in the table). */
export function findContainerDiskSocketInodes(entries: readonly UnixSocketEntry[], vmiUid: string, name: string): number[] {
  if (!vmiUid || !name) return [];
  const suffix = containerDiskSocketSuffix(vmiUid, name);
  return [...new Set(entries.filter((e) => e.path.endsWith(suffix)).map((e) => e.inode))];
}

/** `socket:[12345]` → 12345; anything else → undefined. */
export function socketInodeOfFdLink(link: string): number | undefined {
  const m = /^socket:\[(\d+)\]$/.exec(link);
  return m ? Number(m[1]) : undefined;
}

/** Undoes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`). */
export function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The mount points listed in a /proc/<pid>/mountinfo (field 5), unescaped, in order. */
export function mountPointsOf(mountinfo: string): string[] {
  const out: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const f = line.split(' ');
    if (f.length < 5 || !f[4]) continue;
    out.push(unescapeMountPath(f[4]));
  }
  return out;
}

/** How many times `path` is mounted on (stacked mounts count each). */
export function mountCount(mountinfo: string, path: string): number {
  return mountPointsOf(mountinfo).filter((p) => p === path).length;
}

/** One line of /proc/<pid>/mountinfo. */
export interface MountInfoEntry {
  /** `major:minor` of the filesystem. */
  readonly dev: string;
  /** The directory of the filesystem that is mounted here. */
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  /** Per-superblock options (an overlay's lowerdir/upperdir). */
  readonly superOptions: string;
}

export function parseMountInfo(text: string): MountInfoEntry[] {
  const out: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const dash = f.indexOf('-');
    if (f.length < 5 || dash < 6) continue;
    out.push({ dev: f[2]!, root: unescapeMountPath(f[3]!), mountPoint: unescapeMountPath(f[4]!), fsType: f[dash + 1] ?? '', superOptions: f[dash + 3] ?? '' });
  }
  return out;
}

/** `rel` of `path` below `dir` ('' for the dir itself), or undefined when `path` is not at or below it. */
function below(dir: string, path: string): string | undefined {
  if (dir === '/') return path.replace(/^\/+/, '');
  if (path === dir) return '';
  return path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : undefined;
}

const joinPath = (...parts: string[]) => `/${parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;

/**
 * Where a file inside a container (its path as the container sees it, and the container's
 * mountinfo) can be bind-mounted from in our mount namespace, best first. The kernel bind-mounts
 * only from the caller's own mount namespace, so `/proc/<pid>/root/...` of a container will not do
 * (EINVAL: "wrong fs type, bad option"). Candidates, as KubeVirt's GetImage/MountRoot find them:
 * the same filesystem mounted in our namespace (`ours`: same device, a root at or above the file),
 * then, for an overlay root (containerd's snapshotter), its upper and lower layer directories as
 * the host filesystem shows them at `hostFs` (`/` on the host, the host's root mounted into the
 * handler's pod elsewhere). The caller takes the first that exists.
 */
export function hostPathCandidates(container: readonly MountInfoEntry[], ours: readonly MountInfoEntry[], pathInContainer: string, hostFs: string): string[] {
  let mount: MountInfoEntry | undefined;
  let rel = '';
  for (const m of container) {
    const r = below(m.mountPoint, pathInContainer);
    if (r !== undefined && (!mount || m.mountPoint.length >= mount.mountPoint.length)) { mount = m; rel = r; }
  }
  if (!mount) return [];
  const fsPath = joinPath(mount.root, rel);
  const out: string[] = [];
  let best: { at: string; len: number } | undefined;
  for (const o of ours) {
    if (o.dev !== mount.dev) continue;
    const r = below(o.root, fsPath);
    if (r !== undefined && (!best || o.root.length > best.len)) best = { at: joinPath(o.mountPoint, r), len: o.root.length };
  }
  if (best) out.push(best.at);
  if (mount.fsType === 'overlay' && mount.root === '/') {
    const opts = new Map(mount.superOptions.split(',').map((kv) => { const i = kv.indexOf('='); return i < 0 ? [kv, ''] : [kv.slice(0, i), kv.slice(i + 1)]; }));
    const layers = [opts.get('upperdir'), ...(opts.get('lowerdir') ?? '').split(':')].filter((d): d is string => !!d);
    for (const d of layers) out.push(joinPath(hostFs, d, rel));
  }
  return out;
}

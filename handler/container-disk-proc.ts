// Pure parsing for the container-disk mounter (handler/container-disk-mounter.ts): which unix socket
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

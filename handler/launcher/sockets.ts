// Where virt-handler finds a VMI's launcher: the launcher pod's emptyDirs as kubelet lays them out
// on the node, `<podsDir>/<podUID>/volumes/kubernetes.io~empty-dir/<volume>`. The pod UID comes from
// `status.activePods` filtered by this node (exactly one, or exactly one with a launcher socket). The local pod runner uses the same layout,
// so one lookup serves both. Also the ghost records: `<stateDir>/ghost-records/<uid>` checkpoints
// that let a restarted handler find every launcher it was managing.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { VolumePluginDirs } from '../../src/kube/kubelet-volume-dirs.ts';

export const LAUNCHER_SOCKET = 'launcher-sock';
export const LAUNCHER_UNRESPONSIVE_MARKER = 'launcher-unresponsive';
export const NOTIFY_PIPE_SOCKET = 'domain-notify-pipe.sock';

/** The launcher pod's volumes the handler touches (KubeVirt's names, controller/vmi/volumes.ts). */
export const LauncherVolume = { Private: 'private', Public: 'public', Sockets: 'sockets', ContainerDisks: 'container-disks' } as const;

export interface LauncherPaths {
  readonly podUid: string;
  readonly podDir: string;
  /** The Cmd server socket (`/var/run/kubevirt/sockets/launcher-sock` inside the pod). */
  readonly socket: string;
  readonly unresponsiveMarker: string;
  /** Where the launcher dials the handler (`/var/run/kubevirt/domain-notify-pipe.sock` inside the pod). */
  readonly notifySocket: string;
  /** `/var/run/kubevirt/container-disks` inside the pod. */
  readonly containerDisksDir: string;
  /** `/var/run/kubevirt-private/<vmiUID>` inside the pod: the serial console socket and log. */
  readonly privateVmiDir: string;
}

export class LauncherNotFoundError extends Error {
  override name = 'LauncherNotFoundError';
}

export function emptyDir(podsDir: string, podUid: string, volume: string): string {
  return join(podsDir, podUid, 'volumes', VolumePluginDirs.emptyDir, volume);
}

export function launcherPathsForPod(podsDir: string, podUid: string, vmiUid: string): LauncherPaths {
  const sockets = emptyDir(podsDir, podUid, LauncherVolume.Sockets);
  return {
    podUid,
    podDir: join(podsDir, podUid),
    socket: join(sockets, LAUNCHER_SOCKET),
    unresponsiveMarker: join(sockets, LAUNCHER_UNRESPONSIVE_MARKER),
    notifySocket: join(emptyDir(podsDir, podUid, LauncherVolume.Public), NOTIFY_PIPE_SOCKET),
    containerDisksDir: emptyDir(podsDir, podUid, LauncherVolume.ContainerDisks),
    privateVmiDir: join(emptyDir(podsDir, podUid, LauncherVolume.Private), vmiUid),
  };
}

/** The launcher pod of this VMI on this node, from status.activePods; exactly one must exist. */
export function findLauncher(vmi: VirtualMachineInstance, nodeName: string, podsDir: string): LauncherPaths {
  const active = vmi.status?.activePods ?? {};
  const here = Object.entries(active).filter(([, node]) => node === nodeName).map(([uid]) => uid);
  const ref = `${vmi.metadata?.namespace}/${vmi.metadata?.name}`;
  if (here.length === 0) throw new LauncherNotFoundError(`VMI ${ref}: status.activePods has no launcher pod on node ${nodeName}`);
  const paths = here.map((uid) => launcherPathsForPod(podsDir, uid, vmi.metadata?.uid ?? ''));
  if (paths.length === 1) return paths[0]!;
  // A VMI that migrated back to a node still lists its finished launcher pod there: the one
  // whose launcher socket exists is the live one (KubeVirt's FindSocketOnHost).
  const live = paths.filter((p) => existsSync(p.socket));
  if (live.length === 1) return live[0]!;
  throw new LauncherNotFoundError(`VMI ${ref}: status.activePods has ${here.length} launcher pods on node ${nodeName} (${here.join(', ')}) and ${live.length} of them have a launcher socket; expected one`);
}

/** Recovers the pod UID from a launcher socket path written into a ghost record. */
export function podUidOfSocket(podsDir: string, socket: string): string | undefined {
  const prefix = podsDir.endsWith('/') ? podsDir : `${podsDir}/`;
  if (!socket.startsWith(prefix)) return undefined;
  return socket.slice(prefix.length).split('/')[0];
}

export interface GhostRecord {
  readonly name: string;
  readonly namespace: string;
  readonly socketFile: string;
  readonly uid: string;
}

/** `<stateDir>/ghost-records/<uid>`: one JSON record per launcher the handler has a client for. */
export class GhostRecords {
  readonly dir: string;
  private readonly byKey = new Map<string, GhostRecord>();

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'ghost-records');
  }

  /** Loads every record on disk (a restarted handler's first step); unreadable files are skipped and returned. */
  async load(): Promise<{ records: GhostRecord[]; broken: string[] }> {
    await mkdir(this.dir, { recursive: true });
    const broken: string[] = [];
    for (const f of await readdir(this.dir)) {
      if (f.endsWith('.tmp')) continue;
      try {
        const r = JSON.parse(await readFile(join(this.dir, f), 'utf8')) as Partial<GhostRecord>;
        if (typeof r.name !== 'string' || typeof r.namespace !== 'string' || typeof r.socketFile !== 'string' || typeof r.uid !== 'string' || !r.uid) throw new Error('missing field');
        this.byKey.set(`${r.namespace}/${r.name}`, { name: r.name, namespace: r.namespace, socketFile: r.socketFile, uid: r.uid });
      } catch {
        broken.push(f);
      }
    }
    return { records: [...this.byKey.values()], broken };
  }

  get(key: string): GhostRecord | undefined {
    return this.byKey.get(key);
  }

  list(): GhostRecord[] {
    return [...this.byKey.values()];
  }

  async add(r: GhostRecord): Promise<void> {
    if (!r.uid) throw new Error(`ghost record for ${r.namespace}/${r.name}: uid is empty`);
    const key = `${r.namespace}/${r.name}`;
    const old = this.byKey.get(key);
    if (old && old.uid === r.uid && old.socketFile === r.socketFile) return;
    await mkdir(this.dir, { recursive: true });
    const file = join(this.dir, r.uid);
    await writeFile(`${file}.tmp`, JSON.stringify(r));
    await rename(`${file}.tmp`, file);
    this.byKey.set(key, r);
  }

  async delete(key: string): Promise<void> {
    const r = this.byKey.get(key);
    if (!r) return;
    await rm(join(this.dir, r.uid), { force: true });
    this.byKey.delete(key);
  }
}

/** Unix socket paths are limited to 107 bytes; kubelet's pod paths come close to it. */
export const MAX_UNIX_SOCKET_PATH = 107;

/**
 * A path through which `socket` can be dialled or bound: itself when short enough, else the same
 * file reached through a short symlink to its directory under `<stateDir>/s/` (the kernel follows
 * symlinks in the directory part of a socket path, not in its length limit).
 */
export async function shortSocketPath(socket: string, stateDir: string): Promise<string> {
  if (Buffer.byteLength(socket) <= MAX_UNIX_SOCKET_PATH) return socket;
  const dir = join(stateDir, 's');
  await mkdir(dir, { recursive: true });
  const link = join(dir, createHash('sha256').update(dirname(socket)).digest('hex').slice(0, 12));
  try {
    if ((await readlink(link)) !== dirname(socket)) { await rm(link, { force: true }); await symlink(dirname(socket), link); }
  } catch {
    await rm(link, { force: true });
    await symlink(dirname(socket), link);
  }
  const short = join(link, basename(socket));
  if (Buffer.byteLength(short) > MAX_UNIX_SOCKET_PATH) throw new Error(`socket ${socket}: even through ${short} the path exceeds ${MAX_UNIX_SOCKET_PATH} bytes; use a shorter --state-dir`);
  return short;
}

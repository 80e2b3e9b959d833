// One writer per disk: QEMU locks every image it opens (its file driver's `locking=auto`, on for
// local files: OFD byte-range locks), so a second QEMU opening an image another one writes to
// stops with `Failed to get "write" lock` and `Is another process using the image [PATH]?` — two
// VMIs naming the same PersistentVolumeClaim or hostDisk, or a leftover QEMU of a crashed launcher.
// QEMU's words name a -device JSON and a path inside the launcher's mount namespace; the user
// wrote a volume. Pure: this finds the VMI's volume behind the locked image (the path through the
// argv's -blockdev node names and the plan's devices; else the -device id) and says so.
import type { PlanDevice } from '../convert/plan.ts';
import type { Volume } from '../../src/api/types.ts';

/** One disk of the plan as the lock explanation needs it. */
export interface LockableDisk {
  /** The VMI's disk (and volume) name. */
  readonly name: string;
  /** QEMU's device id (`ua-<name>`). */
  readonly qemuId: string;
  /** The image files behind it: its -blockdev chain's `filename`s. */
  readonly paths: readonly string[];
  /** What the user named: `PersistentVolumeClaim "x"`, `hostDisk /path`, ... */
  readonly source: string;
}

/** The disks of a plan: each device with -blockdev nodes, its chain's files, its volume's source. */
export function lockableDisks(argv: readonly string[], devices: readonly PlanDevice[], volumes: readonly Volume[]): LockableDisk[] {
  const fileOfNode = new Map<string, string>();
  for (let i = 0; i < argv.length - 1; i++) {
    if (argv[i] !== '-blockdev') continue;
    let node: unknown;
    try { node = JSON.parse(argv[i + 1]!); } catch { continue; }
    if (typeof node !== 'object' || node === null) continue;
    const o = node as Record<string, unknown>;
    if (typeof o['node-name'] === 'string' && typeof o['filename'] === 'string') fileOfNode.set(o['node-name'], o['filename']);
  }
  const out: LockableDisk[] = [];
  for (const d of devices) {
    if (!d.nodeNames?.length) continue;
    const paths = d.nodeNames.map((n) => fileOfNode.get(n)).filter((p): p is string => p !== undefined);
    out.push({ name: d.alias, qemuId: d.qemuId, paths, source: volumeSource(volumes.find((v) => v.name === d.alias)) });
  }
  return out;
}

/** How the user named a volume's storage. */
export function volumeSource(v: Volume | undefined): string {
  if (!v) return 'no volume of that name';
  if (v.persistentVolumeClaim) return `PersistentVolumeClaim "${v.persistentVolumeClaim.claimName}"`;
  if (v.dataVolume) return `DataVolume "${v.dataVolume.name}"`;
  if (v.hostDisk) return `hostDisk ${v.hostDisk.path}`;
  if (v.ephemeral?.persistentVolumeClaim) return `ephemeral PersistentVolumeClaim "${v.ephemeral.persistentVolumeClaim.claimName}"`;
  const kind = Object.keys(v).find((k) => k !== 'name');
  return kind ? `${kind} volume` : 'volume';
}

const LOCK_FAILURE = /Failed to (?:get (?:shared )?"[^"]+" lock|lock byte \d+)/;
const LOCKED_IMAGE = /Is another process using the image \[([^\]\n]+)\]\?/;
const DEVICE_ID = /-device (\{[^\n]*?\}): Failed to/;

/**
 * The reason to give when QEMU's output says an image is locked by another process; undefined
 * when it says something else.
 */
export function explainImageLock(qemuOutput: string, disks: readonly LockableDisk[]): string | undefined {
  const failure = LOCK_FAILURE.exec(qemuOutput);
  if (!failure) return undefined;
  const path = LOCKED_IMAGE.exec(qemuOutput)?.[1];
  let disk = path !== undefined ? disks.find((d) => d.paths.includes(path)) : undefined;
  if (!disk) {
    const json = DEVICE_ID.exec(qemuOutput)?.[1];
    let id: unknown;
    try { id = json ? (JSON.parse(json) as Record<string, unknown>)['id'] : undefined; } catch { id = undefined; }
    disk = disks.find((d) => d.qemuId === id);
  }
  const what = disk ? `volume "${disk.name}" (${disk.source})` : 'a disk';
  const image = path ?? disk?.paths[0];
  return `${what} is held by another VM: ${image ? `its image ${image}` : 'its image'} is locked by another QEMU process (QEMU: ${failure[0]}); `
    + 'a disk takes one writer at a time, so this VMI cannot start while the other VM runs';
}

// virt-launcher-monitor's cleanupContainerDiskDirectory: when the launcher ends, the contents of
// `--container-disk-dir` go. A containerDisk container serves its disk until its copy path
// (`<dir>/disk_<i>.sock` in KubeVirt, the disk link `<dir>/disk_<i>.img` or `<dir>/kernel-boot/`
// here) disappears, then exits 0 — so after the VM stops or migrates away the whole launcher pod
// completes (`Completed`, phase Succeeded) instead of keeping its disk containers running.
// Symlinks are removed, never followed.
import { readdir, rm } from '../fs/async.ts';
import { join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';

export async function cleanupContainerDiskDirectory(dir: string, log: Logger): Promise<void> {
  let entries: string[];
  try { entries = await readdir(dir); } catch { return; }
  for (const e of entries) {
    try { await rm(join(dir, e), { recursive: true, force: true }); } catch (err) {
      log.error({ err: (err as Error).message, path: join(dir, e) }, 'could not clean up the container disk directory');
    }
  }
}

// Where a VMI's container disks come from, as the node agent sees it: something that makes each
// containerDisk volume (and kernel-boot artifact) appear in the launcher pod's `container-disks`
// emptyDir, as `disk_<volume index>.img` and `kernel-boot/<basename>`, before the domain is synced.
// On a cluster that is the container-disk containers' filesystems, bind-mounted through
// /proc/<pid>/root (handler/container-disk/mounter.ts, virt-handler's container-disk mounter); in
// the local mode it is the local image store (src/local), which the mode that assembles the node
// agent passes in — the node agent itself never reaches into the local mode.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { Logger } from '../../src/log/logger.ts';

export interface ContainerDiskSource {
  /**
   * Makes every containerDisk (and kernel-boot artifact) of the VMI visible in `containerDisksDir`;
   * what is already there is left alone. Returns the paths made. Throws ContainerDiskNotReadyError
   * while an image is not on the node yet.
   */
  mount(vmi: VirtualMachineInstance, containerDisksDir: string, log: Logger): Promise<string[]>;
  /** Undoes what `mount` left outside the pod for the VMI `uid` (nothing recorded: nothing to do). */
  unmount(uid: string, log: Logger): Promise<void>;
  /** What a previous node agent left mounted, by VMI uid (a restarted agent releases the VMIs it did not re-adopt). */
  load(): Promise<ReadonlyArray<{ readonly uid: string }>>;
  /** Whether anything is recorded as mounted for the VMI `uid`. */
  has(uid: string): boolean;
}

/**
 * An image is not on the node yet (it is being pulled): the node agent waits for it silently for a
 * while, as virt-handler's ContainerDisksReady does, before the sync fails.
 */
export class ContainerDiskNotReadyError extends Error {
  override name = 'ContainerDiskNotReadyError';
}

// The local mode's ContainerDiskSource: a VMI's container disks come from the local image store,
// symlinked into its launcher pod's `container-disks` emptyDir (materializeContainerDisks) where a
// cluster's node agent bind-mounts them from their containers. The links live in the pod's own
// directory and go with it, so nothing is recorded and nothing is left to unmount.
import type { VirtualMachineInstance } from '../api/types.ts';
import { ContainerDiskNotReadyError, type ContainerDiskSource } from '../../handler/container-disk/source.ts';
import { ImageNotPresentError, materializeContainerDisks, type ImageStore } from './image-store.ts';

export class ImageStoreContainerDisks implements ContainerDiskSource {
  readonly store: ImageStore;

  constructor(store: ImageStore) {
    this.store = store;
  }

  async mount(vmi: VirtualMachineInstance, containerDisksDir: string): Promise<string[]> {
    try {
      return await materializeContainerDisks({ volumes: vmi.spec.volumes, kernelBoot: vmi.spec.domain.firmware?.kernelBoot }, this.store, containerDisksDir);
    } catch (err) {
      // Not pulled yet (the pod runner pulls it): the node agent waits for it.
      if (err instanceof ImageNotPresentError) throw new ContainerDiskNotReadyError(err.message, { cause: err });
      throw err;
    }
  }

  async unmount(): Promise<void> {}

  async load(): Promise<ReadonlyArray<{ readonly uid: string }>> {
    return [];
  }

  has(): boolean {
    return false;
  }
}

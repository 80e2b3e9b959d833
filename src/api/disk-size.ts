// How big a disk.img KubeVirt creates in an empty Filesystem claim (ReplacePVCByHostDisk,
// util.AlignImageSizeTo1MiB): the request when there is no capacity or the capacity is larger,
// else the capacity; aligned down to a whole MiB. The launcher sizes a claim's image with it, the
// node agent a hotplugged claim's.

/** Disk images are sized down to a multiple of 1 MiB (util.AlignImageSizeTo1MiB). */
export const IMAGE_SIZE_ALIGNMENT = 1024 * 1024;

/** util.AlignImageSizeTo1MiB: round down to a whole MiB. */
export const alignImageSizeTo1MiB = (size: number): number => size - (size % IMAGE_SIZE_ALIGNMENT);

/** The size of a new disk.img of `volume` from its claim's capacity and requested storage, in bytes. */
export function pvcDiskSize(volume: string, claim: { readonly capacity?: number | undefined; readonly requests?: number | undefined } | undefined): number | { error: string } {
  const capacity = claim?.capacity;
  const requests = claim?.requests;
  if (capacity === undefined && requests === undefined) return { error: 'unable to determine capacity of HostDisk from PVC that provides no storage capacity or requests' };
  const raw = requests !== undefined && (capacity === undefined || capacity > requests) ? requests : capacity!;
  const size = alignImageSizeTo1MiB(raw);
  if (size <= 0) return { error: `the size for volume ${volume} is too low, must be at least 1MiB` };
  return size;
}

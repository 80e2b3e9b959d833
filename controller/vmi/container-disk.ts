// The container-disk containers of a launcher pod (pkg/container-disk/container-disk.go): per
// containerDisk volume an init container `volume<name>-init` that pulls the image early and a
// container `volume<name>` that keeps its filesystem reachable for the launcher, both running the
// `container-disk` helper that the `container-disk-binary` init container copied into the shared
// bin dir. The helper is qvirt's; the pod shape is KubeVirt's.
import { NON_ROOT_UID, PodPath } from '../../src/api/constants.ts';
import { CONTAINER_DISK_COMMAND, CONTAINER_DISK_CONTAINER_PREFIX, KERNEL_BOOT_NAME, KERNEL_BOOT_VOLUME_NAME, PodVolumes } from '../constants.ts';
import type { Container, ContainerResources } from '../pod.ts';
import type { PullPolicy, VirtualMachineInstance } from '../../src/api/types.ts';

/** Where the launcher finds the disk images of this VMI: `/var/run/kubevirt/container-disks/<uid>`. */
export const containerDiskMountDir = (vmi: VirtualMachineInstance) => `${PodPath.ContainerDisks}/${vmi.metadata?.uid ?? ''}`;

/** `volume<name>`. */
export const containerDiskContainerName = (volumeName: string) => `${CONTAINER_DISK_CONTAINER_PREFIX}${volumeName}`;

interface DiskSource {
  readonly name: string;
  readonly image: string;
  readonly imagePullPolicy?: PullPolicy | undefined;
  /** `disk_<volumeIndex>` for disks, `kernel-boot` for the kernel boot image. */
  readonly mountedName: string;
}

function sources(vmi: VirtualMachineInstance, imageIDs: ReadonlyMap<string, string>): DiskSource[] {
  const out: DiskSource[] = [];
  (vmi.spec.volumes ?? []).forEach((v, index) => {
    if (!v.containerDisk || v.name === KERNEL_BOOT_VOLUME_NAME) return;
    out.push({ name: v.name, image: imageIDs.get(v.name) ?? v.containerDisk.image, imagePullPolicy: v.containerDisk.imagePullPolicy, mountedName: `disk_${index}` });
  });
  return out;
}

function kernelBootSource(vmi: VirtualMachineInstance, imageIDs: ReadonlyMap<string, string>): DiskSource | undefined {
  const kb = vmi.spec.domain.firmware?.kernelBoot?.container;
  if (!kb?.image) return undefined;
  return { name: KERNEL_BOOT_VOLUME_NAME, image: imageIDs.get(KERNEL_BOOT_VOLUME_NAME) ?? kb.image, imagePullPolicy: kb.imagePullPolicy, mountedName: KERNEL_BOOT_NAME };
}

function render(vmi: VirtualMachineInstance, src: DiskSource, init: boolean, resources: ContainerResources): Container {
  const dir = containerDiskMountDir(vmi);
  const c: Container = {
    name: containerDiskContainerName(src.name) + (init ? '-init' : ''),
    image: src.image,
    command: [...CONTAINER_DISK_COMMAND],
    args: init ? ['--no-op'] : ['--copy-path', `${dir}/${src.mountedName}`],
    volumeMounts: [
      { name: PodVolumes.ContainerDisks, mountPath: dir },
      { name: PodVolumes.VirtBinShareDir, mountPath: PodPath.DiskContainerBinDir },
    ],
    resources: structuredClone(resources),
    securityContext: { runAsUser: NON_ROOT_UID, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  };
  if (src.imagePullPolicy) c.imagePullPolicy = src.imagePullPolicy;
  return c;
}

/** The long-running `volume<name>` containers (then `kernel-boot-volume`), in volume order. */
export function containerDiskContainers(vmi: VirtualMachineInstance, imageIDs: ReadonlyMap<string, string>, resources: ContainerResources): Container[] {
  const out = sources(vmi, imageIDs).map((s) => render(vmi, s, false, resources));
  const kb = kernelBootSource(vmi, imageIDs);
  if (kb) out.push(render(vmi, kb, false, resources));
  return out;
}

/** The `volume<name>-init` containers (then `kernel-boot-volume-init`), in volume order. */
export function containerDiskInitContainers(vmi: VirtualMachineInstance, imageIDs: ReadonlyMap<string, string>, resources: ContainerResources): Container[] {
  const out = sources(vmi, imageIDs).map((s) => render(vmi, s, true, resources));
  const kb = kernelBootSource(vmi, imageIDs);
  if (kb) out.push(render(vmi, kb, true, resources));
  return out;
}

export function hasContainerDisks(vmi: VirtualMachineInstance): boolean {
  return (vmi.spec.volumes ?? []).some((v) => v.containerDisk !== undefined) || !!vmi.spec.domain.firmware?.kernelBoot?.container?.image;
}

/**
 * `ExtractImageIDsFromSourcePod`: the exact images (by digest) the source pod's container-disk
 * containers run, so a migration target uses the same bits. Throws when a digest is missing.
 */
export function imageIDsFromSourcePod(vmi: VirtualMachineInstance, containerStatuses: readonly { name: string; imageID?: string }[]): Map<string, string> {
  const ids = new Map<string, string>();
  for (const v of vmi.spec.volumes ?? []) if (v.containerDisk) ids.set(v.name, v.containerDisk.image);
  const kb = vmi.spec.domain.firmware?.kernelBoot?.container?.image;
  if (kb) ids.set(KERNEL_BOOT_VOLUME_NAME, kb);
  for (const status of containerStatuses) {
    if (!status.name.startsWith(CONTAINER_DISK_CONTAINER_PREFIX)) continue;
    const key = status.name.slice(CONTAINER_DISK_CONTAINER_PREFIX.length);
    const image = ids.get(key);
    if (image === undefined) continue;
    const digest = /sha256:([a-zA-Z0-9]+)/.exec(status.imageID ?? '')?.[1];
    if (!digest) throw new Error(`container disk ${key}: cannot pin image ${image} for migration: no digest in imageID ${JSON.stringify(status.imageID ?? '')}`);
    let base = image;
    if (image.includes('@sha256:')) base = image.split('@sha256:')[0]!;
    else if (image.lastIndexOf(':') > image.lastIndexOf('/')) base = image.slice(0, image.lastIndexOf(':'));
    ids.set(key, `${base}@sha256:${digest}`);
  }
  return ids;
}

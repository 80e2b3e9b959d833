// Where a hotplugged claim's disk image is on this node, decided from the claim and its
// PersistentVolume (pure). A volume the kubelet mounts for the attachment pod — CSI, NFS, iSCSI,
// local, ... — is at `<podsDir>/<podUID>/volumes/kubernetes.io~<plugin>/<pvName>`, CSI's one level
// deeper in `mount`. A `hostPath` volume gets no such directory (the kubelet hands the host path to
// the container as it is): it is the directory the PV names. A `local` volume's pod directory is a
// bind of the PV's path, which serves when the pod directory is not found. KubeVirt's image is
// `disk.img` in that directory; an empty Filesystem claim gets a sparse one of the claim's size
// (src/api/disk-size.ts).
import { join } from 'node:path';
import { pvcDiskSize } from '../../src/api/disk-size.ts';
import { quantityToNumber } from '../../src/api/quantity.ts';
import type { PersistentVolumeClaimInfo } from '../../src/api/types.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { VolumePluginDirs } from '../../src/kube/kubelet-volume-dirs.ts';

export const DISK_IMAGE = 'disk.img';

export interface Claim extends KubeObject {
  spec?: { volumeName?: string; volumeMode?: string; accessModes?: string[]; resources?: { requests?: Record<string, string> } };
  status?: { phase?: string; capacity?: Record<string, string>; accessModes?: string[] };
}

export interface PersistentVolume extends KubeObject {
  spec?: { volumeMode?: string; hostPath?: { path: string }; local?: { path: string }; csi?: { driver: string; volumeHandle: string } };
}

/** A host directory a PV names, and the field that names it (for errors). */
export interface HostDir {
  readonly dir: string;
  readonly field: string;
}

export type DiskSource =
  /** hostPath: the host directory. */
  | ({ readonly kind: 'host' } & HostDir)
  /** The attachment pod's mount of the volume, found under the pods dir; a local PV's path when there is none. */
  | { readonly kind: 'podVolume'; readonly pvName: string; readonly fallback?: HostDir | undefined };

export class HotplugDiskError extends Error {
  override name = 'HotplugDiskError';
}

/** Where the node finds the claim's filesystem. Block volumes are refused: qvirt's node agent does not attach block devices yet. */
export function diskSourceOf(claimRef: string, claim: Claim, pv: PersistentVolume): DiskSource {
  const pvName = pv.metadata?.name ?? '';
  if (claim.spec?.volumeMode === 'Block' || pv.spec?.volumeMode === 'Block') {
    throw new HotplugDiskError(`PersistentVolumeClaim ${claimRef}: volumeMode Block is not supported for hotplug by qvirt's node agent (Filesystem claims only)`);
  }
  if (pv.spec?.hostPath?.path) return { kind: 'host', dir: pv.spec.hostPath.path, field: `PersistentVolume ${pvName} spec.hostPath.path` };
  if (pv.spec?.local?.path) return { kind: 'podVolume', pvName, fallback: { dir: pv.spec.local.path, field: `PersistentVolume ${pvName} spec.local.path` } };
  return { kind: 'podVolume', pvName };
}

/** The kubelet's mount of a pod volume found at `<volumesDir>/<plugin>/<pvName>`: CSI's filesystem is in `mount` beneath. */
export function podVolumeMountDir(volumesDir: string, plugin: string, pvName: string): string {
  return plugin === VolumePluginDirs.csi ? join(volumesDir, plugin, pvName, 'mount') : join(volumesDir, plugin, pvName);
}

const bytes = (q: string | undefined, what: string): number | undefined => {
  if (q === undefined) return undefined;
  try {
    return quantityToNumber(q);
  } catch (err) {
    throw new HotplugDiskError(`${what}: ${(err as Error).message}`);
  }
};

/** The size of a new disk.img for an empty Filesystem claim. */
export function diskImageSize(volume: string, claimRef: string, claim: Claim): number {
  const size = pvcDiskSize(volume, {
    capacity: bytes(claim.status?.capacity?.storage, `PersistentVolumeClaim ${claimRef} status.capacity.storage`),
    requests: bytes(claim.spec?.resources?.requests?.storage, `PersistentVolumeClaim ${claimRef} spec.resources.requests.storage`),
  });
  if (typeof size !== 'number') throw new HotplugDiskError(`PersistentVolumeClaim ${claimRef}: ${size.error}`);
  return size;
}

/** status.volumeStatus[].persistentVolumeClaimInfo of a mounted hotplug claim. */
export function claimInfo(claimName: string, claim: Claim): PersistentVolumeClaimInfo {
  const capacity = claim.status?.capacity?.storage;
  const requests = claim.spec?.resources?.requests?.storage;
  return {
    claimName,
    volumeMode: 'Filesystem',
    accessModes: (claim.status?.accessModes ?? claim.spec?.accessModes ?? []) as PersistentVolumeClaimInfo['accessModes'],
    ...(capacity ? { capacity: { storage: capacity } } : {}),
    ...(requests ? { requests: { storage: requests } } : {}),
  };
}

// The launcher pod's volumes, the compute container's mounts and block devices
// (pkg/virt-controller/services/rendervolumes.go). Always: emptyDirs private, public, sockets,
// virt-bin-share-dir, libvirt-runtime, ephemeral-disks, container-disks. Then, in KubeVirt's
// order: secret/configMap/downwardAPI volumes (mounted only if a disk uses them), the VMI's
// PVC/ephemeral/dataVolume/hostDisk/downwardMetrics/cloud-init-secret/sysprep volumes,
// access-credential secrets, hugepages, the hotplug-disks dir, virtiofs.
import { PodPath } from '../../src/api/constants.ts';
import { PodVolumes } from '../constants.ts';
import type { PodVolume, VolumeMount } from '../pod.ts';
import type { PersistentVolumeAccessMode, PersistentVolumeMode, VirtualMachineInstance, Volume } from '../../src/api/types.ts';

/** What the renderer needs to know about a PVC the VMI uses (from the PVC informer). */
export interface PVCInfo {
  readonly volumeMode?: PersistentVolumeMode | undefined;
  readonly accessModes?: readonly PersistentVolumeAccessMode[] | undefined;
}

/** A PVC the VMI names does not exist: KubeVirt's PvcNotFoundError → reason FailedPvcNotFound. */
export class PvcNotFoundError extends Error {
  override name = 'PvcNotFoundError';
  readonly reason = 'FailedPvcNotFound';
  readonly claimName: string;
  readonly namespace: string;
  constructor(namespace: string, claimName: string, volumeName: string) {
    super(`didn't find PVC ${claimName} (namespace ${namespace}, used by volume ${volumeName})`);
    this.claimName = claimName;
    this.namespace = namespace;
  }
}

export interface RenderedVolumes {
  readonly volumes: PodVolume[];
  readonly mounts: VolumeMount[];
  readonly devices: { name: string; devicePath: string }[];
  /** Filesystem PVC mounts shared with other pods (ReadWriteMany): `SHARED_FILESYSTEM_PATHS`. */
  readonly sharedFilesystemPaths: string[];
}

const emptyDir = (name: string): PodVolume => ({ name, emptyDir: {} });
const mount = (name: string, mountPath: string): VolumeMount => ({ name, mountPath });

/** `hostdisk.GetMountedHostDiskDir`: where a hostDisk or filesystem PVC is mounted in compute. */
export const hostDiskDir = (volumeName: string) => `${PodPath.VMIDisks}/${volumeName}`;

const dirname = (p: string) => {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
};

/** Volumes hot-plugged at runtime live in attachment pods, not in the launcher pod. */
function hotplugVolumeNames(vmi: VirtualMachineInstance): Set<string> {
  const names = new Set<string>();
  for (const s of vmi.status?.volumeStatus ?? []) if (s.hotplugVolume !== undefined) names.add(s.name);
  for (const v of vmi.spec.volumes ?? []) if (v.dataVolume?.hotpluggable || v.persistentVolumeClaim?.hotpluggable) names.add(v.name);
  return names;
}

export function renderVolumes(vmi: VirtualMachineInstance, pvcs: ReadonlyMap<string, PVCInfo>): RenderedVolumes {
  const namespace = vmi.metadata?.namespace ?? '';
  const podVolumes: PodVolume[] = [];
  const podMounts: VolumeMount[] = [];
  const devices: { name: string; devicePath: string }[] = [];
  const shared: string[] = [];
  const specVolumes = vmi.spec.volumes ?? [];
  const devicesSpec = vmi.spec.domain.devices;

  // secret / configMap / downwardAPI: pod volume always, mount when a disk uses it
  const byName = new Map<string, Volume>();
  for (const v of specVolumes) {
    byName.set(v.name, v);
    if (v.secret) podVolumes.push({ name: v.name, secret: { ...(v.secret.secretName !== undefined ? { secretName: v.secret.secretName } : {}), ...(v.secret.optional !== undefined ? { optional: v.secret.optional } : {}) } });
    if (v.configMap) podVolumes.push({ name: v.name, configMap: { ...(v.configMap.name !== undefined ? { name: v.configMap.name } : {}), ...(v.configMap.optional !== undefined ? { optional: v.configMap.optional } : {}) } });
    if (v.downwardAPI) podVolumes.push({ name: v.name, downwardAPI: { items: [...(v.downwardAPI.fields ?? [])] } });
  }
  for (const disk of devicesSpec.disks ?? []) {
    const v = byName.get(disk.name);
    if (!v) continue;
    if (v.secret) podMounts.push({ name: v.name, mountPath: `${PodPath.SecretVolumes}/${v.name}`, readOnly: true });
    if (v.configMap) podMounts.push({ name: v.name, mountPath: `${PodPath.ConfigMapVolumes}/${v.name}`, readOnly: true });
    if (v.downwardAPI) podMounts.push({ name: v.name, mountPath: `${PodPath.DownwardAPIVolumes}/${v.name}`, readOnly: true });
  }

  // the VMI's storage volumes
  const hotplug = hotplugVolumeNames(vmi);
  const addPVC = (v: Volume, claimName: string) => {
    const info = pvcs.get(claimName);
    if (!info) throw new PvcNotFoundError(namespace, claimName, v.name);
    if (info.volumeMode === 'Block') devices.push({ name: v.name, devicePath: `/dev/${v.name}` });
    else {
      podMounts.push(mount(v.name, hostDiskDir(v.name)));
      if ((info.accessModes ?? []).includes('ReadWriteMany')) shared.push(hostDiskDir(v.name));
    }
  };
  const cloudInitSecrets = (v: Volume, src: NonNullable<Volume['cloudInitNoCloud']>) => {
    for (const [ref, suffix, files] of [
      [src.secretRef, 'udata', ['userdata', 'userData']],
      [src.networkDataSecretRef, 'ndata', ['networkdata', 'networkData']],
    ] as const) {
      if (!ref) continue;
      const name = `${v.name}-${suffix}`;
      podVolumes.push({ name, secret: { ...(ref.name !== undefined ? { secretName: ref.name } : {}) } });
      for (const f of files) podMounts.push({ name, mountPath: `${PodPath.SecretVolumes}/${v.name}/${f}`, subPath: f, readOnly: true });
    }
  };
  for (const v of specVolumes) {
    if (hotplug.has(v.name)) continue;
    if (v.persistentVolumeClaim) {
      addPVC(v, v.persistentVolumeClaim.claimName);
      podVolumes.push({ name: v.name, persistentVolumeClaim: { claimName: v.persistentVolumeClaim.claimName, ...(v.persistentVolumeClaim.readOnly ? { readOnly: true } : {}) } });
    }
    if (v.ephemeral?.persistentVolumeClaim) {
      addPVC(v, v.ephemeral.persistentVolumeClaim.claimName);
      podVolumes.push({ name: v.name, persistentVolumeClaim: { ...v.ephemeral.persistentVolumeClaim } });
    }
    if (v.hostDisk) {
      podMounts.push(mount(v.name, hostDiskDir(v.name)));
      const type = v.hostDisk.type === 'DiskOrCreate' ? 'DirectoryOrCreate' : v.hostDisk.type === 'Disk' ? 'Directory' : '';
      podVolumes.push({ name: v.name, hostPath: { path: dirname(v.hostDisk.path), type } });
    }
    if (v.dataVolume) {
      addPVC(v, v.dataVolume.name);
      podVolumes.push({ name: v.name, persistentVolumeClaim: { claimName: v.dataVolume.name } });
    }
    if (v.downwardMetrics) {
      podVolumes.push({ name: v.name, emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } });
      podMounts.push(mount(v.name, PodPath.DownwardMetricsDisk));
    }
    if (v.cloudInitNoCloud) cloudInitSecrets(v, v.cloudInitNoCloud);
    if (v.sysprep) {
      const src = v.sysprep.secret ? { secret: { ...(v.sysprep.secret.name !== undefined ? { secretName: v.sysprep.secret.name } : {}) } } : { configMap: { ...(v.sysprep.configMap?.name !== undefined ? { name: v.sysprep.configMap.name } : {}) } };
      podVolumes.push({ name: v.name, ...src });
      podMounts.push({ name: v.name, mountPath: `${PodPath.SysprepVolumes}/${v.name}`, readOnly: true });
    }
    if (v.cloudInitConfigDrive) cloudInitSecrets(v, v.cloudInitConfigDrive);
  }

  // access credentials
  for (const ac of vmi.spec.accessCredentials ?? []) {
    const secretName = ac.sshPublicKey?.source?.secret?.secretName ?? ac.userPassword?.source?.secret?.secretName ?? '';
    if (!secretName) continue;
    const name = `${secretName}-access-cred`;
    podVolumes.push({ name, secret: { secretName } });
    podMounts.push({ name, mountPath: `${PodPath.SecretVolumes}/${name}`, readOnly: true });
  }

  // hugepages
  if (vmi.spec.domain.memory?.hugepages) {
    podVolumes.push({ name: PodVolumes.Hugepages, emptyDir: { medium: 'HugePages' } });
    podMounts.push(mount(PodVolumes.Hugepages, PodPath.HugePages));
    podVolumes.push({ name: PodVolumes.HugetlbfsDir, emptyDir: { medium: 'HugePages' } });
    podMounts.push(mount(PodVolumes.HugetlbfsDir, `${PodPath.HugePages}/libvirt/qemu`));
  }

  // hotplug disks appear here (bind-mounted by the node agent)
  if (!devicesSpec.disableHotplug) {
    podMounts.push({ name: PodVolumes.HotplugDisks, mountPath: PodPath.HotplugDisks, mountPropagation: 'HostToContainer' });
    podVolumes.push(emptyDir(PodVolumes.HotplugDisks));
  }

  // virtiofs shares
  if ((devicesSpec.filesystems ?? []).some((f) => f.virtiofs !== undefined)) {
    podMounts.push(mount('virtiofs-containers', `${PodPath.Public}/virtiofs-containers`));
    podVolumes.push(emptyDir('virtiofs-containers'));
  }

  const baseVolumes = [PodVolumes.Private, PodVolumes.Public, PodVolumes.Sockets, PodVolumes.VirtBinShareDir, PodVolumes.LibvirtRuntime, PodVolumes.EphemeralDisks, PodVolumes.ContainerDisks].map(emptyDir);
  const baseMounts: VolumeMount[] = [
    mount(PodVolumes.Private, PodPath.Private),
    mount(PodVolumes.Public, PodPath.Public),
    mount(PodVolumes.EphemeralDisks, PodPath.EphemeralDisks),
    mount(PodVolumes.LibvirtRuntime, PodPath.LibvirtRuntime),
    mount(PodVolumes.Sockets, PodPath.Sockets),
    { name: PodVolumes.ContainerDisks, mountPath: PodPath.ContainerDisks, mountPropagation: 'HostToContainer' },
  ];
  return { volumes: [...baseVolumes, ...podVolumes], mounts: [...baseMounts, ...podMounts], devices, sharedFilesystemPaths: shared };
}

/** The serviceAccount volume's account name: the pod runs as it, with its token mounted. */
export function serviceAccountNameFromVolumes(vmi: VirtualMachineInstance): string | undefined {
  return (vmi.spec.volumes ?? []).find((v) => v.serviceAccount !== undefined)?.serviceAccount?.serviceAccountName;
}

/** Pull secrets of container disks (deduplicated, in volume order). */
export function containerDiskPullSecrets(vmi: VirtualMachineInstance): string[] {
  const out: string[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    const s = v.containerDisk?.imagePullSecret;
    if (s && !out.includes(s)) out.push(s);
  }
  return out;
}

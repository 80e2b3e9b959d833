// The node agent's device plugins: KubeVirt's resource namespace, socket names and the permanent
// host devices every node offers (pkg/virt-handler/device-manager: PermanentHostDevicePlugins).

/** Extended resources are `devices.kubevirt.io/<device>`. */
export const DEVICE_NAMESPACE = 'devices.kubevirt.io';
/** KubeVirt's `--max-devices` default: how many pods per node may hold one device. */
export const DEFAULT_MAX_DEVICES = 1000;

/** `kubevirt-<device>.sock` in the kubelet's device-plugins dir (`SocketPath`). */
export const pluginSocketName = (deviceName: string): string => `kubevirt-${deviceName}.sock`;

export interface HostDevice {
  readonly name: string;
  readonly path: string;
  /** tun and vhost-net are opened once so their modules load; the hypervisor device is not. */
  readonly preOpen: boolean;
}

/** The hypervisor device (`kvm`), `tun` and `vhost-net`, with the node paths the pods get. */
export function permanentHostDevices(hypervisorDevice = 'kvm'): HostDevice[] {
  return [
    { name: hypervisorDevice, path: `/dev/${hypervisorDevice}`, preOpen: false },
    { name: 'tun', path: '/dev/net/tun', preOpen: true },
    { name: 'vhost-net', path: '/dev/vhost-net', preOpen: true },
  ];
}

/** `rw`, or `rwm` on a cgroup v2 host (older runc's eBPF device filter denies access() without m). */
export function devicePermissions(cgroupV2: boolean): string {
  return cgroupV2 ? 'rwm' : 'rw';
}

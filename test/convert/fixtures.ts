// Golden VMIs for the converter, in the style of KubeVirt's examples/*.yaml, as they look after
// KubeVirt's defaulting (machine q35, firmware uuid, features {}, host-model CPU with a 1/1/1
// topology, amd64 disk bus sata where unset, the default pod interface). Each comes with the
// disk files launcher/disks would have prepared, relative to a root directory, so the same VMI
// renders a stable golden argv (root "") and really starts QEMU (root = a temp dir).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { ConvertContext, ResolvedVolume } from '../../launcher/convert/index.ts';

export interface FixtureImage {
  /** Path below the root. */
  path: string;
  format: 'raw' | 'qcow2';
  /** qemu-img size for a fresh image, or the backing image for an overlay. */
  size?: string;
  backing?: { path: string; format: 'raw' | 'qcow2'; size: string };
}

export interface Fixture {
  name: string;
  vmi: VirtualMachineInstance;
  images: Record<string, FixtureImage>;
  /** Kernel-boot artifacts (created as minimal bzImage headers for the QEMU check). */
  kernelBoot?: boolean;
  /** Volume properties that only the launcher knows (direct-I/O probe, preallocation). */
  volumeOverrides?: Record<string, Partial<ResolvedVolume>>;
}

export const UID = '5f3c0e8a-2d7b-4c1e-9a6f-1b2c3d4e5f60';
const FW_UUID = '8795fe87-6b9e-5a1b-9a0c-2f4e6d8c1a3b';

const CONTAINER_DISK = (vol: string, index: number): FixtureImage => ({
  path: `/var/run/kubevirt-ephemeral-disks/disk-data/${vol}/disk.qcow2`,
  format: 'qcow2',
  backing: { path: `/var/run/kubevirt/container-disks/disk_${index}.img`, format: 'raw', size: '8M' },
});
const NOCLOUD: FixtureImage = { path: '/var/run/kubevirt-ephemeral-disks/cloud-init-data/default/testvmi/noCloud.iso', format: 'raw', size: '1M' };
const PVC = (vol: string): FixtureImage => ({ path: `/var/run/kubevirt-private/vmi-disks/${vol}/disk.img`, format: 'raw', size: '16M' });
const EMPTY_DISK = (vol: string): FixtureImage => ({ path: `/var/run/libvirt/empty-disks/${vol}.qcow2`, format: 'qcow2', size: '32M' });

interface VmiOpts {
  name: string;
  memory?: string;
  spec?: Partial<VirtualMachineInstance['spec']>;
  domain?: Partial<VirtualMachineInstance['spec']['domain']>;
  devices?: Partial<VirtualMachineInstance['spec']['domain']['devices']>;
  podNetwork?: boolean;
  annotations?: Record<string, string>;
}

/** A VMI as KubeVirt's defaulting leaves it. */
export function defaultedVMI(o: VmiOpts): VirtualMachineInstance {
  const pod = o.podNetwork !== false;
  const meta: NonNullable<VirtualMachineInstance['metadata']> = { name: o.name, namespace: 'default', uid: UID };
  if (o.annotations) meta.annotations = o.annotations;
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: meta,
    spec: {
      architecture: 'amd64',
      terminationGracePeriodSeconds: 0,
      networks: pod ? [{ name: 'default', pod: {} }] : [],
      ...o.spec,
      domain: {
        machine: { type: 'q35' },
        resources: { requests: { memory: o.memory ?? '128Mi' } },
        memory: { guest: o.memory ?? '128Mi' },
        cpu: { cores: 1, sockets: 1, threads: 1, model: 'host-model' },
        firmware: { uuid: FW_UUID },
        features: {},
        ...o.domain,
        devices: {
          interfaces: pod ? [{ name: 'default', bridge: {} }] : [],
          ...o.devices,
        },
      },
    },
    status: { phase: 'Scheduled', memory: { guestAtBoot: o.memory ?? '128Mi', guestCurrent: o.memory ?? '128Mi', guestRequested: o.memory ?? '128Mi' } },
  };
}

const containerDiskVolume = (name: string, image = 'registry:5000/kubevirt/cirros-container-disk-demo:devel') => ({
  name,
  containerDisk: { image, imagePullPolicy: 'IfNotPresent' as const },
});
const cloudInitVolume = { name: 'cloudinitdisk', cloudInitNoCloud: { userData: '#cloud-config\npassword: fedora\nchpasswd: { expire: False }\n' } };

export const FIXTURES: Fixture[] = [
  {
    name: 'vmi-ephemeral',
    vmi: defaultedVMI({
      name: 'vmi-ephemeral',
      devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-nocloud',
    vmi: defaultedVMI({
      name: 'vmi-nocloud',
      devices: {
        disks: [
          { name: 'containerdisk', disk: { bus: 'virtio' } },
          { name: 'cloudinitdisk', disk: { bus: 'virtio' } },
          { name: 'emptydisk', disk: { bus: 'virtio' } },
        ],
      },
      spec: { volumes: [containerDiskVolume('containerdisk', 'registry:5000/kubevirt/fedora-with-test-tooling-container-disk:devel'), cloudInitVolume, { name: 'emptydisk', emptyDisk: { capacity: '2Gi' } }] },
      memory: '1024M',
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0), cloudinitdisk: NOCLOUD, emptydisk: EMPTY_DISK('emptydisk') },
  },
  {
    name: 'vmi-sata',
    vmi: defaultedVMI({
      name: 'vmi-sata',
      // examples/vmi-sata.yaml lists no disks; defaulting adds `disk: {}` (bus left to the arch default, sata)
      devices: { disks: [{ name: 'containerdisk', disk: {} }] },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-pvc',
    vmi: defaultedVMI({
      name: 'vmi-pvc',
      devices: { disks: [{ name: 'pvcdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [{ name: 'pvcdisk', persistentVolumeClaim: { claimName: 'disk-alpine' } }] },
    }),
    images: { pvcdisk: PVC('pvcdisk') },
    volumeOverrides: { pvcdisk: { preallocated: true } },
  },
  {
    name: 'vmi-host-disk',
    vmi: defaultedVMI({
      name: 'vmi-host-disk',
      memory: '100M', // not 8 KiB aligned: exercises QEMU's -m rounding
      devices: { disks: [{ name: 'host-disk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [{ name: 'host-disk', hostDisk: { path: '/data/disk.img', type: 'DiskOrCreate', capacity: '1Gi' } }] },
    }),
    images: { 'host-disk': { path: '/var/run/kubevirt-private/vmi-disks/host-disk/disk.img', format: 'raw', size: '16M' } },
    volumeOverrides: { 'host-disk': { directIO: false } },
  },
  {
    name: 'vmi-kernel-boot',
    vmi: defaultedVMI({
      name: 'vmi-kernel-boot',
      domain: {
        firmware: {
          uuid: FW_UUID,
          kernelBoot: {
            kernelArgs: 'console=ttyS0',
            container: { image: 'registry:5000/kubevirt/alpine-ext-kernel-boot-demo:devel', kernelPath: '/boot/vmlinuz-virt', initrdPath: '/boot/initramfs-virt', imagePullPolicy: 'IfNotPresent' },
          },
        },
      },
      devices: { disks: [] },
      spec: { volumes: [] },
    }),
    images: {},
    kernelBoot: true,
  },
  {
    name: 'vmi-alpine-efi',
    vmi: defaultedVMI({
      name: 'vmi-alpine-efi',
      domain: { firmware: { uuid: FW_UUID, bootloader: { efi: { secureBoot: false } } } },
      devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk', 'registry:5000/kubevirt/alpine-container-disk-demo:devel')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-secureboot',
    vmi: defaultedVMI({
      name: 'vmi-secureboot',
      domain: { firmware: { uuid: FW_UUID, bootloader: { efi: { secureBoot: true } } }, features: { smm: { enabled: true } } },
      devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk', 'registry:5000/kubevirt/fedora-with-test-tooling-container-disk:devel')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vm-alpine-multipvc-bootorder',
    vmi: defaultedVMI({
      name: 'vm-alpine-multipvc',
      devices: {
        disks: [
          { name: 'datadisk', disk: { bus: 'virtio' }, bootOrder: 2, serial: 'DATA-0001' },
          { name: 'rootdisk', disk: { bus: 'virtio' }, bootOrder: 1 },
          { name: 'installcd', cdrom: { bus: 'sata' }, bootOrder: 3 },
        ],
        interfaces: [{ name: 'default', masquerade: {}, bootOrder: 4 }],
      },
      spec: {
        volumes: [
          { name: 'datadisk', persistentVolumeClaim: { claimName: 'pvc-data' } },
          { name: 'rootdisk', persistentVolumeClaim: { claimName: 'pvc-root' } },
          { name: 'installcd', persistentVolumeClaim: { claimName: 'pvc-iso' } },
        ],
      },
    }),
    images: { datadisk: PVC('datadisk'), rootdisk: PVC('rootdisk'), installcd: PVC('installcd') },
  },
  {
    name: 'vmi-cdrom',
    vmi: defaultedVMI({
      name: 'vmi-cdrom',
      devices: {
        disks: [
          { name: 'containerdisk', disk: { bus: 'virtio' } },
          { name: 'cdrom-iso', cdrom: { bus: 'sata', readonly: true, tray: 'closed' } },
          { name: 'cdrom-empty', cdrom: { bus: 'sata', readonly: true, tray: 'closed' } },
          { name: 'cdrom-open', cdrom: { bus: 'sata', readonly: true, tray: 'open' } },
        ],
      },
      spec: { volumes: [containerDiskVolume('containerdisk'), { name: 'cdrom-iso', persistentVolumeClaim: { claimName: 'iso' } }, { name: 'cdrom-open', persistentVolumeClaim: { claimName: 'iso2' } }] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0), 'cdrom-iso': PVC('cdrom-iso'), 'cdrom-open': PVC('cdrom-open') },
  },
  {
    name: 'vmi-lun',
    vmi: defaultedVMI({
      name: 'vmi-lun',
      devices: {
        disks: [
          { name: 'containerdisk', disk: { bus: 'virtio' } },
          { name: 'lun0', lun: { bus: 'scsi' } },
        ],
      },
      spec: { volumes: [containerDiskVolume('containerdisk'), { name: 'lun0', persistentVolumeClaim: { claimName: 'lun-pvc' } }] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0), lun0: PVC('lun0') },
  },
  {
    name: 'vmi-scsi',
    vmi: defaultedVMI({
      name: 'vmi-scsi',
      devices: {
        disks: [
          { name: 'containerdisk', disk: { bus: 'scsi' }, bootOrder: 1 },
          { name: 'scsi-cd', cdrom: { bus: 'scsi' } },
          { name: 'scsi-data', disk: { bus: 'scsi' }, cache: 'writeback', errorPolicy: 'report' },
          { name: 'scsi-cd-empty', cdrom: { bus: 'scsi' } },
        ],
      },
      spec: { volumes: [containerDiskVolume('containerdisk'), { name: 'scsi-cd', persistentVolumeClaim: { claimName: 'iso' } }, { name: 'scsi-data', emptyDisk: { capacity: '1Gi' } }] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0), 'scsi-cd': PVC('scsi-cd'), 'scsi-data': EMPTY_DISK('scsi-data') },
  },
  {
    name: 'vmi-cpu-topology',
    vmi: defaultedVMI({
      name: 'vmi-cpu-topology',
      domain: { cpu: { sockets: 2, cores: 2, threads: 1, maxSockets: 4, model: 'host-model', features: [{ name: 'pcid', policy: 'require' }, { name: 'monitor', policy: 'disable' }] } },
      devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-memory-hotplug',
    vmi: (() => {
      const v = defaultedVMI({
        name: 'vmi-memory-hotplug',
        memory: '1Gi',
        devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
        spec: { volumes: [containerDiskVolume('containerdisk')] },
      });
      v.spec.domain.memory = { guest: '1Gi', maxGuest: '4Gi' };
      return v;
    })(),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-no-interfaces',
    vmi: defaultedVMI({
      name: 'vmi-no-interfaces',
      podNetwork: false,
      devices: { autoattachPodInterface: false, disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-inputs',
    vmi: defaultedVMI({
      name: 'vmi-inputs',
      devices: {
        disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }],
        inputs: [{ name: 'tablet0', bus: 'usb', type: 'tablet' }, { name: 'tablet1', bus: 'virtio', type: 'tablet' }],
      },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-watchdog',
    vmi: defaultedVMI({
      name: 'vmi-watchdog',
      devices: {
        disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }],
        watchdog: { name: 'mywatchdog', i6300esb: { action: 'poweroff' } },
        rng: {},
        panicDevices: [{ model: 'isa' }, { model: 'pvpanic' }],
      },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-disable-hotplug',
    vmi: defaultedVMI({
      name: 'vmi-disable-hotplug',
      devices: { disableHotplug: true, autoattachMemBalloon: false, autoattachGraphicsDevice: false, autoattachSerialConsole: false, disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-windows-like',
    vmi: defaultedVMI({
      name: 'vmi-windows',
      memory: '2Gi',
      domain: {
        clock: { utc: {}, timer: { hpet: { present: false }, pit: { tickPolicy: 'delay' }, rtc: { tickPolicy: 'catchup' }, hyperv: {} } },
        features: {
          acpi: {},
          apic: {},
          smm: {},
          hyperv: { relaxed: {}, vapic: {}, spinlocks: { spinlocks: 8191 }, vpindex: {}, runtime: {}, synic: {}, synictimer: { direct: {} }, reset: {}, frequencies: {}, reenlightenment: {}, tlbflush: {}, ipi: {} },
        },
        firmware: { uuid: FW_UUID, bootloader: { efi: { secureBoot: true } } },
      },
      devices: {
        disks: [{ name: 'pvcdisk', disk: { bus: 'sata' } }],
        interfaces: [{ name: 'default', masquerade: {}, model: 'e1000' }],
      },
      spec: { volumes: [{ name: 'pvcdisk', persistentVolumeClaim: { claimName: 'disk-windows' } }] },
    }),
    images: { pvcdisk: PVC('pvcdisk') },
  },
  {
    name: 'vmi-transitional',
    vmi: defaultedVMI({
      name: 'vmi-transitional',
      devices: { useVirtioTransitional: true, rng: {}, disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }, { name: 'cloudinitdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk'), cloudInitVolume] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0), cloudinitdisk: NOCLOUD },
  },
  {
    name: 'vmi-many-sata',
    vmi: defaultedVMI({
      name: 'vmi-many-sata',
      devices: { disks: Array.from({ length: 8 }, (_, i) => ({ name: `disk${i}`, disk: { bus: 'sata' as const } })) },
      spec: { volumes: Array.from({ length: 8 }, (_, i) => ({ name: `disk${i}`, emptyDisk: { capacity: '1Gi' } })) },
    }),
    images: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`disk${i}`, EMPTY_DISK(`disk${i}`)])),
  },
  {
    name: 'vmi-usb-disk',
    vmi: defaultedVMI({
      name: 'vmi-usb-disk',
      devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }, { name: 'usbstick', disk: { bus: 'usb' }, serial: 'USB-1' }] },
      spec: { volumes: [containerDiskVolume('containerdisk'), { name: 'usbstick', emptyDisk: { capacity: '64Mi' } }] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0), usbstick: EMPTY_DISK('usbstick') },
  },
  {
    name: 'vmi-root-complex',
    vmi: defaultedVMI({
      name: 'vmi-root-complex',
      annotations: { 'kubevirt.io/placePCIDevicesOnRootComplex': 'true' },
      devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] },
      spec: { volumes: [containerDiskVolume('containerdisk')] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
  {
    name: 'vmi-iothreads',
    vmi: defaultedVMI({
      name: 'vmi-iothreads',
      domain: { ioThreadsPolicy: 'auto', resources: { requests: { memory: '128Mi', cpu: '2' } }, cpu: { sockets: 2, cores: 1, threads: 1, model: 'host-model' } },
      devices: {
        blockMultiQueue: true,
        disks: [
          { name: 'containerdisk', disk: { bus: 'virtio' }, dedicatedIOThread: true },
          { name: 'data1', disk: { bus: 'virtio' }, blockSize: { custom: { logical: 512, physical: 4096 } } },
          { name: 'data2', disk: { bus: 'virtio' }, cache: 'writethrough', io: 'threads' },
          { name: 'data3', disk: { bus: 'virtio', readonly: true }, errorPolicy: 'enospace' },
        ],
      },
      spec: { volumes: [containerDiskVolume('containerdisk'), { name: 'data1', emptyDisk: { capacity: '1Gi' } }, { name: 'data2', emptyDisk: { capacity: '1Gi' } }, { name: 'data3', emptyDisk: { capacity: '1Gi' } }] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0), data1: EMPTY_DISK('data1'), data2: EMPTY_DISK('data2'), data3: EMPTY_DISK('data3') },
  },
  {
    name: 'vmi-clock-paused',
    vmi: defaultedVMI({
      name: 'vmi-clock-paused',
      spec: { startStrategy: 'Paused', volumes: [containerDiskVolume('containerdisk')] },
      domain: {
        clock: { utc: { offsetSeconds: 3600 }, timer: { rtc: { track: 'guest' }, kvm: { present: false } } },
        firmware: { uuid: FW_UUID, serial: 'SER,IAL-1', bootloader: { bios: { useSerial: true } } },
        chassis: { manufacturer: 'Acme', asset: 'A-1' },
        rebootPolicy: 'Terminate',
      },
      devices: { logSerialConsole: false, disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }], interfaces: [{ name: 'default', masquerade: {}, model: 'rtl8139', macAddress: '02:00:00:aa:bb:cc', state: 'down' }] },
    }),
    images: { containerdisk: CONTAINER_DISK('containerdisk', 0) },
  },
];

/** The launcher's context for a fixture, with every path below `root` ("" for goldens). */
export function fixtureContext(f: Fixture, root: string, extra: Partial<ConvertContext> = {}): ConvertContext {
  const volumes: Record<string, ResolvedVolume> = {};
  for (const [name, img] of Object.entries(f.images)) {
    const v: ResolvedVolume = { path: root + img.path, format: img.format, ...f.volumeOverrides?.[name] };
    if (img.backing) v.backing = { path: root + img.backing.path, format: img.backing.format };
    volumes[name] = v;
  }
  const ctx: ConvertContext = {
    qemu: { binary: '/usr/bin/qemu-system-x86_64', machine: 'pc-q35-7.2', version: { major: 7, minor: 2, micro: 22 } },
    accelerator: 'tcg',
    paths: {
      privateDir: `${root}/var/run/kubevirt-private/${UID}`,
      nvramDir: `${root}/var/run/kubevirt-private/libvirt/qemu/nvram`,
    },
    volumes,
    ovmf: {
      code: '/usr/share/OVMF/OVMF_CODE_4M.fd',
      vars: '/usr/share/OVMF/OVMF_VARS_4M.fd',
      secureBootCode: '/usr/share/OVMF/OVMF_CODE_4M.secboot.fd',
      secureBootVars: '/usr/share/OVMF/OVMF_VARS_4M.ms.fd',
    },
    monitorFd: { fd: 3 },
    now: new Date('2026-11-21T12:00:00Z'),
    ...extra,
  };
  if (f.kernelBoot) ctx.kernelBoot = { kernel: `${root}/var/run/kubevirt/container-disks/kernel-boot/vmlinuz-virt`, initrd: `${root}/var/run/kubevirt/container-disks/kernel-boot/initramfs-virt` };
  return ctx;
}

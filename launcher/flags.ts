// The launcher's command line: virt-launcher's flags (so a launcher pod rendered the KubeVirt way
// starts qvirt's launcher unchanged), plus the few qvirt adds for machines without containers.
import type { FlagSpecs } from '../src/flags/flags.ts';

export const launcherFlags = {
  name: { type: 'string', value: 'NAME', help: 'name of the VirtualMachineInstance' },
  uid: { type: 'string', value: 'UID', help: 'uid of the VirtualMachineInstance' },
  namespace: { type: 'string', value: 'NS', help: 'namespace of the VirtualMachineInstance' },
  'qemu-timeout': { type: 'duration', value: 'DURATION', default: '3m', help: 'how long to wait for the handler to start the domain' },
  'kubevirt-share-dir': { type: 'string', value: 'DIR', default: '/var/run/kubevirt', help: 'shared directory: sockets/ and the notify socket' },
  'ephemeral-disk-dir': { type: 'string', value: 'DIR', default: '/var/run/kubevirt-ephemeral-disks', help: 'overlays and cloud-init seeds' },
  'container-disk-dir': { type: 'string', value: 'DIR', default: '/var/run/kubevirt/container-disks', help: 'where container disks are made visible' },
  'hotplug-disk-dir': { type: 'string', value: 'DIR', default: '/var/run/kubevirt/hotplug-disks', help: 'where hotplugged disks appear' },
  'grace-period-seconds': { type: 'number', value: 'N', default: 30, help: 'how long a graceful shutdown may take before QEMU is destroyed' },
  'allow-emulation': { type: 'boolean', help: 'use software emulation (TCG) when KVM cannot run guests (KubeVirt useEmulation)' },
  'keep-after-failure': { type: 'boolean', help: 'stay alive after QEMU failed, for debugging' },
  'ovmf-path': { type: 'string', value: 'DIR', help: 'directory with OVMF_CODE_4M.fd etc. (default: /usr/share/OVMF or /usr/share/edk2/ovmf)' },
  'disk-memory-limit': { type: 'number', value: 'BYTES', default: 2097152000, help: 'memory limit for qemu-img when inspecting container disks' },
  hypervisor: { type: 'string', value: 'NAME', default: 'kvm', help: 'hypervisor (only kvm, with TCG fallback)' },
  'hook-sidecars': { type: 'number', value: 'N', default: 0, help: 'number of hook sidecars (qvirt supports none)' },
  'run-as-nonroot': { type: 'boolean', help: 'the VMI runs as the qemu user (107): images are owned by it' },
  'libvirt-log-filters': { type: 'string', value: 'FILTERS', help: 'accepted for compatibility; there is no libvirt' },
  'image-volume': { type: 'boolean', help: 'accepted for compatibility' },
  'upgrade-ordinal-ifaces': { type: 'boolean', help: 'accepted for compatibility' },
  'vgpu-dedicated-hook': { type: 'boolean', help: 'accepted for compatibility' },
  'vm-stats-collector': { type: 'boolean', help: 'accepted for compatibility' },
  'firmware-auto-selection': { type: 'boolean', help: 'accepted for compatibility' },
  'simulate-crash': { type: 'boolean', help: 'accepted for compatibility (KubeVirt functional tests)' },
  // qvirt's own
  root: { type: 'string', value: 'DIR', help: 'the container root the KubeVirt paths above are under (local mode; env QVIRT_CONTAINER_ROOT)' },
  'vcpu-cgroup': { type: 'string', value: 'DIR', help: 'a cgroup v1 directory the guest\'s vCPU threads move to, below the node\'s control threads (local mode; env QVIRT_VCPU_CGROUP)' },
  'cache-dir': { type: 'string', value: 'DIR', help: 'node-wide cache of the KVM probe and QEMU facts (default /var/cache/qvirt, env QVIRT_CACHE_DIR)' },
  qemu: { type: 'string', value: 'PATH', default: 'qemu-system-x86_64', help: 'QEMU binary (env QVIRT_QEMU)' },
  'notify-socket': { type: 'string', value: 'PATH', help: 'the handler\'s Notify socket (default <kubevirt-share-dir>/domain-notify-pipe.sock); "none" disables events' },
} as const satisfies FlagSpecs;

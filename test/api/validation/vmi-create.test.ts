// The VMI create admitter's rules (vmi-create-admitter.go, with the network, disk and Hyper-V rules), table-tested.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PartialClusterConfig } from '../../../src/api/cluster-config.ts';
import { defaultNewVirtualMachineInstance } from '../../../src/api/defaults.ts';
import { decodeKubeVirtObject } from '../../../src/api/parse.ts';
import type { VirtualMachineInstance } from '../../../src/api/types.ts';
import { validateVirtualMachineInstance } from '../../../src/api/validation/vmi-create.ts';
import { loadExample } from '../fixtures.ts';
import { config, env, fmt, vm, vmiErrors } from './lib.ts';

const D = 'spec.domain.devices';
// [rule, mutation, expected errors (exact); [] = valid]
const cases: [string, (v: any) => void, string[], PartialClusterConfig?][] = [
  ['baseline is valid', () => {}, []],
  // memory
  ['no memory at all', (v) => { delete v.spec.domain.memory; }, [
    "spec.domain.memory.guest: no memory requested, at least one of 'spec.domain.memory.guest', 'spec.domain.memory.hugepages.pageSize' or 'spec.domain.resources.requests.memory' must be set",
  ]],
  ['memory from requests only is fine', (v) => { delete v.spec.domain.memory; v.spec.domain.resources = { requests: { memory: '64Mi' } }; }, []],
  ['hugepages only is fine', (v) => { v.spec.domain.memory = { hugepages: { pageSize: '2Mi' } }; }, []],
  ['request below 1M', (v) => { v.spec.domain.resources = { requests: { memory: '1k' } }; }, [
    "spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '1k': must be greater than or equal to 1M.",
  ]],
  ['request above limit', (v) => { v.spec.domain.resources = { requests: { memory: '2Gi' }, limits: { memory: '1Gi' } }; }, [
    "spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '2Gi' is greater than spec.domain.resources.limits.memory '1Gi'",
  ]],
  ['negative limit', (v) => { v.spec.domain.resources = { limits: { memory: '-1Gi' } }; }, [
    "spec.domain.resources.limits.memory: spec.domain.resources.limits.memory '-1Gi': must be greater than or equal to 0.",
  ]],
  ['guest above limit with Stage rollout', (v) => { v.spec.domain.resources = { limits: { memory: '64Mi' } }; }, [
    "spec.domain.memory.guest: spec.domain.memory.guest '128Mi' must be equal to or less than the memory limit spec.domain.resources.limits.memory '64Mi'",
  ], { vmRolloutStrategy: 'Stage' }],
  ['guest above limit allowed with LiveUpdate', (v) => { v.spec.domain.resources = { limits: { memory: '64Mi' } }; }, []],
  ['hugepages larger than memory', (v) => { v.spec.domain.memory.hugepages = { pageSize: '1Gi' }; }, [
    "spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '0' must be equal to or larger than page size spec.domain.memory.hugepages.pageSize '1Gi'",
  ]],
  ['memory not a multiple of the page size', (v) => { v.spec.domain.memory = { guest: '3Mi', hugepages: { pageSize: '2Mi' } }; }, [
    "spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '0' is not a multiple of the page size spec.domain.memory.hugepages.pageSize '2Mi'",
  ]],
  // negative or zero memory (issue 22: a guest of -5Mi was accepted)
  ['negative guest memory', (v) => { v.spec.domain.memory.guest = '-5Mi'; }, [
    "spec.domain.memory.guest: spec.domain.memory.guest '-5Mi': must be greater than or equal to 0.",
  ]],
  ['zero guest memory', (v) => { v.spec.domain.memory.guest = '0'; v.spec.domain.resources = { requests: { memory: '64Mi' } }; }, [
    "spec.domain.memory.guest: spec.domain.memory.guest '0': must be greater than or equal to 1M.",
  ]],
  ['guest memory below 1M', (v) => { v.spec.domain.memory.guest = '512k'; }, [
    "spec.domain.memory.guest: spec.domain.memory.guest '512k': must be greater than or equal to 1M.",
  ]],
  ['negative request', (v) => { v.spec.domain.resources = { requests: { memory: '-64Mi' } }; }, [
    "spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '-64Mi': must be greater than or equal to 0.",
  ]],
  ['a guest defaulted from a refused request is not refused twice', (v) => { v.spec.domain.memory.guest = '-64Mi'; v.spec.domain.resources = { requests: { memory: '-64Mi' } }; }, [
    "spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '-64Mi': must be greater than or equal to 0.",
  ]],
  ['a guest defaulted from a refused limit is not refused twice', (v) => { v.spec.domain.memory.guest = '-1Gi'; v.spec.domain.resources = { limits: { memory: '-1Gi' } }; }, [
    "spec.domain.resources.limits.memory: spec.domain.resources.limits.memory '-1Gi': must be greater than or equal to 0.",
  ]],
  ['zero hugepage size', (v) => { v.spec.domain.memory = { guest: '128Mi', hugepages: { pageSize: '0' } }; }, [
    "spec.domain.memory.hugepages.pageSize: spec.domain.memory.hugepages.pageSize '0' must be greater than zero",
  ]],
  ['negative hugepage size, the guest defaulted from it', (v) => { v.spec.domain.memory = { guest: '-2Mi', hugepages: { pageSize: '-2Mi' } }; }, [
    "spec.domain.memory.hugepages.pageSize: spec.domain.memory.hugepages.pageSize '-2Mi' must be greater than zero",
  ]],
  // cpu
  ['cpu request above limit', (v) => { v.spec.domain.resources = { requests: { cpu: '2' }, limits: { cpu: '1' } }; }, [
    "spec.domain.resources.requests.cpu: spec.domain.resources.requests.cpu '2' is greater than spec.domain.resources.limits.cpu '1'",
  ]],
  ['sockets above maxSockets', (v) => { v.spec.domain.cpu.sockets = 5; }, [
    'spec.domain.cpu.sockets: Number of sockets in CPU topology is greater than the maximum sockets allowed',
  ]],
  ['isolateEmulatorThread without dedicated CPUs', (v) => { v.spec.domain.cpu.isolateEmulatorThread = true; }, [
    'spec.domain.cpu.isolateEmulatorThread: IsolateEmulatorThread should be only set in combination with DedicatedCPUPlacement',
  ]],
  ['unknown CPU feature policy', (v) => { v.spec.domain.cpu.features = [{ name: 'pcid', policy: 'maybe' }]; }, [
    'spec.domain.cpu.features[0].policy: CPU feature pcid uses policy maybe that is not supported.',
  ]],
  ['dedicated CPUs with fractional request', (v) => { v.spec.domain.cpu.dedicatedCpuPlacement = true; v.spec.domain.resources = { requests: { cpu: '1500m' } }; }, [
    'spec.domain.resources.requests.cpu: provided resources CPU requests must be an interger',
    'spec.domain.cpu.dedicatedCpuPlacement: spec.domain.resources.requests.cpu or spec.domain.resources.limits.cpu must not be provided at the same time with spec.domain.cpu.cores when DedicatedCPUPlacement is true ',
  ]],
  ['dedicated CPUs with three threads', (v) => { v.spec.domain.cpu.dedicatedCpuPlacement = true; v.spec.domain.cpu.threads = 3; }, [
    'spec.domain.cpu.dedicatedCpuPlacement: Not more than two threads must be provided at spec.domain.cpu.threads (got 3) when DedicatedCPUPlacement is true',
  ]],
  ['realtime needs dedicated CPUs and NUMA passthrough', (v) => { v.spec.domain.cpu.realtime = {}; }, [
    'spec.domain.cpu.dedicatedCpuPlacement: spec.domain.cpu.dedicatedCpuPlacement must be set to true when spec.domain.cpu.realtime is used',
    'spec.domain.cpu.numa.guestMappingPassthrough: spec.domain.cpu.numa.guestMappingPassthrough must be defined when spec.domain.cpu.realtime is used',
  ]],
  ['startStrategy Paused with a liveness probe', (v) => { v.spec.startStrategy = 'Paused'; v.spec.livenessProbe = { guestAgentPing: {} }; }, [
    'spec.startStrategy: either spec.startStrategy or spec.livenessProbe should be provided.Pausing VMI with LivenessProbe is not supported',
  ]],
  // names, volumes, disks
  ['disk without volume', (v) => { v.spec.domain.devices.disks.push({ name: 'ghost', disk: { bus: 'virtio' } }); }, [
    `${D}.disks[3].name: ${D}.disks[3].Name 'ghost' not found.`,
  ]],
  ['volume without disk', (v) => { v.spec.volumes.push({ name: 'lonely', emptyDisk: { capacity: '1Gi' } }); }, [
    "spec.volumes[3].name: spec.volumes[3].name 'lonely' not found.",
  ]],
  ['duplicate disk names', (v) => { v.spec.domain.devices.disks[2].name = 'containerdisk'; }, [
    `${D}.disks[2].name: ${D}.disks[2] and ${D}.disks[0] must not have the same Name.`,
    "spec.volumes[2].name: spec.volumes[2].name 'emptydisk' not found.",
  ]],
  ['duplicate volume names', (v) => { v.spec.volumes[2].name = 'containerdisk'; }, [
    'spec.volumes[2].name: spec.volumes[2] and spec.volumes[0] must not have the same Name.',
    `${D}.disks[2].name: ${D}.disks[2].Name 'emptydisk' not found.`,
  ]],
  ['disk name not a DNS label', (v) => { v.spec.domain.devices.disks[0].name = 'Container_Disk'; v.spec.volumes[0].name = 'Container_Disk'; }, [
    `${D}.disks[0].name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
  ]],
  ['two targets on one disk', (v) => { v.spec.domain.devices.disks[2].cdrom = { bus: 'sata' }; }, [
    `${D}.disks[2]: ${D}.disks[2] can only have a single target type defined`,
  ]],
  ['two sources on one volume', (v) => { v.spec.volumes[2].containerDisk = { image: 'x:1' }; }, [
    'spec.volumes[2]: spec.volumes[2] must have exactly one source type set',
  ]],
  ['no source on a volume', (v) => { delete v.spec.volumes[2].emptyDisk; }, [
    'spec.volumes[2]: spec.volumes[2] must have exactly one source type set',
  ]],
  ['virtio cdrom', (v) => { v.spec.domain.devices.disks[2] = { name: 'emptydisk', cdrom: { bus: 'virtio' } }; }, [
    `${D}.disks[2].cdrom.bus: Bus type virtio is invalid for CD-ROM device`,
  ]],
  ['read-only sata disk', (v) => { v.spec.domain.devices.disks[2].disk = { bus: 'sata', readonly: true }; }, [
    `${D}.disks[2].disk.bus: sata hard-disks do not support read-only.`,
  ]],
  ['dedicated IO thread on sata', (v) => { v.spec.domain.devices.disks[2] = { name: 'emptydisk', disk: { bus: 'sata' }, dedicatedIOThread: true }; }, [
    `${D}.disks[2]: IOThreads are not supported for disks on a sata bus`,
  ]],
  ['lun on an emptyDisk', (v) => { v.spec.domain.devices.disks[2] = { name: 'emptydisk', lun: { bus: 'scsi' } }; }, [
    `${D}.disks[2].lun: ${D}.disks[2].lun can only be mapped to a DataVolume or PersistentVolumeClaim volume.`,
  ]],
  ['pciAddress on non-virtio and malformed', (v) => { v.spec.domain.devices.disks[2].disk = { bus: 'sata', pciAddress: '0000:00:1' }; }, [
    `${D}.disks[2].disk.pciAddress: disk ${D}.disks[2].name - setting a PCI address is only possible with bus type virtio.`,
    `${D}.disks[2].disk.pciAddress: disk ${D}.disks[2].name has malformed PCI address (0000:00:1).`,
  ]],
  ['bad serial', (v) => { v.spec.domain.devices.disks[0].serial = 'a b'; }, [
    `${D}.disks[0].serial: ${D}.disks[0] must be made up of the following characters [A-Za-z0-9_.+-], if specified`,
  ]],
  ['boot order zero and duplicate', (v) => { v.spec.domain.devices.disks[0].bootOrder = 0; v.spec.domain.devices.disks[1].bootOrder = 1; v.spec.domain.devices.interfaces[0].bootOrder = 1; }, [
    `${D}.disks[0].bootOrder: ${D}.disks[0] must have a boot order > 0, if supplied`,
    `${D}.interfaces[0].bootOrder: Boot order for ${D}.interfaces[0].bootOrder already set for a different device.`,
  ]],
  ['custom block size not a power of two', (v) => { v.spec.domain.devices.disks[0].blockSize = { custom: { logical: 512, physical: 3000 } }; }, [
    `${D}.disks[0].blockSize.custom.physical: Provided size of 3000 is not a power of 2`,
  ]],
  // cloud-init
  ['cloud-init with no data', (v) => { v.spec.volumes[1].cloudInitNoCloud = {}; }, [
    'spec.volumes[1].cloudInitNoCloud: spec.volumes[1].cloudInitNoCloud must have at least one userdatasource or one networkdatasource set.',
  ]],
  ['cloud-init networkData only is fine', (v) => { v.spec.volumes[1].cloudInitNoCloud = { networkData: 'version: 2' }; }, []],
  ['cloud-init with two user data sources', (v) => { v.spec.volumes[1].cloudInitNoCloud.userDataBase64 = Buffer.from('#!/bin/sh').toString('base64'); }, [
    'spec.volumes[1].cloudInitNoCloud: spec.volumes[1].cloudInitNoCloud must have only one userdatasource set.',
  ]],
  ['cloud-init user data over 2048 bytes', (v) => { v.spec.volumes[1].cloudInitNoCloud.userData = 'x'.repeat(2049); }, [
    'spec.volumes[1].cloudInitNoCloud: spec.volumes[1].cloudInitNoCloud userdata exceeds 2048 byte limit. Should use UserDataSecretRef for larger data.',
  ]],
  ['cloud-init bad base64', (v) => { v.spec.volumes[1].cloudInitNoCloud = { userDataBase64: 'not base64!' }; }, [
    'spec.volumes[1].cloudInitNoCloud.userDataBase64: spec.volumes[1].cloudInitNoCloud.userDataBase64.cloudInitNoCloud.userDataBase64 is not a valid base64 value.',
  ]],
  ['config drive network data over 2048 bytes', (v) => { v.spec.volumes[1] = { name: 'cloudinitdisk', cloudInitConfigDrive: { networkData: 'n'.repeat(2049) } }; }, [
    'spec.volumes[1].cloudInitConfigDrive: spec.volumes[1].cloudInitConfigDrive networkdata exceeds 2048 byte limit. Should use NetworkDataSecretRef for larger data.',
  ]],
  // hostDisk / emptyDisk
  ['hostDisk needs the HostDisk gate', (v) => { v.spec.volumes[2] = { name: 'emptydisk', hostDisk: { path: '/d.img', type: 'DiskOrCreate', capacity: '1Gi' } }; }, [
    'spec.volumes[2]: HostDisk feature gate is not enabled',
  ], { developerConfiguration: { featureGates: [] } }],
  ['hostDisk Disk type with capacity', (v) => { v.spec.volumes[2] = { name: 'emptydisk', hostDisk: { path: '/d.img', type: 'Disk', capacity: '1Gi' } }; }, [
    "spec.volumes[2].hostDisk.capacity: spec.volumes[2].hostDisk.capacity is allowed to pass only with spec.volumes[2].hostDisk.type equal to 'DiskOrCreate'",
  ]],
  ['hostDisk empty path', (v) => { v.spec.volumes[2] = { name: 'emptydisk', hostDisk: { path: '', type: 'Disk' } }; }, [
    'spec.volumes[2].hostDisk.path: spec.volumes[2].hostDisk.path is required for hostDisk volume',
  ]],
  ['emptyDisk of zero capacity', (v) => { v.spec.volumes[2].emptyDisk.capacity = '0'; }, [
    'spec.volumes[2].emptyDisk.capacity: spec.volumes[2].emptyDisk.capacity must be greater than zero',
  ]],
  ['containerDisk path with ..', (v) => { v.spec.volumes[0].containerDisk.path = '/disk/../etc'; }, [
    'spec.volumes[0].containerDisk: spec.volumes[0].containerDisk must be an absolute path to a file without relative components',
  ]],
  ['configMap without name', (v) => { v.spec.volumes[2] = { name: 'emptydisk', configMap: {} }; }, [
    'spec.volumes[2].configMap.name: spec.volumes[2].configMap.name is a required field',
  ]],
  ['two serviceAccount volumes', (v) => {
    v.spec.volumes.push({ name: 'sa1', serviceAccount: { serviceAccountName: 'a' } }, { name: 'sa2', serviceAccount: { serviceAccountName: 'b' } });
    v.spec.domain.devices.disks.push({ name: 'sa1', disk: { bus: 'virtio' } }, { name: 'sa2', disk: { bus: 'virtio' } });
  }, ['spec.volumes: spec.volumes must have max one serviceAccount volume set']],
  // networks and interfaces
  ['interface without network', (v) => { v.spec.domain.devices.interfaces.push({ name: 'extra', bridge: {} }); }, [
    `${D}.interfaces[1].name: ${D}.interfaces[1].name 'extra' not found.`,
  ]],
  ['network without interface', (v) => { v.spec.networks.push({ name: 'net2', multus: { networkName: 'n' } }); }, [
    "spec.networks[1].name: spec.networks[1].name 'net2' not found.",
  ]],
  ['two pod networks', (v) => { v.spec.networks.push({ name: 'p2', pod: {} }); v.spec.domain.devices.interfaces.push({ name: 'p2', masquerade: {} }); }, [
    'spec.interfaces: more than one interface is connected to a pod network in spec.interfaces',
  ]],
  ['network with two sources', (v) => { v.spec.networks[0].multus = { networkName: 'x' }; }, [
    'spec.networks[0]: should have only one network type',
  ]],
  ['network with no source', (v) => { delete v.spec.networks[0].pod; }, [
    'spec.networks[0]: should have a network type',
  ]],
  ['duplicate network names', (v) => { v.spec.networks.push({ name: 'default', multus: { networkName: 'x' } }); }, [
    'spec.networks[1].name: Network with name "default" already exists, every network must have a unique name',
  ]],
  ['interface with two bindings', (v) => { v.spec.domain.devices.interfaces[0].masquerade = {}; }, [
    `${D}.interfaces[0]: logical default interface must have exactly one binding method or binding plugin`,
  ]],
  ['masquerade on a multus network', (v) => { v.spec.networks[0] = { name: 'default', multus: { networkName: 'x' } }; v.spec.domain.devices.interfaces[0] = { name: 'default', masquerade: {} }; }, [
    `${D}.interfaces[0].name: Masquerade interface only implemented with pod network`,
  ]],
  ['bridge on pod network not permitted', () => {}, [
    `${D}.interfaces[0].name: Bridge on pod network configuration is not enabled under kubevirt-config`,
  ], { network: { permitBridgeInterfaceOnPodNetwork: false } }],
  ['slirp is discontinued', (v) => { v.spec.domain.devices.interfaces[0] = { name: 'default', slirp: {} }; }, [
    `${D}.interfaces[0]: logical default interface must have exactly one binding method or binding plugin`,
    `${D}.interfaces[0].slirp: Slirp interface support has been discontinued since v1.3`,
  ]],
  ['malformed MAC', (v) => { v.spec.domain.devices.interfaces[0].macAddress = '02:00:00:00:00'; }, [
    `${D}.interfaces[0].macAddress: interface ${D}.interfaces[0].name has malformed MAC address (02:00:00:00:00).`,
  ]],
  ['reserved masquerade MAC', (v) => { v.spec.domain.devices.interfaces[0] = { name: 'default', masquerade: {}, macAddress: '02:00:00:00:00:00' }; }, [
    `${D}.interfaces[0].macAddress: The requested MAC address is reserved for the in-pod bridge. Please choose another one.`,
  ]],
  ['unsupported NIC model', (v) => { v.spec.domain.devices.interfaces[0].model = 'vmxnet3'; }, [
    `${D}.interfaces[0].model: interface ${D}.interfaces[0].name uses model vmxnet3 that is not supported.`,
  ]],
  ['interface name with a dot', (v) => { v.spec.domain.devices.interfaces[0].name = 'a.b'; v.spec.networks[0].name = 'a.b'; }, [
    `${D}.interfaces[0].name: Network interface name can only contain alphabetical characters, numbers, dashes (-) or underscores (_)`,
  ]],
  ['ports: zero, out of range, bad protocol, duplicate and invalid names', (v) => {
    v.spec.domain.devices.interfaces[0].ports = [{ name: 'http', port: 0 }, { name: 'http', port: 70000, protocol: 'SCTP' }, { name: 'Bad_Name', port: 22 }];
  }, [
    `${D}.interfaces[0].ports[1].name: Duplicate name of the port: http`,
    `${D}.interfaces[0].ports[2].name: Invalid name of the port: Bad_Name`,
    `${D}.interfaces[0].ports[0].port: Port field is mandatory.`,
    `${D}.interfaces[0].ports[1].port: Port field must be in range 0 < x < 65536.`,
    `${D}.interfaces[0].ports[1].protocol: Unknown protocol, only TCP or UDP allowed`,
  ]],
  ['DHCP private option out of range', (v) => { v.spec.domain.devices.interfaces[0].dhcpOptions = { privateOptions: [{ option: 12, value: 'x' }] }; }, [
    `${D}.interfaces[0]: provided DHCPPrivateOptions are out of range, must be in range 224 to 254`,
  ]],
  // probes, inputs, firmware, misc
  ['probe with two handlers', (v) => { v.spec.readinessProbe = { tcpSocket: { port: 1 }, exec: { command: ['x'] } }; }, [
    'spec.readinessProbe: spec.readinessProbe must have exactly one probe type set',
  ]],
  ['probe with no handler', (v) => { v.spec.livenessProbe = { periodSeconds: 3 }; }, [
    'spec.livenessProbe: either spec.livenessProbe.tcpSocket, spec.livenessProbe.exec or spec.livenessProbe.httpGet must be set if a spec.livenessProbe is specified',
  ]],
  ['tcp probe without a pod network', (v) => { v.spec.networks = [{ name: 'default', multus: { networkName: 'x' } }]; v.spec.readinessProbe = { tcpSocket: { port: 22 } }; }, [
    'spec.readinessProbe.tcpSocket: spec.readinessProbe.tcpSocket is only allowed if the Pod Network is attached',
  ]],
  ['keyboard input is refused (tablet only)', (v) => { v.spec.domain.devices.inputs = [{ name: 'k', type: 'keyboard', bus: 'usb' }]; }, [
    `${D}.inputs[0].type: Input device can have only tablet type.`,
  ]],
  ['EFI and BIOS together', (v) => { v.spec.domain.firmware.bootloader = { efi: { secureBoot: false }, bios: {} }; }, [
    'spec.domain.firmware.bootloader: spec.domain.firmware.bootloader has both EFI and BIOS configured, but they are mutually exclusive.',
  ]],
  ['secure boot without SMM', (v) => { v.spec.domain.firmware.bootloader = { efi: {} }; }, [
    'spec.domain: spec.domain has EFI SecureBoot enabled. SecureBoot requires SMM, which is currently disabled.',
  ]],
  ['secure boot with SMM is fine', (v) => { v.spec.domain.firmware.bootloader = { efi: {} }; v.spec.domain.features.smm = { enabled: true }; }, []],
  ['kernel boot without paths, relative kernel path', (v) => { v.spec.domain.firmware.kernelBoot = { container: { image: 'k:1' } }; }, [
    'spec.domain.firmware.kernelBoot.container: spec.domain.firmware.kernelBoot.container must be defined with at least one of the following: kernelPath, initrdPath',
  ]],
  ['kernel args without a kernel', (v) => { v.spec.domain.firmware.kernelBoot = { kernelArgs: 'console=ttyS0' }; }, [
    'spec.domain.firmware.kernelBoot.kernelArgs: kernel arguments cannot be provided without an external kernel',
  ]],
  ['kernel path not absolute', (v) => { v.spec.domain.firmware.kernelBoot = { container: { image: 'k:1', kernelPath: 'boot/vmlinuz' } }; }, [
    'spec.domain.firmware.kernelBoot.container.kernelPath: spec.domain.firmware.kernelBoot.container.kernelPath must be an absolute path to a file without relative components',
  ]],
  ['hostname not a DNS label', (v) => { v.spec.hostname = 'My_Host'; }, [
    "spec.hostname: spec.hostname does not conform to the kubernetes DNS_LABEL rules : a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]],
  ['machine type not emulated', (v) => { v.spec.domain.machine.type = 'pc-i440fx-7.2'; }, [
    'spec.domain.machine.type: spec.domain.machine.type is not supported: pc-i440fx-7.2 (allowed values: [q35* pc-q35*])',
  ]],
  ['machine type glob matches', (v) => { v.spec.domain.machine.type = 'pc-q35-7.2'; }, []],
  ['unsupported architecture', (v) => { v.spec.architecture = 'riscv64'; }, [
    'spec.architecture: unsupported architecture: riscv64',
  ]],
  ['diag288 watchdog on amd64', (v) => { v.spec.domain.devices.watchdog = { name: 'w', diag288: { action: 'reset' } }; }, [
    `${D}.watchdog: amd64 only supports I6300ESB watchdog device`,
  ]],
  ['dnsPolicy None without config', (v) => { v.spec.dnsPolicy = 'None'; }, [
    'spec.dnsConfig: must provide `dnsConfig` when `dnsPolicy` is None',
  ]],
  ['dnsConfig with a bad nameserver', (v) => { v.spec.dnsConfig = { nameservers: ['1.2.3.400', '::1'] }; }, [
    'spec.dnsConfig.nameservers: must be valid IP address: 1.2.3.400',
  ]],
  ['access credential needing a noCloud volume', (v) => {
    v.spec.volumes.splice(1, 1); v.spec.domain.devices.disks.splice(1, 1);
    v.spec.accessCredentials = [{ sshPublicKey: { source: { secret: { secretName: 's' } }, propagationMethod: { noCloud: {} } } }];
  }, [
    'spec.accessCredentials[0].sshPublicKey.propagationMethod: spec.accessCredentials[0] requires a noCloud volume to exist when the noCloud propagationMethod is in use.',
  ]],
  ['access credentials through the guest agent and cloud-init, as KubeVirt admits them', (v) => {
    v.spec.accessCredentials = [
      { sshPublicKey: { source: { secret: { secretName: 'a' } }, propagationMethod: { qemuGuestAgent: { users: ['debian', 'root'] } } } },
      { sshPublicKey: { source: { secret: { secretName: 'n' } }, propagationMethod: { noCloud: {} } } },
      { userPassword: { source: { secret: { secretName: 'p' } }, propagationMethod: { qemuGuestAgent: {} } } },
    ];
  }, []],
  ['access credentials broken every way the admitter names', (v) => {
    v.spec.accessCredentials = [
      { sshPublicKey: { source: { secret: { secretName: 'a' } }, propagationMethod: { qemuGuestAgent: { users: [] } } } },
      { sshPublicKey: { source: {}, propagationMethod: { noCloud: {}, qemuGuestAgent: { users: ['u'] } } } },
      { sshPublicKey: { source: { secret: { secretName: 'c' } }, propagationMethod: { configDrive: {} } } },
      { userPassword: { source: {}, propagationMethod: {} } },
      { sshPublicKey: { source: { secret: { secretName: 'b' } }, propagationMethod: { noCloud: {} } }, userPassword: { source: { secret: { secretName: 'b' } }, propagationMethod: { qemuGuestAgent: {} } } },
      {},
    ];
  }, [
    'spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.users: spec.accessCredentials[0] requires at least one user to be present in the users list',
    'spec.accessCredentials[1].sshPublicKey.source: spec.accessCredentials[1] must have exactly one source set',
    'spec.accessCredentials[1].sshPublicKey.propagationMethod: spec.accessCredentials[1] must have exactly one propagationMethod set',
    'spec.accessCredentials[2].sshPublicKey.propagationMethod: spec.accessCredentials[2] requires a configDrive volume to exist when the configDrive propagationMethod is in use.',
    'spec.accessCredentials[3].userPassword.source: spec.accessCredentials[3] must have exactly one source set',
    'spec.accessCredentials[3].userPassword.propagationMethod: spec.accessCredentials[3] must have exactly one propagationMethod set',
    'spec.accessCredentials[4]: spec.accessCredentials[4] must have exactly one access credential type set',
    'spec.accessCredentials[5]: spec.accessCredentials[5] must have exactly one access credential type set',
  ]],
  ['Hyper-V requirement disabled', (v) => { v.spec.domain.features.hyperv = { synic: { enabled: true }, vpindex: { enabled: false } }; }, [
    "spec.domain.features.hyperv.synic: 'spec.domain.features.hyperv.synic' requires 'spec.domain.features.hyperv.vpindex', which was disabled.",
  ]],
  ['reserved labels from a user', (v) => { v.metadata.labels['kubevirt.io/nodeName'] = 'n1'; }, [
    'metadata.labels: creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited',
  ]],
  ['sidecar annotation without the Sidecar gate', (v) => { v.metadata.annotations['hooks.kubevirt.io/hookSidecars'] = '[]'; }, [
    'metadata.annotations: sidecar feature gate is not enabled in kubevirt-config, invalid entry metadata.annotations.hooks.kubevirt.io/hookSidecars',
  ]],
];

for (const [name, mutate, expected, cfg] of cases) {
  test(`VMI rule: ${name}`, () => {
    assert.equal(vmiErrors(mutate, cfg).sort(), [...expected].sort());
  });
}

test('reserved labels are allowed for KubeVirt service accounts', () => {
  assert.equal(vmiErrors((v) => { v.metadata.labels['kubevirt.io/nodeName'] = 'n1'; }, {}, { sa: true }), []);
});

test('all errors are returned, not just the first', () => {
  const errs = vmiErrors((v) => {
    v.spec.hostname = 'BAD';
    v.spec.domain.devices.disks[0].serial = '!';
    v.spec.volumes[1].cloudInitNoCloud = {};
    v.spec.architecture = 'sparc';
  });
  assert.is(errs.length, 4);
});

test('negative memory as a user writes it, defaulted then validated: one error each, on the field written', () => {
  const defaulted = (mutate: (v: any) => void): string[] => {
    const v: any = loadExample('vmi-nocloud.yaml');
    mutate(v);
    return fmt(validateVirtualMachineInstance(defaultNewVirtualMachineInstance(decodeKubeVirtObject(v).object as VirtualMachineInstance, env()), { config: config() }));
  };
  assert.equal(defaulted((v) => { v.spec.domain.memory = { guest: '-5Mi' }; delete v.spec.domain.resources; }), [
    "spec.domain.memory.guest: spec.domain.memory.guest '-5Mi': must be greater than or equal to 0.",
  ]);
  // The guest is defaulted from the request: the request is the field refused.
  assert.equal(defaulted((v) => { delete v.spec.domain.memory; v.spec.domain.resources = { requests: { memory: '-1Gi' } }; }), [
    "spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '-1Gi': must be greater than or equal to 0.",
  ]);
  // In a VM's template, with the template's path.
  assert.equal(fmt(vm((v) => { v.spec.template.spec.domain.memory = { guest: '-5Mi' }; }).errors), [
    "spec.template.spec.domain.memory.guest: spec.template.spec.domain.memory.guest '-5Mi': must be greater than or equal to 0.",
  ]);
});

test.run();

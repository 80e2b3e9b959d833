// Hotplug and unplug plans built from the same rules as the cold-plugged devices, so a disk or
// NIC added later looks exactly like one present at start (node names, cache mode, ids, ports).
// Pure: they take the current state (what the LaunchPlan recorded, updated by earlier hotplugs)
// and return the QMP commands to send, in order, plus the new state.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { at } from './builder.ts';
import { ConversionError, type ConvertContext, type PciPort, type PlanDevice, type QmpSetupCommand, type ResolvedVolume } from './plan.ts';
import { applyDiskProps, blockChain, deviceIndices, diskFrontend, diskTarget } from './disks.ts';
import { interfacePlan } from './interfaces.ts';
import { USER_ALIAS_PREFIX } from './constants.ts';

/** What the launcher tracks about the running QEMU: initially the LaunchPlan's fields. */
export interface HotplugState {
  pciPorts: PciPort[];
  devices: PlanDevice[];
  nextBlockNodeIndex: number;
}

export interface HotplugPlan {
  /** QMP commands to send in order (blockdev-add … / netdev_add, then device_add, then follow-ups). */
  commands: QmpSetupCommand[];
  device: PlanDevice;
  /** The state after the hotplug succeeded. */
  state: HotplugState;
  warnings: string[];
}

/** First spare root port: hotpluggable and not holding a device. */
export function freeHotplugPort(state: HotplugState): PciPort | undefined {
  return state.pciPorts.find((p) => p.hotplug && !p.occupiedBy && p.id !== 'pcie.0');
}

function occupy(state: HotplugState, port: PciPort | undefined, device: PlanDevice, nextBlockNodeIndex = state.nextBlockNodeIndex): HotplugState {
  return {
    pciPorts: state.pciPorts.map((p) => (port && p.id === port.id ? { ...p, occupiedBy: device.qemuId } : p)),
    devices: [...state.devices, device],
    nextBlockNodeIndex,
  };
}

/**
 * Hotplug disk `diskName` (already in `vmi.spec.domain.devices.disks`, volume prepared as `vol`).
 * virtio disks take a spare root port; scsi disks go on scsi0 with the LUN of their sd name.
 */
export function planDiskHotplug(vmi: VirtualMachineInstance, diskName: string, vol: ResolvedVolume, state: HotplugState): HotplugPlan {
  const disks = vmi.spec.domain.devices.disks ?? [];
  const i = disks.findIndex((d) => d.name === diskName);
  const disk = disks[i];
  const field = at('spec.domain.devices.disks', i);
  if (!disk) throw new ConversionError('spec.domain.devices.disks', `no disk named "${diskName}"`);
  const id = USER_ALIAS_PREFIX + disk.name;
  if (state.devices.some((d) => d.qemuId === id)) throw new ConversionError(field, `disk "${diskName}" is already attached`);
  const { target, bus } = diskTarget(disk);
  if (bus !== 'virtio' && bus !== 'scsi') throw new ConversionError(`${field}.${target}.bus`, `disks on the ${bus} bus cannot be hotplugged (virtio or scsi)`);
  if (vol.backing && vol.format !== 'qcow2') throw new ConversionError(field, `volume "${diskName}" has a backing image but is ${vol.format}, not qcow2`);

  const backN = vol.backing ? state.nextBlockNodeIndex : undefined;
  const topN = vol.backing ? state.nextBlockNodeIndex + 1 : state.nextBlockNodeIndex;
  const chain = blockChain(disk, vol, field, topN, backN);
  const warnings: string[] = [];
  const index = deviceIndices(vmi).get(disk.name)?.index ?? 0;
  const fe = diskFrontend(disk, { id, index, transitional: vmi.spec.domain.devices.useVirtioTransitional === true, vol }, field, (w) => warnings.push(w));
  applyDiskProps(fe.props, disk, chain.drive, chain.cache, vol, field);
  let port: PciPort | undefined;
  if (fe.pci) {
    port = freeHotplugPort(state);
    if (!port) throw new ConversionError(field, 'no free hotplug PCIe root port left for a virtio disk');
    fe.props['bus'] = port.id;
    fe.props['addr'] = '0x0';
  }
  const commands: QmpSetupCommand[] = [
    ...chain.nodes.map((n) => ({ execute: 'blockdev-add', arguments: n, reason: `hotplug ${field}: ${String(n['node-name'])}` })),
    { execute: 'device_add', arguments: fe.props, reason: `hotplug ${field}` },
  ];
  const device: PlanDevice = { alias: disk.name, kind: target, qemuId: id, driver: fe.props.driver, bus: port ? port.id : fe.busName, nodeNames: chain.nodeNames };
  return { commands, device, state: occupy(state, port, device, topN + 1), warnings };
}

/** Hotplug interface `ifaceName` (already in the VMI spec) onto a spare root port. */
export function planInterfaceHotplug(vmi: VirtualMachineInstance, ifaceName: string, state: HotplugState, ctx: ConvertContext): HotplugPlan {
  const i = (vmi.spec.domain.devices.interfaces ?? []).findIndex((x) => x.name === ifaceName);
  const field = at('spec.domain.devices.interfaces', i);
  if (i < 0) throw new ConversionError('spec.domain.devices.interfaces', `no interface named "${ifaceName}"`);
  const nic = interfacePlan(vmi, i, ctx);
  if (state.devices.some((d) => d.qemuId === nic.props.id)) throw new ConversionError(field, `interface "${ifaceName}" is already attached`);
  const port = freeHotplugPort(state);
  if (!port) throw new ConversionError(field, 'no free hotplug PCIe root port left for a NIC');
  nic.props['bus'] = port.id;
  nic.props['addr'] = '0x0';
  const commands: QmpSetupCommand[] = [
    { execute: 'netdev_add', arguments: nic.netdev, reason: `hotplug ${field}: backend` },
    { execute: 'device_add', arguments: nic.props, reason: `hotplug ${field}` },
    ...nic.after,
  ];
  const device: PlanDevice = { alias: ifaceName, kind: 'interface', qemuId: nic.props.id, driver: nic.props.driver, bus: port.id, netdevId: nic.netdevId };
  return { commands, device, state: occupy(state, port, device), warnings: nic.warnings };
}

export interface UnplugPlan {
  /** Send, then wait for DEVICE_DELETED with data.device === deviceId (guest-acknowledged for PCI). */
  deviceDel: QmpSetupCommand;
  deviceId: string;
  /** Send after DEVICE_DELETED: blockdev-del (top of the chain first) or netdev_del. */
  afterDeleted: QmpSetupCommand[];
  /** The state after the unplug completed. */
  state: HotplugState;
}

/** Unplug a device recorded in the state (a hotplugged or cold-plugged disk or NIC). */
export function planUnplug(state: HotplugState, qemuId: string): UnplugPlan {
  const device = state.devices.find((d) => d.qemuId === qemuId);
  if (!device) throw new ConversionError('spec.domain.devices', `no attached device "${qemuId}"`);
  const port = state.pciPorts.find((p) => p.occupiedBy === qemuId);
  if (port && !port.hotplug) {
    throw new ConversionError('spec.domain.devices', `"${qemuId}" sits on ${port.id}, a root port with hotplug off: it cannot be unplugged`);
  }
  const afterDeleted: QmpSetupCommand[] = [
    ...(device.nodeNames ?? []).map((n) => ({ execute: 'blockdev-del', arguments: { 'node-name': n }, reason: `unplug ${qemuId}: ${n}` })),
    ...(device.netdevId ? [{ execute: 'netdev_del', arguments: { id: device.netdevId }, reason: `unplug ${qemuId}: backend` }] : []),
  ];
  return {
    deviceDel: { execute: 'device_del', arguments: { id: qemuId }, reason: `unplug ${device.alias}` },
    deviceId: qemuId,
    afterDeleted,
    state: {
      pciPorts: state.pciPorts.map((p) => (p.occupiedBy === qemuId && p.hotplug ? { id: p.id, addr: p.addr, hotplug: p.hotplug } : p)),
      devices: state.devices.filter((d) => d.qemuId !== qemuId),
      nextBlockNodeIndex: state.nextBlockNodeIndex,
    },
  };
}

// The accumulator the device-family converters write into. Each family is a pure function
// (vmi, ctx, builder) → void; index.ts runs them in a fixed order, lays out PCI, then renders argv.
import type { FileToPrepare, PlanDevice, QmpSetupCommand } from './plan.ts';

/** Order in which libvirt hands out PCI addresses (qemuDomainAssignDevicePCISlots). */
export const PciOrder = {
  Interface: 10,
  Controller: 20,
  Disk: 30,
  Balloon: 40,
  Rng: 50,
  Watchdog: 60,
  Input: 70,
  Vsock: 80,
  Panic: 85,
  Memory: 90,
} as const;
export type PciOrderValue = (typeof PciOrder)[keyof typeof PciOrder];

export type DeviceProps = Record<string, unknown> & { driver: string; id: string };

export interface DeviceSpec {
  props: DeviceProps;
  /** Present for PCI devices that need a root port; `bus`/`addr` are filled by the layout. */
  pci?: { order: PciOrderValue; nic: boolean };
}

export class PlanBuilder {
  machineOpts: Array<[string, string]> = [];
  cpuModel = '';
  cpuFlags: string[] = [];
  /** -object/-blockdev/-chardev/-netdev/-audiodev: everything devices refer to. */
  backends: string[] = [];
  devices: DeviceSpec[] = [];
  /** Options after the devices: -vnc, -kernel, -action, -rtc, ... */
  tail: string[] = [];
  globals: string[] = [];
  records: PlanDevice[] = [];
  warnings: string[] = [];
  files: FileToPrepare[] = [];
  setup: QmpSetupCommand[] = [];
  env: Record<string, string> = {};
  /** Next free N for libvirt-N-storage/format node names. */
  nextBlockNodeIndex = 1;

  machine(key: string, value: string): void {
    const existing = this.machineOpts.find(([k]) => k === key);
    if (existing) existing[1] = value;
    else this.machineOpts.push([key, value]);
  }
  cpu(flag: string): void {
    if (!this.cpuFlags.includes(flag)) this.cpuFlags.push(flag);
  }
  backend(...args: string[]): void {
    this.backends.push(...args);
  }
  device(props: DeviceProps, pci?: DeviceSpec['pci']): DeviceSpec {
    const spec: DeviceSpec = pci ? { props, pci } : { props };
    this.devices.push(spec);
    return spec;
  }
  arg(...args: string[]): void {
    this.tail.push(...args);
  }
  global(value: string): void {
    this.globals.push(value);
  }
  record(device: PlanDevice): void {
    this.records.push(device);
  }
  warn(message: string): void {
    this.warnings.push(message);
  }
}

/** JSON form of an -object/-device/-blockdev/-netdev/-audiodev value (QEMU 7.2 accepts it for all). */
export const json = (value: Record<string, unknown>): string => JSON.stringify(value);

/** A value inside a QEMU `key=value,...` option string: literal commas are doubled. */
export const opt = (value: string): string => value.replaceAll(',', ',,');

/** Field paths in messages: `spec.domain.devices.disks[2]`. */
export const at = (base: string, index: number): string => `${base}[${index}]`;

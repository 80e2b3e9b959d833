// Controllers (usb, virtio-scsi, virtio-serial, extra AHCI) and the small devices: memory balloon
// (free page reporting, stats polling), virtio-rng, i6300esb watchdog, panic devices, vsock.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { PciOrder, json, type DeviceProps, type PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext } from './plan.ts';
import { DEFAULT_BALLOON_STATS_PERIOD_SECONDS, QemuId, USER_ALIAS_PREFIX } from './constants.ts';
import { virtioDriver } from './virtio.ts';

const DEV = 'spec.domain.devices';

export interface ControllerNeeds {
  usb: boolean;
  scsi: boolean;
  scsiIoThread?: string | undefined;
  scsiQueues?: number | undefined;
  virtioSerial: boolean;
  extraAhci: number;
}

/** In KubeVirt's controller order (usb, scsi, virtio-serial); libvirt's implicit AHCIs after. */
export function configureControllers(vmi: VirtualMachineInstance, needs: ControllerNeeds, b: PlanBuilder): void {
  const transitional = vmi.spec.domain.devices.useVirtioTransitional === true;
  const ctl = { order: PciOrder.Controller, nic: false } as const;
  if (needs.usb) {
    b.device({ driver: 'qemu-xhci', id: QemuId.Usb }, ctl);
    b.record({ alias: QemuId.Usb, kind: 'controller', qemuId: QemuId.Usb, driver: 'qemu-xhci', bus: 'pci' });
  }
  if (needs.scsi) {
    const driver = virtioDriver('virtio-scsi', transitional);
    const props: DeviceProps = { driver, id: QemuId.Scsi };
    if (needs.scsiIoThread) props['iothread'] = needs.scsiIoThread;
    if (needs.scsiQueues) props['num_queues'] = needs.scsiQueues;
    b.device(props, ctl);
    b.record({ alias: QemuId.Scsi, kind: 'controller', qemuId: QemuId.Scsi, driver, bus: 'pci' });
  }
  if (needs.virtioSerial) {
    const driver = virtioDriver('virtio-serial', transitional);
    b.device({ driver, id: QemuId.VirtioSerial }, ctl);
    b.record({ alias: QemuId.VirtioSerial, kind: 'controller', qemuId: QemuId.VirtioSerial, driver, bus: 'pci' });
  }
  for (let k = 1; k <= needs.extraAhci; k++) {
    const id = `${QemuId.SataPrefix}${k}`;
    b.device({ driver: 'ich9-ahci', id }, ctl);
    b.record({ alias: id, kind: 'controller', qemuId: id, driver: 'ich9-ahci', bus: 'pci' });
  }
}

/** Free page reporting: on unless the cluster disables it, or the VMI has dedicated CPUs / hugepages. */
export function freePageReporting(vmi: VirtualMachineInstance, ctx: ConvertContext): boolean {
  if (ctx.freePageReporting === false) return false;
  if (vmi.spec.domain.cpu?.dedicatedCpuPlacement) return false;
  if (vmi.spec.domain.memory?.hugepages) return false;
  return true;
}

export function configureBalloon(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): boolean {
  if (vmi.spec.domain.devices.autoattachMemBalloon === false) return false;
  const driver = virtioDriver('virtio-balloon', vmi.spec.domain.devices.useVirtioTransitional === true);
  const props: DeviceProps = { driver, id: QemuId.Balloon };
  if (freePageReporting(vmi, ctx)) props['free-page-reporting'] = true;
  b.device(props, { order: PciOrder.Balloon, nic: false });
  b.record({ alias: QemuId.Balloon, kind: 'balloon', qemuId: QemuId.Balloon, driver, bus: 'pci' });
  const period = ctx.memBalloonStatsPeriod ?? DEFAULT_BALLOON_STATS_PERIOD_SECONDS;
  if (period > 0) {
    b.setup.push({
      execute: 'qom-set',
      arguments: { path: `/machine/peripheral/${QemuId.Balloon}`, property: 'guest-stats-polling-interval', value: period },
      reason: 'balloon stats period (memBalloonStatsPeriod)',
    });
  }
  return true;
}

export function configureRng(vmi: VirtualMachineInstance, b: PlanBuilder): boolean {
  if (!vmi.spec.domain.devices.rng) return false;
  const driver = virtioDriver('virtio-rng', vmi.spec.domain.devices.useVirtioTransitional === true);
  b.backend('-object', json({ 'qom-type': 'rng-random', id: QemuId.RngObject, filename: '/dev/urandom' }));
  b.device({ driver, rng: QemuId.RngObject, id: QemuId.Rng }, { order: PciOrder.Rng, nic: false });
  b.record({ alias: QemuId.Rng, kind: 'rng', qemuId: QemuId.Rng, driver, bus: 'pci' });
  return true;
}

export function configureWatchdog(vmi: VirtualMachineInstance, b: PlanBuilder): boolean {
  const wd = vmi.spec.domain.devices.watchdog;
  if (!wd) return false;
  const field = `${DEV}.watchdog`;
  if (wd.diag288) throw new ConversionError(`${field}.diag288`, 'the diag288 watchdog exists on s390x only');
  if (!wd.i6300esb) throw new ConversionError(field, `watchdog ${wd.name} can't be mapped, no watchdog type specified`);
  const action = wd.i6300esb.action ?? 'reset';
  if (action !== 'reset' && action !== 'poweroff' && action !== 'shutdown') {
    throw new ConversionError(`${field}.i6300esb.action`, `unknown action "${String(action)}" (poweroff, reset, shutdown)`);
  }
  const id = USER_ALIAS_PREFIX + wd.name;
  b.device({ driver: 'i6300esb', id }, { order: PciOrder.Watchdog, nic: false });
  b.arg('-action', `watchdog=${action}`);
  b.record({ alias: wd.name, kind: 'watchdog', qemuId: id, driver: 'i6300esb', bus: 'pci' });
  return true;
}

export function configurePanicDevices(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): void {
  (vmi.spec.domain.devices.panicDevices ?? []).forEach((p, i) => {
    const field = `${DEV}.panicDevices[${i}]`;
    const id = `${QemuId.PanicPrefix}${i}`;
    switch (p.model ?? 'isa') {
      case 'isa':
        b.device({ driver: 'pvpanic', id, ioport: 0x505 });
        b.record({ alias: id, kind: 'panic', qemuId: id, driver: 'pvpanic', bus: 'isa.0' });
        break;
      case 'pvpanic':
        b.device({ driver: 'pvpanic-pci', id }, { order: PciOrder.Panic, nic: false });
        b.record({ alias: id, kind: 'panic', qemuId: id, driver: 'pvpanic-pci', bus: 'pci' });
        break;
      case 'hyperv':
        if (ctx.accelerator === 'kvm') b.cpu('hv-crash=on');
        else b.warn(`${field}: the Hyper-V crash device needs KVM; ignored under TCG`);
        break;
      default:
        throw new ConversionError(`${field}.model`, `unknown panic device model "${String(p.model)}" (hyperv, isa, pvpanic)`);
    }
  });
}

export function configureVsock(vmi: VirtualMachineInstance, b: PlanBuilder): void {
  if (!vmi.spec.domain.devices.autoattachVSOCK) return;
  const cid = vmi.status?.VSOCKCID;
  if (cid === undefined) {
    b.warn(`${DEV}.autoattachVSOCK: no status.VSOCKCID assigned yet; no vsock device`);
    return;
  }
  const driver = 'vhost-vsock-pci-non-transitional';
  b.device({ driver, id: QemuId.Vsock, 'guest-cid': cid }, { order: PciOrder.Vsock, nic: false });
  b.record({ alias: QemuId.Vsock, kind: 'vsock', qemuId: QemuId.Vsock, driver, bus: 'pci' });
}

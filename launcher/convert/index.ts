// convertVMI: a defaulted VirtualMachineInstance + what the launcher discovered → the QEMU argv
// and everything the supervisor and later hotplug/migration code need to know about it.
// Pure: no I/O, no clock (ctx.now), no randomness. One file per device family does the work.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { PciOrder, PlanBuilder, json } from './builder.ts';
import type { ConvertContext, LaunchPlan } from './plan.ts';
import { ConvertAnnotation, PrivateFile } from './constants.ts';
import { configureFeatures, configureMachine, domainName } from './machine.ts';
import { configureCpu, vcpuCount } from './cpu.ts';
import { configureMemory } from './memory.ts';
import { configureFirmware } from './firmware.ts';
import { configureClock } from './clock.ts';
import { configureMonitors } from './qmp.ts';
import { configureGraphics, configureGuestAgentChannel, configureInputs, configureSerial } from './consoles.ts';
import { configureTpm } from './tpm.ts';
import { configureInterfaces } from './interfaces.ts';
import { configureDisks } from './disks.ts';
import {
  configureBalloon, configureControllers, configurePanicDevices, configureRng, configureVsock, configureWatchdog,
} from './devices.ts';
import { hotplugPortCounts, layoutPci } from './pci-topology.ts';
import { rejectUnsupported } from './unsupported.ts';
import { quantityCeil } from './quantity.ts';

export * from './plan.ts';
export { resolvedVolume, resolvedVolumes, type VolumeProbe } from './volumes.ts';
export { freeHotplugPort, planDiskHotplug, planInterfaceHotplug, planUnplug, type HotplugPlan, type HotplugState, type UnplugPlan } from './hotplug.ts';

/** resources.requests.cpu (else limits.cpu), the CPU figure KubeVirt sizes the auto iothread pool by. */
function cpuRequest(vmi: VirtualMachineInstance): number {
  const r = vmi.spec.domain.resources;
  const req = r?.requests?.['cpu'];
  if (req !== undefined) return Math.max(1, quantityCeil(req, 'spec.domain.resources.requests.cpu'));
  const lim = r?.limits?.['cpu'];
  if (lim !== undefined) return Math.max(1, quantityCeil(lim, 'spec.domain.resources.limits.cpu'));
  return 1;
}

/**
 * Convert a VMI (after KubeVirt's defaulting) into a LaunchPlan.
 * Throws ConversionError (with the offending field path) for anything qvirt cannot run.
 */
export function convertVMI(vmi: VirtualMachineInstance, ctx: ConvertContext): LaunchPlan {
  rejectUnsupported(vmi);
  const b = new PlanBuilder();
  const devices = vmi.spec.domain.devices;
  const annotations = vmi.metadata?.annotations ?? {};

  configureMachine(vmi, ctx, b);
  const topology = configureCpu(vmi, ctx, b);
  const memory = configureMemory(vmi, b);
  configureFirmware(vmi, ctx, b);
  configureFeatures(vmi, ctx, b);
  configureClock(vmi, ctx, b);
  if (annotations[ConvertAnnotation.DisablePCIHole64] === 'true') b.global('q35-pcihost.pci-hole64-size=0');

  const monitors = configureMonitors(ctx, b);
  const serial = configureSerial(vmi, ctx, b);
  const guestAgentSocket = configureGuestAgentChannel(ctx, b);
  const vncSocket = configureGraphics(vmi, ctx, b);

  const ifaces = configureInterfaces(vmi, ctx, b);
  const inputs = configureInputs(vmi, b);
  const disks = configureDisks(vmi, ctx, b, { vcpus: vcpuCount(topology), cpuRequest: cpuRequest(vmi) });
  const usb = inputs.usb || disks.usbDisks;
  configureControllers(vmi, {
    usb,
    scsi: disks.scsiController,
    scsiIoThread: disks.scsiIoThread,
    scsiQueues: disks.scsiIoThread ? vcpuCount(topology) : undefined,
    // The guest agent channel always needs it (libvirt adds it implicitly when KubeVirt does not).
    virtioSerial: true,
    extraAhci: disks.extraAhci,
  }, b);
  configureBalloon(vmi, ctx, b);
  const rng = configureRng(vmi, b);
  const watchdog = configureWatchdog(vmi, b);
  configurePanicDevices(vmi, ctx, b);
  configureVsock(vmi, b);
  const tpm = configureTpm(vmi, ctx, b);

  // KubeVirt's CountPCIDevices over its domain: interfaces, the usb controller (even model none),
  // scsi and virtio-serial controllers, virtio disks, virtio inputs, watchdog, rng, balloon (even
  // model none).
  const portsInUse = ifaces.count + 1 + (disks.scsiController ? 1 : 0) + (devices.autoattachSerialConsole !== false ? 1 : 0)
    + disks.virtioDisks + inputs.virtio + (watchdog ? 1 : 0) + (rng ? 1 : 0) + 1;
  const placeOnRootComplex = annotations[ConvertAnnotation.PlacePCIDevicesOnRootComplex] === 'true';
  const counts = hotplugPortCounts({
    interfaceCount: ifaces.count,
    portsInUse,
    guestMemoryBytes: memory.guestBytes,
    slotCountAnnotation: annotations[ConvertAnnotation.PciInterfaceSlotCount],
    placeOnRootComplex,
    disableHotplug: devices.disableHotplug === true,
  });
  const layout = layoutPci(b.devices, counts, placeOnRootComplex);
  const busOf = new Map(b.devices.map((d) => [d.props.id, d.props['bus']]));
  for (const r of b.records) {
    if (r.bus === 'pci') {
      const bus = busOf.get(r.qemuId);
      if (typeof bus === 'string') r.bus = bus;
    }
  }

  const pidFile = `${ctx.paths.privateDir}/${PrivateFile.PidFile}`;
  const cpu = [b.cpuModel, ...b.cpuFlags].join(',');
  const machine = b.machineOpts.map(([k, v]) => (k === 'type' ? v : `${k}=${v}`)).join(',');
  const controllersFirst = [
    ...b.devices.filter((d) => d.pci?.order === PciOrder.Controller),
    ...b.devices.filter((d) => d.pci?.order !== PciOrder.Controller),
  ];
  const argv = [
    ctx.qemu.binary,
    '-name', `guest=${domainName(vmi)},debug-threads=on`,
    '-S',
    '-pidfile', pidFile,
    '-machine', machine,
    '-accel', ctx.accelerator,
    '-cpu', cpu,
    ...b.tail,
    ...b.globals.flatMap((g) => ['-global', g]),
    ...b.backends,
    ...layout.rootPorts.flatMap((p) => ['-device', json(p)]),
    ...controllersFirst.flatMap((d) => ['-device', json(d.props)]),
  ];

  const plan: LaunchPlan = {
    argv,
    env: b.env,
    ...monitors,
    guestAgentSocket,
    pidFile,
    startPaused: vmi.spec.startStrategy === 'Paused',
    pciPorts: layout.ports,
    devices: b.records,
    nextBlockNodeIndex: b.nextBlockNodeIndex,
    files: b.files,
    setupCommands: b.setup,
    warnings: b.warnings,
  };
  if (serial.serialSocket) plan.serialSocket = serial.serialSocket;
  if (serial.serialLog) plan.serialLog = serial.serialLog;
  if (vncSocket) plan.vncSocket = vncSocket;
  if (tpm) plan.tpm = tpm;
  return plan;
}

// What a user or agent talks to: the serial console (`virt-serial0` socket + `virt-serial0-log`),
// VNC on the `virt-vnc` unix socket with the video device, the org.qemu.guest_agent.0 channel,
// and input devices (tablet on usb or virtio).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { ConsoleFile } from '../../src/api/constants.ts';
import { PciOrder, at, json, opt, type PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext } from './plan.ts';
import { GUEST_AGENT_CHANNEL_NAME, PrivateFile, QemuId, USER_ALIAS_PREFIX } from './constants.ts';
import { isEFI } from './firmware.ts';

export interface ConsolePaths {
  serialSocket?: string;
  serialLog?: string;
  vncSocket?: string;
  guestAgentSocket: string;
}

/** Serial console unless `autoattachSerialConsole: false`; logged unless `logSerialConsole: false`. */
export function configureSerial(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): Pick<ConsolePaths, 'serialSocket' | 'serialLog'> {
  const d = vmi.spec.domain.devices;
  if (d.autoattachSerialConsole === false) return {};
  const socket = `${ctx.paths.privateDir}/${ConsoleFile.Serial}`;
  const log = d.logSerialConsole ?? ctx.serialConsoleLog ?? true;
  const opts = [`socket`, `id=${QemuId.SerialChardev}`, `path=${opt(socket)}`, 'server=on', 'wait=off'];
  const logPath = `${ctx.paths.privateDir}/${ConsoleFile.SerialLog}`;
  if (log) opts.push(`logfile=${opt(logPath)}`, 'logappend=on');
  b.backend('-chardev', opts.join(','));
  b.device({ driver: 'isa-serial', chardev: QemuId.SerialChardev, id: QemuId.Serial, index: 0 });
  b.record({ alias: QemuId.Serial, kind: 'serial', qemuId: QemuId.Serial, driver: 'isa-serial', bus: 'isa.0' });
  return log ? { serialSocket: socket, serialLog: logPath } : { serialSocket: socket };
}

/** The guest agent's virtio-serial port (KubeVirt always adds the channel). */
export function configureGuestAgentChannel(ctx: ConvertContext, b: PlanBuilder): string {
  const socket = `${ctx.paths.privateDir}/${PrivateFile.GuestAgent}`;
  b.backend('-chardev', `socket,id=${QemuId.GuestAgentChardev},path=${opt(socket)},server=on,wait=off`);
  b.device({
    driver: 'virtserialport',
    bus: `${QemuId.VirtioSerial}.0`,
    nr: 1,
    chardev: QemuId.GuestAgentChardev,
    id: QemuId.GuestAgentPort,
    name: GUEST_AGENT_CHANNEL_NAME,
  });
  b.record({ alias: GUEST_AGENT_CHANNEL_NAME, kind: 'channel', qemuId: QemuId.GuestAgentPort, driver: 'virtserialport', bus: `${QemuId.VirtioSerial}.0` });
  return socket;
}

/** Video model → QEMU driver (GraphicsDomainConfigurator; amd64 default VGA, bochs for EFI if configured). */
export function videoDriver(vmi: VirtualMachineInstance, ctx: ConvertContext): string {
  const type = vmi.spec.domain.devices.video?.type;
  if (type === undefined) return ctx.useBochsForEFIGuests && isEFI(vmi) ? 'bochs-display' : 'VGA';
  switch (type) {
    case 'vga': return 'VGA';
    case 'bochs': return 'bochs-display';
    case 'virtio': return 'virtio-vga';
    case 'cirrus': return 'cirrus-vga';
    case 'ramfb': return 'ramfb';
    default: throw new ConversionError('spec.domain.devices.video.type', `unknown video type "${type}" (vga, bochs, virtio, cirrus, ramfb)`);
  }
}

/** VNC + video unless `autoattachGraphicsDevice: false` (then `-display none`). */
export function configureGraphics(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): string | undefined {
  if (vmi.spec.domain.devices.autoattachGraphicsDevice === false) {
    b.arg('-display', 'none');
    return undefined;
  }
  const socket = `${ctx.paths.privateDir}/${ConsoleFile.VNC}`;
  b.backend('-audiodev', json({ id: QemuId.Audio, driver: 'none' }));
  b.arg('-vnc', `vnc=unix:${opt(socket)},audiodev=${QemuId.Audio}`);
  const driver = videoDriver(vmi, ctx);
  if (driver === 'ramfb') {
    b.device({ driver, id: QemuId.Video });
  } else {
    const props: Record<string, unknown> & { driver: string; id: string } = { driver, id: QemuId.Video };
    if (driver === 'VGA') props['vgamem_mb'] = 16;
    props['bus'] = 'pcie.0';
    props['addr'] = '0x1';
    b.device(props);
  }
  b.record({ alias: QemuId.Video, kind: 'video', qemuId: QemuId.Video, driver, bus: driver === 'ramfb' ? 'sysbus' : 'pcie.0' });
  return socket;
}

/** Inputs: tablets on usb (the default bus) or virtio. Returns whether a USB controller is needed. */
export function configureInputs(vmi: VirtualMachineInstance, b: PlanBuilder): { usb: boolean; virtio: number } {
  let usb = false;
  let virtio = 0;
  (vmi.spec.domain.devices.inputs ?? []).forEach((input, i) => {
    const field = at('spec.domain.devices.inputs', i);
    const type = input.type ?? 'tablet';
    if (type !== 'tablet') throw new ConversionError(`${field}.type`, `input type "${type}" is not supported (only tablet)`);
    const id = USER_ALIAS_PREFIX + input.name;
    const bus = input.bus ?? 'usb';
    if (bus === 'usb') {
      usb = true;
      b.device({ driver: 'usb-tablet', id, bus: `${QemuId.Usb}.0` });
      b.record({ alias: input.name, kind: 'input', qemuId: id, driver: 'usb-tablet', bus: `${QemuId.Usb}.0` });
    } else if (bus === 'virtio') {
      virtio++;
      b.device({ driver: 'virtio-tablet-pci', id }, { order: PciOrder.Input, nic: false });
      b.record({ alias: input.name, kind: 'input', qemuId: id, driver: 'virtio-tablet-pci', bus: 'pci' });
    } else {
      throw new ConversionError(`${field}.bus`, `input bus "${String(bus)}" is not supported (usb, virtio)`);
    }
  });
  return { usb, virtio };
}

// Which QMP events become Kubernetes events on the VMI, and with which words. KubeVirt's launcher
// sends two through Notify (pkg/virt-launcher/notify-client): `IOerror` for each disk with an error
// while the domain is paused for an I/O error, naming the volume ("VM Paused due to IO error at the
// volume: NAME", "... not enough space on volume: NAME"), and `GuestPanicked` once per panic, with
// the panic's details where the guest gave any (FormatGuestPanicInfo). libvirt drops the watchdog and
// a guest's own reset on the floor; qvirt reports them too: `Watchdog` (KubeVirt's name for the
// paused-by-watchdog reason) with the action QEMU took, and `Reset` (the reason virt-handler gives a
// reset it was asked for) saying the guest did it. A guest's power-off needs nothing here: the VMI's
// phase change brings virt-handler's `Stopped` event ("The VirtualMachineInstance was shut down.").
// Pure: the launcher feeds every QMP event through `k8sEventsFor` with what it remembers.
import { K8sEventReason } from './constants.ts';
import { EventReason } from '../../src/api/constants.ts';

export interface K8sEventOut {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** A guest device as the plan records it (launcher/convert/plan.ts PlanDevice, the fields used here). */
export interface EventDevice {
  readonly alias: string;
  readonly kind: string;
  readonly qemuId: string;
  readonly nodeNames?: readonly string[] | undefined;
}

/** What the events of one QEMU process remember between them. */
export interface EventMemory {
  /** Volumes already reported in this I/O-error pause (cleared by RESUME). */
  readonly ioErrorVolumes: readonly string[];
  /** A panic was reported (KubeVirt's GuestPanicHandled: once per QEMU). */
  readonly panicReported: boolean;
  /** A watchdog reset was reported: the RESET that QEMU sends right after it is the watchdog's. */
  readonly watchdogReset: boolean;
  /** When the last guest RESET came (QEMU's event time, ms), reported or not: the start of a reset burst. */
  readonly lastGuestResetAtMs?: number | undefined;
}

export const INITIAL_EVENT_MEMORY: EventMemory = { ioErrorVolumes: [], panicReported: false, watchdogReset: false };

/**
 * One reset of the guest reaches QEMU as a burst of reset requests: Linux's reboot writes the ACPI reset
 * register and, while TCG's vCPU runs on before the main loop acts, the keyboard controller's reset line;
 * SeaBIOS, finding itself warm-started, resets the machine once more. Each is a RESET event, tens to
 * hundreds of milliseconds apart (measured here: 34 ms after a `reboot`, 232 ms after a watchdog reset).
 * A guest RESET this soon after the previous one is the same reset. No guest boots and resets again this fast.
 */
export const RESET_BURST_MS = 2000;

type Data = Readonly<Record<string, unknown>>;

/**
 * The volume a BLOCK_IO_ERROR is about: the disk whose device the event's qom-path names (QEMU ≥ 8.2),
 * whose -blockdev chain holds its node-name, or whose device/drive is its BlockBackend name; else
 * whatever name the event carries, without qvirt's `ua-` prefix.
 */
export function volumeOfBlockEvent(data: Data, devices: readonly EventDevice[]): string {
  const qom = typeof data['qom-path'] === 'string' ? data['qom-path'] : '';
  const peripheral = /\/machine\/peripheral\/([^/]+)/.exec(qom)?.[1];
  const node = typeof data['node-name'] === 'string' ? data['node-name'] : '';
  const backend = typeof data.device === 'string' ? data.device : '';
  const disks = devices.filter((d) => d.nodeNames?.length || ['disk', 'cdrom', 'lun'].includes(d.kind));
  const found = (peripheral && disks.find((d) => d.qemuId === peripheral))
    || (node && disks.find((d) => d.nodeNames?.includes(node)))
    || (backend && disks.find((d) => d.qemuId === backend || `drive-${d.qemuId}` === backend || d.nodeNames?.includes(backend)));
  if (found) return found.alias;
  return (peripheral || backend || node || 'unknown').replace(/^(drive-)?ua-/, '');
}

/** KubeVirt's FormatGuestPanicInfo over GUEST_PANICKED's `info` (GuestPanicInformation). */
export function guestPanicMessage(info: unknown): string {
  const i = info && typeof info === 'object' ? info as Record<string, unknown> : undefined;
  const type = typeof i?.type === 'string' ? i.type : '';
  if (!type) return 'GuestPanicked (details unavailable)';
  if (type === 'hyper-v') {
    const hex = (v: unknown) => `0x${(typeof v === 'number' && Number.isFinite(v) ? BigInt(Math.trunc(v)) : typeof v === 'bigint' ? v : 0n).toString(16)}`;
    return `GuestPanicked: ${['arg1', 'arg2', 'arg3', 'arg4', 'arg5'].map((k) => `'${hex(i![k])}'`).join(', ')}`;
  }
  return `GuestPanicked: type=${type}`;
}

/** api.GuestPanicInfo from GUEST_PANICKED's `info` (KubeVirt's ParseGuestPanicEvent): the type, Hyper-V's five arguments. Pure. */
export function guestPanicInfo(info: unknown): { Type: string; Arg1: number; Arg2: number; Arg3: number; Arg4: number; Arg5: number } {
  const i = info && typeof info === 'object' ? info as Record<string, unknown> : {};
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { Type: typeof i.type === 'string' && i.type ? i.type : 'unknown', Arg1: n(i.arg1), Arg2: n(i.arg2), Arg3: n(i.arg3), Arg4: n(i.arg4), Arg5: n(i.arg5) };
}

/** QEMU's WatchdogAction, as a person reads it. */
const WATCHDOG_ACTIONS: Record<string, string> = {
  reset: 'the guest was reset',
  shutdown: 'the guest was asked to shut down',
  poweroff: 'the guest was powered off',
  pause: 'the guest was paused',
  debug: 'QEMU logged it',
  none: 'nothing was done',
  'inject-nmi': 'an NMI was injected into the guest',
};

/** The Kubernetes events one QMP event brings, and what to remember for the next ones. */
export function k8sEventsFor(event: string, data: Data, devices: readonly EventDevice[], memory: EventMemory, o: { readonly softRebootRequested?: boolean; /** The QMP event's own time (ms since epoch). */ readonly atMs?: number } = {}): { events: K8sEventOut[]; memory: EventMemory } {
  switch (event) {
    case 'BLOCK_IO_ERROR': {
      if (data.action !== 'stop') return { events: [], memory };
      const volume = volumeOfBlockEvent(data, devices);
      if (memory.ioErrorVolumes.includes(volume)) return { events: [], memory };
      const message = data.nospace === true
        ? `VM Paused due to not enough space on volume: ${volume}`
        : `VM Paused due to IO error at the volume: ${volume}`;
      return { events: [{ type: 'Warning', reason: EventReason.IOerror, message }], memory: { ...memory, ioErrorVolumes: [...memory.ioErrorVolumes, volume] } };
    }
    case 'RESUME':
      return { events: [], memory: memory.ioErrorVolumes.length ? { ...memory, ioErrorVolumes: [] } : memory };
    case 'GUEST_PANICKED':
      if (memory.panicReported) return { events: [], memory };
      return { events: [{ type: 'Warning', reason: EventReason.GuestPanicked, message: guestPanicMessage(data.info) }], memory: { ...memory, panicReported: true } };
    case 'WATCHDOG': {
      const action = typeof data.action === 'string' ? data.action : 'unknown';
      const watchdog = devices.find((d) => d.kind === 'watchdog')?.alias;
      const message = `The guest's watchdog${watchdog ? ` ${watchdog}` : ''} expired: ${WATCHDOG_ACTIONS[action] ?? `action ${action}`}`;
      return { events: [{ type: 'Warning', reason: K8sEventReason.Watchdog, message }], memory: { ...memory, watchdogReset: action === 'reset' } };
    }
    case 'RESET': {
      // The host's resets (virt-handler's Reset, a soft reboot's system_reset) are reported where they are asked for.
      if (data.guest !== true) return { events: [], memory };
      const inBurst = o.atMs !== undefined && memory.lastGuestResetAtMs !== undefined && o.atMs - memory.lastGuestResetAtMs >= 0 && o.atMs - memory.lastGuestResetAtMs < RESET_BURST_MS;
      const remembered: EventMemory = { ...memory, lastGuestResetAtMs: o.atMs ?? memory.lastGuestResetAtMs };
      if (memory.watchdogReset) return { events: [], memory: { ...remembered, watchdogReset: false } };
      if (inBurst) return { events: [], memory: remembered };
      // The reboot virt-handler asked for (SoftRebooted is its event).
      if (o.softRebootRequested) return { events: [], memory: remembered };
      return { events: [{ type: 'Normal', reason: K8sEventReason.Reset, message: 'VirtualMachineInstance reset by the guest' }], memory: remembered };
    }
    default:
      return { events: [], memory };
  }
}

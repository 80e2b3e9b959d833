// Which QMP events become Kubernetes events on the VMI (launcher/domain/k8s-events.ts): every row is
// a sequence of QMP events from a fresh QEMU and the events it brings, in KubeVirt's words.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { INITIAL_EVENT_MEMORY, RESET_BURST_MS, guestPanicInfo, guestPanicMessage, k8sEventsFor, volumeOfBlockEvent, type EventDevice, type EventMemory } from '../../launcher/domain/k8s-events.ts';

const devices: EventDevice[] = [
  { alias: 'rootdisk', kind: 'disk', qemuId: 'ua-rootdisk', nodeNames: ['libvirt-2-format', 'libvirt-2-storage', 'libvirt-1-format', 'libvirt-1-storage'] },
  { alias: 'data', kind: 'disk', qemuId: 'ua-data', nodeNames: ['libvirt-3-storage'] },
  { alias: 'cdrom', kind: 'cdrom', qemuId: 'ua-cdrom' },
  { alias: 'wd0', kind: 'watchdog', qemuId: 'ua-wd0' },
];

/** An event, its data and, where the case is about timing, QEMU's time of it (ms). */
type Ev = [string, Record<string, unknown>] | [string, Record<string, unknown>, number];
const run = (events: Ev[], o: { softRebootRequested?: boolean } = {}) => {
  let memory: EventMemory = INITIAL_EVENT_MEMORY;
  const out: string[] = [];
  for (const [name, data, atMs] of events) {
    const r = k8sEventsFor(name, data, devices, memory, { ...o, ...(atMs !== undefined ? { atMs } : {}) });
    memory = r.memory;
    out.push(...r.events.map((e) => `${e.type} ${e.reason}: ${e.message}`));
  }
  return out;
};

const T = 1_795_000_000_000;

const ioStop = (extra: Record<string, unknown>) => ['BLOCK_IO_ERROR', { operation: 'write', action: 'stop', reason: 'No space left on device', ...extra }] as Ev;

const table: [string, Ev[], string[]][] = [
  ['no space on a disk, named by its top node', [ioStop({ device: '', 'node-name': 'libvirt-2-format', nospace: true })], ['Warning IOerror: VM Paused due to not enough space on volume: rootdisk']],
  ['an I/O error, named by a lower node', [ioStop({ device: '', 'node-name': 'libvirt-3-storage', nospace: false })], ['Warning IOerror: VM Paused due to IO error at the volume: data']],
  ['named by the device\'s qom-path (QEMU ≥ 8.2)', [ioStop({ device: '', 'node-name': 'x', 'qom-path': '/machine/peripheral/ua-data/virtio-backend' })], ['Warning IOerror: VM Paused due to IO error at the volume: data']],
  ['a -drive backend name', [ioStop({ device: 'drive-ua-cdrom' })], ['Warning IOerror: VM Paused due to IO error at the volume: cdrom']],
  ['an unknown node: its name without ua-', [ioStop({ device: 'ua-other' })], ['Warning IOerror: VM Paused due to IO error at the volume: other']],
  ['once per volume per pause; another volume too', [ioStop({ 'node-name': 'libvirt-2-format' }), ioStop({ 'node-name': 'libvirt-2-format' }), ioStop({ 'node-name': 'libvirt-3-storage' })],
    ['Warning IOerror: VM Paused due to IO error at the volume: rootdisk', 'Warning IOerror: VM Paused due to IO error at the volume: data']],
  ['again after the guest was continued', [ioStop({ 'node-name': 'libvirt-2-format' }), ['RESUME', {}], ioStop({ 'node-name': 'libvirt-2-format' })],
    ['Warning IOerror: VM Paused due to IO error at the volume: rootdisk', 'Warning IOerror: VM Paused due to IO error at the volume: rootdisk']],
  ['error policy report/ignore: no pause, no event', [ioStop({ action: 'report' }), ioStop({ action: 'ignore' })], []],
  ['a pvpanic panic: no details', [['GUEST_PANICKED', { action: 'pause' }]], ['Warning GuestPanicked: GuestPanicked (details unavailable)']],
  ['a Hyper-V crash: the bugcheck code and its parameters', [['GUEST_PANICKED', { action: 'pause', info: { type: 'hyper-v', arg1: 0x7e, arg2: 0xc0000005, arg3: 0, arg4: 0xfffff80000000000, arg5: 1 } }]],
    ["Warning GuestPanicked: GuestPanicked: '0x7e', '0xc0000005', '0x0', '0xfffff80000000000', '0x1'"]],
  ['an s390 panic: its type', [['GUEST_PANICKED', { action: 'pause', info: { type: 's390', core: 0, reason: 'disabled-wait' } }]], ['Warning GuestPanicked: GuestPanicked: type=s390']],
  ['one panic, one event (GUEST_PANICKED repeats on the way down)', [['GUEST_PANICKED', { action: 'pause' }], ['GUEST_PANICKED', { action: 'poweroff' }]], ['Warning GuestPanicked: GuestPanicked (details unavailable)']],
  ['watchdog reset: one event, not a guest reset too', [['WATCHDOG', { action: 'reset' }], ['RESET', { guest: true, reason: 'guest-reset' }]], ["Warning Watchdog: The guest's watchdog wd0 expired: the guest was reset"]],
  ['watchdog poweroff', [['WATCHDOG', { action: 'poweroff' }]], ["Warning Watchdog: The guest's watchdog wd0 expired: the guest was powered off"]],
  ['the guest reset itself', [['RESET', { guest: true, reason: 'guest-reset' }]], ['Normal Reset: VirtualMachineInstance reset by the guest']],
  ['after a watchdog reset, the guest\'s own reset counts', [['WATCHDOG', { action: 'reset' }], ['RESET', { guest: true, reason: 'guest-reset' }], ['RESET', { guest: true, reason: 'guest-reset' }]],
    ["Warning Watchdog: The guest's watchdog wd0 expired: the guest was reset", 'Normal Reset: VirtualMachineInstance reset by the guest']],
  // Measured here: a watchdog reset, then SeaBIOS's own reset 232 ms later; a `reboot`'s two resets 34 ms apart.
  ['a watchdog reset and the firmware\'s reset after it: the watchdog\'s event only',
    [['WATCHDOG', { action: 'reset' }, T], ['RESET', { guest: true, reason: 'guest-reset' }, T + 1], ['RESET', { guest: true, reason: 'guest-reset' }, T + 232]],
    ["Warning Watchdog: The guest's watchdog wd0 expired: the guest was reset"]],
  ['a guest reboot\'s burst of resets: one Reset', [['RESET', { guest: true, reason: 'guest-reset' }, T], ['RESET', { guest: true, reason: 'guest-reset' }, T + 34]],
    ['Normal Reset: VirtualMachineInstance reset by the guest']],
  ['a watchdog reset, then a reboot seconds later: both', [['WATCHDOG', { action: 'reset' }, T], ['RESET', { guest: true, reason: 'guest-reset' }, T + 1],
    ['RESET', { guest: true, reason: 'guest-reset' }, T + 232], ['RESET', { guest: true, reason: 'guest-reset' }, T + 5193], ['RESET', { guest: true, reason: 'guest-reset' }, T + 5227]],
  ["Warning Watchdog: The guest's watchdog wd0 expired: the guest was reset", 'Normal Reset: VirtualMachineInstance reset by the guest']],
  ['two reboots, each its own burst: two Resets', [['RESET', { guest: true, reason: 'guest-reset' }, T], ['RESET', { guest: true, reason: 'guest-reset' }, T + RESET_BURST_MS]],
    ['Normal Reset: VirtualMachineInstance reset by the guest', 'Normal Reset: VirtualMachineInstance reset by the guest']],
  ['the host\'s reset (virt-handler reports it)', [['RESET', { guest: false, reason: 'host-qmp-system-reset' }]], []],
  ['lifecycle events are the domain\'s, not events', [['STOP', {}], ['RESUME', {}], ['SHUTDOWN', { guest: true, reason: 'guest-shutdown' }]], []],
];

for (const [name, events, want] of table) {
  test(name, () => assert.equal(run(events), want));
}

test('a soft reboot virt-handler asked for is not the guest\'s own reset', () => {
  assert.equal(run([['RESET', { guest: true, reason: 'guest-reset' }]], { softRebootRequested: true }), []);
});

test('guestPanicInfo: KubeVirt\'s api.GuestPanicInfo from the event\'s info', () => {
  assert.equal(guestPanicInfo({ type: 'hyper-v', arg1: 0x7e, arg2: 1, arg3: 2, arg4: 3, arg5: 4 }), { Type: 'hyper-v', Arg1: 0x7e, Arg2: 1, Arg3: 2, Arg4: 3, Arg5: 4 });
  assert.equal(guestPanicInfo(undefined), { Type: 'unknown', Arg1: 0, Arg2: 0, Arg3: 0, Arg4: 0, Arg5: 0 });
  assert.equal(guestPanicInfo({ type: 's390', core: 1 }).Type, 's390');
});

test('volumeOfBlockEvent: nothing to go by', () => {
  assert.is(volumeOfBlockEvent({}, devices), 'unknown');
  assert.is(guestPanicMessage({ type: '' }), 'GuestPanicked (details unavailable)');
});

test.run();

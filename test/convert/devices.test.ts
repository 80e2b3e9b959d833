// Table tests for NICs, consoles, graphics, inputs, controllers, balloon, rng, watchdog, panic,
// vsock, the QMP monitors, and the unsupported fields that must fail with their path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { derivedMac, nicDriver } from '../../launcher/convert/interfaces.ts';
import { videoDriver } from '../../launcher/convert/consoles.ts';
import { ConversionError } from '../../launcher/convert/plan.ts';
import { convert, ctx, device, devices, optValue, optValues, vmi } from './helpers.ts';

const fieldIs = (field: string) => (e: unknown) => e instanceof ConversionError && e.field === field;
const PRIV = '/var/run/kubevirt-private/5f3c0e8a-2d7b-4c1e-9a6f-1b2c3d4e5f60';

const models: Array<[string, boolean, string]> = [
  ['virtio', false, 'virtio-net-pci-non-transitional'], ['virtio', true, 'virtio-net-pci-transitional'], ['e1000', false, 'e1000'],
  ['e1000e', false, 'e1000e'], ['rtl8139', false, 'rtl8139'], ['pcnet', false, 'pcnet'], ['ne2k_pci', false, 'ne2k_pci'],
];
for (const [model, transitional, want] of models) test(`NIC model ${model}${transitional ? ' (transitional)' : ''} → ${want}`, () => assert.is(nicDriver(model, transitional, 'f'), want));
test('NIC model igb needs QEMU 8; unknown models are errors', () => {
  assert.throws(() => nicDriver('igb', false, 'spec.i'), fieldIs('spec.i.model'));
  assert.is(nicDriver('igb', false, 'spec.i', 8), 'igb');
  assert.throws(() => nicDriver('vmxnet3', false, 'spec.i'), fieldIs('spec.i.model'));
});

test('derivedMac: stable, 52:54:00 prefix, differs per interface and VMI', () => {
  const a = derivedMac('uid-1', 'default');
  assert.match(a, /^52:54:00(:[0-9a-f]{2}){3}$/);
  assert.is(derivedMac('uid-1', 'default'), a);
  assert.is.not(derivedMac('uid-1', 'net2'), a);
  assert.is.not(derivedMac('uid-2', 'default'), a);
});

test('pod interface: user netdev hostua-<name>, device ua-<name>, ROM off without boot order, NIC port hotpluggable', () => {
  const p = convert(vmi());
  assert.equal(JSON.parse(optValue(p, '-netdev') ?? '{}'), { type: 'user', id: 'hostua-default' });
  const nic = device(p, 'ua-default');
  assert.is(nic?.['netdev'], 'hostua-default');
  assert.is(nic?.['romfile'], '');
  assert.is(nic?.['mac'], derivedMac('5f3c0e8a-2d7b-4c1e-9a6f-1b2c3d4e5f60', 'default'));
  assert.is(p.pciPorts.find((x) => x.occupiedBy === 'ua-default')?.hotplug, true);
  assert.is(p.devices.find((d) => d.qemuId === 'ua-default')?.netdevId, 'hostua-default');
  assert.ok(p.warnings.some((w) => w.includes('user-mode')));
});

test('interface options: MAC, boot order keeps the ROM, acpiIndex, state down / absent', () => {
  const p = convert(vmi((x) => {
    x.spec.domain.devices.interfaces = [
      { name: 'default', masquerade: {}, macAddress: '02:00:00:00:00:01', bootOrder: 2, acpiIndex: 3, state: 'down' },
      { name: 'gone', bridge: {}, state: 'absent' },
    ];
    x.spec.networks = [{ name: 'default', pod: {} }, { name: 'gone', pod: {} }];
  }));
  const nic = device(p, 'ua-default');
  assert.is(nic?.['mac'], '02:00:00:00:00:01');
  assert.is(nic?.['bootindex'], 2);
  assert.is(nic?.['romfile'], undefined);
  assert.is(nic?.['acpi-index'], 3);
  assert.not.ok(device(p, 'ua-gone'));
  assert.equal(p.setupCommands.find((c) => c.execute === 'set_link')?.arguments, { name: 'ua-default', up: false });
});

const netErrors: Array<[string, (v: ReturnType<typeof vmi>) => void, string]> = [
  ['multus network', (x) => { x.spec.networks = [{ name: 'default', multus: { networkName: 'br' } }]; }, 'spec.networks[0].multus'],
  ['sriov binding', (x) => { x.spec.domain.devices.interfaces = [{ name: 'default', sriov: {} }]; }, 'spec.domain.devices.interfaces[0].sriov'],
  ['macvtap binding', (x) => { x.spec.domain.devices.interfaces = [{ name: 'default', macvtap: {} }]; }, 'spec.domain.devices.interfaces[0].macvtap'],
  ['binding plugin', (x) => { x.spec.domain.devices.interfaces = [{ name: 'default', binding: { name: 'managedtap' } }]; }, 'spec.domain.devices.interfaces[0].binding'],
  ['no network for the interface', (x) => { x.spec.networks = []; }, 'spec.domain.devices.interfaces[0]'],
  ['pci address', (x) => { x.spec.domain.devices.interfaces = [{ name: 'default', bridge: {}, pciAddress: '0000:81:00.1' }]; }, 'spec.domain.devices.interfaces[0].pciAddress'],
];
for (const [name, edit, field] of netErrors) test(`interface error: ${name} → ${field}`, () => assert.throws(() => convert(vmi(edit)), fieldIs(field)));

test('serial console: socket + log by default; no log with logSerialConsole=false or cluster default off; none when detached', () => {
  const p = convert(vmi());
  assert.ok(optValues(p, '-chardev').includes(`socket,id=charserial0,path=${PRIV}/virt-serial0,server=on,wait=off,logfile=${PRIV}/virt-serial0-log,logappend=on`));
  assert.is(p.serialSocket, `${PRIV}/virt-serial0`);
  assert.is(p.serialLog, `${PRIV}/virt-serial0-log`);
  assert.equal(device(p, 'serial0'), { driver: 'isa-serial', chardev: 'charserial0', id: 'serial0', index: 0 });
  const noLog = convert(vmi((x) => { x.spec.domain.devices.logSerialConsole = false; }));
  assert.is(noLog.serialLog, undefined);
  assert.ok(optValues(noLog, '-chardev').some((c) => c.startsWith('socket,id=charserial0') && !c.includes('logfile')));
  assert.is(convert(vmi(), ctx({}, { serialConsoleLog: false })).serialLog, undefined);
  assert.is(convert(vmi((x) => { x.spec.domain.devices.logSerialConsole = true; }), ctx({}, { serialConsoleLog: false })).serialLog, `${PRIV}/virt-serial0-log`);
  const none = convert(vmi((x) => { x.spec.domain.devices.autoattachSerialConsole = false; }));
  assert.is(none.serialSocket, undefined);
  assert.not.ok(device(none, 'serial0'));
  // the guest agent channel still has its virtio-serial controller
  assert.ok(device(none, 'virtio-serial0'));
});

test('guest agent channel: virtserialport org.qemu.guest_agent.0 on virtio-serial0', () => {
  const p = convert(vmi());
  assert.is(p.guestAgentSocket, `${PRIV}/org.qemu.guest_agent.0`);
  assert.equal(device(p, 'channel0'), { driver: 'virtserialport', bus: 'virtio-serial0.0', nr: 1, chardev: 'charchannel0', id: 'channel0', name: 'org.qemu.guest_agent.0' });
});

test('VNC + VGA on pcie.0 slot 1 by default; -display none without graphics', () => {
  const p = convert(vmi());
  assert.is(optValue(p, '-vnc'), `vnc=unix:${PRIV}/virt-vnc,audiodev=audio1`);
  assert.is(p.vncSocket, `${PRIV}/virt-vnc`);
  assert.equal(device(p, 'video0'), { driver: 'VGA', id: 'video0', vgamem_mb: 16, bus: 'pcie.0', addr: '0x1' });
  const none = convert(vmi((x) => { x.spec.domain.devices.autoattachGraphicsDevice = false; }));
  assert.is(optValue(none, '-display'), 'none');
  assert.is(none.vncSocket, undefined);
  assert.not.ok(device(none, 'video0'));
});

const videos: Array<[string, string]> = [['vga', 'VGA'], ['bochs', 'bochs-display'], ['virtio', 'virtio-vga'], ['cirrus', 'cirrus-vga'], ['ramfb', 'ramfb']];
for (const [type, want] of videos) test(`video type ${type} → ${want}`, () => assert.is(videoDriver(vmi((x) => { x.spec.domain.devices.video = { type }; }), ctx()), want));
test('unknown video type is an error', () => assert.throws(() => videoDriver(vmi((x) => { x.spec.domain.devices.video = { type: 'qxl' }; }), ctx()), fieldIs('spec.domain.devices.video.type')));

test('inputs: usb tablet needs the xhci controller; virtio tablet takes a non-hotplug root port', () => {
  const p = convert(vmi((x) => { x.spec.domain.devices.inputs = [{ name: 't0' }, { name: 't1', bus: 'virtio', type: 'tablet' }]; }));
  assert.equal(device(p, 'ua-t0'), { driver: 'usb-tablet', id: 'ua-t0', bus: 'usb.0' });
  assert.is(device(p, 'usb')?.['driver'], 'qemu-xhci');
  assert.is(p.pciPorts.find((x) => x.occupiedBy === 'ua-t1')?.hotplug, false);
  assert.not.ok(device(convert(vmi()), 'usb'));
  assert.throws(() => convert(vmi((x) => { x.spec.domain.devices.inputs = [{ name: 'k', type: 'keyboard' }]; })), fieldIs('spec.domain.devices.inputs[0].type'));
});

test('controllers come before the devices that sit on them in argv', () => {
  const p = convert(vmi((x) => { x.spec.domain.devices.inputs = [{ name: 't0' }]; }));
  const ids = devices(p).map((d) => d['id']);
  assert.ok(ids.indexOf('usb') < ids.indexOf('ua-t0'));
  assert.ok(ids.indexOf('virtio-serial0') < ids.indexOf('channel0'));
  assert.ok(ids.findIndex((id) => String(id).startsWith('pci.')) < ids.indexOf('usb'));
});

test('balloon: free page reporting, stats polling via QMP; off with autoattachMemBalloon=false or dedicated CPUs', () => {
  const p = convert(vmi());
  assert.is(device(p, 'balloon0')?.['free-page-reporting'], true);
  assert.equal(p.setupCommands.find((c) => c.execute === 'qom-set')?.arguments, { path: '/machine/peripheral/balloon0', property: 'guest-stats-polling-interval', value: 10 });
  assert.not.ok(device(convert(vmi((x) => { x.spec.domain.devices.autoattachMemBalloon = false; })), 'balloon0'));
  assert.is(device(convert(vmi((x) => { x.spec.domain.cpu = { dedicatedCpuPlacement: true }; })), 'balloon0')?.['free-page-reporting'], undefined);
  assert.is(device(convert(vmi(), ctx({}, { freePageReporting: false })), 'balloon0')?.['free-page-reporting'], undefined);
  assert.not.ok(convert(vmi(), ctx({}, { memBalloonStatsPeriod: 0 })).setupCommands.some((c) => c.execute === 'qom-set'));
});

test('rng: rng-random on /dev/urandom', () => {
  const p = convert(vmi((x) => { x.spec.domain.devices.rng = {}; }));
  assert.ok(optValues(p, '-object').includes('{"qom-type":"rng-random","id":"objrng0","filename":"/dev/urandom"}'));
  assert.is(device(p, 'rng0')?.['rng'], 'objrng0');
});

test('watchdog: i6300esb ua-<name> + -action watchdog=<action>; diag288 rejected', () => {
  for (const action of ['poweroff', 'reset', 'shutdown'] as const) {
    const p = convert(vmi((x) => { x.spec.domain.devices.watchdog = { name: 'wd', i6300esb: { action } }; }));
    assert.is(device(p, 'ua-wd')?.['driver'], 'i6300esb');
    assert.is(optValue(p, '-action'), `watchdog=${action}`);
  }
  assert.throws(() => convert(vmi((x) => { x.spec.domain.devices.watchdog = { name: 'wd', diag288: {} }; })), fieldIs('spec.domain.devices.watchdog.diag288'));
  assert.throws(() => convert(vmi((x) => { x.spec.domain.devices.watchdog = { name: 'wd' }; })), fieldIs('spec.domain.devices.watchdog'));
});

test('panic devices: isa pvpanic, pvpanic-pci, hyperv crash under KVM only', () => {
  const v = vmi((x) => { x.spec.domain.devices.panicDevices = [{ model: 'isa' }, { model: 'pvpanic' }, { model: 'hyperv' }]; });
  const p = convert(v, ctx({}, { accelerator: 'kvm' }));
  assert.equal(device(p, 'panic0'), { driver: 'pvpanic', id: 'panic0', ioport: 0x505 });
  assert.is(device(p, 'panic1')?.['driver'], 'pvpanic-pci');
  assert.ok((optValue(p, '-cpu') ?? '').includes('hv-crash=on'));
  assert.ok(convert(v).warnings.some((w) => w.includes('crash')));
});

test('vsock: vhost-vsock with the CID from status; warning without one', () => {
  const p = convert(vmi((x) => { x.spec.domain.devices.autoattachVSOCK = true; x.status = { ...x.status, VSOCKCID: 123 }; }));
  assert.equal({ ...device(p, 'vsock0'), bus: undefined, addr: undefined }, { driver: 'vhost-vsock-pci-non-transitional', id: 'vsock0', 'guest-cid': 123, bus: undefined, addr: undefined });
  assert.ok(convert(vmi((x) => { x.spec.domain.devices.autoattachVSOCK = true; })).warnings.some((w) => w.includes('VSOCKCID')));
});

test('QMP: socketpair fd, listening fd, or path; always a second path-based monitor', () => {
  const fd = convert(vmi());
  assert.ok(optValues(fd, '-chardev').includes('socket,id=charmonitor,fd=3'));
  assert.equal(fd.qmp, { fd: 3, listening: false });
  assert.equal(fd.inheritedFds, [3]);
  assert.equal(optValues(fd, '-mon'), ['chardev=charmonitor,id=monitor,mode=control', 'chardev=charmonitor-debug,id=monitor-debug,mode=control']);
  assert.is(fd.qmpDebugSocket, `${PRIV}/qmp-debug.sock`);
  const listening = convert(vmi(), ctx({}, { monitorFd: { fd: 4, listening: true } }));
  assert.ok(optValues(listening, '-chardev').includes('socket,id=charmonitor,fd=4,server=on,wait=off'));
  const { monitorFd: _m, ...rest } = ctx();
  const path = convert(vmi(), rest);
  assert.equal(path.qmp, { path: `${PRIV}/qmp.sock` });
  assert.is(path.qmpSocket, `${PRIV}/qmp.sock`);
  assert.equal(path.inheritedFds, []);
  assert.ok(optValues(path, '-chardev').includes(`socket,id=charmonitor,path=${PRIV}/qmp.sock,server=on,wait=off`));
});

const unsupported: Array<[string, (v: ReturnType<typeof vmi>) => void, string, RegExp]> = [
  ['gpus', (x) => { x.spec.domain.devices.gpus = [{ name: 'g', deviceName: 'nvidia.com/GP102GL' }]; }, 'spec.domain.devices.gpus', /GPU passthrough is not supported by qvirt yet/],
  ['hostDevices', (x) => { x.spec.domain.devices.hostDevices = [{ name: 'h', deviceName: 'x' }]; }, 'spec.domain.devices.hostDevices', /host device/],
  ['filesystems', (x) => { x.spec.domain.devices.filesystems = [{ name: 'f', virtiofs: {} }]; }, 'spec.domain.devices.filesystems', /virtiofs/],
  ['a persistent TPM', (x) => { x.spec.domain.devices.tpm = { persistent: true }; }, 'spec.domain.devices.tpm.persistent', /backend-storage claim/],
  ['sound', (x) => { x.spec.domain.devices.sound = { name: 's' }; }, 'spec.domain.devices.sound', /sound/],
  ['clientPassthrough', (x) => { x.spec.domain.devices.clientPassthrough = {}; }, 'spec.domain.devices.clientPassthrough', /USB redirection/],
  ['downwardMetrics', (x) => { x.spec.domain.devices.downwardMetrics = {}; }, 'spec.domain.devices.downwardMetrics', /downward metrics/],
  ['sev', (x) => { x.spec.domain.launchSecurity = { sev: {} }; }, 'spec.domain.launchSecurity.sev', /confidential/],
  ['resourceClaims', (x) => { x.spec.resourceClaims = [{ name: 'c' }]; }, 'spec.resourceClaims', /DRA/],
];
for (const [name, edit, field, msg] of unsupported) {
  test(`unsupported: ${name} → ConversionError naming ${field}`, () => {
    assert.throws(() => convert(vmi(edit)), (e: unknown) => e instanceof ConversionError && e.field === field && msg.test(e.message) && e.message.startsWith(`${field}: `));
  });
}
test('a disabled TPM is fine, and has no TPM', () => {
  const p = convert(vmi((x) => { x.spec.domain.devices.tpm = { enabled: false }; }));
  assert.is(p.tpm, undefined);
  assert.equal(optValues(p, '-tpmdev'), []);
});

test('tpm: {} → swtpm\'s control socket and state in the private directory, QEMU\'s emulator backend, tpm-tis (KubeVirt\'s model)', () => {
  for (const tpm of [{}, { enabled: true }, { persistent: false }]) {
    const p = convert(vmi((x) => { x.spec.domain.devices.tpm = tpm; }));
    assert.equal(p.tpm, { socket: `${PRIV}/swtpm-sock`, stateDir: `${PRIV}/swtpm` });
    assert.ok(optValues(p, '-chardev').includes(`socket,id=chrtpm,path=${PRIV}/swtpm-sock`));
    assert.equal(optValues(p, '-tpmdev'), ['emulator,id=tpm-tpm0,chardev=chrtpm']);
    const dev = device(p, 'tpm0');
    assert.equal(dev, { driver: 'tpm-tis', tpmdev: 'tpm-tpm0', id: 'tpm0' }, 'on the ISA bus: no PCI address');
  }
});

test('tpm with kernelBoot\'s initrd under BIOS is refused (QEMU would load the initrd over the ACPI tables); under EFI, or without an initrd, it is fine', () => {
  const kernelBoot = (initrd: boolean) => ({ kernelBoot: { container: { image: 'k', kernelPath: '/boot/vmlinuz', ...(initrd ? { initrdPath: '/boot/initrd.img' } : {}) } } });
  const c = (initrd: boolean) => ctx({}, { kernelBoot: { kernel: '/k/vmlinuz', ...(initrd ? { initrd: '/k/initrd.img' } : {}) } });
  assert.throws(() => convert(vmi((x) => { x.spec.domain.devices.tpm = {}; x.spec.domain.firmware = kernelBoot(true); }), c(true)),
    (e: unknown) => e instanceof ConversionError && e.field === 'spec.domain.devices.tpm' && /initrd over the ACPI tables/.test(e.message));
  assert.ok(convert(vmi((x) => { x.spec.domain.devices.tpm = {}; x.spec.domain.firmware = { ...kernelBoot(true), bootloader: { efi: { secureBoot: false } } }; }), c(true)).tpm);
  assert.ok(convert(vmi((x) => { x.spec.domain.devices.tpm = {}; x.spec.domain.firmware = kernelBoot(false); }), c(false)).tpm);
});

test.run();

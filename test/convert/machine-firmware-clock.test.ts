// Table tests for machine options and features, firmware (SMBIOS, SeaBIOS, OVMF, secure boot,
// kernel boot), clock and timers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { machineType, hypervFlags } from '../../launcher/convert/machine.ts';
import { rtcBase } from '../../launcher/convert/clock.ts';
import { ConversionError } from '../../launcher/convert/plan.ts';
import { blockdevs, convert, cpuFlags, ctx, machineOpts, optValue, optValues, vmi } from './helpers.ts';

const fieldIs = (field: string) => (e: unknown) => e instanceof ConversionError && e.field === field;
const has = (argv: string[], ...seq: string[]) => argv.some((_, i) => seq.every((s, j) => argv[i + j] === s));

test('fixed process options: -S, -nodefaults, -no-shutdown, sandbox, msg timestamps, pidfile, name', () => {
  const p = convert(vmi());
  for (const seq of [['-S'], ['-nodefaults'], ['-no-user-config'], ['-no-shutdown'], ['-msg', 'timestamp=on'],
    ['-sandbox', 'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny'], ['-overcommit', 'mem-lock=off'],
    ['-accel', 'tcg'], ['-name', 'guest=default_testvmi,debug-threads=on']]) {
    assert.ok(has(p.argv, ...seq), seq.join(' '));
  }
  assert.is(optValue(p, '-pidfile'), p.pidFile);
  assert.is(p.argv[0], '/usr/bin/qemu-system-x86_64');
  assert.not.ok(p.argv.includes('-no-reboot'));
  assert.not.ok(p.argv.includes('-incoming'));
});

test('machine type: q35 alias → versioned name; pc-q35-* kept; others rejected', () => {
  assert.is(machineType(vmi(), ctx()), 'pc-q35-7.2');
  assert.is(machineType(vmi((x) => { x.spec.domain.machine = { type: 'pc-q35-7.1' }; }), ctx()), 'pc-q35-7.1');
  assert.throws(() => machineType(vmi((x) => { x.spec.domain.machine = { type: 'pc-i440fx-7.2' }; }), ctx()), fieldIs('spec.domain.machine.type'));
  assert.throws(() => convert(vmi((x) => { x.spec.architecture = 'arm64'; })), fieldIs('spec.architecture'));
});

test('machine options: usb=off, dump-guest-core=off, vmport=off, accel kvm', () => {
  const p = convert(vmi(), ctx({}, { accelerator: 'kvm' }));
  const m = machineOpts(p);
  assert.is(m['usb'], 'off');
  assert.is(m['dump-guest-core'], 'off');
  assert.is(m['vmport'], 'off');
  assert.is(m['acpi'], undefined);
  assert.is(optValue(p, '-accel'), 'kvm');
});

test('features: acpi off, smm on/off, kvm hidden, pvspinlock, apic eoi', () => {
  const p = convert(vmi((x) => {
    x.spec.domain.features = { acpi: { enabled: false }, smm: { enabled: false }, kvm: { hidden: true }, pvspinlock: { enabled: false }, apic: { endOfInterrupt: true } };
  }));
  const m = machineOpts(p);
  assert.is(m['acpi'], 'off');
  assert.is(m['smm'], 'off');
  assert.ok(cpuFlags(p).includes('kvm=off'));
  assert.ok(cpuFlags(p).includes('kvm-pv-unhalt=off'));
  assert.ok(cpuFlags(p).includes('kvm-pv-eoi=on'));
  const q = convert(vmi((x) => { x.spec.domain.features = { smm: {}, pvspinlock: {} }; }));
  assert.is(machineOpts(q)['smm'], 'on');
  assert.ok(cpuFlags(q).includes('kvm-pv-unhalt=on'));
});

test('hyperv: flags under KVM, dropped with a warning under TCG', () => {
  const v = vmi((x) => {
    x.spec.domain.features = { hyperv: {
      relaxed: {}, vapic: { enabled: false }, spinlocks: { spinlocks: 8191 }, vpindex: {}, synictimer: { direct: {} }, vendorid: { vendorid: 'KVMKVMKVM' },
      tlbflush: { direct: {}, extended: {} }, ipi: {}, evmcs: { enabled: false },
    } };
  });
  assert.equal(hypervFlags(v), ['hv-relaxed=on', 'hv-vapic=off', 'hv-spinlocks=0x1fff', 'hv-vpindex=on', 'hv-stimer=on', 'hv-stimer-direct=on',
    'hv-vendor-id=KVMKVMKVM', 'hv-tlbflush=on', 'hv-tlbflush-direct=on', 'hv-tlbflush-ext=on', 'hv-ipi=on', 'hv-evmcs=off']);
  const kvm = convert(v, ctx({}, { accelerator: 'kvm' }));
  assert.ok(cpuFlags(kvm).includes('hv-relaxed=on'));
  const tcg = convert(v);
  assert.not.ok(cpuFlags(tcg).some((f) => f.startsWith('hv-')));
  assert.ok(tcg.warnings.some((w) => w.includes('Hyper-V')));
  assert.equal(hypervFlags(vmi((x) => { x.spec.domain.features = { hypervPassthrough: { enabled: true } }; })), ['hv-passthrough=on']);
});

test('rebootPolicy Terminate → -no-reboot; incoming migration → -incoming defer', () => {
  assert.ok(convert(vmi((x) => { x.spec.domain.rebootPolicy = 'Terminate'; })).argv.includes('-no-reboot'));
  assert.ok(has(convert(vmi(), ctx({}, { incomingMigration: true })).argv, '-incoming', 'defer'));
});

test('SMBIOS: -uuid, type 1 with cluster values and serial (commas doubled), type 3 chassis', () => {
  const p = convert(vmi((x) => {
    x.spec.domain.firmware = { uuid: '11111111-2222-3333-4444-555555555555', serial: 'a,b' };
    x.spec.domain.chassis = { manufacturer: 'M', serial: 'CS' };
  }), ctx({}, { smbios: { manufacturer: 'Acme', product: 'Box', version: '1.0', sku: 'S', family: 'F' } }));
  assert.is(optValue(p, '-uuid'), '11111111-2222-3333-4444-555555555555');
  assert.equal(optValues(p, '-smbios'), [
    'type=1,manufacturer=Acme,product=Box,version=1.0,serial=a,,b,uuid=11111111-2222-3333-4444-555555555555,sku=S,family=F',
    'type=3,manufacturer=M,serial=CS',
  ]);
  assert.throws(() => convert(vmi((x) => { x.spec.domain.firmware = { uuid: 'nope' }; })), fieldIs('spec.domain.firmware.uuid'));
});

test('SeaBIOS: nothing to pass; useSerial → graphics=off; paused start → boot menu', () => {
  const p = convert(vmi());
  assert.not.ok(p.argv.some((a) => a.includes('pflash')));
  assert.is(optValue(p, '-boot'), 'strict=on');
  assert.is(machineOpts(convert(vmi((x) => { x.spec.domain.firmware = { bootloader: { bios: { useSerial: true } } }; })))['graphics'], 'off');
  const paused = convert(vmi((x) => { x.spec.startStrategy = 'Paused'; }));
  assert.is(optValue(paused, '-boot'), 'menu=on,splash-time=10000,strict=on');
  assert.is(paused.startPaused, true);
});

test('EFI: OVMF code read-only, per-VM VARS copy in the plan, pflash on the machine, no SMM forced', () => {
  const p = convert(vmi((x) => { x.spec.domain.firmware = { bootloader: { efi: { secureBoot: false } } }; }));
  const nodes = blockdevs(p);
  assert.is(nodes[0]?.['filename'], '/usr/share/OVMF/OVMF_CODE_4M.fd');
  assert.is(nodes[1]?.['read-only'], true);
  assert.is(nodes[2]?.['filename'], '/var/run/kubevirt-private/libvirt/qemu/nvram/testvmi_VARS.fd');
  assert.is(nodes[3]?.['read-only'], false);
  assert.equal(p.files, [{ kind: 'copy', source: '/usr/share/OVMF/OVMF_VARS_4M.fd', destination: '/var/run/kubevirt-private/libvirt/qemu/nvram/testvmi_VARS.fd', onlyIfMissing: true }]);
  const m = machineOpts(p);
  assert.is(m['pflash0'], 'libvirt-pflash0-format');
  assert.is(m['pflash1'], 'libvirt-pflash1-format');
  assert.is(m['smm'], undefined);
});

test('secure boot (KubeVirt default for efi: {}): secboot code, MS vars, smm=on, secure pflash', () => {
  const p = convert(vmi((x) => { x.spec.domain.firmware = { bootloader: { efi: {} } }; }));
  assert.is(blockdevs(p)[0]?.['filename'], '/usr/share/OVMF/OVMF_CODE_4M.secboot.fd');
  assert.is(p.files[0]?.source, '/usr/share/OVMF/OVMF_VARS_4M.ms.fd');
  assert.is(machineOpts(p)['smm'], 'on');
  assert.ok(has(p.argv, '-global', 'driver=cfi.pflash01,property=secure,value=on'));
  assert.throws(() => convert(vmi((x) => { x.spec.domain.firmware = { bootloader: { efi: {} } }; x.spec.domain.features = { smm: { enabled: false } }; })), fieldIs('spec.domain.features.smm'));
});

test('EFI errors: no OVMF found, persistent NVRAM', () => {
  const { ovmf: _ovmf, ...noOvmf } = ctx();
  assert.throws(() => convert(vmi((x) => { x.spec.domain.firmware = { bootloader: { efi: {} } }; }), noOvmf), fieldIs('spec.domain.firmware.bootloader.efi'));
  assert.throws(() => convert(vmi((x) => { x.spec.domain.firmware = { bootloader: { efi: { persistent: true } } }; })), fieldIs('spec.domain.firmware.bootloader.efi.persistent'));
});

test('EFI guests get bochs-display when the cluster says useBochsForEFIGuests', () => {
  const v = vmi((x) => { x.spec.domain.firmware = { bootloader: { efi: { secureBoot: false } } }; });
  assert.ok(convert(v, ctx({}, { useBochsForEFIGuests: true })).argv.some((a) => a.includes('"bochs-display"')));
  assert.ok(convert(v).argv.some((a) => a.includes('"VGA"')));
});

test('kernel boot: -kernel/-initrd/-append from the launcher-extracted artifacts', () => {
  const v = vmi((x) => { x.spec.domain.firmware = { kernelBoot: { kernelArgs: 'console=ttyS0 quiet', container: { image: 'i', kernelPath: '/boot/k', initrdPath: '/boot/i' } } }; });
  const p = convert(v, ctx({}, { kernelBoot: { kernel: '/run/k', initrd: '/run/i' } }));
  assert.ok(has(p.argv, '-kernel', '/run/k'));
  assert.ok(has(p.argv, '-initrd', '/run/i'));
  assert.ok(has(p.argv, '-append', 'console=ttyS0 quiet'));
  assert.throws(() => convert(v), fieldIs('spec.domain.firmware.kernelBoot.container.kernelPath'));
  const argsOnly = convert(vmi((x) => { x.spec.domain.firmware = { kernelBoot: { kernelArgs: 'x' } }; }));
  assert.not.ok(argsOnly.argv.includes('-append'));
  assert.ok(argsOnly.warnings.some((w) => w.includes('kernelArgs')));
});

test('ACPI tables are rejected; Ignition goes to fw_cfg', () => {
  assert.throws(() => convert(vmi((x) => { x.spec.domain.firmware = { acpi: { slicNameRef: 's' } }; })), fieldIs('spec.domain.firmware.acpi'));
  const v = vmi((x) => { x.metadata = { ...x.metadata, annotations: { 'kubevirt.io/ignitiondata': '{"ignition":{"version":"3.2.0"}}' } }; });
  assert.ok(has(convert(v, ctx({}, { ignitionFile: '/run/ign/data.ign' })).argv, '-fw_cfg', 'name=opt/com.coreos/config,file=/run/ign/data.ign'));
  assert.throws(() => convert(v), /Ignition/);
});

test('rtcBase: now + offset in UTC, seconds resolution', () => {
  assert.is(rtcBase(new Date('2026-11-21T23:30:15.900Z'), 3600), '2026-11-22T00:30:15');
  assert.is(rtcBase(new Date('2026-01-01T00:00:00Z'), -1), '2025-12-31T23:59:59');
});

const clockCases: Array<[string, NonNullable<ReturnType<typeof vmi>['spec']['domain']['clock']>, string, Record<string, string>]> = [
  ['default utc', { utc: {} }, 'base=utc', {}],
  ['utc offset', { utc: { offsetSeconds: -7200 } }, 'base=2026-11-21T10:00:00', {}],
  ['timezone → localtime + TZ', { timezone: 'Europe/Berlin' }, 'base=localtime', { TZ: 'Europe/Berlin' }],
  ['rtc catchup + wall', { utc: {}, timer: { rtc: { tickPolicy: 'catchup', track: 'wall' } } }, 'base=utc,driftfix=slew,clock=host', {}],
  ['rtc guest track', { utc: {}, timer: { rtc: { track: 'guest' } } }, 'base=utc,clock=vm', {}],
];
for (const [name, clock, rtc, env] of clockCases) {
  test(`clock: ${name}`, () => {
    const p = convert(vmi((x) => { x.spec.domain.clock = clock; }));
    assert.is(optValue(p, '-rtc'), rtc);
    assert.equal(p.env, env);
  });
}

test('timers: hpet off → machine hpet=off; kvm clock off; PIT policy under KVM only; hyperv clock under KVM only', () => {
  const v = vmi((x) => { x.spec.domain.clock = { utc: {}, timer: { hpet: { present: false, tickPolicy: 'delay' }, kvm: { present: false }, pit: { tickPolicy: 'discard' }, hyperv: {} } }; });
  const kvm = convert(v, ctx({}, { accelerator: 'kvm' }));
  assert.is(machineOpts(kvm)['hpet'], 'off');
  assert.ok(cpuFlags(kvm).includes('kvmclock=off'));
  assert.ok(cpuFlags(kvm).includes('hv-time=on'));
  assert.ok(has(kvm.argv, '-global', 'kvm-pit.lost_tick_policy=discard'));
  const tcg = convert(v);
  assert.not.ok(tcg.argv.some((a) => a.includes('kvm-pit')));
  assert.not.ok(cpuFlags(tcg).includes('hv-time=on'));
  assert.ok(tcg.warnings.length >= 3);
  assert.throws(() => convert(vmi((x) => { x.spec.domain.clock = { timezone: 'Bad Zone;' }; })), fieldIs('spec.domain.clock.timezone'));
});

test('kubevirt.io/disablePCIHole64 → q35-pcihost.pci-hole64-size=0', () => {
  const p = convert(vmi((x) => { x.metadata = { ...x.metadata, annotations: { 'kubevirt.io/disablePCIHole64': 'true' } }; }));
  assert.ok(has(p.argv, '-global', 'q35-pcihost.pci-hole64-size=0'));
});

test.run();

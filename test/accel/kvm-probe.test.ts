// The KVM usability probe: its firmware image, its verdicts, the accelerator choice, and real
// runs — TCG must run the firmware correctly (proving the bytes right); KVM on this machine (nested
// PVM: guest code is emulated) must be found unusable, quickly, both through the VEX instruction and
// through the time limit alone.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../lib/tmp.ts';
import { probeFirmware, probeListing, probeLayout, probeExit, qemuExitStatus, loopIterations } from '../../launcher/accel/probe-firmware.ts';
import { interpretProbeRun, probeKvm, runProbeGuest, probeVersion, type ProbeRun } from '../../launcher/accel/kvm-probe.ts';
import { chooseAccelerator } from '../../launcher/accel/choose.ts';

test('firmware image: 64 KiB, reset vector, GDT and gdtr where the code expects them', () => {
  const fw = probeFirmware();
  assert.is(fw.length, 0x10000);
  // ljmp $0xf000,$0xf000 at 0xFFFFFFF0
  assert.equal([...fw.subarray(probeLayout.reset, probeLayout.reset + 5)], [0xea, 0x00, 0xf0, 0x00, 0xf0]);
  // lgdtl %cs:disp16 takes the gdtr offset
  assert.is(fw[probeLayout.code + 7]! | (fw[probeLayout.code + 8]! << 8), probeLayout.gdtr);
  // gdtr: limit 31, base = low alias of the GDT
  const view = new DataView(fw.buffer);
  assert.is(view.getUint16(probeLayout.gdtr, true), 31);
  assert.is(view.getUint32(probeLayout.gdtr + 2, true), 0xf0000 + probeLayout.gdt);
  // every descriptor has its accessed bit preset (the image is read-only)
  for (const sel of [0x08, 0x10, 0x18]) assert.ok(fw[probeLayout.gdt + sel + 5]! & 1, `descriptor ${sel} accessed bit`);
  // instructions are contiguous: each starts where the previous ended, up to the final jmp
  const code = probeListing().filter((i) => i.offset >= probeLayout.code && i.offset < probeLayout.gdt);
  for (let i = 1; i < code.length; i++) assert.is(code[i]!.offset, code[i - 1]!.offset + code[i - 1]!.length, code[i]!.text);
  // the loop constant and its checked sum agree
  const sum = Number((BigInt(loopIterations) * BigInt(loopIterations + 1) / 2n) & 0xffffffffn);
  assert.is(view.getUint32(0xf0cb, true), sum);
  assert.is(view.getUint32(0xf0b7, true), loopIterations);
  // skipVex turns the BMI2 gate into an unconditional jump, nothing else
  const skip = probeFirmware({ skipVex: true });
  const diff = [...fw].flatMap((b, i) => (b !== skip[i] ? [i] : []));
  assert.equal(diff, [probeLayout.vexGate]);
  assert.is(skip[probeLayout.vexGate], 0xeb);
});

test('interpretProbeRun: every outcome', () => {
  const run = (p: Partial<ProbeRun>): ProbeRun => ({ exitCode: null, timedOut: false, internalError: false, stderr: '', ms: 120, ...p });
  const table: Array<[string, ProbeRun, boolean, RegExp]> = [
    ['ok with VEX', run({ exitCode: qemuExitStatus(probeExit.okWithVex) }), true, /ran the 64-bit probe guest in 120 ms \(loop and VEX/],
    ['ok without BMI2', run({ exitCode: qemuExitStatus(probeExit.okWithoutVex) }), true, /no BMI2/],
    ['wrong loop sum', run({ exitCode: qemuExitStatus(probeExit.badLoop) }), false, /wrong loop sum/],
    ['wrong shlx', run({ exitCode: qemuExitStatus(probeExit.badVex) }), false, /wrong shlx/],
    ['internal error', run({ internalError: true, stderr: 'KVM internal error. Suberror: 1\nextra data[0]: 0x1' }), false, /"KVM internal error\. Suberror: 1".*emulates/],
    ['time limit', run({ timedOut: true }), false, /within 1300 ms/],
    ['triple fault', run({ exitCode: 0 }), false, /reset before reporting/],
    ['no KVM module', run({ exitCode: 1, stderr: 'Could not access KVM kernel module: No such file or directory\nqemu-system-x86_64: failed to initialize kvm: No such file or directory' }), false, /QEMU could not run the KVM probe guest: Could not access KVM kernel module/],
    ['spawn failed', run({ stderr: 'spawn qemu-nope ENOENT' }), false, /spawn qemu-nope ENOENT/],
    ['killed, nothing said', run({}), false, /killed/],
  ];
  for (const [name, r, usable, reason] of table) {
    const v = interpretProbeRun(r);
    assert.is(v.usable, usable, name);
    assert.match(v.reason, reason, name);
  }
  assert.match(interpretProbeRun(run({ timedOut: true }), 'tcg', 800).reason, /^TCG did not finish .* within 800 ms/);
});

test('chooseAccelerator: KVM when usable, TCG only when emulation is allowed', () => {
  const yes = { usable: true, reason: 'KVM ran it' };
  const no = { usable: false, reason: 'KVM device /dev/kvm does not exist' };
  assert.equal(chooseAccelerator(yes, false), { accel: 'kvm', softwareEmulation: false, reason: 'KVM ran it' });
  assert.equal(chooseAccelerator(yes, true), { accel: 'kvm', softwareEmulation: false, reason: 'KVM ran it' });
  const tcg = chooseAccelerator(no, true);
  assert.is(tcg.accel, 'tcg');
  assert.ok(tcg.accel === 'tcg' && tcg.softwareEmulation && tcg.reason.endsWith(no.reason));
  const none = chooseAccelerator(no, false);
  assert.is(none.accel, null);
  assert.ok(none.accel === null && /useEmulation/.test(none.error) && none.error.endsWith(no.reason));
});

test('TCG control run: the firmware reaches long mode and reports the right results', async () => {
  const max = await runProbeGuest({ accel: 'tcg', cpu: 'max', timeoutMs: 20_000 });
  assert.is(max.exitCode, qemuExitStatus(probeExit.okWithVex), max.stderr); // TCG's max CPU has BMI2
  assert.ok(interpretProbeRun(max, 'tcg').usable);
  const base = await runProbeGuest({ accel: 'tcg', cpu: 'qemu64', timeoutMs: 20_000 });
  assert.is(base.exitCode, qemuExitStatus(probeExit.okWithoutVex), base.stderr); // qemu64 has none
  console.log(`  TCG control: ${max.ms} ms (max), ${base.ms} ms (qemu64)`);
});

test('probeKvm: not usable on this machine, decided well under the limit', async () => {
  const r = await probeKvm();
  console.log(`  probeKvm: usable=${r.usable} in ${r.ms} ms: ${r.reason}`);
  assert.is(r.usable, false, r.reason);
  assert.ok(r.ms < 1500, `took ${r.ms} ms`);
  if (existsSync('/dev/kvm')) assert.match(r.reason, /internal error|within/);
});

test('probe without the VEX instruction: the time limit alone finds emulated KVM', async () => {
  if (!existsSync('/dev/kvm')) return;
  const run = await runProbeGuest({ accel: 'kvm', skipVex: true, timeoutMs: 1200 });
  const v = interpretProbeRun(run, 'kvm', 1200);
  console.log(`  KVM, loop only: ${run.ms} ms, ${v.reason}`);
  assert.is(v.usable, false);
  assert.ok(run.timedOut, `expected the time limit, got exit ${run.exitCode}: ${run.stderr}`);
  assert.ok(run.ms < 1200 + 300, `took ${run.ms} ms`);
});

test('probeKvm: a missing device is reported without starting QEMU; results are cached', async () => {
  const tmp = tempDir('qvk');
  try {
    const cacheFile = join(tmp.path, 'kvm-probe.json');
    const first = await probeKvm({ kvmDevice: join(tmp.path, 'no-kvm'), cacheFile });
    assert.is(first.usable, false);
    assert.match(first.reason, /no-kvm does not exist/);
    assert.ok(first.ms < 100, `${first.ms} ms`);
    assert.is(first.cached, undefined);
    const saved = JSON.parse(readFileSync(cacheFile, 'utf8')) as { probeVersion: number; result: { reason: string } };
    assert.is(saved.probeVersion, probeVersion);
    assert.is(saved.result.reason, first.reason);
    const again = await probeKvm({ kvmDevice: join(tmp.path, 'no-kvm'), cacheFile });
    assert.equal(again, { ...first, cached: true });
    // Another device (or QEMU, or host boot) is another key: probed afresh.
    const other = await probeKvm({ kvmDevice: join(tmp.path, 'other-kvm'), cacheFile });
    assert.is(other.cached, undefined);
    assert.match(other.reason, /other-kvm/);
    // A damaged cache file is ignored.
    writeFileSync(cacheFile, '{not json');
    const fresh = await probeKvm({ kvmDevice: join(tmp.path, 'no-kvm'), cacheFile });
    assert.is(fresh.cached, undefined);
  } finally {
    tmp.cleanup();
  }
});

test.run();

// The KVM usability probe: its firmware image, its verdicts over recorded QEMU outputs, the
// accelerator choice, and real runs — TCG must run the firmware correctly (proving the bytes right);
// on this host the probe's verdict must match what a real guest does under KVM, measured first
// (KVM missing, broken in any way, or working), quickly.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../lib/tmp.ts';
import { probeFirmware, probeListing, probeLayout, probeExit, qemuExitStatus, loopIterations } from '../../launcher/accel/probe-firmware.ts';
import { interpretProbeRun, probeKvm, runProbeGuest, probeVersion, type KvmProbeResult, type ProbeOutcome, type ProbeRun } from '../../launcher/accel/kvm-probe.ts';
import { ensureGuest, kernelBootArgs, kernelCmdline, markers, MarkerLog } from '../../src/local/guest/guest.ts';
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

// QEMU's stderr as recorded on hosts where KVM fails, each in its own way, and where it works.
test('interpretProbeRun: every outcome class, over recorded QEMU outputs', () => {
  const run = (p: Partial<ProbeRun>): ProbeRun => ({ exitCode: null, timedOut: false, internalError: false, stderr: '', ms: 120, ...p });
  const table: Array<[string, ProbeRun, ProbeOutcome, RegExp]> = [
    ['ok with VEX', run({ exitCode: qemuExitStatus(probeExit.okWithVex) }), 'ok', /ran the 64-bit probe guest in 120 ms \(loop and VEX/],
    ['ok without BMI2', run({ exitCode: qemuExitStatus(probeExit.okWithoutVex) }), 'ok', /no BMI2/],
    ['ok, QEMU warned about CPU features', run({ exitCode: qemuExitStatus(probeExit.okWithVex), stderr: 'qemu-system-x86_64: warning: host doesn\'t support requested feature: CPUID.80000001H:ECX.svm [bit 2]' }), 'ok', /loop and VEX/],
    ['wrong loop sum', run({ exitCode: qemuExitStatus(probeExit.badLoop) }), 'wrong-result', /wrong loop sum/],
    ['wrong shlx', run({ exitCode: qemuExitStatus(probeExit.badVex) }), 'wrong-result', /wrong shlx/],
    // nested PVM: KVM's instruction emulator meets the VEX instruction
    ['internal error', run({ internalError: true, stderr: 'KVM internal error. Suberror: 1\nextra data[0]: 0x000000000000000c\nemulation failure\nEAX=00000000 EBX=00000000' }), 'emulation-failure', /"KVM internal error\. Suberror: 1".*emulates/],
    // emulated at software speed: the loop never ends in time; or a guest that never runs at all
    ['time limit', run({ timedOut: true }), 'time-limit', /within 1300 ms/],
    ['triple fault', run({ exitCode: 0 }), 'reset', /reset before reporting/],
    // KVM refuses an MSR the host CPU model sets, and QEMU 7.2 asserts (the fresh-machine CI failure)
    ['MSR refused, QEMU assertion', run({ signal: 'SIGABRT', stderr: 'qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\nqemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion `ret == cpu->kvm_msr_buf->nmsrs\' failed.' }), 'qemu-failed', /failed to set MSR 0x10a to 0x69; .*kvm_buf_set_msrs: Assertion .* failed\. \(killed by SIGABRT\)$/],
    ['no KVM module', run({ exitCode: 1, stderr: 'Could not access KVM kernel module: No such file or directory\nqemu-system-x86_64: failed to initialize kvm: No such file or directory' }), 'qemu-failed', /QEMU could not run the KVM probe guest: Could not access KVM kernel module: No such file or directory \(exit status 1\)/],
    ['KVM busy elsewhere', run({ exitCode: 1, stderr: 'ioctl(KVM_CREATE_VM) failed: 16 Device or resource busy\nqemu-system-x86_64: failed to initialize kvm: Device or resource busy' }), 'qemu-failed', /KVM_CREATE_VM\) failed: 16 Device or resource busy/],
    ['QEMU crashed, nothing said', run({ signal: 'SIGSEGV' }), 'qemu-failed', /killed by SIGSEGV$/],
    ['spawn failed', run({ stderr: 'spawn qemu-nope ENOENT' }), 'qemu-failed', /spawn qemu-nope ENOENT/],
    ['killed, nothing said', run({}), 'qemu-failed', /killed$/],
  ];
  for (const [name, r, outcome, reason] of table) {
    const v = interpretProbeRun(r);
    assert.is(v.outcome, outcome, name);
    assert.is(v.usable, outcome === 'ok', name);
    assert.match(v.reason, reason, name);
    assert.not.match(v.reason, /\n/, `${name}: the reason is one line`);
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

/**
 * Measures, without the probe, whether KVM runs real guests here: boots the test guest (a stock
 * Debian kernel) with `-accel kvm -cpu host` and waits for its /init. Where KVM works that takes
 * about a second; where it is missing or broken QEMU fails, the kernel stops, or nothing comes.
 */
async function kvmBootsTestGuest(limitMs = 20_000): Promise<{ boots: boolean; how: string }> {
  if (!existsSync('/dev/kvm')) return { boots: false, how: '/dev/kvm does not exist' };
  const guest = await ensureGuest();
  const args = ['-machine', 'q35', '-accel', 'kvm', '-cpu', 'host', '-m', '256', '-nodefaults', '-no-user-config',
    '-display', 'none', '-serial', 'stdio', ...kernelBootArgs(guest, `${kernelCmdline} qvirt.dhcp=0 qvirt.ga=0 qvirt.shell=0`)];
  const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = new MarkerLog();
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => log.push(d));
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((r) => child.once('exit', (code, signal) => { log.end(`QEMU exited (${code ?? signal}): ${stderr.trim().split('\n')[0] ?? ''}`); r(); }));
  const started = performance.now();
  try {
    await log.waitFor(markers.booted, { timeoutMs: limitMs });
    return { boots: true, how: `the test guest's /init ran under KVM after ${Math.round(performance.now() - started)} ms` };
  } catch (e) {
    return { boots: false, how: (e as Error).message.split('\n')[0]!.replace(/; console so far:$/, '') };
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

let measured: { boots: boolean; how: string } | undefined;
let probed: KvmProbeResult | undefined;

test('probeKvm agrees with a real guest under KVM, decided well under the limit, in one line', async () => {
  measured = await kvmBootsTestGuest();
  probed = await probeKvm();
  console.log(`  measured: ${measured.how}\n  probeKvm: usable=${probed.usable} (${probed.outcome}) in ${probed.ms} ms: ${probed.reason}`);
  assert.is(probed.usable, measured.boots, `the probe says usable=${probed.usable} (${probed.reason}), a real guest: ${measured.how}`);
  assert.ok(probed.ms < 1500, `took ${probed.ms} ms`);
  assert.not.match(probed.reason, /\n/);
  if (!existsSync('/dev/kvm')) assert.is(probed.outcome, 'device');
});

test('probe without the VEX instruction: the time limit alone finds emulated KVM, and changes no other verdict', async () => {
  assert.ok(probed, 'the previous test probed');
  if (probed!.outcome === 'device') return; // no KVM device: no QEMU to run (the verdict is checked above)
  const run = await runProbeGuest({ accel: 'kvm', skipVex: true, timeoutMs: 1200 });
  const v = interpretProbeRun(run, 'kvm', 1200);
  console.log(`  KVM, loop only: ${run.ms} ms, ${v.outcome}: ${v.reason}`);
  assert.ok(run.ms < 1200 + 300, `took ${run.ms} ms`);
  if (probed!.outcome === 'emulation-failure') {
    // KVM emulates instructions here: without the VEX instruction to trip on, only the limit catches it.
    assert.is(v.outcome, 'time-limit', v.reason);
  } else {
    assert.is(v.usable, probed!.usable, `full probe: ${probed!.reason}; loop only: ${v.reason}`);
  }
});

test('probeKvm: a missing device is reported without starting QEMU; results are cached', async () => {
  const tmp = tempDir('qvk');
  try {
    const cacheFile = join(tmp.path, 'kvm-probe.json');
    const first = await probeKvm({ kvmDevice: join(tmp.path, 'no-kvm'), cacheFile });
    assert.is(first.usable, false);
    assert.is(first.outcome, 'device');
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

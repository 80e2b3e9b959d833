// The guest lifecycle through QMP alone, with the real test guest under TCG: boot with
// -kernel/-initrd, wait for the guest to be up, `system_powerdown` (the ACPI power button) → the
// guest's acpid powers it off → QEMU reports SHUTDOWN {guest: true, reason: guest-shutdown}, then
// exits 0, and the client sees an expected close.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { QmpClient, isEvent, type StatusInfo } from '../../qmp/index.ts';
import { MarkerLog, ensureGuest, kernelBootArgs, kernelCmdline, markers } from '../../src/local/guest/guest.ts';

const unhandled: unknown[] = [];
process.on('unhandledRejection', (e) => { unhandled.push(e); });

test('boot the test guest, system_powerdown → guest powers off → SHUTDOWN guest:true → QEMU exits 0', async () => {
  const guest = await ensureGuest();
  const child = spawn('qemu-system-x86_64', [
    '-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-m', '256', '-smp', '1', '-nodefaults', '-no-user-config', '-display', 'none',
    ...kernelBootArgs(guest, `${kernelCmdline} qvirt.dhcp=0 qvirt.ga=0 qvirt.shell=0`),
    '-chardev', 'stdio,id=ser0,signal=off', '-serial', 'chardev:ser0',
    '-chardev', 'socket,id=mon,fd=3', '-mon', 'chardev=mon,mode=control',
  ], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  const log = new MarkerLog();
  child.stdout!.on('data', (d: Buffer) => log.push(d));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  let c: QmpClient | undefined;
  try {
    c = await QmpClient.adopt(child.stdio[3] as Duplex, { timeout: 30_000 });
    const lifecycle = c.subscribe({ names: ['POWERDOWN', 'SHUTDOWN'] });
    await log.waitFor(markers.ready, { timeoutMs: 120_000 });
    assert.is((await c.execute<StatusInfo>('query-status')).status, 'running');
    const cursor = c.eventCursor();
    await c.execute('system_powerdown');
    const shutdown = await c.waitEvent('SHUTDOWN', { since: cursor, timeout: 60_000 });
    assert.ok(isEvent(shutdown, 'SHUTDOWN'));
    assert.equal(shutdown.data, { guest: true, reason: 'guest-shutdown' });
    const seen: string[] = [];
    for await (const ev of lifecycle) seen.push(ev.event);
    assert.equal(seen, ['POWERDOWN', 'SHUTDOWN'], 'the subscription saw both, then ended with the connection');
    assert.is(await c.closed, undefined, 'EOF after SHUTDOWN is an expected close');
    assert.equal(await exited, { code: 0, signal: null }, stderr);
    await log.waitFor(markers.poweroff, { timeoutMs: 1000 });
  } finally {
    await c?.close();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
});

test('no unhandled rejection', () => {
  assert.equal(unhandled.map(String), []);
});

test.run();

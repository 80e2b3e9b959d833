// The domain state machine: QMP events, launcher intents and process exits → KubeVirt's
// lifecycle/reason strings. Every row is a sequence of inputs from a fresh `started` domain.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nextDomainState, INITIAL_DOMAIN_STATE, isAlive, type DomainInput, type DomainState } from '../../launcher/domain/state.ts';
import { buildDomain, gracePeriodMetadata } from '../../launcher/domain/domain.ts';

const q = (event: string, data?: Record<string, unknown>): DomainInput => ({ kind: 'qmp', event, data });
const exit = (code: number | null, signal: string | null = null): DomainInput => ({ kind: 'exit', code, signal });
const intent = (i: 'pause' | 'migrate' | 'dump' | 'save' | 'snapshot' | 'destroy' | 'reboot'): DomainInput => ({ kind: 'intent', intent: i });
const rs = (status: string): DomainInput => ({ kind: 'run-state', status });
const STARTED: DomainInput = { kind: 'started' };

const run = (inputs: DomainInput[], from: DomainState = INITIAL_DOMAIN_STATE) => inputs.reduce(nextDomainState, from);

const SHUTDOWN_GUEST = q('SHUTDOWN', { guest: true, reason: 'guest-shutdown' });
const SHUTDOWN_QUIT = q('SHUTDOWN', { guest: false, reason: 'host-qmp-quit' });
const SHUTDOWN_SIGNAL = q('SHUTDOWN', { guest: false, reason: 'host-signal' });

const table: [string, DomainInput[], string, string][] = [
  ['nothing defined', [], 'NoState', 'Unknown'],
  ['spawned with -S', [STARTED], 'Paused', 'StartingUp'],
  ['started then cont', [STARTED, q('RESUME')], 'Running', 'Unknown'],
  ['startStrategy Paused', [STARTED, { kind: 'start-paused' }], 'Paused', 'User'],
  ['start paused then unpause', [STARTED, { kind: 'start-paused' }, q('RESUME')], 'Running', 'Unknown'],
  ['user pause', [STARTED, q('RESUME'), intent('pause'), q('STOP')], 'Paused', 'User'],
  ['user pause then unpause', [STARTED, q('RESUME'), intent('pause'), q('STOP'), q('RESUME')], 'Running', 'Unknown'],
  ['STOP nobody asked for', [STARTED, q('RESUME'), q('STOP')], 'Paused', 'Unknown'],
  ['pause intent is used once', [STARTED, q('RESUME'), intent('pause'), q('STOP'), q('RESUME'), q('STOP')], 'Paused', 'Unknown'],
  ['migration pause', [STARTED, q('RESUME'), intent('migrate'), q('STOP')], 'Paused', 'Migration'],
  ['dump pause', [STARTED, q('RESUME'), intent('dump'), q('STOP')], 'Paused', 'Dump'],
  ['save pause', [STARTED, q('RESUME'), intent('save'), q('STOP')], 'Paused', 'Save'],
  ['snapshot pause', [STARTED, q('RESUME'), intent('snapshot'), q('STOP')], 'Paused', 'Snapshot'],
  ['io error stops the guest', [STARTED, q('RESUME'), q('BLOCK_IO_ERROR', { action: 'stop', operation: 'write' }), q('STOP')], 'Paused', 'IOError'],
  ['io error wins over a user pause intent', [STARTED, q('RESUME'), intent('pause'), q('BLOCK_IO_ERROR', { action: 'stop' }), q('STOP')], 'Paused', 'IOError'],
  ['io error reported while already stopped', [STARTED, q('RESUME'), q('STOP'), q('BLOCK_IO_ERROR', { action: 'stop' })], 'Paused', 'IOError'],
  ['io error with action report does not pause', [STARTED, q('RESUME'), q('BLOCK_IO_ERROR', { action: 'report' })], 'Running', 'Unknown'],
  ['io error cleared by cont', [STARTED, q('RESUME'), q('BLOCK_IO_ERROR', { action: 'stop' }), q('STOP'), q('RESUME'), q('STOP')], 'Paused', 'Unknown'],
  ['io error again after cont', [STARTED, q('RESUME'), q('BLOCK_IO_ERROR', { action: 'stop' }), q('STOP'), q('RESUME'), q('BLOCK_IO_ERROR', { action: 'stop' }), q('STOP')], 'Paused', 'IOError'],
  ['watchdog pause', [STARTED, q('RESUME'), q('WATCHDOG', { action: 'pause' }), q('STOP')], 'Paused', 'Watchdog'],
  ['watchdog reset keeps running', [STARTED, q('RESUME'), q('WATCHDOG', { action: 'reset' }), q('RESET', { guest: false })], 'Running', 'Unknown'],
  ['guest power-off (-no-shutdown)', [STARTED, q('RESUME'), SHUTDOWN_GUEST, q('STOP')], 'Shutoff', 'Shutdown'],
  ['guest power-off, then our quit, then exit 0', [STARTED, q('RESUME'), SHUTDOWN_GUEST, q('STOP'), intent('destroy'), SHUTDOWN_QUIT, exit(0)], 'Shutoff', 'Shutdown'],
  ['guest reboot under -no-reboot', [STARTED, q('RESUME'), q('SHUTDOWN', { guest: true, reason: 'guest-reset' })], 'Shutoff', 'Shutdown'],
  ['panic with shutdown action', [STARTED, q('RESUME'), q('SHUTDOWN', { guest: true, reason: 'guest-panic' })], 'Crashed', 'Panicked'],
  ['quit by the launcher (kill)', [STARTED, q('RESUME'), intent('destroy'), SHUTDOWN_QUIT, exit(0)], 'Shutoff', 'Destroyed'],
  ['quit by someone else', [STARTED, q('RESUME'), SHUTDOWN_QUIT], 'Shutoff', 'Destroyed'],
  ['SIGTERM to QEMU', [STARTED, q('RESUME'), SHUTDOWN_SIGNAL, exit(0)], 'Shutoff', 'Destroyed'],
  ['hard stop: launcher SIGKILLs QEMU', [STARTED, q('RESUME'), intent('destroy'), exit(null, 'SIGKILL')], 'Shutoff', 'Destroyed'],
  ['kill -9 from outside', [STARTED, q('RESUME'), exit(null, 'SIGKILL')], 'Crashed', 'Crashed'],
  ['abort (heap corruption)', [STARTED, q('RESUME'), exit(null, 'SIGABRT')], 'Crashed', 'Crashed'],
  ['non-zero exit without SHUTDOWN', [STARTED, q('RESUME'), exit(1)], 'Crashed', 'Crashed'],
  ['failed to start (bad argv)', [STARTED, exit(1)], 'Crashed', 'Crashed'],
  ['clean exit without a SHUTDOWN seen', [STARTED, q('RESUME'), exit(0)], 'Shutoff', 'Destroyed'],
  ['killed while paused by user', [STARTED, q('RESUME'), intent('pause'), q('STOP'), exit(null, 'SIGKILL')], 'Crashed', 'Crashed'],
  ['guest panic', [STARTED, q('RESUME'), q('GUEST_PANICKED', { action: 'pause' })], 'Crashed', 'Panicked'],
  ['guest panic, STOP, quit, exit keep Panicked', [STARTED, q('RESUME'), q('GUEST_PANICKED', { action: 'pause' }), q('STOP'), intent('destroy'), SHUTDOWN_QUIT, exit(0)], 'Crashed', 'Panicked'],
  ['shutoff is final for RESUME', [STARTED, q('RESUME'), SHUTDOWN_GUEST, q('RESUME')], 'Shutoff', 'Shutdown'],
  ['crashed is final for exit', [STARTED, exit(null, 'SIGSEGV'), exit(0)], 'Crashed', 'Crashed'],
  ['pause intent after shutoff is ignored', [STARTED, q('RESUME'), SHUTDOWN_GUEST, intent('pause'), q('STOP')], 'Shutoff', 'Shutdown'],
  ['guest suspend (S3)', [STARTED, q('RESUME'), q('SUSPEND')], 'PMSuspended', 'Unknown'],
  ['guest wakeup', [STARTED, q('RESUME'), q('SUSPEND'), q('WAKEUP')], 'Running', 'Unknown'],
  ['POWERDOWN alone changes nothing', [STARTED, q('RESUME'), q('POWERDOWN')], 'Running', 'Unknown'],
  ['RESET changes nothing', [STARTED, q('RESUME'), q('RESET', { guest: true, reason: 'guest-reset' })], 'Running', 'Unknown'],
  ['agent connect changes nothing', [STARTED, q('RESUME'), q('VSERPORT_CHANGE', { open: true, id: 'channel0' })], 'Running', 'Unknown'],
  ['undefined after shutoff', [STARTED, q('RESUME'), SHUTDOWN_GUEST, exit(0), { kind: 'undefined' }], 'NoState', 'NonExistent'],
  ['restart after undefine starts afresh', [STARTED, q('RESUME'), exit(null, 'SIGKILL'), { kind: 'undefined' }, STARTED, q('RESUME')], 'Running', 'Unknown'],
  ['soft reboot: power-off becomes reset', [STARTED, q('RESUME'), intent('reboot'), q('POWERDOWN'), SHUTDOWN_GUEST, q('STOP')], 'Running', 'Unknown'],
  ['soft reboot: cont after reset', [STARTED, q('RESUME'), intent('reboot'), SHUTDOWN_GUEST, q('STOP'), q('RESET', { guest: false }), q('RESUME')], 'Running', 'Unknown'],
  ['soft reboot done: next power-off is final', [STARTED, q('RESUME'), intent('reboot'), SHUTDOWN_GUEST, q('STOP'), q('RESUME'), SHUTDOWN_GUEST], 'Shutoff', 'Shutdown'],
  ['soft reboot then kill', [STARTED, q('RESUME'), intent('reboot'), intent('destroy'), SHUTDOWN_QUIT, exit(0)], 'Shutoff', 'Destroyed'],
  ['soft reboot by the guest itself clears the request', [STARTED, q('RESUME'), intent('reboot'), q('RESET', { guest: true, reason: 'guest-reset' }), SHUTDOWN_GUEST], 'Shutoff', 'Shutdown'],
  ['panic during soft reboot', [STARTED, q('RESUME'), intent('reboot'), q('SHUTDOWN', { guest: true, reason: 'guest-panic' })], 'Crashed', 'Panicked'],
  // resync from query-status
  ['resync running', [STARTED, rs('running')], 'Running', 'Unknown'],
  ['resync paused keeps the known reason', [STARTED, q('RESUME'), intent('pause'), q('STOP'), rs('paused')], 'Paused', 'User'],
  ['resync paused, unseen', [STARTED, q('RESUME'), rs('paused')], 'Paused', 'Unknown'],
  ['resync prelaunch', [rs('prelaunch')], 'Paused', 'StartingUp'],
  ['resync prelaunch keeps start-paused', [STARTED, { kind: 'start-paused' }, rs('prelaunch')], 'Paused', 'User'],
  ['resync io-error', [STARTED, q('RESUME'), rs('io-error')], 'Paused', 'IOError'],
  ['resync watchdog', [STARTED, q('RESUME'), rs('watchdog')], 'Paused', 'Watchdog'],
  ['resync inmigrate', [rs('inmigrate')], 'Paused', 'Migration'],
  ['resync postmigrate', [STARTED, q('RESUME'), rs('postmigrate')], 'Paused', 'Migration'],
  ['resync guest-panicked', [STARTED, q('RESUME'), rs('guest-panicked')], 'Crashed', 'Panicked'],
  ['resync internal-error', [STARTED, q('RESUME'), rs('internal-error')], 'Crashed', 'Unknown'],
  ['resync shutdown after guest power-off', [STARTED, q('RESUME'), rs('shutdown')], 'Shutoff', 'Shutdown'],
  ['resync suspended', [STARTED, q('RESUME'), rs('suspended')], 'PMSuspended', 'Unknown'],
  ['resync never revives a shutoff domain', [STARTED, q('RESUME'), SHUTDOWN_GUEST, rs('running')], 'Shutoff', 'Shutdown'],
];

for (const [name, inputs, status, reason] of table) {
  test(`state: ${name} → ${status}/${reason}`, () => {
    const s = run(inputs);
    assert.equal([s.status, s.reason], [status, reason]);
  });
}

test('state: unchanged inputs return the same object', () => {
  const s = run([STARTED, q('RESUME')]);
  assert.is(nextDomainState(s, q('RESET', {})), s);
  assert.is(nextDomainState(s, q('BALLOON_CHANGE', { actual: 1 })), s);
});

test('state: panics are counted', () => {
  const s = run([STARTED, q('RESUME'), q('GUEST_PANICKED', { action: 'run' }), q('GUEST_PANICKED', { action: 'run' })]);
  assert.is(s.panicCount, 2);
});

test('state: alive as KubeVirt defines it', () => {
  assert.is(isAlive(run([STARTED])), true);
  assert.is(isAlive(run([STARTED, q('RESUME')])), true);
  assert.is(isAlive(run([STARTED, q('RESUME'), intent('pause'), q('STOP')])), true);
  assert.is(isAlive(run([STARTED, SHUTDOWN_GUEST])), false);
  assert.is(isAlive(run([STARTED, exit(1)])), false);
  assert.is(isAlive(INITIAL_DOMAIN_STATE), false);
});

test('domain JSON has api.Domain\'s Go field names', () => {
  const d = buildDomain({
    namespace: 'default', name: 'vmi-a', uid: 'uid-1', uuid: '5d307ca9-b3ef-428c-8861-06e72d69f223', acpi: true,
    status: 'Paused', reason: 'User', gracePeriod: { ...gracePeriodMetadata(30), MarkedForGracefulShutdown: true },
    osInfo: { Name: 'busybox', KernelRelease: '6.1', Version: '1', PrettyName: 'p', VersionId: '1', KernelVersion: 'k', Machine: 'x86_64', Id: 'busybox' },
  });
  assert.is(d.kind, 'Domain');
  assert.is(d.apiVersion, '1.2.2');
  assert.equal(d.ObjectMeta, { name: 'vmi-a', namespace: 'default', uid: 'uid-1', creationTimestamp: null });
  assert.is(d.Spec.Name, 'default_vmi-a');
  assert.is(d.Spec.UUID, '5d307ca9-b3ef-428c-8861-06e72d69f223');
  assert.equal(d.Spec.Metadata.KubeVirt.GracePeriod, { DeletionGracePeriodSeconds: 30, DeletionTimestamp: null, MarkedForGracefulShutdown: true });
  assert.is(d.Spec.Metadata.KubeVirt.UID, 'uid-1');
  assert.equal(d.Spec.Features, { ACPI: {} });
  assert.equal([d.Status.Status, d.Status.Reason], ['Paused', 'User']);
  assert.is(d.Status.OSInfo.Name, 'busybox');
  assert.equal(d.Status.FSFreezeStatus, { Status: '' });
  const gone = buildDomain({ namespace: 'default', name: 'vmi-a', uid: 'uid-1', acpi: false, status: 'NoState', reason: 'NonExistent', gracePeriod: null, deletionTimestamp: '2026-01-01T00:00:00Z' });
  assert.is(gone.ObjectMeta.deletionTimestamp, '2026-01-01T00:00:00Z');
  assert.is(gone.Spec.Features, null);
  // Round trip through JSON unchanged.
  assert.equal(JSON.parse(JSON.stringify(d)), d);
});

test.run();

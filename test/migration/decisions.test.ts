// Table tests for live migration's pure decisions: MigrationOptions parsing and the QMP setup of
// each end, the convergence monitor, the migration metadata, the domain state inputs, the data size.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseMigrationOptions, sourceMigrationSetup, incomingMigrationSetup, incomingSettings, migrationDataSizeGiB, MigrationOptionsError, UNLIMITED_BANDWIDTH, type MigrationOptions } from '../../launcher/migration/options.ts';
import { decideConvergence, initialConvergence } from '../../launcher/migration/convergence.ts';
import { startedMigration, withResult, withAbortStatus, incomingCompleted, incomingFailed, incomingFailureReason, migrationInProgress } from '../../launcher/domain/migration-metadata.ts';
import { incomingArgv } from '../../launcher/migration/target.ts';
import { INITIAL_DOMAIN_STATE, nextDomainState } from '../../launcher/domain/state.ts';
import { migrationSocketPath, parallelMigrationThreads } from '../../src/api/migration.ts';
import { supervisedArgv } from '../../launcher/supervise/qemu-process.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

test('parseMigrationOptions: KubeVirt defaults, quantities, errors naming the field', () => {
  const d = parseMigrationOptions('');
  assert.equal(d, { bandwidthBytesPerSecond: 0, progressTimeoutSeconds: 150, completionTimeoutPerGiB: 150, maxDowntimeMs: 0, allowAutoConverge: false, allowPostCopy: false, allowWorkloadDisruption: false, parallelMigrationThreads: undefined });
  const rows: [string, Partial<MigrationOptions>][] = [
    ['{"Bandwidth":"64Mi"}', { bandwidthBytesPerSecond: 64 * 2 ** 20 }],
    ['{"Bandwidth":"0Mi"}', { bandwidthBytesPerSecond: 0 }],
    ['{"MaxDowntimeMs":5000000}', { maxDowntimeMs: 2_000_000 }],
    ['{"AllowPostCopy":true}', { allowPostCopy: true, allowWorkloadDisruption: true }],
    ['{"AllowPostCopy":true,"AllowWorkloadDisruption":false}', { allowPostCopy: true, allowWorkloadDisruption: false }],
    ['{"ParallelMigrationThreads":8}', { parallelMigrationThreads: 8 }],
    ['{"ParallelMigrationThreads":8,"AllowPostCopy":true}', { parallelMigrationThreads: undefined, allowPostCopy: true }],
  ];
  for (const [json, want] of rows) {
    const got = parseMigrationOptions(Buffer.from(json));
    for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof MigrationOptions], v, `${json}: ${k}`);
  }
  const bad: [string, RegExp][] = [
    ['{', /not JSON/],
    ['[]', /not a JSON object/],
    ['{"Bandwidth":"lots"}', /MigrationOptions\.Bandwidth/],
    ['{"ProgressTimeout":-1}', /MigrationOptions\.ProgressTimeout/],
    ['{"AllowPostCopy":"yes"}', /MigrationOptions\.AllowPostCopy/],
    ['{"ParallelMigrationThreads":0}', /MigrationOptions\.ParallelMigrationThreads/],
  ];
  for (const [json, re] of bad) {
    try {
      parseMigrationOptions(json);
      assert.unreachable(json);
    } catch (err) {
      assert.instance(err, MigrationOptionsError);
      assert.match((err as Error).message, re);
    }
  }
});

test('source setup: bandwidth 0 lifts QEMU\'s 128 MiB/s cap; capabilities follow the options; downtime left to QEMU', () => {
  const o = parseMigrationOptions('{"MaxDowntimeMs":300,"ParallelMigrationThreads":4,"AllowAutoConverge":true}');
  const [caps, params] = sourceMigrationSetup(o);
  assert.equal(caps!.arguments.capabilities, [
    { capability: 'events', state: true }, { capability: 'return-path', state: true }, { capability: 'auto-converge', state: true },
    { capability: 'postcopy-ram', state: false }, { capability: 'multifd', state: true },
  ]);
  // MaxDowntimeMs is not applied at start (KubeVirt sets it only from its stall detector): QEMU's 300 ms stays.
  assert.equal(params!.arguments, { 'max-bandwidth': UNLIMITED_BANDWIDTH, 'multifd-channels': 4 });
  // A block migration also waits in pre-switchover for its disk mirrors, in the same step.
  const [blockCaps] = sourceMigrationSetup(o, true);
  assert.equal(blockCaps!.arguments.capabilities, [
    { capability: 'events', state: true }, { capability: 'return-path', state: true }, { capability: 'auto-converge', state: true },
    { capability: 'postcopy-ram', state: false }, { capability: 'multifd', state: true }, { capability: 'pause-before-switchover', state: true },
  ]);
  const [, p2] = sourceMigrationSetup(parseMigrationOptions('{"Bandwidth":"32Mi"}'));
  assert.equal(p2!.arguments, { 'max-bandwidth': 32 * 2 ** 20 });
});

test('target setup matches the source: postcopy-ram from the migration configuration, multifd unless post-copy, CPU limits or a bandwidth limit', () => {
  const vmi = (limits?: Record<string, string>, allowPostCopy?: boolean) => ({
    spec: { domain: { devices: {}, resources: limits ? { limits } : {} } },
    status: { migrationState: { migrationConfiguration: allowPostCopy === undefined ? {} : { allowPostCopy } } },
  }) as unknown as VirtualMachineInstance;
  assert.equal(incomingSettings(vmi()), { allowPostCopy: false, parallelMigrationThreads: 8 });
  assert.equal(incomingSettings(vmi({ cpu: '2' })), { allowPostCopy: false, parallelMigrationThreads: undefined });
  assert.equal(incomingSettings(vmi(undefined, true)), { allowPostCopy: true, parallelMigrationThreads: undefined });
  assert.equal(incomingMigrationSetup({ allowPostCopy: false, parallelMigrationThreads: 8 }).map((s) => s.execute), ['migrate-set-capabilities', 'migrate-set-parameters']);
  assert.equal(incomingMigrationSetup({ allowPostCopy: true, parallelMigrationThreads: undefined }).map((s) => s.execute), ['migrate-set-capabilities']);
  // the return path on both ends, as the source has it (libvirt sets it on both)
  assert.equal(incomingMigrationSetup({ allowPostCopy: false, parallelMigrationThreads: undefined })[0]!.arguments.capabilities, [
    { capability: 'events', state: true }, { capability: 'return-path', state: true }, { capability: 'postcopy-ram', state: false }, { capability: 'multifd', state: false },
  ]);
  assert.is(parallelMigrationThreads({ spec: { domain: { cpu: { dedicatedCpuPlacement: true } } } }, false), undefined);
  // a bandwidth limit keeps one stream (QEMU 7.2's multifd channels ignore max-bandwidth); 0 is no limit
  const limited = (bandwidthPerMigration: string | number) => ({ spec: { domain: {} }, status: { migrationState: { migrationConfiguration: { bandwidthPerMigration } } } });
  assert.is(parallelMigrationThreads(limited('8Mi'), false), undefined);
  assert.is(parallelMigrationThreads(limited(1048576), false), undefined);
  assert.is(parallelMigrationThreads(limited('0Mi'), false), 8);
  assert.is(parallelMigrationThreads(limited(0), false), 8);
  assert.is(parallelMigrationThreads(limited('not a quantity'), false), 8);
  assert.equal(incomingSettings({ spec: { domain: { devices: {} } }, status: { migrationState: { migrationConfiguration: { bandwidthPerMigration: '1Mi' } } } } as unknown as VirtualMachineInstance), { allowPostCopy: false, parallelMigrationThreads: undefined });
});

test('the data size is guest memory in GB rounded up (ScaledValue(Giga))', () => {
  const v = (mem: Record<string, unknown>) => ({ spec: { domain: { devices: {}, ...mem } } }) as unknown as VirtualMachineInstance;
  assert.is(migrationDataSizeGiB(v({ memory: { guest: '256Mi' } })), 1);
  assert.is(migrationDataSizeGiB(v({ memory: { guest: '1Gi' } })), 2);
  assert.is(migrationDataSizeGiB(v({ resources: { requests: { memory: '1G' } } })), 1);
  assert.is(migrationDataSizeGiB(v({})), 0);
});

test('convergence: progress, progress timeout, completion timeout, post-copy and pause', () => {
  const opts = (o: string) => parseMigrationOptions(o);
  const base = opts('{"ProgressTimeout":10,"CompletionTimeoutPerGiB":20}');
  let s = initialConvergence(0, base, 1);
  assert.is(s.acceptableCompletionSeconds, 20);
  const ctx = { options: base, mode: 'PreCopy' as const, aborting: false };
  const rows: [number, number | undefined, string][] = [
    [1000, 500, 'none'], // first sample: progress
    [5000, 400, 'none'], // progress
    [14000, 450, 'none'], // no new low, 9 s stuck
    [16000, 450, 'abort'], // 11 s stuck > 10
  ];
  for (const [now, rem, want] of rows) {
    const r = decideConvergence(s, { nowMs: now, remaining: rem }, ctx);
    assert.is(r.action.kind, want, `t=${now}`);
    s = r.state;
  }
  const stuck = decideConvergence(s, { nowMs: 16000, remaining: 450 }, ctx).action;
  assert.match((stuck as { reason: string }).reason, /stuck for 11 sec/);
  // completion timeout: abort, post-copy or pause
  const progressing = (o: MigrationOptions, mode: 'PreCopy' | 'PostCopy' | 'Paused' = 'PreCopy', aborting = false) =>
    decideConvergence({ ...initialConvergence(0, o, 1), watermark: 1000 }, { nowMs: 21_000, remaining: 10 }, { options: o, mode, aborting });
  assert.is(progressing(base).action.kind, 'abort');
  assert.match((progressing(base).action as { reason: string }).reason, /not completed after 20 sec/);
  const pc = opts('{"CompletionTimeoutPerGiB":20,"AllowPostCopy":true}');
  assert.is(progressing(pc).action.kind, 'postcopy');
  assert.is(progressing(pc, 'PostCopy').action.kind, 'none', 'nothing is aborted in post-copy');
  const disrupt = opts('{"CompletionTimeoutPerGiB":20,"AllowWorkloadDisruption":true}');
  const paused = progressing(disrupt);
  assert.is(paused.action.kind, 'pause');
  assert.is(paused.state.acceptableCompletionSeconds, 40, 'a pause doubles the acceptable time');
  // Paused (by a pause, or a guest stopped for the copy under TCG): post-copy still helps, a second pause does not.
  assert.is(progressing(pc, 'Paused').action.kind, 'postcopy', 'post-copy from Paused');
  assert.is(progressing(disrupt, 'Paused').action.kind, 'abort', 'an already paused guest is not paused again');
  assert.is(progressing(base, 'PreCopy', true).action.kind, 'none', 'an abort already under way');
  assert.is(decideConvergence(initialConvergence(0, opts('{"CompletionTimeoutPerGiB":0,"ProgressTimeout":0}'), 1), { nowMs: 1e9, remaining: 5 }, { options: opts('{"CompletionTimeoutPerGiB":0,"ProgressTimeout":0}'), mode: 'PreCopy', aborting: false }).action.kind, 'none', '0 = no timeouts');
});

test('migration metadata: one result, abort wording, the target\'s end timestamp', () => {
  const m = startedMigration('u1', 't0');
  assert.ok(migrationInProgress(m));
  const ok = withResult(m, 't1');
  assert.equal([ok.EndTimestamp, ok.Failed], ['t1', false]);
  assert.not.ok(migrationInProgress(ok));
  assert.is(withResult(ok, 't2', 'late failure'), ok, 'a second result is ignored');
  const aborted = withResult(withAbortStatus(m, 'Succeeded'), 't1', 'cancelled');
  assert.equal([aborted.Failed, aborted.FailureReason], [true, 'Live migration has been aborted']);
  assert.equal(withResult(m, 't1', 'boom').FailureReason, 'boom');
  assert.is(incomingCompleted(null, 't9').EndTimestamp, 't9');
});

test('a target QEMU that ended before its incoming migration completed: why, in its metadata, under the migration\'s UID', () => {
  const cases: Array<[string, { code: number | null; signal: string | null }, string, string]> = [
    ['killed', { code: null, signal: 'SIGKILL' }, '', 'the target\'s QEMU was killed by SIGKILL'],
    ['its own error, the last three lines', { code: 1, signal: null }, 'a\nqemu-system-x86_64: Unknown savevm section or instance \'x\' 0\n\nqemu-system-x86_64: load of migration failed: Invalid argument\n', 'the target\'s QEMU exited with code 1: a; qemu-system-x86_64: Unknown savevm section or instance \'x\' 0; qemu-system-x86_64: load of migration failed: Invalid argument'],
    ['its stream ended', { code: 1, signal: null }, 'qemu-system-x86_64: load of migration failed: Input/output error', 'the target\'s QEMU exited with code 1: qemu-system-x86_64: load of migration failed: Input/output error'],
  ];
  for (const [what, exit, stderr, want] of cases) assert.is(incomingFailureReason(exit, stderr), want, what);
  assert.is(incomingFailureReason({ code: 1, signal: null }, 'x'.repeat(1000)).length, 'the target\'s QEMU exited with code 1: '.length + 401, 'at most 400 characters of stderr');
  const f = incomingFailed(null, 'u1', 't1', 'why');
  assert.equal([f.UID, f.Failed, f.FailureReason, f.EndTimestamp], ['u1', true, 'why', 't1']);
  const done = incomingCompleted(null, 't0');
  assert.is(incomingFailed(done, 'u1', 't1', 'why'), done, 'a completed migration stays completed');
});

test('domain state: migrated → Shutoff/Migrated; a failed incoming migration is Shutoff/Failed, not a crash', () => {
  let s = nextDomainState(INITIAL_DOMAIN_STATE, { kind: 'started' });
  s = nextDomainState(s, { kind: 'qmp', event: 'RESUME' });
  s = nextDomainState(s, { kind: 'intent', intent: 'migrate' });
  s = nextDomainState(s, { kind: 'qmp', event: 'STOP' });
  assert.equal([s.status, s.reason], ['Paused', 'Migration']);
  s = nextDomainState(s, { kind: 'migrated' });
  assert.equal([s.status, s.reason], ['Shutoff', 'Migrated']);
  s = nextDomainState(s, { kind: 'qmp', event: 'SHUTDOWN', data: { guest: false, reason: 'host-qmp-quit' } });
  s = nextDomainState(s, { kind: 'exit', code: 0, signal: null });
  assert.equal([s.status, s.reason], ['Shutoff', 'Migrated'], 'our own quit does not rewrite Migrated');
  let t = nextDomainState(INITIAL_DOMAIN_STATE, { kind: 'started' });
  t = nextDomainState(t, { kind: 'run-state', status: 'inmigrate' });
  assert.equal([t.status, t.reason], ['Paused', 'Migration']);
  t = nextDomainState(t, { kind: 'incoming-failed' });
  t = nextDomainState(t, { kind: 'exit', code: 1, signal: null });
  assert.equal([t.status, t.reason], ['Shutoff', 'Failed']);
  // a cancelled migration: the pending STOP reason is dropped
  let c = nextDomainState(nextDomainState(INITIAL_DOMAIN_STATE, { kind: 'started' }), { kind: 'qmp', event: 'RESUME' });
  c = nextDomainState(c, { kind: 'intent', intent: 'migrate' });
  c = nextDomainState(c, { kind: 'migration-ended' });
  c = nextDomainState(c, { kind: 'qmp', event: 'STOP' });
  assert.equal([c.status, c.reason], ['Paused', 'Unknown']);
});

test('target argv: -incoming defer, and no -S so it runs as soon as the migration completes', () => {
  const argv = incomingArgv(['qemu-system-x86_64', '-S', '-m', '256']);
  assert.equal(argv.slice(-2), ['-incoming', 'defer']);
  const { args } = supervisedArgv(argv, { pidfile: '/tmp/p' });
  assert.not.ok(args.includes('-S'));
  assert.ok(supervisedArgv(['-m', '256'], { pidfile: '/tmp/p' }).args.includes('-S'));
  assert.is(migrationSocketPath('/var/run/kubevirt', 'abc'), '/var/run/kubevirt/migrationproxy/abc-49152-source.sock');
});

test.run();

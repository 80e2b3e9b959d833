// Table tests for the node agents' migration decisions (handler/migration/state.ts) and the CLI's
// (src/cli/migrate-plan.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { completedOnTarget, failureReasonWithTarget, migrationOptionsFor, sourceAction, sourceStateFromDomain, targetStep } from '../../handler/migration/state.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import { cancellableMigration, planMigrate, progressLine } from '../../src/cli/migrate-plan.ts';
import { parseMigrationProgress } from '../../src/api/migration.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineInstanceMigrationState } from '../../src/api/types.ts';

const vmi = (ms: VirtualMachineInstanceMigrationState | undefined, extra: Partial<VirtualMachineInstance['status']> = {}): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'default', uid: 'u1', labels: { 'kubevirt.io/nodeName': 'a' } },
  spec: { domain: { devices: {} } }, status: { phase: 'Running', nodeName: 'a', ...(ms ? { migrationState: ms } : {}), ...extra },
} as VirtualMachineInstance);
const base: VirtualMachineInstanceMigrationState = { migrationUid: 'm1', sourceNode: 'a', targetNode: 'b' };
/** The domain's migration metadata as the node agent decodes it from a launcher's report. */
const dm = (o: Record<string, unknown>) => decodeDomain({ Spec: { Metadata: { KubeVirt: { Migration: { UID: 'm1', ...o } } } }, Status: { Status: 'Running' } }).Spec.Metadata.KubeVirt.Migration ?? undefined;

test('sourceAction: migrate once the target published its port; cancel on abortRequested; cleanup when over', () => {
  const rows: [string, VirtualMachineInstanceMigrationState, ReturnType<typeof dm>, boolean, string][] = [
    ['no address yet', base, undefined, false, 'none'],
    ['address, no port', { ...base, targetNodeAddress: '127.0.0.2' }, undefined, false, 'none'],
    ['ready', { ...base, targetNodeAddress: '127.0.0.2', targetDirectMigrationNodePorts: { 40001: 49152 } }, undefined, false, 'migrate'],
    ['already sent', { ...base, targetNodeAddress: '127.0.0.2', targetDirectMigrationNodePorts: { 40001: 49152 } }, undefined, true, 'none'],
    ['launcher already migrating', { ...base, targetNodeAddress: '127.0.0.2', targetDirectMigrationNodePorts: { 40001: 49152 } }, dm({ StartTimestamp: 't' }), false, 'none'],
    ['abort requested while running', { ...base, abortRequested: true }, dm({ StartTimestamp: 't' }), true, 'cancel'],
    ['abort already under way', { ...base, abortRequested: true }, dm({ StartTimestamp: 't', AbortStatus: 'Aborting' }), true, 'none'],
    ['completed', { ...base, completed: true }, undefined, true, 'cleanup'],
    ['failed', { ...base, failed: true }, undefined, true, 'cleanup'],
    ['not the source node', { ...base, sourceNode: 'c' }, undefined, false, 'none'],
  ];
  for (const [what, ms, d, started, want] of rows) assert.is(sourceAction(vmi(ms), 'a', d, started).kind, want, what);
  const a = sourceAction(vmi({ ...base, targetNodeAddress: '127.0.0.2', targetDirectMigrationNodePorts: { 40001: 49152 } }), 'a', undefined, false);
  assert.equal(a, { kind: 'migrate', host: '127.0.0.2', port: 40001 });
  // a socat target also publishes its multifd channels' port (qvirt's 49154)
  const rows2: [string, Record<string, number>, unknown][] = [
    ['main and multifd ports', { 40001: 49152, 40002: 49154 }, { kind: 'migrate', host: '127.0.0.2', port: 40001, multifdPort: 40002 }],
    ['multifd port only', { 40002: 49154 }, { kind: 'none' }],
    ['a bad multifd port is ignored', { 40001: 49152, 0: 49154 }, { kind: 'migrate', host: '127.0.0.2', port: 40001 }],
    ['a port out of range', { 70000: 49152 }, { kind: 'none' }],
  ];
  for (const [what, ports, want] of rows2) assert.equal(sourceAction(vmi({ ...base, targetNodeAddress: '127.0.0.2', targetDirectMigrationNodePorts: ports }), 'a', undefined, false), want, what);
});

test('sourceStateFromDomain: start, mode, abort status; on failure end, failed and reason; success is the target\'s', () => {
  assert.is(sourceStateFromDomain(base, undefined), undefined);
  assert.is(sourceStateFromDomain(base, dm({ UID: 'other', StartTimestamp: 't' })), undefined, 'another migration');
  assert.equal(sourceStateFromDomain(base, dm({ StartTimestamp: 't0', Mode: 'PreCopy' })), { ...base, startTimestamp: 't0', mode: 'PreCopy' });
  assert.is(sourceStateFromDomain({ ...base, startTimestamp: 't0' }, dm({ StartTimestamp: 't0', EndTimestamp: 't1' })), undefined, 'a success is written by the target');
  assert.equal(sourceStateFromDomain({ ...base, startTimestamp: 't0' }, dm({ StartTimestamp: 't0', EndTimestamp: 't1', Failed: true, FailureReason: 'Live migration has been aborted', AbortStatus: 'Succeeded' })),
    { ...base, startTimestamp: 't0', failed: true, endTimestamp: 't1', failureReason: 'Live migration has been aborted', abortStatus: 'Succeeded' });
  assert.is(sourceStateFromDomain({ ...base, completed: true }, dm({ Failed: true })), undefined, 'over: untouched');
  assert.equal(sourceStateFromDomain({ ...base, completed: true }, dm({ StartTimestamp: 't0' })), { ...base, completed: true, startTimestamp: 't0' }, 'over, but the start was never written');
});

test('failureReasonWithTarget: the target\'s reason added when the target caused the failure', () => {
  const meta = (reason: string, uid = 'm1') => ({ UID: uid, StartTimestamp: null, EndTimestamp: 't', Failed: true, FailureReason: reason, AbortStatus: '', Mode: '' });
  const failed = (o: Partial<VirtualMachineInstanceMigrationState> = {}): VirtualMachineInstanceMigrationState => ({ migrationUid: 'm1', failed: true, failureReason: 'Unable to write to socket: Broken pipe', ...o });
  const killed = 'the target\'s QEMU was killed by SIGKILL';
  const own = 'the target\'s QEMU exited with code 1: qemu-system-x86_64: load of migration failed: Invalid argument';
  const cases: Array<[string, VirtualMachineInstanceMigrationState | undefined, ReturnType<typeof meta> | null, string | undefined]> = [
    ['killed: first, the source\'s after', failed(), meta(killed), `${killed} (the source: Unable to write to socket: Broken pipe)`],
    ['an error of its own', failed(), meta(own), `${own} (the source: Unable to write to socket: Broken pipe)`],
    ['no source reason yet (the controller: target pod down)', failed({ failureReason: '' }), meta(killed), killed],
    ['already there', failed({ failureReason: `${killed} (the source: x)` }), meta(killed), undefined],
    ['its own error, the source\'s TLS channel broke', failed({ failureReason: 'Cannot write to TLS channel: Input/output error' }), meta(own), `${own} (the source: Cannot write to TLS channel: Input/output error)`],
    ['the source timed out first: the target only complains of its cut stream', failed({ failureReason: 'Live migration is not completed after 8 sec and has been aborted' }), meta('the target\'s QEMU exited with code 1: qemu-system-x86_64: check_section_footer: Read section footer failed: -5'), undefined],
    ['the source failed on its own', failed({ failureReason: 'QEMU reported: disk write error' }), meta(own), undefined],
    ['killed while the source failed on its own: still the target\'s', failed({ failureReason: 'QEMU reported: disk write error' }), meta(killed), `${killed} (the source: QEMU reported: disk write error)`],
    ['an abort the user asked for', failed({ abortStatus: 'Succeeded', failureReason: 'Live migration has been aborted' }), meta(own), undefined],
    ['not failed (yet)', failed({ failed: false }), meta(killed), undefined],
    ['another migration\'s metadata', failed(), meta(killed, 'm0'), undefined],
    ['the target did not fail', failed(), { ...meta(''), Failed: false }, undefined],
    ['no metadata', failed(), null, undefined],
    ['no state', undefined, meta(killed), undefined],
  ];
  for (const [what, ms, target, want] of cases) assert.is(failureReasonWithTarget(ms, target), want, what);
});

test('targetStep and completedOnTarget', () => {
  const s = (synced: boolean, listening: boolean, domain?: { status: string; migrationEnd: boolean }) => ({ synced, listening, domain });
  const ready = { ...base, targetNodeAddress: '127.0.0.2' };
  assert.is(targetStep(vmi(base), 'b', s(false, false)).kind, 'sync');
  assert.is(targetStep(vmi(base), 'b', s(true, false)).kind, 'listen');
  assert.is(targetStep(vmi(ready), 'b', s(true, true, { status: 'Paused', migrationEnd: false })).kind, 'detected');
  assert.is(targetStep(vmi({ ...ready, targetNodeDomainDetected: true }), 'b', s(true, true, { status: 'Paused', migrationEnd: false })).kind, 'wait');
  assert.is(targetStep(vmi({ ...ready, targetNodeDomainDetected: true }), 'b', s(true, true, { status: 'Running', migrationEnd: true })).kind, 'complete');
  assert.is(targetStep(vmi({ ...ready, failed: true }), 'b', s(true, true)).kind, 'cleanup');
  assert.is(targetStep(vmi(ready), 'a', s(true, true)).kind, 'wait', 'not our node');
  const done = completedOnTarget(vmi(ready, { evacuationNodeName: 'a' }), 'b', 'T');
  assert.equal([done.status?.nodeName, done.metadata?.labels?.['kubevirt.io/nodeName'], done.status?.migrationState?.completed, done.status?.migrationState?.endTimestamp, done.status?.evacuationNodeName, done.status?.migrationTransport], ['b', 'b', true, 'T', undefined, 'Unix']);
});

test('migrationOptionsFor: KubeVirt defaults, the configuration, multifd unless post-copy or a bandwidth limit', () => {
  assert.equal(migrationOptionsFor(vmi(base)), { Bandwidth: '0Mi', ProgressTimeout: 150, CompletionTimeoutPerGiB: 150, MaxDowntimeMs: 0, UnsafeMigration: false, AllowAutoConverge: false, AllowPostCopy: false, AllowWorkloadDisruption: false, ParallelMigrationThreads: 8 });
  const pc = migrationOptionsFor(vmi({ ...base, migrationConfiguration: { allowPostCopy: true, bandwidthPerMigration: '64Mi', maxDowntimeMs: 300 } }));
  assert.equal([pc.AllowPostCopy, pc.AllowWorkloadDisruption, pc.Bandwidth, pc.MaxDowntimeMs, pc.ParallelMigrationThreads], [true, true, '64Mi', 300, undefined]);
  const limited = migrationOptionsFor(vmi({ ...base, migrationConfiguration: { bandwidthPerMigration: '64Mi' } }));
  assert.equal([limited.Bandwidth, limited.ParallelMigrationThreads], ['64Mi', undefined]);
});

test('CLI: virt-api\'s migrate checks, the migration it creates, which one migrate-cancel deletes, the progress line', () => {
  const vm = { metadata: { name: 'v' } } as VirtualMachine;
  assert.equal(planMigrate(undefined, undefined, 'ns', 'v'), { kind: 'refused', message: 'virtualmachine.kubevirt.io "v" not found' });
  assert.equal(planMigrate(vm, undefined, 'ns', 'v'), { kind: 'refused', message: 'VM is not running' });
  const notMigratable = vmi(undefined, { conditions: [{ type: 'LiveMigratable', status: 'False', reason: 'DisksNotLiveMigratable', message: 'PVC x is not shared' }] } as Partial<VirtualMachineInstance['status']>);
  assert.equal(planMigrate(vm, notMigratable, 'ns', 'v'), { kind: 'refused', message: 'Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: PVC x is not shared' });
  const p = planMigrate(vm, vmi(undefined), 'ns', 'v');
  assert.is(p.kind, 'create');
  if (p.kind === 'create') assert.equal([p.migration.metadata?.generateName, p.migration.spec.vmiName], ['kubevirt-migrate-vm-', 'v']);
  const m = (name: string, phase: string | undefined, created: string, vmiName = 'v') => ({ metadata: { name, creationTimestamp: created }, spec: { vmiName }, status: phase ? { phase } : undefined }) as VirtualMachineInstanceMigration;
  assert.is(cancellableMigration([m('a', 'Succeeded', '1'), m('b', 'Running', '2'), m('c', 'Failed', '3'), m('d', 'Running', '4', 'other')], 'v')?.metadata?.name, 'b');
  assert.is(cancellableMigration([m('a', 'Succeeded', '1')], 'v'), undefined);
  const line = progressLine('Running', { migrationUid: 'm', total: 256 * 2 ** 20, transferred: 50 * 2 ** 20, remaining: 50 * 2 ** 20, dirtyRate: 2 ** 20, throughput: 8 * 2 ** 20, at: 't' }, 10);
  assert.is(line, 'Running         [#####.....]  50%  sent 50.0 MiB, remaining 50.0 MiB, dirty rate 1.0 MiB/s, 8.0 MiB/s');
  assert.is(parseMigrationProgress('{"migrationUid":"m","total":1}'), undefined, 'malformed');
});

test.run();

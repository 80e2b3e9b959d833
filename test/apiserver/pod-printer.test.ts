// Table test of `kubectl get pods`' READY / STATUS / RESTARTS cells against kube-apiserver's
// printPod semantics, from a KubeVirt launcher pod (a native sidecar for the serial console log,
// two init containers, compute + a containerDisk container) through the states kubelet reports.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { printPod } from '../../src/apiserver/pod-printer.ts';
import { toTable } from '../../src/apiserver/table.ts';
import { Registry } from '../../src/apiserver/resources.ts';

type Obj = Record<string, unknown>;

const running = (name: string, extra: Obj = {}): Obj => ({ name, ready: true, started: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } }, ...extra });
const done = (name: string, exitCode = 0, reason = exitCode === 0 ? 'Completed' : 'Error'): Obj => ({ name, ready: false, started: false, restartCount: 0, state: { terminated: { exitCode, reason } } });
const waiting = (name: string, reason: string): Obj => ({ name, ready: false, started: false, restartCount: 0, state: { waiting: { reason } } });

const launcherSpec = {
  initContainers: [
    { name: 'guest-console-log', restartPolicy: 'Always' },
    { name: 'container-disk-binary' },
    { name: 'volumecontainerdisk-init' },
  ],
  containers: [{ name: 'compute' }, { name: 'volumecontainerdisk' }],
};
const conds = (init: boolean, ready: boolean): Obj[] => [{ type: 'Initialized', status: init ? 'True' : 'False' }, { type: 'Ready', status: ready ? 'True' : 'False' }];

const pod = (status: Obj, spec: Obj = launcherSpec, meta: Obj = {}): Obj => ({ metadata: { name: 'p', ...meta }, spec, status });

test('printPod: READY and STATUS as kubectl prints them', () => {
  const table: Array<[string, Obj, string, string]> = [
    ['pending, nothing reported yet', pod({ phase: 'Pending' }), '0/3', 'Pending'],
    ['sidecar starting: first init slot', pod({ phase: 'Pending', conditions: conds(false, false), initContainerStatuses: [waiting('guest-console-log', 'PodInitializing'), waiting('container-disk-binary', 'PodInitializing'), waiting('volumecontainerdisk-init', 'PodInitializing')] }), '0/3', 'Init:0/3'],
    ['sidecar started, second init running', pod({ phase: 'Pending', conditions: conds(false, false), initContainerStatuses: [running('guest-console-log'), running('container-disk-binary', { ready: false }), waiting('volumecontainerdisk-init', 'PodInitializing')] }), '1/3', 'Init:1/3'],
    ['init containers done, main ones created', pod({ phase: 'Pending', conditions: conds(true, false), initContainerStatuses: [running('guest-console-log'), done('container-disk-binary'), done('volumecontainerdisk-init')], containerStatuses: [waiting('compute', 'ContainerCreating'), waiting('volumecontainerdisk', 'ContainerCreating')] }), '1/3', 'ContainerCreating'],
    ['the launcher pod running', pod({ phase: 'Running', conditions: conds(true, true), initContainerStatuses: [running('guest-console-log'), done('container-disk-binary'), done('volumecontainerdisk-init')], containerStatuses: [running('compute'), running('volumecontainerdisk')] }), '3/3', 'Running'],
    ['compute not ready', pod({ phase: 'Running', conditions: conds(true, false), initContainerStatuses: [running('guest-console-log'), done('container-disk-binary'), done('volumecontainerdisk-init')], containerStatuses: [running('compute', { ready: false }), running('volumecontainerdisk')] }), '2/3', 'Running'],
    ['the first main container with a reason decides (compute still creating)', pod({ phase: 'Pending', conditions: conds(true, false), initContainerStatuses: [running('guest-console-log'), done('container-disk-binary'), done('volumecontainerdisk-init')], containerStatuses: [waiting('compute', 'ContainerCreating'), waiting('volumecontainerdisk', 'ErrImagePull')] }), '1/3', 'ContainerCreating'],
    ['ErrImagePull of compute shows', pod({ phase: 'Pending', initContainerStatuses: [running('guest-console-log'), done('container-disk-binary'), done('volumecontainerdisk-init')], containerStatuses: [waiting('compute', 'ErrImagePull'), running('volumecontainerdisk')] }), '2/3', 'ErrImagePull'],
    ['init container image pull fails', pod({ phase: 'Pending', initContainerStatuses: [running('guest-console-log'), waiting('container-disk-binary', 'ErrImagePull')] }), '1/3', 'Init:ErrImagePull'],
    ['init container failed', pod({ phase: 'Failed', initContainerStatuses: [running('guest-console-log'), done('container-disk-binary', 1)] }), '1/3', 'Init:Error'],
    ['init container killed without reason', pod({ phase: 'Pending', initContainerStatuses: [running('guest-console-log'), { name: 'container-disk-binary', state: { terminated: { exitCode: 137, signal: 9 } } }] }), '1/3', 'Init:Signal:9'],
    ['init container exit code without reason', pod({ phase: 'Pending', initContainerStatuses: [running('guest-console-log'), { name: 'container-disk-binary', state: { terminated: { exitCode: 2 } } }] }), '1/3', 'Init:ExitCode:2'],
    ['compute exited 0, sidecar still running', pod({ phase: 'Running', conditions: conds(true, false), initContainerStatuses: [running('guest-console-log'), done('container-disk-binary'), done('volumecontainerdisk-init')], containerStatuses: [done('compute'), done('volumecontainerdisk')] }), '1/3', 'Completed'],
    ['completed container, another still running and pod Ready', pod({ phase: 'Running', conditions: conds(true, true), containerStatuses: [done('a'), running('b')] }, { containers: [{ name: 'b' }, { name: 'a' }] }), '1/2', 'Running'],
    ['completed container, another running, pod not Ready', pod({ phase: 'Running', conditions: conds(true, false), containerStatuses: [done('a'), running('b')] }, { containers: [{ name: 'b' }, { name: 'a' }] }), '1/2', 'NotReady'],
    ['succeeded pod', pod({ phase: 'Succeeded', containerStatuses: [done('a')] }, { containers: [{ name: 'a' }] }), '0/1', 'Completed'],
    ['failed pod', pod({ phase: 'Failed', containerStatuses: [done('a', 1)] }, { containers: [{ name: 'a' }] }), '0/1', 'Error'],
    ['crash loop', pod({ phase: 'Running', containerStatuses: [{ ...waiting('a', 'CrashLoopBackOff'), restartCount: 3 }] }, { containers: [{ name: 'a' }] }), '0/1', 'CrashLoopBackOff'],
    ['terminated by signal, no reason', pod({ phase: 'Running', containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 143, signal: 15 } } }] }, { containers: [{ name: 'a' }] }), '0/1', 'Signal:15'],
    ['being deleted', pod({ phase: 'Running', conditions: conds(true, true), containerStatuses: [running('a')] }, { containers: [{ name: 'a' }] }, { deletionTimestamp: '2026-01-01T00:00:00Z' }), '1/1', 'Terminating'],
    ['being deleted after it finished keeps its reason', pod({ phase: 'Succeeded', containerStatuses: [done('a')] }, { containers: [{ name: 'a' }] }, { deletionTimestamp: '2026-01-01T00:00:00Z' }), '0/1', 'Completed'],
    ['deleted on a lost node', pod({ phase: 'Running', reason: 'NodeLost', containerStatuses: [running('a')] }, { containers: [{ name: 'a' }] }, { deletionTimestamp: '2026-01-01T00:00:00Z' }), '1/1', 'Unknown'],
    ['evicted (status.reason)', pod({ phase: 'Failed', reason: 'Evicted' }, { containers: [{ name: 'a' }] }), '0/1', 'Evicted'],
    ['scheduling gated', pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }, { containers: [{ name: 'a' }] }), '0/1', 'SchedulingGated'],
    ['unschedulable pending pod', pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }, { containers: [{ name: 'a' }] }), '0/1', 'Pending'],
    ['a sidecar that is not started yet blocks like an init container', pod({ phase: 'Pending', initContainerStatuses: [done('container-disk-binary'), waiting('guest-console-log', 'PodInitializing')] }, { initContainers: [{ name: 'container-disk-binary' }, { name: 'guest-console-log', restartPolicy: 'Always' }], containers: [{ name: 'a' }] }), '0/2', 'Init:1/2'],
  ];
  for (const [what, p, ready, status] of table) {
    const r = printPod(p);
    assert.is(`${r.ready} ${r.status}`, `${ready} ${status}`, what);
  }
});

test('printPod: RESTARTS counts sidecars and main containers once initialized, init containers while initializing', () => {
  const lt = (t: string): Obj => ({ terminated: { exitCode: 1, reason: 'Error', finishedAt: t } });
  const initializing = printPod(pod({ phase: 'Pending', initContainerStatuses: [{ ...running('guest-console-log'), restartCount: 1, lastState: lt('2026-01-01T00:00:05Z') }, { ...waiting('container-disk-binary', 'CrashLoopBackOff'), restartCount: 4, lastState: lt('2026-01-01T00:00:09Z') }] }));
  assert.equal([initializing.status, initializing.restarts, initializing.lastRestart], ['Init:CrashLoopBackOff', 5, '2026-01-01T00:00:09Z']);
  const runningPod = printPod(pod({ phase: 'Running', conditions: conds(true, true),
    initContainerStatuses: [{ ...running('guest-console-log'), restartCount: 1, lastState: lt('2026-01-01T00:00:05Z') }, { ...done('container-disk-binary'), restartCount: 2, lastState: lt('2026-01-01T00:00:30Z') }, done('volumecontainerdisk-init')],
    containerStatuses: [{ ...running('compute'), restartCount: 2, lastState: lt('2026-01-01T00:00:20Z') }, running('volumecontainerdisk')] }));
  // The regular init container's 2 restarts no longer count once the pod is initialized.
  assert.equal([runningPod.ready, runningPod.status, runningPod.restarts, runningPod.lastRestart], ['3/3', 'Running', 3, '2026-01-01T00:00:20Z']);
  assert.is(printPod(pod({ phase: 'Running', containerStatuses: [running('a')] }, { containers: [{ name: 'a' }] })).lastRestart, undefined);
});

test('the pods Table: cells and the Completed row condition of finished pods', () => {
  const r = new Registry().get('', 'pods')!;
  const now = Date.parse('2026-01-01T00:10:00Z');
  const t = toTable(r, 'v1', [
    { ...pod({ phase: 'Running', podIP: '127.0.0.1', conditions: conds(true, true), initContainerStatuses: [running('guest-console-log'), done('container-disk-binary'), done('volumecontainerdisk-init')], containerStatuses: [{ ...running('compute'), restartCount: 1, lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:05:00Z' } } }, running('volumecontainerdisk')] }), metadata: { name: 'virt-launcher-vm-abcde', creationTimestamp: '2026-01-01T00:00:00Z' } },
    { ...pod({ phase: 'Succeeded', containerStatuses: [done('a')] }, { containers: [{ name: 'a' }] }), metadata: { name: 'job', creationTimestamp: '2026-01-01T00:09:00Z' } },
  ], { include: 'None', now }) as { rows: Array<{ cells: unknown[]; conditions?: unknown }> };
  assert.equal(t.rows[0]!.cells.slice(0, 6), ['virt-launcher-vm-abcde', '3/3', 'Running', '1 (5m ago)', '10m', '127.0.0.1']);
  assert.is(t.rows[0]!.conditions, undefined);
  assert.equal(t.rows[1]!.cells.slice(0, 5), ['job', '0/1', 'Completed', 0, '60s']);
  assert.equal(t.rows[1]!.conditions, [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
});

test.run();

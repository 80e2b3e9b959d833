// The pod runner's pure decisions, as tables: kubelet's start order and phases, conditions with
// readiness gates, QoS, quantities, node selection, hostPath types and the command mapping.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { planPod, podConditions, qosClass, parseQuantity, shouldRestart, type ContainerRuntime, type RuntimeState } from '../../src/local/pod-runner/status.ts';
import { antiAffinityReason, insufficientResourcesReason, isExtendedResource, podExtendedRequests, requirementMatches, unschedulableReason, isOurToSchedule } from '../../src/local/pod-runner/scheduler.ts';
import { hostPathProblem, fieldRefValue } from '../../src/local/pod-runner/volumes.ts';
import { containerCommand, translateArgs } from '../../src/local/pod-runner/command.ts';
import { VIRT_TAIL_SCRIPT } from '../../src/local/launcher-command.ts';
import { provisioningFailure, provisions } from '../../src/local/local-path-provisioner.ts';
import type { PodSpec } from '../../src/local/pod-runner/pod.ts';
import { cpuShares, niceForShares } from '../../src/local/pod-runner/cpu-weight.ts';
import { containerPath } from '../../src/local/pod-runner/image-tools.ts';

const T = '2026-01-01T00:00:00Z';
const run: RuntimeState = { kind: 'running', startedAt: T };
const ok: RuntimeState = { kind: 'terminated', exitCode: 0, reason: 'Completed', finishedAt: T };
const bad: RuntimeState = { kind: 'terminated', exitCode: 1, reason: 'Error', finishedAt: T };
const wait: RuntimeState = { kind: 'waiting', reason: 'ErrImagePull' };
const rts = (o: Record<string, RuntimeState>) => new Map<string, ContainerRuntime>(Object.entries(o).map(([k, s]) => [k, { state: s, restartCount: 0 }]));

const launcherLike: PodSpec = {
  restartPolicy: 'Never',
  initContainers: [{ name: 'log', restartPolicy: 'Always' }, { name: 'cp' }, { name: 'vol-init' }],
  containers: [{ name: 'compute' }, { name: 'vol' }],
  readinessGates: [{ conditionType: 'kubevirt.io/virtual-machine-unpaused' }],
};

test('planPod: init containers in order, sidecars stay, then all main containers; phases', () => {
  const cases: Array<[string, PodSpec, Record<string, RuntimeState>, string[], string, boolean]> = [
    ['nothing started: the sidecar first', launcherLike, {}, ['log'], 'Pending', false],
    ['sidecar running: next init', launcherLike, { log: run }, ['cp'], 'Pending', false],
    ['init running: wait', launcherLike, { log: run, cp: run }, [], 'Pending', false],
    ['init done: next', launcherLike, { log: run, cp: ok }, ['vol-init'], 'Pending', false],
    ['all init done: main containers together', launcherLike, { log: run, cp: ok, 'vol-init': ok }, ['compute', 'vol'], 'Pending', true],
    ['main running', launcherLike, { log: run, cp: ok, 'vol-init': ok, compute: run, vol: run }, [], 'Running', true],
    ['one main exited, Never: still Running', launcherLike, { log: run, cp: ok, 'vol-init': ok, compute: ok, vol: run }, [], 'Running', true],
    ['all main exited 0: Succeeded', launcherLike, { log: run, cp: ok, 'vol-init': ok, compute: ok, vol: ok }, [], 'Succeeded', true],
    ['a main failed, Never: Failed', launcherLike, { log: run, cp: ok, 'vol-init': ok, compute: bad, vol: ok }, [], 'Failed', true],
    ['all main exited, sidecar stopped: not started again', launcherLike, { log: ok, cp: ok, 'vol-init': ok, compute: ok, vol: ok }, [], 'Succeeded', true],
    ['all main exited, sidecar killed: not started again, Failed stays', launcherLike, { log: bad, cp: ok, 'vol-init': ok, compute: bad, vol: ok }, [], 'Failed', true],
    ['init failed, Never: Failed', launcherLike, { log: run, cp: bad }, [], 'Failed', false],
    ['init failed, OnFailure: restart it', { ...launcherLike, restartPolicy: 'OnFailure' }, { log: run, cp: bad }, ['cp'], 'Pending', false],
    ['image missing: waiting, Pending', { containers: [{ name: 'a' }] }, { a: wait }, [], 'Pending', true],
    ['Always: exited main restarts', { containers: [{ name: 'a' }] }, { a: ok }, ['a'], 'Running', true],
    ['OnFailure: exit 0 done', { restartPolicy: 'OnFailure', containers: [{ name: 'a' }] }, { a: ok }, [], 'Succeeded', true],
    ['OnFailure: exit 1 restarts', { restartPolicy: 'OnFailure', containers: [{ name: 'a' }] }, { a: bad }, ['a'], 'Running', true],
  ];
  for (const [what, spec, st, start, phase, initialized] of cases) {
    const p = planPod(spec, rts(st));
    assert.equal(p.start, start, what);
    assert.is(p.phase, phase, what);
    assert.is(p.initialized, initialized, what);
  }
  assert.ok(planPod(launcherLike, rts({ log: run, cp: ok, 'vol-init': ok, compute: ok, vol: ok })).stopSidecars);
});

test('shouldRestart: restart policies', () => {
  for (const [p, code, want] of [['Always', 0, true], ['Always', 1, true], ['OnFailure', 0, false], ['OnFailure', 2, true], ['Never', 0, false], ['Never', 1, false]] as const) assert.is(shouldRestart(p, code), want, `${p} ${code}`);
});

test('podConditions: Ready needs containers ready and every readiness gate True; others\' conditions kept', () => {
  const all = rts({ log: run, cp: ok, 'vol-init': ok, compute: run, vol: run });
  const plan = planPod(launcherLike, all);
  const get = (cs: ReturnType<typeof podConditions>, t: string) => cs.find((c) => c.type === t)!;
  let cs = podConditions(launcherLike, plan, all, [], T);
  assert.is(get(cs, 'ContainersReady').status, 'True');
  assert.is(get(cs, 'Ready').status, 'False');
  assert.is(get(cs, 'Ready').reason, 'ReadinessGatesNotReady');
  assert.is(get(cs, 'Ready').message, 'corresponding condition of pod readiness gate "kubevirt.io/virtual-machine-unpaused" does not exist.');
  cs = podConditions(launcherLike, plan, all, [{ type: 'kubevirt.io/virtual-machine-unpaused', status: 'False', reason: 'Paused' }], T);
  assert.is(get(cs, 'Ready').message, 'the status of pod readiness gate "kubevirt.io/virtual-machine-unpaused" is not "True", but False');
  assert.is(get(cs, 'kubevirt.io/virtual-machine-unpaused').reason, 'Paused');
  cs = podConditions(launcherLike, plan, all, [{ type: 'kubevirt.io/virtual-machine-unpaused', status: 'True' }, { type: 'Ready', status: 'True', lastTransitionTime: '2020-01-01T00:00:00Z' }], T);
  assert.is(get(cs, 'Ready').status, 'True');
  assert.is(get(cs, 'Ready').lastTransitionTime, '2020-01-01T00:00:00Z', 'unchanged status keeps its transition time');
  const partial = rts({ log: run, cp: run });
  cs = podConditions(launcherLike, planPod(launcherLike, partial), partial, [], T);
  assert.is(get(cs, 'Initialized').status, 'False');
  assert.is(get(cs, 'Initialized').message, 'containers with incomplete status: [cp vol-init]');
  assert.is(get(cs, 'ContainersReady').message, 'containers with unready status: [compute vol]');
});

test('qosClass and parseQuantity', () => {
  assert.is(qosClass({ containers: [{ name: 'a' }] }), 'BestEffort');
  assert.is(qosClass({ containers: [{ name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' } } }] }), 'Guaranteed');
  assert.is(qosClass({ containers: [{ name: 'a', resources: { requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '1', memory: '1Gi' } } }] }), 'Guaranteed');
  assert.is(qosClass({ containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }] }), 'Burstable');
  assert.is(qosClass({ containers: [{ name: 'a', resources: { limits: { cpu: '1', memory: '1Gi' } } }, { name: 'b' }] }), 'Burstable');
  assert.is(qosClass({ containers: [{ name: 'a', resources: { limits: { 'devices.kubevirt.io/kvm': '1' } } }] }), 'BestEffort');
  for (const [q, v] of [['1', 1], ['100m', 0.1], ['1Ki', 1024], ['1Gi', 2 ** 30], ['2M', 2e6], ['1.5', 1.5], [3, 3]] as const) assert.is(parseQuantity(q), v, String(q));
  assert.is(parseQuantity('1 Gi'), undefined);
  assert.is(parseQuantity('abc'), undefined);
});

test('scheduler: node selector and required affinity', () => {
  const node = { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1', 'kubevirt.io/schedulable': 'true', cores: '8' } };
  const req = (key: string, operator: string, values?: string[]) => requirementMatches({ key, operator, ...(values ? { values } : {}) }, node.labels);
  assert.ok(req('kubevirt.io/schedulable', 'In', ['true']));
  assert.not.ok(req('kubevirt.io/schedulable', 'NotIn', ['true']));
  assert.ok(req('gpu', 'NotIn', ['true']));
  assert.ok(req('gpu', 'DoesNotExist'));
  assert.not.ok(req('gpu', 'Exists'));
  assert.ok(req('cores', 'Gt', ['4']));
  assert.not.ok(req('cores', 'Lt', ['4']));
  assert.not.ok(req('cores', 'Bogus', ['4']));
  assert.is(unschedulableReason({ containers: [], nodeSelector: { 'kubevirt.io/schedulable': 'true' } }, node), undefined);
  assert.match(unschedulableReason({ containers: [], nodeSelector: { 'kubevirt.io/schedulable': 'false' } }, node)!, /didn't match Pod's node affinity\/selector/);
  // A cordoned node takes only pods tolerating node.kubernetes.io/unschedulable (kube-scheduler's NodeUnschedulable).
  const cordoned = { ...node, unschedulable: true };
  assert.match(unschedulableReason({ containers: [] }, cordoned)!, /1 node\(s\) were unschedulable/);
  assert.is(unschedulableReason({ containers: [], tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }, cordoned), undefined);
  assert.is(unschedulableReason({ containers: [], tolerations: [{ operator: 'Exists' }] }, cordoned), undefined);
  assert.match(unschedulableReason({ containers: [], tolerations: [{ key: 'other', operator: 'Exists' }] }, cordoned)!, /were unschedulable/);
  const aff = (terms: PodSpec['affinity']) => unschedulableReason({ containers: [], affinity: terms }, node);
  assert.is(aff({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'x', operator: 'Exists' }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] } } }), undefined);
  assert.ok(aff({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}] } } }));
  assert.ok(isOurToSchedule({ containers: [] }));
  assert.not.ok(isOurToSchedule({ containers: [], nodeName: 'x' }));
  assert.not.ok(isOurToSchedule({ containers: [], schedulerName: 'other' }));
});

test('scheduler: extended resources fit as kube-scheduler counts them (a GPU the node lacks leaves the launcher pod Pending)', () => {
  for (const [name, extended] of [
    ['nvidia.com/GP102GL_Tesla_P40', true], ['devices.kubevirt.io/kvm', true], ['example.com/foo', true],
    ['cpu', false], ['memory', false], ['hugepages-2Mi', false], ['kubernetes.io/foo', false], ['node.kubernetes.io/x', false], ['requests.nvidia.com/gpu', false],
  ] as const) assert.is(isExtendedResource(name), extended, name);
  const c = (name: string, requests: Record<string, string>, limits: Record<string, string> = requests, restartPolicy?: string) =>
    ({ name, resources: { requests, limits }, ...(restartPolicy ? { restartPolicy } : {}) });
  const gpu = 'nvidia.com/GP102GL_Tesla_P40';
  // KubeVirt's launcher pod for examples/vmi-gpu.yaml: the GPU beside the tun device, cpu and memory not counted here.
  const launcher: PodSpec = { containers: [c('compute', { cpu: '100m', memory: '2Gi', [gpu]: '1' }, { 'devices.kubevirt.io/tun': '1', [gpu]: '1' })] };
  assert.equal([...podExtendedRequests(launcher)].sort(), [['devices.kubevirt.io/tun', 1n], [gpu, 1n]]);
  const alloc = { cpu: '2', memory: '24Gi', 'devices.kubevirt.io/kvm': '1k', 'devices.kubevirt.io/tun': '1k', 'devices.kubevirt.io/vhost-net': '1k' };
  assert.is(insufficientResourcesReason(launcher, alloc, []),
    `0/1 nodes are available: 1 Insufficient ${gpu}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.`);
  assert.is(insufficientResourcesReason(launcher, { ...alloc, [gpu]: '1' }, []), undefined);
  // The other pods on the node hold theirs: one GPU, one pod.
  assert.match(insufficientResourcesReason(launcher, { ...alloc, [gpu]: '1' }, [launcher]) ?? '', /1 Insufficient nvidia\.com\/GP102GL_Tesla_P40/);
  assert.is(insufficientResourcesReason(launcher, { ...alloc, [gpu]: '2' }, [launcher]), undefined);
  // Only a limit: the request is the limit. Two resources short: both named, sorted.
  const limitsOnly: PodSpec = { containers: [{ name: 'a', resources: { limits: { 'b.example/y': '2', 'a.example/x': '1' } } }] };
  assert.match(insufficientResourcesReason(limitsOnly, { 'b.example/y': '1' }, []) ?? '', /: 1 Insufficient a\.example\/x, 1 Insufficient b\.example\/y\. /);
  // Init containers run before the app containers: the larger of the two counts; native sidecars add to both.
  const inits: PodSpec = {
    initContainers: [c('side', { 'x.io/d': '1' }, { 'x.io/d': '1' }, 'Always'), c('init', { 'x.io/d': '3' })],
    containers: [c('app', { 'x.io/d': '1' })],
  };
  assert.equal(podExtendedRequests(inits).get('x.io/d'), 4n, 'the init container (3) with the sidecar started before it (1)');
  assert.equal(podExtendedRequests({ initContainers: [c('init', { 'x.io/d': '1' })], containers: [c('app', { 'x.io/d': '2' }), c('b', { 'x.io/d': '1' })] }).get('x.io/d'), 3n);
  // A pod with no extended resources always fits; a quantity that does not parse counts as none.
  assert.is(insufficientResourcesReason({ containers: [c('a', { cpu: '64' })] }, {}, []), undefined);
  assert.is(insufficientResourcesReason({ containers: [c('a', { 'x.io/d': 'lots' })] }, {}, []), undefined);
});

test('scheduler: required pod anti-affinity against the pods on the node, by label selector and namespace', () => {
  const spec = (labelSelector: unknown, namespaces?: string[]): PodSpec =>
    ({ containers: [], affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector, ...(namespaces ? { namespaces } : {}) }] } } }) as PodSpec;
  const source = { namespace: 'ns', labels: { 'kubevirt.io/created-by': 'uid-1', tier: 'web' } };
  assert.match(antiAffinityReason(spec({ matchLabels: { 'kubevirt.io/created-by': 'uid-1' } }), 'ns', [source]) ?? '', /didn't match pod anti-affinity rules/);
  assert.is(antiAffinityReason(spec({ matchLabels: { 'kubevirt.io/created-by': 'uid-2' } }), 'ns', [source]), undefined);
  assert.is(antiAffinityReason(spec({ matchLabels: { 'kubevirt.io/created-by': 'uid-1' } }), 'other', [source]), undefined, 'another namespace');
  assert.ok(antiAffinityReason(spec({ matchLabels: { 'kubevirt.io/created-by': 'uid-1' } }, ['ns']), 'other', [source]), 'the term names the namespace');
  assert.ok(antiAffinityReason(spec({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['db', 'web'] }] }), 'ns', [source]));
  assert.is(antiAffinityReason(spec({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] }), 'ns', [source]), undefined);
  assert.is(antiAffinityReason(spec(undefined), 'ns', [source]), undefined, 'no selector selects no pod');
  assert.is(antiAffinityReason(spec({ matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] }), 'ns', [source]), undefined, 'an invalid selector selects no pod');
});

test('hostPathProblem: kubelet type checks', () => {
  const st = (kind: 'dir' | 'file' | 'sock' | 'chr' | 'blk') => ({ isDirectory: () => kind === 'dir', isFile: () => kind === 'file', isSocket: () => kind === 'sock', isCharacterDevice: () => kind === 'chr', isBlockDevice: () => kind === 'blk' });
  const cases: Array<[string | undefined, ReturnType<typeof st> | undefined, boolean]> = [
    [undefined, undefined, true], ['', st('file'), true], ['DirectoryOrCreate', st('dir'), true], ['FileOrCreate', st('file'), true],
    ['Directory', st('dir'), true], ['Directory', st('file'), false], ['Directory', undefined, false],
    ['File', st('file'), true], ['File', st('dir'), false], ['Socket', st('sock'), true], ['Socket', st('file'), false],
    ['CharDevice', st('chr'), true], ['BlockDevice', st('blk'), true], ['BlockDevice', st('chr'), false], ['Weird', st('dir'), false],
  ];
  for (const [type, s, fine] of cases) assert.is(hostPathProblem('/p', type, s) === undefined, fine, `${type} ${JSON.stringify(s && Object.entries(s).find(([, f]) => f())?.[0])}`);
  assert.is(hostPathProblem('/p', 'Directory', undefined), 'hostPath type check failed: /p is not a directory');
});

test('containerCommand: qvirt commands, container-disk, no-ops, unknown images', () => {
  const launcher = containerCommand({ name: 'compute', image: 'quay.io/qvirt/qvirt:v0.1.0', command: ['/usr/bin/qvirt', 'launcher'], args: ['--name', 'x'] });
  assert.is(launcher.kind, 'process');
  if (launcher.kind === 'process') { assert.equal(launcher.argv.slice(-2), ['--name', 'x']); assert.not.ok(launcher.translatePaths); }
  const bare = containerCommand({ name: 'compute', image: 'qvirt/launcher:dev', args: ['--name', 'y'] });
  assert.ok(bare.kind === 'process' && bare.argv.includes('--name'));
  const tail = containerCommand({ name: 'guest-console-log', image: 'quay.io/qvirt/qvirt:v0.1.0', command: ['/usr/bin/qvirt', 'tail'], args: ['--logfile', '/var/run/kubevirt-private/u/virt-serial0-log'] });
  // virt-tail: a shell script, run as it is (no Node process), its flags passed through.
  assert.ok(tail.kind === 'exec' && tail.translatePaths);
  assert.equal(tail.argv, ['/bin/sh', VIRT_TAIL_SCRIPT, '--logfile', '/var/run/kubevirt-private/u/virt-serial0-log']);
  assert.equal(containerCommand({ name: 'v', image: 'img', command: ['/usr/bin/container-disk'], args: ['--copy-path', '/var/run/kubevirt/container-disks/u/disk_0'] }), { kind: 'containerDisk', image: 'img', copyPath: '/var/run/kubevirt/container-disks/u/disk_0' });
  assert.equal(containerCommand({ name: 'v-init', image: 'img', command: ['/usr/bin/container-disk'], args: ['--no-op'] }), { kind: 'noop' });
  assert.equal(containerCommand({ name: 'container-disk-binary', image: 'q', command: ['/usr/bin/cp'], args: ['--preserve=all', '/usr/bin/container-disk', '/init/usr/bin/container-disk'] }), { kind: 'noop' });
  assert.is(containerCommand({ name: 'v', image: 'img', command: ['/usr/bin/container-disk'] }).kind, 'unsupported');
  const nginx = containerCommand({ name: 'web', image: 'nginx:1.25' });
  assert.ok(nginx.kind === 'unsupported' && nginx.message.includes('nginx:1.25'));
  assert.is(containerCommand({ name: 'sh', image: 'busybox', command: ['/bin/sh', '-c', 'true'] }).kind, 'unsupported');
  assert.equal(translateArgs(['--logfile', '/var/run/kubevirt-private/x.log', '/etc/passwd', '/var/run/kubevirt-private'], '/r/ab', ['/var/run/kubevirt-private']), ['--logfile', '/r/ab/var/run/kubevirt-private/x.log', '/etc/passwd', '/r/ab/var/run/kubevirt-private']);
  assert.equal(translateArgs(['/var/run/kubevirt-privateX'], '/r', ['/var/run/kubevirt-private']), ['/var/run/kubevirt-privateX']);
});

test('fieldRefValue and provisions', () => {
  const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { b: '2', a: '1' } }, spec: { nodeName: 'n', containers: [] } };
  for (const [f, v] of [['metadata.name', 'p'], ['metadata.namespace', 'ns'], ['metadata.uid', 'u'], ['spec.nodeName', 'n'], ['status.podIP', '127.0.0.1'], ['metadata.labels', 'a="1"\nb="2"'], ["metadata.labels['b']", '2']] as const) assert.is(fieldRefValue(pod, f, '127.0.0.1'), v, f);
  assert.is(fieldRefValue(pod, 'spec.bogus', '1'), undefined);
  assert.ok(provisions({ spec: {} }));
  assert.ok(provisions({ spec: { storageClassName: 'local-path' } }));
  assert.not.ok(provisions({ spec: { storageClassName: 'ceph' } }));
  assert.not.ok(provisions({ spec: {}, status: { phase: 'Bound' } }));
  // A class the local mode does not have: persistentvolume-controller's ProvisioningFailed message (KubeVirt's
  // examples/vm-alpine-datavolume.yaml names class `local`), none for what is provisioned, bound, going or pre-bound.
  assert.is(provisioningFailure({ spec: { storageClassName: 'local' } }), 'storageclass.storage.k8s.io "local" not found');
  for (const pvc of [{ spec: {} }, { spec: { storageClassName: 'local-path' } }, { spec: { storageClassName: null } }, { spec: { storageClassName: 'ceph' }, status: { phase: 'Bound' } },
    { metadata: { deletionTimestamp: '2026-11-28T00:00:00Z' }, spec: { storageClassName: 'ceph' } }, { spec: { storageClassName: 'manual', volumeName: 'pv-1' } }]) assert.is(provisioningFailure(pvc), undefined, JSON.stringify(pvc));
});

test('CPU requests as scheduling weight: kubelet\'s cpu.shares, then the nearest nice value', () => {
  const table: Array<[string | number | undefined, number, number]> = [
    [undefined, 2, 19], ['0', 2, 19], ['1m', 2, 19], ['5m', 5, 19], ['100m', 102, 10], ['250m', 256, 6], ['500m', 512, 3], ['1', 1024, 0], [2, 2048, 0], ['1500m', 1536, 0], ['bogus', 2, 19],
  ];
  for (const [req, shares, nice] of table) {
    assert.is(cpuShares(req), shares, String(req));
    assert.is(niceForShares(shares), nice, `${String(req)} → nice`);
  }
});

test('containerPath: the built passt\'s directory first when it is there, once', () => {
  const built = (p: string) => p === '/c/passt/current/passt';
  const cases: Array<[string, string, (p: string) => boolean, string]> = [
    ['built: first on PATH', '/usr/bin:/bin', built, '/c/passt/current:/usr/bin:/bin'],
    ['built and already on PATH: moved first, not repeated', '/usr/bin:/c/passt/current', built, '/c/passt/current:/usr/bin'],
    ['empty PATH entries dropped', '/usr/bin::', built, '/c/passt/current:/usr/bin'],
    ['not built: PATH unchanged', '/usr/bin:/bin', () => false, '/usr/bin:/bin'],
  ];
  for (const [name, path, exists, want] of cases) assert.is(containerPath(path, '/c/passt/current', exists), want, name);
});

test.run();

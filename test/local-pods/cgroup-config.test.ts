// kubelet's CPU cgroup decisions the local pod runner takes (src/local/pod-runner/cgroup-config.ts)
// and where it finds this process's cpu controller (cgroup-manager.ts, cpuCgroupCandidates): tables.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { containerCpuConfig, cpuFiles, cpuSharesToWeight, milliCpu, milliCpuToQuota, nodeCpuSplit, podCgroupPath, podCpu, podCpuConfig, podUidOfCgroup, qosCpuConfigs } from '../../src/local/pod-runner/cgroup-config.ts';
import { cpuCgroupCandidates, kubepodsName } from '../../src/local/pod-runner/cgroup-manager.ts';
import { qosClass } from '../../src/local/pod-runner/status.ts';
import type { Container, PodSpec } from '../../src/local/pod-runner/pod.ts';

const c = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, extra: Partial<Container> = {}): Container =>
  ({ name, ...(requests || limits ? { resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } } : {}), ...extra });

// A KubeVirt launcher pod as controller/vmi/launcher-pod.ts renders it: compute (100m per vCPU at the
// default cpuAllocationRatio), guest-console-log (5m/15m), a container disk's init and main containers.
const launcherBurstable: PodSpec = {
  initContainers: [c('container-disk-binary', { cpu: '10m', memory: '1M' }, { cpu: '100m', memory: '40M' })],
  containers: [c('compute', { cpu: '100m', memory: '294Mi' }), c('volumecontainerdisk', { cpu: '1m', memory: '1M' }, { cpu: '10m', memory: '40M' }), c('guest-console-log', { cpu: '5m', memory: '35M' }, { cpu: '15m', memory: '60M' })],
};
const launcherGuaranteed: PodSpec = {
  initContainers: [c('container-disk-binary', { cpu: '10m', memory: '40M' }, { cpu: '10m', memory: '40M' })],
  containers: [c('compute', { cpu: '2', memory: '1Gi' }, { cpu: '2', memory: '1Gi' }), c('guest-console-log', { cpu: '15m', memory: '60M' }, { cpu: '15m', memory: '60M' })],
};

test('QoS class of launcher pods as kubelet computes it', () => {
  const table: Array<[string, PodSpec, string]> = [
    ['launcher pod, requests without compute limits', launcherBurstable, 'Burstable'],
    ['dedicated CPUs: requests = limits everywhere', launcherGuaranteed, 'Guaranteed'],
    ['limits only (requests default to them)', { containers: [c('a', undefined, { cpu: '1', memory: '1Gi' })] }, 'Guaranteed'],
    ['nothing requested', { containers: [c('a'), c('b')] }, 'BestEffort'],
    ['cpu only, equal', { containers: [c('a', { cpu: '1' }, { cpu: '1' })] }, 'Burstable'],
  ];
  for (const [name, spec, want] of table) assert.is(qosClass(spec), want, name);
});

test('the pod\'s effective CPU: containers and sidecars summed, the largest init container when larger, overhead; limits only when all declare one', () => {
  const table: Array<[string, PodSpec & { overhead?: Record<string, string> }, { requestMilli: number; limitMilli?: number }]> = [
    ['launcher pod: 100 + 1 + 5, compute has no limit', launcherBurstable, { requestMilli: 106 }],
    ['guaranteed launcher: 2000 + 15 and its limits', launcherGuaranteed, { requestMilli: 2015, limitMilli: 2015 }],
    ['a larger init container wins', { initContainers: [c('i', { cpu: '500m' }, { cpu: '1' })], containers: [c('a', { cpu: '100m' }, { cpu: '200m' })] }, { requestMilli: 500, limitMilli: 1000 }],
    ['a sidecar counts for the init containers after it and for the pod', { initContainers: [c('s', { cpu: '100m' }, undefined, { restartPolicy: 'Always' }), c('i', { cpu: '300m' })], containers: [c('a', { cpu: '250m' })] }, { requestMilli: 400 }],
    ['request defaults to the limit', { containers: [c('a', undefined, { cpu: '300m' })] }, { requestMilli: 300, limitMilli: 300 }],
    ['spec.overhead added', { overhead: { cpu: '50m' }, containers: [c('a', { cpu: '100m' })] }, { requestMilli: 150 }],
    ['nothing', { containers: [c('a')] }, { requestMilli: 0 }],
  ];
  for (const [name, spec, want] of table) assert.equal(podCpu(spec), want, name);
});

test('ResourceConfigForPod (CPU): shares from requests, a quota from limits for Guaranteed and fully-limited Burstable pods, the least shares for BestEffort', () => {
  const table: Array<[string, PodSpec, { shares: number; quotaUs?: number; periodUs?: number }]> = [
    ['Burstable launcher pod: 106m → 108 shares, no quota', launcherBurstable, { shares: 108 }],
    ['Guaranteed launcher pod: 2015m → 2063 shares, 201.5 ms per 100 ms', launcherGuaranteed, { shares: 2063, quotaUs: 201_500, periodUs: 100_000 }],
    ['Burstable with every limit declared: a quota', { containers: [c('a', { cpu: '100m' }, { cpu: '500m' })] }, { shares: 102, quotaUs: 50_000, periodUs: 100_000 }],
    ['BestEffort: 2 shares', { containers: [c('a')] }, { shares: 2 }],
    ['a tiny limit: at least 1 ms of quota', { containers: [c('a', { cpu: '1m', memory: '1M' }, { cpu: '1m', memory: '1M' })] }, { shares: 2, quotaUs: 1000, periodUs: 100_000 }],
  ];
  for (const [name, spec, want] of table) assert.equal(podCpuConfig(spec), want, name);
});

test('a container\'s CPU (kubelet\'s container cgroup): shares from its request, or its limit when only that is set; a quota from its limit', () => {
  const table: Array<[string, Record<string, Record<string, string>> | undefined, { shares: number; quotaUs?: number; periodUs?: number }]> = [
    ['no resources', undefined, { shares: 2 }],
    ['compute: 100m request, no limit', { requests: { cpu: '100m' } }, { shares: 102 }],
    ['guest-console-log: 5m, limit 15m', { requests: { cpu: '5m' }, limits: { cpu: '15m' } }, { shares: 5, quotaUs: 1500, periodUs: 100_000 }],
    ['container-disk: 1m, limit 10m', { requests: { cpu: '1m' }, limits: { cpu: '10m' } }, { shares: 2, quotaUs: 1000, periodUs: 100_000 }],
    ['only a limit: the request defaults to it', { limits: { cpu: '2' } }, { shares: 2048, quotaUs: 200_000, periodUs: 100_000 }],
    ['memory only', { requests: { memory: '64Mi' } }, { shares: 2 }],
    ['a tiny limit: at least 1 ms of quota', { limits: { cpu: '1m' } }, { shares: 2, quotaUs: 1000, periodUs: 100_000 }],
  ];
  for (const [name, resources, want] of table) assert.equal(containerCpuConfig({ name: 'c', ...(resources ? { resources } : {}) }), want, name);
});

test('quantities, quota and the cgroup v2 weight', () => {
  assert.equal([milliCpu('100m'), milliCpu('0.1'), milliCpu('1.5'), milliCpu(2), milliCpu('0.0005'), milliCpu('x'), milliCpu(undefined)], [100, 100, 1500, 2000, 1, undefined, undefined]);
  assert.equal([milliCpuToQuota(0), milliCpuToQuota(1), milliCpuToQuota(100), milliCpuToQuota(2000)], [0, 1000, 10_000, 200_000]);
  // runc's table: 2 → 1, 1024 → 39, 262144 → 10000; out of range clamped.
  assert.equal([cpuSharesToWeight(2), cpuSharesToWeight(102), cpuSharesToWeight(1024), cpuSharesToWeight(262_144), cpuSharesToWeight(0), cpuSharesToWeight(1e9)], [1, 4, 39, 10_000, 1, 10_000]);
});

test('the kubepods hierarchy: Guaranteed pods at its top, the others under their QoS level; QoS and node-allocatable weights', () => {
  assert.equal(podCgroupPath('Guaranteed', 'u-1'), ['podu-1']);
  assert.equal(podCgroupPath('Burstable', 'u-1'), ['burstable', 'podu-1']);
  assert.equal(podCgroupPath('BestEffort', 'u-1'), ['besteffort', 'podu-1']);
  assert.is(podUidOfCgroup('pod0b5c9f3e-1f2a-4b7c-9d3e-5f6a7b8c9d0e'), '0b5c9f3e-1f2a-4b7c-9d3e-5f6a7b8c9d0e');
  assert.is(podUidOfCgroup('burstable'), undefined);
  assert.equal(qosCpuConfigs([106, 106, 2015]), { Burstable: { shares: 2280 }, BestEffort: { shares: 2 } });
  assert.equal(qosCpuConfigs([]), { Burstable: { shares: 2 }, BestEffort: { shares: 2 } });
  // 2 CPUs: one reserved by default (at most half the machine); 8 CPUs: one; an explicit reserve.
  assert.equal(nodeCpuSplit(2000), { kubepods: { shares: 1024 }, systemReserved: { shares: 1024 } });
  assert.equal(nodeCpuSplit(1000), { kubepods: { shares: 512 }, systemReserved: { shares: 512 } });
  assert.equal(nodeCpuSplit(8000), { kubepods: { shares: 7168 }, systemReserved: { shares: 1024 } });
  assert.equal(nodeCpuSplit(4000, 500), { kubepods: { shares: 3584 }, systemReserved: { shares: 512 } });
  assert.equal(nodeCpuSplit(2000, 5000), { kubepods: { shares: 2 }, systemReserved: { shares: 2048 } });
});

test('the files each cgroup version writes', () => {
  assert.equal(cpuFiles(1, { shares: 108 }), [['cpu.shares', '108'], ['cpu.cfs_period_us', '100000'], ['cpu.cfs_quota_us', '-1']]);
  assert.equal(cpuFiles(1, { shares: 2063, quotaUs: 201_500, periodUs: 100_000 }), [['cpu.shares', '2063'], ['cpu.cfs_period_us', '100000'], ['cpu.cfs_quota_us', '201500']]);
  assert.equal(cpuFiles(2, { shares: 108 }), [['cpu.weight', '5'], ['cpu.max', 'max 100000']]);
  assert.equal(cpuFiles(2, { shares: 2063, quotaUs: 201_500, periodUs: 100_000 }), [['cpu.weight', '79'], ['cpu.max', '201500 100000']]);
});

test('cpuCgroupCandidates: v2 first when this process has a unified cgroup, v1\'s cpu hierarchy (also cpu,cpuacct), mount roots of containers', () => {
  const mi = (lines: string[]) => lines.join('\n');
  const hybrid = mi([
    '30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755',
    '31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw',
    '33 30 0:29 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu',
    '34 30 0:30 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct',
  ]);
  assert.equal(cpuCgroupCandidates(hybrid, '4:memory:/x\n2:cpuacct:/\n1:cpu:/\n0::/'), [{ version: 2, dir: '/sys/fs/cgroup/unified' }, { version: 1, dir: '/sys/fs/cgroup/cpu' }]);
  const systemdV1 = mi(['40 30 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct']);
  assert.equal(cpuCgroupCandidates(systemdV1, '3:cpu,cpuacct:/user.slice/session-1.scope'), [{ version: 1, dir: '/sys/fs/cgroup/cpu,cpuacct/user.slice/session-1.scope' }]);
  const v2 = mi(['50 1 0:40 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate']);
  assert.equal(cpuCgroupCandidates(v2, '0::/system.slice/ci.service'), [{ version: 2, dir: '/sys/fs/cgroup/system.slice/ci.service' }]);
  // A container whose cgroup mount shows only its own subtree.
  const container = mi(['60 1 0:40 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw']);
  assert.equal(cpuCgroupCandidates(container, '0::/docker/abc'), [{ version: 2, dir: '/sys/fs/cgroup' }]);
  assert.equal(cpuCgroupCandidates('', ''), []);
  // Born in another local mode's system-reserved: beside its qvirt/, never nested in it.
  assert.equal(cpuCgroupCandidates(hybrid, '1:cpu:/qvirt/system-reserved\n0::/'), [{ version: 2, dir: '/sys/fs/cgroup/unified' }, { version: 1, dir: '/sys/fs/cgroup/cpu' }]);
  assert.equal(cpuCgroupCandidates(v2, '0::/ci.service/qvirt/system-reserved'), [{ version: 2, dir: '/sys/fs/cgroup/ci.service' }]);
  // Runners on one machine never share a kubepods cgroup.
  assert.match(kubepodsName('/var/lib/qvirt/pods'), /^kubepods-[0-9a-f]{10}$/);
  assert.is.not(kubepodsName('/a/pods'), kubepodsName('/b/pods'));
});

test.run();

// Small builders for the controller tables: a VM, a VMI in a phase, a launcher pod in a state.
import type {
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceCondition,
  VirtualMachineStateChangeRequest,
  VirtualMachineInstancePhase,
} from '../../src/api/types.ts';
import type { Pod, ContainerStatus } from '../../controller/pod.ts';

export const NOW = new Date('2026-11-21T12:00:00Z');
export const at = (offsetSeconds: number) => new Date(NOW.getTime() + offsetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

export interface VMOpts {
  running?: boolean;
  runStrategy?: VirtualMachine['spec']['runStrategy'];
  requests?: VirtualMachineStateChangeRequest[];
  statusRunStrategy?: VirtualMachine['spec']['runStrategy'];
  startFailure?: NonNullable<VirtualMachine['status']>['startFailure'];
  deleting?: boolean;
  conditions?: NonNullable<VirtualMachine['status']>['conditions'];
}

export function vm(opts: VMOpts = {}): VirtualMachine {
  const v: VirtualMachine = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name: 'testvm', namespace: 'default', uid: 'vm-uid', generation: 3 },
    spec: {
      template: {
        metadata: { labels: { 'kubevirt.io/vm': 'testvm' } },
        spec: {
          domain: { devices: { disks: [{ name: 'containerdisk', disk: { bus: 'virtio' } }] }, memory: { guest: '128Mi' } },
          volumes: [{ name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } }, { name: 'cloudinit', cloudInitNoCloud: { userData: '#cloud-config' } }],
        },
      },
    },
    status: {},
  };
  if (opts.running !== undefined) v.spec.running = opts.running;
  if (opts.runStrategy !== undefined) v.spec.runStrategy = opts.runStrategy;
  if (opts.requests) v.status!.stateChangeRequests = opts.requests;
  if (opts.statusRunStrategy !== undefined) v.status!.runStrategy = opts.statusRunStrategy;
  if (opts.startFailure) v.status!.startFailure = opts.startFailure;
  if (opts.conditions) v.status!.conditions = opts.conditions;
  if (opts.deleting) v.metadata!.deletionTimestamp = at(-5);
  return v;
}

export interface VMIOpts {
  uid?: string;
  deleting?: boolean;
  conditions?: VirtualMachineInstanceCondition[];
  ranBefore?: boolean;
  migration?: NonNullable<VirtualMachineInstance['status']>['migrationState'];
  nodeName?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
}

export function vmi(phase: VirtualMachineInstancePhase, opts: VMIOpts = {}): VirtualMachineInstance {
  const v: VirtualMachineInstance = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'testvm', namespace: 'default', uid: opts.uid ?? 'vmi-uid', creationTimestamp: at(-600) },
    spec: { domain: { devices: {} } },
    status: { phase, phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: at(-600) }] },
  };
  if (opts.ranBefore) v.status!.phaseTransitionTimestamps!.push({ phase: 'Running', phaseTransitionTimestamp: at(-300) });
  if (opts.deleting) v.metadata!.deletionTimestamp = at(-5);
  if (opts.conditions) v.status!.conditions = opts.conditions;
  if (opts.migration) v.status!.migrationState = opts.migration;
  if (opts.nodeName) v.status!.nodeName = opts.nodeName;
  if (opts.annotations) v.metadata!.annotations = opts.annotations;
  if (opts.labels) v.metadata!.labels = opts.labels;
  if (opts.finalizers) v.metadata!.finalizers = opts.finalizers;
  return v;
}

export const cond = (type: VirtualMachineInstanceCondition['type'], status: 'True' | 'False', reason?: string): VirtualMachineInstanceCondition =>
  reason === undefined ? { type, status } : { type, status, reason };

export interface PodOpts {
  phase?: NonNullable<Pod['status']>['phase'];
  deleting?: boolean;
  compute?: 'running' | 'waiting' | 'terminated-ok' | 'terminated-error' | 'absent';
  others?: ContainerStatus[];
  conditions?: NonNullable<Pod['status']>['conditions'];
  nodeName?: string;
  name?: string;
  uid?: string;
  ownerUID?: string;
  created?: string;
  qosClass?: NonNullable<Pod['status']>['qosClass'];
  labels?: Record<string, string>;
}

export function pod(opts: PodOpts = {}): Pod {
  const statuses: ContainerStatus[] = [];
  switch (opts.compute ?? 'running') {
    case 'running':
      statuses.push({ name: 'compute', ready: false, state: { running: { startedAt: at(-60) } } });
      break;
    case 'waiting':
      statuses.push({ name: 'compute', ready: false, state: { waiting: { reason: 'ContainerCreating' } } });
      break;
    case 'terminated-ok':
      statuses.push({ name: 'compute', ready: false, state: { terminated: { exitCode: 0 } } });
      break;
    case 'terminated-error':
      statuses.push({ name: 'compute', ready: false, state: { terminated: { exitCode: 1 } } });
      break;
    case 'absent':
      break;
  }
  statuses.push(...(opts.others ?? []));
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: opts.name ?? 'virt-launcher-testvm-abcde',
      namespace: 'default',
      uid: opts.uid ?? 'pod-uid',
      creationTimestamp: opts.created ?? at(-120),
      ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'testvm', uid: opts.ownerUID ?? 'vmi-uid', controller: true, blockOwnerDeletion: true }],
    },
    spec: { containers: [{ name: 'compute', image: 'qvirt/launcher:dev' }], nodeName: opts.nodeName ?? 'node01' },
    status: { phase: opts.phase ?? 'Running', containerStatuses: statuses },
  };
  if (opts.labels) p.metadata!.labels = opts.labels;
  if (opts.deleting) p.metadata!.deletionTimestamp = at(-1);
  if (opts.conditions) p.status!.conditions = opts.conditions;
  if (opts.qosClass) p.status!.qosClass = opts.qosClass;
  return p;
}

/** A deterministic RandomInt: a linear congruential generator, seeded. */
export function seededRandomInt(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return n <= 0 ? 0 : state % n;
  };
}

// The launcher pod's descheduler annotations (controller/vmi/descheduler.ts), against KubeVirt's
// watch/descheduler as the VMI controller's sync calls it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { deschedulerAnnotationsPatch } from '../../controller/vmi/descheduler.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const EVICT_ONLY = '/metadata/annotations/descheduler.alpha.kubernetes.io~1request-evict-only';
const IN_PROGRESS = '/metadata/annotations/descheduler.alpha.kubernetes.io~1eviction-in-progress';
const vmi = (marked: boolean) => ({ metadata: { name: 'v' }, spec: { domain: { devices: {} } }, status: { nodeName: 'n1', ...(marked ? { evacuationNodeName: 'n1' } : {}) } }) as VirtualMachineInstance;
function pod(annotations: Record<string, string> | undefined, o: { ready?: boolean; temp?: boolean } = {}): Pod {
  return {
    metadata: { name: 'virt-launcher-v-abcde', ...(annotations || o.temp ? { annotations: { ...annotations, ...(o.temp ? { 'kubevirt.io/ephemeral-provisioning': 'true' } : {}) } } : {}) },
    status: { phase: 'Running', containerStatuses: [{ name: 'compute', ready: true, state: o.ready === false ? { waiting: {} } : { running: {} } }] },
  } as unknown as Pod;
}
const evictOnly = { 'descheduler.alpha.kubernetes.io/request-evict-only': '' };

const CASES: [string, VirtualMachineInstance, Pod, object[]][] = [
  ['not marked, annotated as created: nothing', vmi(false), pod(evictOnly), []],
  ['marked: eviction in progress', vmi(true), pod(evictOnly), [{ op: 'add', path: IN_PROGRESS, value: 'true' }]],
  ['marked, already in progress: nothing', vmi(true), pod({ ...evictOnly, 'descheduler.alpha.kubernetes.io/eviction-in-progress': 'true' }), []],
  ['the mark gone: removed, if unchanged since read', vmi(false), pod({ ...evictOnly, 'descheduler.alpha.kubernetes.io/eviction-in-progress': 'kubevirt' }),
    [{ op: 'test', path: IN_PROGRESS, value: 'kubevirt' }, { op: 'remove', path: IN_PROGRESS }]],
  ['a pod created without request-evict-only gets it', vmi(false), pod({ 'kubevirt.io/domain': 'v' }), [{ op: 'add', path: EVICT_ONLY, value: '' }]],
  ['no annotations at all: the map first', vmi(true), pod(undefined), [{ op: 'add', path: '/metadata/annotations', value: {} }, { op: 'add', path: EVICT_ONLY, value: '' }, { op: 'add', path: IN_PROGRESS, value: 'true' }]],
  ['a pod not ready yet: nothing', vmi(true), pod(evictOnly, { ready: false }), []],
  ['a temporary pod (WaitForFirstConsumer): nothing', vmi(true), pod(evictOnly, { temp: true }), []],
];
for (const [name, v, p, want] of CASES) test(name, () => assert.equal(deschedulerAnnotationsPatch(v, p), want));

test.run();

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statusOnlyUpdate } from '../../src/kube/status-only-update.ts';
import type { KubeObject } from '../../src/kube/client.ts';

test('statusOnlyUpdate: only a status write counts; spec (generation), labels, annotations, finalizers and deletion do not', () => {
  const base: KubeObject = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', generation: 3, labels: { a: '1' }, annotations: { b: '2' }, finalizers: ['f'] } };
  const with_ = (m: Record<string, unknown>): KubeObject => ({ ...base, metadata: { ...base.metadata, ...m } });
  const table: Array<[string, KubeObject, boolean]> = [
    ['status only', { ...base, status: { phase: 'Running' } } as KubeObject, true],
    ['spec changed', with_({ generation: 4 }), false],
    ['label changed', with_({ labels: { a: '2' } }), false],
    ['annotation added', with_({ annotations: { b: '2', c: '3' } }), false],
    ['finalizer removed', with_({ finalizers: [] }), false],
    ['being deleted', with_({ deletionTimestamp: '2026-11-26T12:00:00Z' }), false],
  ];
  for (const [name, n, want] of table) assert.is(statusOnlyUpdate(base, n), want, name);
  assert.not.ok(statusOnlyUpdate({ ...base, metadata: { name: 'v' } }, { ...base, metadata: { name: 'v' } }), 'no generation: cannot tell, reconcile');
});

test.run();

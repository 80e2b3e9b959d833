// The VMI update admitter's rules (vmi-update-admitter.go).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultNewVirtualMachineInstance } from '../../../src/api/defaults.ts';
import { decodeKubeVirtObject } from '../../../src/api/parse.ts';
import type { VirtualMachineInstance } from '../../../src/api/types.ts';
import { jsonEqual, validateVirtualMachineInstanceUpdate } from '../../../src/api/validation/vmi-update.ts';
import { loadExample } from '../fixtures.ts';
import { config, env, fmt } from './lib.ts';

test('VMI update: users may not change the spec or reserved labels; KubeVirt service accounts may', () => {
  const old = defaultNewVirtualMachineInstance(decodeKubeVirtObject(loadExample('vmi-nocloud.yaml')).object as VirtualMachineInstance, env());
  const same: any = structuredClone(old);
  same.spec.domain.memory.guest = '134217728'; // same value, other spelling
  same.metadata.labels.extra = 'ok';
  assert.equal(fmt(validateVirtualMachineInstanceUpdate(old, same, { config: config() })), []);
  const changed: any = structuredClone(old);
  changed.spec.domain.memory.guest = '256Mi';
  changed.metadata.labels['kubevirt.io/nodeName'] = 'n1';
  assert.equal(fmt(validateVirtualMachineInstanceUpdate(old, changed, { config: config() })), [
    'spec: update of VMI object is restricted',
    'metadata.labels: modification of the following reserved kubevirt.io/ labels on a VMI object is prohibited',
  ]);
  assert.equal(validateVirtualMachineInstanceUpdate(old, changed, { config: config(), isKubeVirtServiceAccount: true }), []);
});

test('jsonEqual treats absent and undefined members alike, and nothing else', () => {
  assert.ok(jsonEqual({ a: 1, b: undefined }, { a: 1 }));
  assert.ok(jsonEqual([{ x: [1, 2] }], [{ x: [1, 2] }]));
  assert.not.ok(jsonEqual([1, 2], [2, 1]));
  assert.not.ok(jsonEqual({ a: null }, {}));
  assert.not.ok(jsonEqual('1', 1));
});

test.run();

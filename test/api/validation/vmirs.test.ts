// The VMIRS admitter's rules (vmirs-admitter.go).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeVirtualMachineInstanceReplicaSet } from '../../../src/api/parse.ts';
import { validateVirtualMachineInstanceReplicaSet } from '../../../src/api/validation/vmirs.ts';
import { loadExample } from '../fixtures.ts';
import { config, fmt } from './lib.ts';

test('VMIRS: selector must match the template labels', () => {
  const rs = (mutate: (v: any) => void) => {
    const v: any = loadExample('vmi-replicaset-cirros.yaml');
    mutate(v);
    return fmt(validateVirtualMachineInstanceReplicaSet(decodeVirtualMachineInstanceReplicaSet(v), { config: config() }));
  };
  assert.equal(rs(() => {}), []);
  assert.equal(rs((v) => { v.spec.template.metadata.labels = { other: 'x' }; }), ['spec.selector: selector does not match labels.']);
  assert.equal(rs((v) => { v.spec.selector = { matchExpressions: [{ key: 'kubevirt.io/vmReplicaSet', operator: 'In', values: [] }] }; }), [
    "spec.selector: values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
  ]);
  assert.equal(rs((v) => { v.spec.template.spec.domain.devices.disks[0].name = 'nope'; }).length, 2);
});

test.run();

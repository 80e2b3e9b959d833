// The migration create admitter's spec rules (migration-create-admitter.go).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { validateVirtualMachineInstanceMigration } from '../../../src/api/validation/migration-create.ts';
import { fmt } from './lib.ts';

test('VMIM: vmiName required; sendTo/receive IDs must agree', () => {
  const base = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'm' } };
  assert.equal(fmt(validateVirtualMachineInstanceMigration({ ...base, spec: {} })), ['spec.vmiName: vmiName is missing']);
  assert.equal(fmt(validateVirtualMachineInstanceMigration({ ...base, spec: { vmiName: 'v' } })), []);
  assert.equal(fmt(validateVirtualMachineInstanceMigration({ ...base, spec: { vmiName: 'v', sendTo: { migrationID: 'a', connectURL: 'u' }, receive: { migrationID: 'b' } } })), [
    'spec: sendTo migrationID a does not match receive migrationID b',
  ]);
});

test.run();

// Every KubeVirt example passes every admitter's rules after defaulting.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultNewVirtualMachine, defaultNewVirtualMachineInstance } from '../../../src/api/defaults.ts';
import type { FieldError } from '../../../src/api/field-error.ts';
import { decodeKubeVirtObject } from '../../../src/api/parse.ts';
import { validateVirtualMachineInstanceMigration } from '../../../src/api/validation/migration-create.ts';
import { validateVirtualMachineInstance } from '../../../src/api/validation/vmi-create.ts';
import { validateVirtualMachineInstanceReplicaSet } from '../../../src/api/validation/vmirs.ts';
import { validateVirtualMachine } from '../../../src/api/validation/vms.ts';
import { loadExamples } from '../fixtures.ts';
import { config, env, fmt } from './lib.ts';

test('every KubeVirt example validates cleanly after defaulting (HostDisk gate on, as KubeVirt\'s own tests run it)', () => {
  for (const { file, doc } of loadExamples()) {
    const o = decodeKubeVirtObject(doc);
    let errors: FieldError[] = [];
    if (o.kind === 'VirtualMachineInstance') errors = validateVirtualMachineInstance(defaultNewVirtualMachineInstance(o.object, env()), { config: config() });
    if (o.kind === 'VirtualMachine') errors = validateVirtualMachine(defaultNewVirtualMachine(o.object, env()), { config: config() }).errors;
    if (o.kind === 'VirtualMachineInstanceReplicaSet') errors = validateVirtualMachineInstanceReplicaSet(o.object, { config: config() });
    if (o.kind === 'VirtualMachineInstanceMigration') errors = validateVirtualMachineInstanceMigration(o.object);
    assert.equal(fmt(errors), [], file);
  }
});

test.run();

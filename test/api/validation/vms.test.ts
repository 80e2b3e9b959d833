// The VM admitter's rules (vms-admitter.go).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fmt, vm } from './lib.ts';

test('VM: running and runStrategy are mutually exclusive; one is required; running warns', () => {
  assert.equal(fmt(vm().errors), []);
  assert.equal(vm().warnings, []);
  const both = vm((v) => { v.spec.running = true; });
  assert.equal(fmt(both.errors), ['spec.running: Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead']);
  assert.equal(both.warnings, ['spec.running is deprecated, please use spec.runStrategy instead.']);
  assert.equal(fmt(vm((v) => { delete v.spec.runStrategy; }).errors), ['spec.running: RunStrategy must be specified']);
  const legacy = vm((v) => { delete v.spec.runStrategy; v.spec.running = false; });
  assert.equal(fmt(legacy.errors), []);
  assert.equal(legacy.warnings.length, 1);
  assert.equal(fmt(vm((v) => { v.spec.runStrategy = 'WaitAsReceiver'; }).errors), [
    'spec.runStrategy: Invalid RunStrategy (WaitAsReceiver), DecentralizedLiveMigration feature gate is not enabled in kubevirt resource',
  ]);
});

test('VM: the template is validated after spec defaulting, with template paths', () => {
  const r = vm((v) => { v.spec.template.spec.domain.devices.disks[0].disk.bus = 'scsi'; v.spec.template.spec.domain.devices.disks.push({ name: 'x' }); });
  assert.equal(fmt(r.errors), ["spec.template.spec.domain.devices.disks[2].name: spec.template.spec.domain.devices.disks[2].Name 'x' not found."]);
  const noMem = vm((v) => { delete v.spec.template.spec.domain.memory; });
  assert.match(fmt(noMem.errors).join('\n'), /spec\.template\.spec\.domain\.memory\.guest: no memory requested/);
});

test('VM: dataVolumeTemplates must be named, sized and referenced', () => {
  const r = vm((v) => {
    v.spec.dataVolumeTemplates = [{ metadata: {}, spec: {} }, { metadata: { name: 'dv' }, spec: {} }, { metadata: { name: 'dv2' }, spec: { storage: {} } }];
  });
  assert.equal(fmt(r.errors), [
    "spec.dataVolumeTemplates[0].metadata.name: 'name' field must not be empty for DataVolumeTemplate entry spec.dataVolumeTemplates[0].metadata.name.",
    'spec.dataVolumeTemplates[1].spec: Missing Data volume PVC or Storage',
    "spec.dataVolumeTemplates[2]: DataVolumeTemplate entry spec.dataVolumeTemplates[2] must be referenced in the VMI template's 'volumes' list",
  ]);
});

test.run();

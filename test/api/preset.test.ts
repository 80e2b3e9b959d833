// VirtualMachineInstancePreset as virt-api's VMI mutator applies it (mutators/preset.go), as tables:
// selection by the VMI's labels, the merge where the VMI leaves a field unset, the annotation, the
// exclusion, conflicts between presets refused with KubeVirt's message; and the preset validator.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyPresets, mergePresetDomain, PresetConflictError, presetMergeConflicts } from '../../src/api/preset/apply.ts';
import type { VirtualMachineInstancePreset } from '../../src/api/preset/types.ts';
import type { DomainSpec, VirtualMachineInstance } from '../../src/api/types.ts';
import { admitPreset, admitVMIPresets } from '../../src/admission/preset-admitters.ts';

const preset = (name: string, matchLabels: Record<string, string>, domain: Partial<DomainSpec>): VirtualMachineInstancePreset => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstancePreset', metadata: { name, namespace: 'default' }, spec: { selector: { matchLabels }, domain },
});
const vmi = (labels: Record<string, string>, domain: Partial<DomainSpec> = {}, annotations?: Record<string, string>): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
  metadata: { name: 'v', namespace: 'default', labels, ...(annotations ? { annotations } : {}) },
  spec: { domain: { devices: {}, ...domain } },
} as VirtualMachineInstance);

const small = preset('small', { flavor: 'small' }, { resources: { requests: { memory: '64M' } }, cpu: { cores: 1 } });
const efi = preset('efi', { boot: 'efi' }, { firmware: { bootloader: { efi: { secureBoot: false } } } });

const CASES: [string, VirtualMachineInstancePreset[], VirtualMachineInstance, Partial<DomainSpec>, string[]][] = [
  ['no preset matches: nothing changes', [small], vmi({ flavor: 'large' }), { devices: {} }, []],
  ['a matching preset fills what the VMI leaves unset', [small], vmi({ flavor: 'small' }), { devices: {}, resources: { requests: { memory: '64M' } }, cpu: { cores: 1 } }, ['small']],
  ['the VMI\'s own values stay; the preset still applies where it agrees', [small], vmi({ flavor: 'small' }, { cpu: { cores: 4 }, resources: { requests: { memory: '64M' } } }), { devices: {}, cpu: { cores: 4 }, resources: { requests: { memory: '64M' } } }, ['small']],
  ['two presets, no conflict: both, each annotated', [small, efi], vmi({ flavor: 'small', boot: 'efi' }), { devices: {}, resources: { requests: { memory: '64M' } }, cpu: { cores: 1 }, firmware: { bootloader: { efi: { secureBoot: false } } } }, ['small', 'efi']],
  ['excluded by annotation', [small], vmi({ flavor: 'small' }, {}, { 'virtualmachineinstancepresets.admission.kubevirt.io/exclude': 'true' }), { devices: {} }, []],
  ['a watchdog, clock and ioThreadsPolicy', [preset('misc', {}, { devices: { watchdog: { name: 'w', i6300esb: { action: 'poweroff' } } }, clock: { utc: {}, timer: { rtc: { present: true } } }, ioThreadsPolicy: 'shared' })], vmi({ a: 'b' }),
    { devices: { watchdog: { name: 'w', i6300esb: { action: 'poweroff' } } }, clock: { utc: {}, timer: { rtc: { present: true } } }, ioThreadsPolicy: 'shared' }, ['misc']],
];

for (const [name, presets, v, wantDomain, wantApplied] of CASES) {
  test(`applyPresets: ${name}`, () => {
    const r = applyPresets(v, presets);
    assert.equal(r.vmi.spec.domain, wantDomain);
    assert.equal(r.applied, wantApplied);
    const ann = Object.entries(r.vmi.metadata?.annotations ?? {}).filter(([k]) => k.startsWith('virtualmachinepreset.kubevirt.io/'));
    assert.equal(ann, wantApplied.map((n) => [`virtualmachinepreset.kubevirt.io/${n}`, 'kubevirt.io/v1']));
    assert.equal(r.warnings, wantApplied.length ? ['kubevirt.io/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2.'] : []);
    assert.not.equal(r.vmi === v && wantApplied.length > 0, true, 'the input is not changed');
  });
}

test('applyPresets: conflicting matching presets are refused with KubeVirt\'s message', () => {
  const big = preset('big', { app: 'x' }, { cpu: { cores: 8 } });
  const tiny = preset('tiny', { app: 'x' }, { cpu: { cores: 1 } });
  try {
    applyPresets(vmi({ app: 'x' }), [big, tiny]);
    assert.unreachable('should refuse');
  } catch (err) {
    assert.instance(err, PresetConflictError);
    assert.is((err as Error).message, 'VirtualMachinePresets cannot be applied due to conflicts: presets \'tiny\' and \'big\' conflict: spec.cpu: {"cores":1} != {"cores":8}');
  }
  // The same presets for a VMI only one of them matches: fine.
  assert.equal(applyPresets(vmi({ app: 'y' }), [big, tiny]).applied, []);
});

test('presetMergeConflicts: requests compared by value', () => {
  assert.equal(presetMergeConflicts({ resources: { requests: { memory: '1Gi' } } }, { resources: { requests: { memory: '1024Mi' } } }), []);
  assert.equal(presetMergeConflicts({ resources: { requests: { memory: '1Gi' } } }, { resources: { requests: { memory: '2Gi' } } }), ['spec.resources.requests[memory]: 1Gi != 2Gi']);
});

test('mergePresetDomain: a preset that only disagrees does not take', () => {
  const d: DomainSpec = { devices: {}, cpu: { cores: 2 } };
  assert.equal(mergePresetDomain({ cpu: { cores: 1 } }, d), { applied: false, conflicts: ['spec.cpu: {"cores":1} != {"cores":2}'] });
});

test('admission: the preset validator wants a domain; the VMI mutator step refuses conflicts (422) and warns when presets apply', () => {
  const noDomain = admitPreset({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstancePreset', metadata: { name: 'p' }, spec: { selector: {} } });
  assert.ok(noDomain && 'message' in noDomain && noDomain.message.includes('spec.domain: missing domain.'), JSON.stringify(noDomain));
  assert.is(admitPreset(small), undefined);
  const refused = admitVMIPresets(vmi({ app: 'x' }), [preset('a', { app: 'x' }, { cpu: { cores: 8 } }), preset('b', { app: 'x' }, { cpu: { cores: 1 } })]);
  assert.equal(refused && 'code' in refused ? [refused.code, refused.message.startsWith('VirtualMachinePresets cannot be applied due to conflicts: ')] : refused, [422, true]);
  assert.equal(admitVMIPresets(vmi({ flavor: 'small' }), [small]), { warnings: ['kubevirt.io/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2.'] });
});

test.run();

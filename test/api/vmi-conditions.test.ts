// src/api/vmi-conditions.ts: KubeVirt's GetCondition / HasCondition / HasConditionWithStatus on a VMI.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasVmiCondition, hasVmiConditionWithStatus, isVmiPaused, vmiCondition } from '../../src/api/vmi-conditions.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceCondition } from '../../src/api/types.ts';

const vmi = (...conditions: VirtualMachineInstanceCondition[]): VirtualMachineInstance =>
  ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v' }, spec: { domain: { devices: {} } }, status: { conditions } }) as VirtualMachineInstance;

const pausedByUser: VirtualMachineInstanceCondition = { type: 'Paused', status: 'True', reason: 'PausedByUser' };
const pausedFalse: VirtualMachineInstanceCondition = { type: 'Paused', status: 'False' };
const agent: VirtualMachineInstanceCondition = { type: 'AgentConnected', status: 'True' };

const cases: Array<[string, VirtualMachineInstance | undefined, { has: boolean; isTrue: boolean; isFalse: boolean; paused: boolean }]> = [
  ['no VMI', undefined, { has: false, isTrue: false, isFalse: false, paused: false }],
  ['no status', { ...vmi(), status: undefined } as VirtualMachineInstance, { has: false, isTrue: false, isFalse: false, paused: false }],
  ['no conditions', vmi(), { has: false, isTrue: false, isFalse: false, paused: false }],
  ['another condition only', vmi(agent), { has: false, isTrue: false, isFalse: false, paused: false }],
  ['Paused True', vmi(agent, pausedByUser), { has: true, isTrue: true, isFalse: false, paused: true }],
  ['Paused False: there, but not paused', vmi(pausedFalse), { has: true, isTrue: false, isFalse: true, paused: false }],
];

for (const [name, v, want] of cases) {
  test(name, () => {
    assert.is(hasVmiCondition(v, 'Paused'), want.has, 'HasCondition');
    assert.is(hasVmiConditionWithStatus(v, 'Paused'), want.isTrue, 'HasConditionWithStatus True');
    assert.is(hasVmiConditionWithStatus(v, 'Paused', 'False'), want.isFalse, 'HasConditionWithStatus False');
    assert.is(isVmiPaused(v), want.paused, 'isVmiPaused');
    assert.is(vmiCondition(v, 'Paused') !== undefined, want.has, 'GetCondition');
  });
}

test('GetCondition returns the condition itself', () => {
  assert.is(vmiCondition(vmi(agent, pausedByUser), 'Paused'), pausedByUser);
});

test.run();

// What virt-api checks before it forwards a VMI subresource call to the node agent, as a table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkVmiSubresource, type VmiSubresource } from '../../src/virt-api/vmi-preconditions.ts';
import { parseResourceType } from '../../src/cli/vmi-ops.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const vmi = (phase: string, o: { paused?: boolean; agent?: boolean; acpi?: boolean; probe?: 'ping' | 'http'; serial?: boolean; graphics?: boolean } = {}): VirtualMachineInstance => ({
  metadata: { name: 'v' },
  spec: {
    domain: {
      devices: { ...(o.serial === false ? { autoattachSerialConsole: false } : {}), ...(o.graphics === false ? { autoattachGraphicsDevice: false } : {}) },
      ...(o.acpi === false ? { features: { acpi: { enabled: false } } } : {}),
    },
    ...(o.probe ? { livenessProbe: o.probe === 'ping' ? { guestAgentPing: {} } : { httpGet: { port: 80 } } } : {}),
  },
  status: {
    phase,
    conditions: [
      ...(o.paused ? [{ type: 'Paused', status: 'True' }] : []),
      ...(o.agent ? [{ type: 'AgentConnected', status: 'True' }] : []),
    ],
  },
}) as unknown as VirtualMachineInstance;

const cases: Array<[VmiSubresource, VirtualMachineInstance, { code: number; message: string } | undefined]> = [
  ['pause', vmi('Running'), undefined],
  ['pause', vmi('Scheduled'), { code: 409, message: 'VM is not running' }],
  ['pause', vmi('Running', { paused: true }), { code: 409, message: 'VMI is already paused' }],
  ['pause', vmi('Running', { probe: 'http' }), { code: 403, message: 'Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported' }],
  ['pause', vmi('Running', { probe: 'ping' }), undefined],
  ['unpause', vmi('Running', { paused: true }), undefined],
  ['unpause', vmi('Running'), { code: 409, message: 'VMI is not paused' }],
  ['unpause', vmi('Succeeded'), { code: 409, message: 'VMI is not running' }],
  ['freeze', vmi('Running'), undefined],
  ['freeze', vmi('Pending'), { code: 409, message: 'VM is not running' }],
  ['unfreeze', vmi('Failed'), { code: 409, message: 'VMI is not running' }],
  ['softreboot', vmi('Running'), undefined],
  ['softreboot', vmi('Running', { paused: true }), { code: 409, message: 'VMI is paused' }],
  ['softreboot', vmi('Running', { acpi: false }), { code: 409, message: 'VMI neither have the agent connected nor the ACPI feature enabled' }],
  ['softreboot', vmi('Running', { acpi: false, agent: true }), undefined],
  ['reset', vmi('Running'), undefined],
  ['reset', vmi('Scheduled'), { code: 409, message: 'Failed to reset non-running VMI with phase Scheduled' }],
  ['console', vmi('Running'), undefined],
  ['console', vmi('Running', { serial: false }), { code: 400, message: 'No serial consoles are present.' }],
  ['console', vmi('Failed'), { code: 409, message: 'VMI is in failed status' }],
  ['console', vmi('Scheduling'), { code: 400, message: 'VMI is not running' }],
  ['vnc', vmi('Running'), undefined],
  ['vnc', vmi('Running', { graphics: false }), { code: 400, message: 'No graphics devices are present.' }],
  ['vnc', vmi('Pending'), { code: 400, message: 'VMI is not running' }],
  ['vnc/screenshot', vmi('Running'), undefined],
  ['vnc/screenshot', vmi('Running', { graphics: false }), { code: 400, message: 'No graphics devices are present.' }],
  ['vnc/screenshot', vmi('Succeeded'), { code: 400, message: 'VMI is not running' }],
  ['guestosinfo', vmi('Running'), undefined],
  ['userlist', vmi('Scheduled'), undefined],
  ['filesystemlist', vmi('Succeeded'), { code: 409, message: 'VMI is not running' }],
  ['qmp', vmi('Running', { paused: true }), undefined],
];

for (const [sub, v, want] of cases) {
  test(`${sub} on a ${v.status?.phase} VMI ${JSON.stringify(v.status?.conditions?.map((c) => c.type))} → ${want ? want.message : 'allowed'}`, () => {
    assert.equal(checkVmiSubresource(sub, v), want);
  });
}

test('parseResourceType: vm/vmi in every spelling virtctl takes; anything else is a usage error', () => {
  for (const t of ['vm', 'VM', 'vms', 'VirtualMachine', 'virtualmachines']) assert.is(parseResourceType(t), 'vm', t);
  for (const t of ['vmi', 'VMIs', 'virtualmachineinstance', 'VirtualMachineInstances']) assert.is(parseResourceType(t), 'vmi', t);
  assert.throws(() => parseResourceType('pod'), /unsupported resource type "pod": use vm/);
});

test.run();

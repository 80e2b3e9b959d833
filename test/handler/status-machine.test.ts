// status.machine as virt-handler's updateMachineType writes it: from the domain, so nothing before the
// domain exists (the VMI's Scheduled status is not written again just for it) and the type once it does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { computeStatus } from '../../handler/status.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';

type Domain = Parameters<typeof computeStatus>[0]['domain'];
const running: Domain = decodeDomain({ Status: { Status: 'Running', Reason: 'Unknown' } });
const vmi = (machine?: string, status?: VirtualMachineInstance['status']): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'default', uid: 'u' },
  spec: { domain: { devices: {}, ...(machine ? { machine: { type: machine } } : {}) } },
  ...(status ? { status } : {}),
});

const rows: Array<{ name: string; vmi: VirtualMachineInstance; domain: Domain; machineType?: string; phase: string; want: unknown }> = [
  { name: 'no domain yet (Scheduled): none', vmi: vmi('q35', { phase: 'Scheduled' }), domain: undefined, phase: 'Scheduled', want: undefined },
  { name: 'domain running: the VMI\'s machine type', vmi: vmi('q35'), domain: running, phase: 'Running', want: { type: 'q35' } },
  { name: 'domain running: the domain\'s own machine type first', vmi: vmi('q35'), domain: running, machineType: 'pc-q35-7.2', phase: 'Running', want: { type: 'pc-q35-7.2' } },
  { name: 'no type anywhere: none', vmi: vmi(undefined), domain: running, phase: 'Running', want: undefined },
  { name: 'domain gone: what was recorded stays', vmi: vmi('q35', { phase: 'Running', machine: { type: 'q35' } }), domain: undefined, phase: 'Failed', want: { type: 'q35' } },
];

for (const r of rows) {
  test(r.name, () => {
    const s = computeStatus({ vmi: r.vmi, domain: r.domain, phase: r.phase, now: '2026-11-22T00:00:00Z', ...(r.machineType ? { machineType: r.machineType } : {}) });
    assert.equal(s.machine, r.want);
  });
}

test.run();

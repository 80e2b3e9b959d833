// The claims a VMI uses and the persistentVolumeClaimInfo the VMI controller records for them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimNames, withClaimInfo, type ClaimFacts } from '../../controller/vmi/pvc-lookup.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const vmi = (status?: VirtualMachineInstance['status']): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'default' },
  spec: {
    domain: { devices: {} },
    volumes: [
      { name: 'root', persistentVolumeClaim: { claimName: 'root-pvc' } },
      { name: 'scratch', ephemeral: { persistentVolumeClaim: { claimName: 'golden' } } },
      { name: 'dv', dataVolume: { name: 'imported' } },
      { name: 'again', persistentVolumeClaim: { claimName: 'root-pvc' } },
      { name: 'ci', cloudInitNoCloud: { userData: '#!/bin/sh' } },
    ],
  },
  ...(status ? { status } : {}),
} as VirtualMachineInstance);

const facts = (claimName: string, storage: string): ClaimFacts => ({ volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], info: { claimName, accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem', capacity: { storage }, requests: { storage } } });

test('claimNames: persistentVolumeClaim, ephemeral and dataVolume, once each', () => {
  assert.equal(claimNames(vmi()), ['root-pvc', 'golden', 'imported']);
});

test('withClaimInfo: adds the info per volume, keeps other fields, unchanged → undefined', () => {
  const claims = new Map([['root-pvc', facts('root-pvc', '1Gi')], ['imported', facts('imported', '2Gi')]]);
  const first = withClaimInfo(vmi({ volumeStatus: [{ name: 'root', target: 'vda' }, { name: 'ci', target: 'vdb' }] }), claims)!;
  assert.equal(first.map((s) => [s.name, s.target, s.persistentVolumeClaimInfo?.claimName, s.persistentVolumeClaimInfo?.capacity?.storage]), [
    ['root', 'vda', 'root-pvc', '1Gi'], ['ci', 'vdb', undefined, undefined], ['dv', '', 'imported', '2Gi'], ['again', '', 'root-pvc', '1Gi'],
  ]);
  assert.is(withClaimInfo(vmi({ volumeStatus: first }), claims), undefined, 'nothing new');
  assert.is(withClaimInfo(vmi(), new Map()), undefined, 'no claim found (yet): nothing written');
});

test.run();

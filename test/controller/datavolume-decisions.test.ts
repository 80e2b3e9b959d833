// The DataVolume decisions, table-tested: CDI's sizing (GetRequiredSpace / GetUsableSpace with
// its 6 % default overhead), the claim CDI makes, the status (phase, progress, conditions) per
// claim and import state, the retry policy; and the VM side: DataVolumes from dataVolumeTemplates,
// readiness, and the Provisioning / DataVolumeError inputs of the printable status.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claimForDataVolume, dataVolumeStatus, formatProgress, requiredSpace, retryDecision, sourceKind, targetImageSize, usableSpace, type ImportState } from '../../controller/datavolume/decisions.ts';
import { dataVolumeError, dataVolumeFromTemplate, dataVolumeProvisioning, planDataVolumes } from '../../controller/vm/datavolumes.ts';
import type { DataVolume } from '../../src/api/cdi/types.ts';
import type { VirtualMachine } from '../../src/api/types.ts';
import { signUploadToken, verifyUploadToken } from '../../controller/datavolume/upload-token.ts';
import { uploadDataVolume } from '../../src/cli/image-upload.ts';
import { dataVolumesReadyForPod } from '../../controller/vmi/data-volumes.ts';

const Mi = 1024 * 1024;
const Gi = 1024 * Mi;
const NOW = '2026-11-26T18:00:00Z';

test('sizing: CDI GetRequiredSpace / GetUsableSpace at 6 %', () => {
  const rows: [number, number, number][] = [
    // requested, claim (storage API), image in that claim
    [Gi, Math.ceil(Gi * 1.06), Gi],
    [64 * Mi, Math.ceil(64 * Mi * 1.06), 64 * Mi],
    [Gi + 1, Math.ceil((Gi + Mi) * 1.06), Gi + Mi],
  ];
  for (const [req, claim, image] of rows) {
    assert.is(requiredSpace(0.06, req), claim, `required(${req})`);
    assert.is(usableSpace(0.06, claim), image, `usable(${claim})`);
  }
  assert.is(usableSpace(0.06, Gi), 966 * Mi, 'a 1Gi claim (spec.pvc) holds a 966 MiB image');
  assert.is(usableSpace(0.055, Gi), 970 * Mi, "CDI's old 5.5 %");
  assert.is(targetImageSize(Gi, 0.06, 'Block'), Gi, 'block claims: no overhead');
});

const dv = (spec: DataVolume['spec'], status?: DataVolume['status']): DataVolume => ({ apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name: 'd', namespace: 'ns', uid: 'u1' }, spec, ...(status ? { status } : {}) });

test('the claim CDI makes: DV name, owner, storage inflated, pvc as written; bad sizes named', () => {
  const s = claimForDataVolume(dv({ source: { http: { url: 'http://x/y.qcow2' } }, storage: { resources: { requests: { storage: '1Gi' } } } }), 0.06);
  assert.ok('claim' in s);
  if ('claim' in s) {
    assert.is(s.claim.metadata.name, 'd');
    assert.equal(s.claim.metadata.ownerReferences[0], { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', name: 'd', uid: 'u1', controller: true, blockOwnerDeletion: true });
    assert.is(s.claim.spec.resources?.requests?.storage, String(Math.ceil(Gi * 1.06)));
    assert.equal(s.claim.spec.accessModes, ['ReadWriteOnce']);
    assert.is(s.claim.metadata.annotations['cdi.kubevirt.io/storage.import.endpoint'], 'http://x/y.qcow2');
  }
  const p = claimForDataVolume(dv({ blank: {} } as never), 0.06);
  assert.equal(p, { error: 'DataVolume.spec: missing pvc or storage' });
  const q = claimForDataVolume(dv({ source: { blank: {} }, pvc: { accessModes: ['ReadWriteMany'], storageClassName: 'local-path', resources: { requests: { storage: '2Gi' } } } }), 0.06);
  assert.ok('claim' in q && q.claim.spec.resources?.requests?.storage === '2Gi' && q.claim.spec.accessModes?.[0] === 'ReadWriteMany' && q.claim.spec.storageClassName === 'local-path');
  assert.equal(claimForDataVolume(dv({ source: { blank: {} }, storage: { resources: { requests: { storage: 'lots' } } } }), 0.06), { error: 'DataVolume.spec.storage.resources.requests.storage: invalid quantity "lots"' });
  assert.equal(claimForDataVolume(dv({ source: { blank: {} }, storage: {} }), 0.06), { error: 'DataVolume.spec.storage.resources.requests.storage: missing' });
});

test('source kinds', () => {
  assert.is(sourceKind(dv({ source: { http: { url: 'u' } } })), 'http');
  assert.is(sourceKind(dv({ source: { upload: {} } })), 'upload');
  assert.is(sourceKind(dv({ source: { pvc: { namespace: 'a', name: 'b' } } })), 'pvc');
  assert.is(sourceKind(dv({})), 'blank');
  assert.is(sourceKind(dv({ source: { s3: { url: 'u' } } })), 'unsupported');
});

test('status: phase, progress and conditions per claim and import state, as CDI writes them', () => {
  const http = dv({ source: { http: { url: 'u' } }, storage: {} });
  const upload = dv({ source: { upload: {} }, storage: {} });
  const clone = dv({ source: { pvc: { namespace: 'ns', name: 's' } }, storage: {} });
  const bound = { name: 'd', phase: 'Bound' };
  const rows: [string, DataVolume, { name: string; phase?: string } | undefined, ImportState, string, string, Record<string, string>][] = [
    ['no claim', http, undefined, { state: 'waiting' }, 'Pending', 'N/A', { Bound: 'False/NotFound/No PVC found', Ready: 'False//', Running: 'False//' }],
    ['claim pending', http, { name: 'd', phase: 'Pending' }, { state: 'waiting' }, 'Pending', 'N/A', { Bound: 'False/Pending/PVC d Pending', Ready: 'False//', Running: 'False//' }],
    ['bound, not started', http, bound, { state: 'waiting' }, 'ImportScheduled', 'N/A', { Bound: 'True/Bound/PVC d Bound', Ready: 'False//', Running: 'False//' }],
    ['importing', http, bound, { state: 'running', progress: '42.17%', restarts: 0 }, 'ImportInProgress', '42.17%', { Bound: 'True/Bound/PVC d Bound', Ready: 'False/TransferRunning/', Running: 'True/Pod is running/' }],
    ['between retries', http, bound, { state: 'running', restarts: 1, lastError: 'cut' }, 'ImportInProgress', 'N/A', { Bound: 'True/Bound/PVC d Bound', Ready: 'False//', Running: 'False/Error/cut' }],
    ['imported', http, bound, { state: 'succeeded', restarts: 0 }, 'Succeeded', '100.0%', { Bound: 'True/Bound/PVC d Bound', Ready: 'True//', Running: 'False/Completed/Import Complete' }],
    ['failed', http, bound, { state: 'failed', restarts: 3, reason: 'Error', message: 'boom' }, 'Failed', 'N/A', { Bound: 'True/Bound/PVC d Bound', Ready: 'False//', Running: 'False/Error/boom' }],
    ['upload waiting for data', upload, bound, { state: 'running', restarts: 0 }, 'UploadReady', 'N/A', { Bound: 'True/Bound/PVC d Bound', Ready: 'False/TransferRunning/', Running: 'True/Pod is running/' }],
    ['clone scheduled', clone, bound, { state: 'waiting' }, 'CloneScheduled', 'N/A', { Bound: 'True/Bound/PVC d Bound', Ready: 'False//', Running: 'False//' }],
    ['cloning', clone, bound, { state: 'running', restarts: 0 }, 'CloneInProgress', 'N/A', { Bound: 'True/Bound/PVC d Bound', Ready: 'False/TransferRunning/', Running: 'True/Pod is running/' }],
  ];
  for (const [name, d, claim, imp, phase, progress, conds] of rows) {
    const st = dataVolumeStatus(d, claim, imp, NOW);
    assert.is(st.phase, phase, name);
    assert.is(st.progress, progress, name);
    assert.equal(st.conditions?.map((c) => c.type), ['Bound', 'Ready', 'Running'], `${name}: CDI's order`);
    assert.equal(Object.fromEntries(st.conditions!.map((c) => [c.type, `${c.status}/${c.reason}/${c.message}`])), conds, name);
  }
  const failed = dataVolumeStatus(http, bound, { state: 'failed', restarts: 3, reason: 'Error', message: 'x' }, NOW);
  assert.is(failed.restartCount, 3);
  const specErr = dataVolumeStatus(http, undefined, { state: 'waiting' }, NOW, 'DataVolume.spec: missing pvc or storage');
  assert.is(specErr.phase, 'Failed');
  // An unchanged condition keeps its times; a new message only moves the heartbeat.
  const a = dataVolumeStatus(http, bound, { state: 'running', restarts: 0, progress: '1.00%' }, NOW);
  const b = dataVolumeStatus({ ...http, status: a }, bound, { state: 'running', restarts: 0, progress: '2.00%' }, '2026-11-26T18:00:05Z');
  assert.equal(b.conditions, a.conditions);
});

test('progress and retries', () => {
  assert.is(formatProgress(1, 3), '33.33%');
  assert.is(formatProgress(5, undefined), 'N/A');
  assert.is(formatProgress(9, 8), '100.00%');
  assert.equal(retryDecision(0, false, 3, 1000), { retry: true, afterMs: 1000 });
  assert.equal(retryDecision(2, false, 3, 1000), { retry: true, afterMs: 4000 });
  assert.equal(retryDecision(3, false, 3, 1000), { retry: false });
  assert.equal(retryDecision(0, true, 3, 1000), { retry: false }, 'a 404 is not retried');
});

const vm = (over: Partial<VirtualMachine['spec']> = {}, annotations?: Record<string, string>): VirtualMachine => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm', namespace: 'ns', uid: 'vmuid', ...(annotations ? { annotations } : {}) },
  spec: { runStrategy: 'Always', dataVolumeTemplates: [{ metadata: { name: 'root', labels: { a: 'b' } }, spec: { source: { pvc: { name: 'golden' } } as never, storage: { resources: { requests: { storage: '1Gi' } } } } }], template: { spec: { domain: { devices: {} }, priorityClassName: 'high', volumes: [{ name: 'root', dataVolume: { name: 'root' } }] } }, ...over },
} as VirtualMachine);

test('VM: the DataVolume of a template, readiness, printable status inputs', () => {
  const d = dataVolumeFromTemplate(vm().spec.dataVolumeTemplates![0]!, vm());
  assert.equal(d.metadata?.ownerReferences, [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'vm', uid: 'vmuid', controller: true, blockOwnerDeletion: true }]);
  assert.equal(d.metadata?.labels, { a: 'b', 'kubevirt.io/created-by': 'vmuid' });
  assert.equal(d.metadata?.annotations, { 'cdi.kubevirt.io/allowClaimAdoption': 'true' });
  assert.is(d.metadata?.namespace, 'ns');
  assert.is(d.spec.priorityClassName, 'high');
  assert.equal(d.spec.source?.pvc, { name: 'golden', namespace: 'ns' }, 'the clone source namespace defaults to the VM\'s');

  const withPhase = (phase: string, conditions?: DataVolume['status'] extends infer S ? S extends { conditions?: infer C } ? C : never : never) => (name: string) => (name === 'root' ? dv({}, { phase: phase as never, ...(conditions ? { conditions } : {}) }) : undefined);
  assert.equal(planDataVolumes(vm(), () => undefined).actions.map((a) => a.type), ['create']);
  assert.is(planDataVolumes(vm(), () => undefined).ready, false);
  assert.equal(planDataVolumes(vm(), withPhase('ImportInProgress')), { actions: [], ready: false });
  assert.equal(planDataVolumes(vm(), withPhase('Succeeded')), { actions: [], ready: true });
  assert.equal(planDataVolumes(vm(), withPhase('WaitForFirstConsumer')), { actions: [], ready: true });
  assert.equal(planDataVolumes(vm(), withPhase('Failed')), { actions: [{ type: 'failed', name: 'root' }], ready: false });

  const vols = vm().spec.template!.spec!.volumes;
  assert.is(dataVolumeProvisioning(vols, withPhase('ImportInProgress')), true);
  assert.is(dataVolumeProvisioning(vols, withPhase('Succeeded')), false);
  assert.is(dataVolumeProvisioning(vols, withPhase('WaitForFirstConsumer')), false, 'WFFC and unbound is not provisioning');
  assert.is(dataVolumeProvisioning(vols, () => undefined), false);
  assert.is(dataVolumeError(vols, withPhase('Failed')), 'DataVolume root is in Failed phase');
  assert.is(dataVolumeError(vols, withPhase('ImportInProgress', [{ type: 'Running', status: 'False', reason: 'Error', message: 'cut' }])), 'DataVolume root importer has stopped running due to an error: cut');
  assert.is(dataVolumeError(vols, withPhase('ImportInProgress')), undefined);
});

test('VMI: DataVolumes hold the launcher pod back until populated; a failed one fails the VMI', () => {
  const vmi = { spec: { domain: { devices: {} }, volumes: [{ name: 'a', dataVolume: { name: 'a' } }, { name: 'b', persistentVolumeClaim: { claimName: 'b' } }] } } as never;
  const at = (phase?: string) => (name: string) => (name === 'a' && phase !== undefined ? dv({}, { phase: phase as never }) : undefined);
  assert.equal(dataVolumesReadyForPod(vmi, at('ImportInProgress')), { ready: false, failed: false, waitingFor: 'a' });
  assert.equal(dataVolumesReadyForPod(vmi, at('Succeeded')), { ready: true, failed: false });
  assert.equal(dataVolumesReadyForPod(vmi, at('WaitForFirstConsumer')), { ready: true, failed: false });
  assert.equal(dataVolumesReadyForPod(vmi, at('Failed')), { ready: false, failed: true, waitingFor: 'a' });
  assert.equal(dataVolumesReadyForPod(vmi, at(undefined)), { ready: true, failed: false }, 'no DataVolume object: the claim alone decides');
});

test('upload tokens: one claim, five minutes, signed', () => {
  const key = Buffer.alloc(32, 7);
  const t0 = Date.parse(NOW);
  const tok = signUploadToken(key, 'ns', 'up', t0);
  assert.equal(verifyUploadToken(key, tok, t0 + 1000), { namespace: 'ns', pvc: 'up', exp: t0 + 5 * 60_000 });
  assert.equal(verifyUploadToken(key, tok, t0 + 5 * 60_000 + 1), { error: 'token expired' });
  assert.equal(verifyUploadToken(Buffer.alloc(32, 8), tok, t0), { error: 'invalid token signature' });
  const [payload, sig] = tok.split('.');
  const other = Buffer.from(JSON.stringify({ namespace: 'ns', pvc: 'other', exp: t0 + 1e9 })).toString('base64url');
  assert.equal(verifyUploadToken(key, `${other}.${sig}`, t0), { error: 'invalid token signature' }, 'a payload swapped under a valid signature');
  assert.equal(verifyUploadToken(key, payload!, t0), { error: 'malformed token' });
});

test("image-upload: the DataVolume virtctl creates", () => {
  assert.equal(uploadDataVolume({ name: 'u', namespace: 'ns', size: '1Gi', storageClass: 'local-path', accessMode: 'ReadWriteOnce', forceBind: true }), {
    apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume',
    metadata: { name: 'u', namespace: 'ns', annotations: { 'cdi.kubevirt.io/storage.bind.immediate.requested': '' } },
    spec: { source: { upload: {} }, storage: { resources: { requests: { storage: '1Gi' } }, storageClassName: 'local-path', accessModes: ['ReadWriteOnce'] } },
  });
});

test.run();

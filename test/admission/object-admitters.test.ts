// virt-api's VMI create/update, VM and VMIRS admitters as pure decisions: one row per branch, with
// KubeVirt's codes, messages and causes, and the stored object left as it came.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { FieldErrorType } from '../../src/api/field-error.ts';
import { admitVMICreate } from '../../src/admission/vmi-create-admitter.ts';
import { admitVMIUpdate } from '../../src/admission/vmi-update-admitter.ts';
import { admitVM } from '../../src/admission/vms-admitter.ts';
import { admitVMIRS } from '../../src/admission/vmirs-admitter.ts';
import { causesDenial } from '../../src/admission/response.ts';
import type { AdmissionResult } from '../../src/kube/admission.ts';
import { isKubeVirtOrAdmin, isKubeVirtServiceAccount } from '../../src/admission/kubevirt-webhooks.ts';

const config = defaultClusterConfig();
const spec = (extra: Record<string, unknown> = {}) => ({
  domain: { devices: { disks: [{ name: 'd', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '64Mi' } } },
  volumes: [{ name: 'd', containerDisk: { image: 'x' } }],
  ...extra,
});
const vmi = (s: object, meta: Record<string, unknown> = {}) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'a', namespace: 'ns', ...meta }, spec: s });
const vm = (s: object, run: Record<string, unknown>, meta: Record<string, unknown> = {}) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'a', namespace: 'ns', ...meta }, spec: { ...run, template: { spec: s } } });
const rs = (sel: object, labels: Record<string, string>, replicas = 1) => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', metadata: { name: 'a', namespace: 'ns' }, spec: { replicas, selector: sel, template: { metadata: { labels }, spec: spec() } } });

interface Want { code?: number; message?: string; field?: string; warnings?: string[] }
function check(name: string, got: AdmissionResult, want: Want | undefined): void {
  if (!want) return assert.is(got, undefined, `${name}: admitted without warnings`);
  if (want.warnings) return assert.equal(got, { warnings: want.warnings }, name);
  assert.ok(got && 'code' in got, `${name}: denied`);
  if (!got || !('code' in got)) return;
  assert.is(got.code, want.code, `${name}: code`);
  assert.is(got.message, want.message, `${name}: message`);
  if (want.field) assert.is(got.causes?.[0]?.field, want.field, `${name}: field`);
}

test('VMI create admitter: schema, spec after defaulting, reserved labels; the request object is not changed', () => {
  const user = { config, fromKubeVirtServiceAccount: false };
  const kubevirt = { config, fromKubeVirtServiceAccount: true };
  const rows: { name: string; obj: unknown; o?: typeof user; want?: Want }[] = [
    { name: 'valid', obj: vmi(spec()) },
    // A volume without a disk gets one from the mutator (setDefaultVolumeDisk): KubeVirt admits it.
    { name: 'volume without a disk', obj: vmi({ ...spec(), domain: { devices: {}, resources: { requests: { memory: '64Mi' } } } }) },
    { name: 'disk without a volume', obj: vmi(spec({ volumes: [] })), want: { code: 422, message: "spec.domain.devices.disks[0].Name 'd' not found.", field: 'spec.domain.devices.disks[0].name' } },
    { name: 'unknown disk bus', obj: vmi({ ...spec(), domain: { devices: { disks: [{ name: 'd', disk: { bus: 'floppy' } }] } } }), want: { code: 422, message: 'spec.domain.devices.disks[0].disk.bus: must be one of virtio, sata, scsi, usb (got "floppy")', field: 'spec.domain.devices.disks[0].disk.bus' } },
    { name: 'schema: domain not an object', obj: vmi({ domain: 5 }), want: { code: 422, message: 'spec.domain: must be an object (got number 5)', field: 'spec.domain' } },
    { name: 'reserved label from a user', obj: vmi(spec(), { labels: { 'kubevirt.io/nodeName': 'n1' } }), want: { code: 422, message: 'metadata.labels: creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited', field: 'metadata.labels' } },
    { name: 'reserved label from KubeVirt', obj: vmi(spec(), { labels: { 'kubevirt.io/nodeName': 'n1' } }), o: kubevirt },
  ];
  for (const r of rows) {
    const before = JSON.stringify(r.obj);
    check(r.name, admitVMICreate(r.obj, r.o ?? user), r.want);
    assert.is(JSON.stringify(r.obj), before, `${r.name}: the request object is unchanged`);
  }
});

test('VMI update admitter: spec and reserved labels only by KubeVirt; status and quantities by value pass', () => {
  const user = { config, fromKubeVirtServiceAccount: false };
  const kubevirt = { config, fromKubeVirtServiceAccount: true };
  const old = vmi(spec(), { labels: { 'kubevirt.io/nodeName': 'n1', app: 'x' } });
  const rows: { name: string; next: unknown; o?: typeof user; want?: Want }[] = [
    { name: 'status only', next: { ...old, status: { phase: 'Running' } } },
    { name: 'user label', next: { ...old, metadata: { ...old.metadata, labels: { 'kubevirt.io/nodeName': 'n1', app: 'y' } } } },
    { name: 'same memory, other spelling', next: { ...old, spec: spec({ domain: { ...spec().domain, resources: { requests: { memory: '65536Ki' } } } }) } },
    { name: 'spec by a user', next: { ...old, spec: spec({ hostname: 'h' }) }, want: { code: 422, message: 'spec: update of VMI object is restricted', field: 'spec' } },
    { name: 'spec by KubeVirt', next: { ...old, spec: spec({ hostname: 'h' }) }, o: kubevirt },
    { name: 'reserved label by a user', next: { ...old, metadata: { ...old.metadata, labels: { app: 'x' } } }, want: { code: 422, message: 'metadata.labels: modification of the following reserved kubevirt.io/ labels on a VMI object is prohibited', field: 'metadata.labels' } },
    { name: 'schema', next: { ...old, spec: { domain: 'x' } }, want: { code: 422, message: 'spec.domain: must be an object (got string "x")', field: 'spec.domain' } },
  ];
  for (const r of rows) check(r.name, admitVMIUpdate(old, r.next, r.o ?? user), r.want);
});

test('VM admitter: template after defaulting, running vs runStrategy, the spec.running warning, deleted VMs pass', () => {
  const o = { config, fromKubeVirtServiceAccount: false };
  const rows: { name: string; obj: unknown; want?: Want }[] = [
    { name: 'valid', obj: vm(spec(), { runStrategy: 'Halted' }) },
    { name: 'running: warning', obj: vm(spec(), { running: false }), want: { warnings: ['spec.running is deprecated, please use spec.runStrategy instead.'] } },
    { name: 'both', obj: vm(spec(), { running: false, runStrategy: 'Always' }), want: { code: 422, message: 'spec.running: Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead', field: 'spec.running' } },
    { name: 'neither', obj: vm(spec(), {}), want: { code: 422, message: 'spec.running: RunStrategy must be specified', field: 'spec.running' } },
    { name: 'unknown runStrategy', obj: vm(spec(), { runStrategy: 'Sometimes' }), want: { code: 422, message: 'spec.runStrategy: must be one of Always, Halted, Manual, RerunOnFailure, Once, WaitAsReceiver (got "Sometimes")', field: 'spec.runStrategy' } },
    { name: 'template disk without volume', obj: vm(spec({ volumes: [] }), { runStrategy: 'Halted' }), want: { code: 422, message: "spec.template.spec.domain.devices.disks[0].Name 'd' not found.", field: 'spec.template.spec.domain.devices.disks[0].name' } },
    { name: 'being deleted', obj: vm(spec(), {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }) },
  ];
  for (const r of rows) check(r.name, admitVM(r.obj, o), r.want);
});

test('VMIRS admitter: selector must match the template labels, replicas ≥ 0', () => {
  const rows: { name: string; obj: unknown; want?: Want }[] = [
    { name: 'valid', obj: rs({ matchLabels: { a: 'b' } }, { a: 'b' }) },
    { name: 'selector mismatch', obj: rs({ matchLabels: { a: 'b' } }, { a: 'c' }), want: { code: 422, message: 'spec.selector: selector does not match labels.', field: 'spec.selector' } },
    { name: 'negative replicas (schema)', obj: rs({ matchLabels: { a: 'b' } }, { a: 'b' }, -1), want: { code: 422, message: 'spec.replicas: must be greater than or equal to 0 (got -1)', field: 'spec.replicas' } },
  ];
  for (const r of rows) check(r.name, admitVMIRS(r.obj, config), r.want);
});

test('causes: the first ten kept, their messages joined, how many more said; each cause keeps its field', () => {
  const errors = Array.from({ length: 12 }, (_, i) => ({ field: `spec.f${i}`, type: FieldErrorType.Invalid, reason: `spec.f${i} is bad` }));
  const d = causesDenial(errors);
  assert.is(d.code, 422);
  assert.is(d.message, `${errors.slice(0, 10).map((e) => e.reason).join(', ')}, and 2 more validation errors`);
  assert.is(d.causes?.length, 10);
  assert.equal(d.causes?.[9], { reason: 'FieldValueInvalid', message: 'spec.f9 is bad', field: 'spec.f9' });
  // A message that does not name its field gets it in the denial's message; the cause keeps it apart.
  const r = causesDenial([{ field: 'spec.x', type: FieldErrorType.Required, reason: 'Required value' }]);
  assert.is(r.message, 'spec.x: Required value');
  assert.equal(r.causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.x' }]);
});

test('who counts as KubeVirt: its three service accounts in any namespace; with shared admin credentials also the admin and an unauthenticated server', () => {
  const rows: [string, { name: string; groups: string[] } | undefined, boolean, boolean][] = [
    ['virt-controller', { name: 'system:serviceaccount:kubevirt:kubevirt-controller', groups: [] }, true, true],
    ['virt-handler elsewhere', { name: 'system:serviceaccount:qvirt:kubevirt-handler', groups: [] }, true, true],
    ['virt-api', { name: 'system:serviceaccount:kubevirt:kubevirt-apiserver', groups: [] }, true, true],
    ['another service account', { name: 'system:serviceaccount:kubevirt:kubevirt-operator', groups: [] }, false, false],
    ['a user named like one', { name: 'kubevirt-controller', groups: [] }, false, false],
    ['the admin', { name: 'admin', groups: ['system:masters'] }, false, true],
    ['unauthenticated', undefined, false, true],
  ];
  for (const [name, user, sa, shared] of rows) {
    assert.is(isKubeVirtServiceAccount(user), sa, `${name}: service account`);
    assert.is(isKubeVirtOrAdmin(user), shared, `${name}: shared credentials`);
  }
});

test.run();

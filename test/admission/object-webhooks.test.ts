// virt-api's VMI/VM/VMIRS admitters inside the embedded API server, through real clients: qvirt's
// KubeClient (@kubernetes/client-node) and Debian's kubectl. A bad VM is refused naming the field
// with the webhook's name and causes; `spec.running` comes back as a `Warning:`; KubeVirt's example
// manifests all apply unchanged (HostDisk behind its gate, read from the KubeVirt CR); a VMI's spec
// may be changed by KubeVirt's service accounts only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ApiServer } from '../../src/apiserver/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { refused, startAdmissionCluster, type AdmissionCluster } from './lib.ts';
import { EXAMPLES_DIR } from '../api/fixtures.ts';

let api: ApiServer;
let admin: KubeClient;
let controller: KubeClient;
const tmp = tempDir('qobj');

let cluster: AdmissionCluster;
test.before(async () => {
  cluster = await startAdmissionCluster(join(tmp.path, 'api'));
  ({ api, admin, controller } = cluster);
});
test.after(async () => {
  await cluster?.stop();
  tmp.cleanup();
});

function kubectl(args: string[]) {
  const home = join(tmp.path, 'home');
  mkdirSync(home, { recursive: true });
  return execa('kubectl', args, { env: { KUBECONFIG: api.kubeconfigPath!, HOME: home }, reject: false, timeout: 60_000 });
}

const MEM_TOO_SMALL = (root: string) => `${root}.domain.resources.requests.memory '512Ki': must be greater than or equal to 1M.`;
const spec = () => ({ domain: { devices: { disks: [{ name: 'd', disk: { bus: 'virtio' } }] }, resources: { requests: { memory: '64Mi' } } }, volumes: [{ name: 'd', containerDisk: { image: 'x' } }] });

// The CRD's schema and CEL rules catch what they can first (bus values, running with runStrategy);
// these are what only the webhooks see (quantities' bounds, feature gates, who is asking).
test('a bad VM is refused by virtualmachine-validator naming the field, through the client and kubectl', async () => {
  const vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'bad', namespace: 'default' }, spec: { runStrategy: 'Halted', template: { spec: { ...spec(), domain: { ...spec().domain, resources: { requests: { memory: '512Ki' } } } } } } } as unknown as VirtualMachine;
  const e = await refused(admin.create(Resources.virtualMachines, vm));
  assert.is(e.code, 422);
  assert.is(e.message, `admission webhook "virtualmachine-validator.kubevirt.io" denied the request: ${MEM_TOO_SMALL('spec.template.spec')}`);
  assert.equal(e.causes, [{ reason: 'FieldValueInvalid', message: MEM_TOO_SMALL('spec.template.spec'), field: 'spec.template.spec.domain.resources.requests.memory' }]);

  const reserved = { ...vm, metadata: { name: 'bad2', namespace: 'default' }, spec: { runStrategy: 'Halted', template: { metadata: { labels: { 'kubevirt.io/nodeName': 'n1' } }, spec: spec() } } };
  const file = join(tmp.path, 'bad2.json');
  writeFileSync(file, JSON.stringify(reserved));
  const r = await kubectl(['apply', '-f', file]);
  assert.is.not(r.exitCode, 0);
  // kubectl prints a 422 with causes as `The request is invalid: <field>: <message>`, as against virt-api.
  assert.match(r.stderr, 'The request is invalid: spec.template.metadata.labels: creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited');
  // Dry-run refuses the same way, and nothing was stored.
  const dry = await kubectl(['create', '--dry-run=server', '-f', file]);
  assert.is.not(dry.exitCode, 0);
  assert.match(dry.stderr, 'The request is invalid: spec.template.metadata.labels: creation of the following reserved');
  assert.is((await admin.list(Resources.virtualMachines, { namespace: 'default' })).items.length, 0);
});

test('a VMI create is validated as KubeVirt\'s mutator defaults it, and stored as sent', async () => {
  // No disk for the volume: the mutator adds one, so KubeVirt admits it; the stored spec has none.
  const vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'nodisk', namespace: 'default' }, spec: { ...spec(), domain: { devices: {}, resources: { requests: { memory: '64Mi' } } } } } as unknown as VirtualMachineInstance;
  const created = await admin.create(Resources.virtualMachineInstances, vmi);
  assert.equal(created.spec.domain.devices, {});
  const bad = { ...vmi, metadata: { name: 'tiny', namespace: 'default' }, spec: { ...spec(), domain: { ...spec().domain, resources: { requests: { memory: '512Ki' } } } } } as unknown as VirtualMachineInstance;
  const e = await refused(admin.create(Resources.virtualMachineInstances, bad));
  assert.is(e.code, 422);
  assert.is(e.message, `admission webhook "virtualmachineinstances-create-validator.kubevirt.io" denied the request: ${MEM_TOO_SMALL('spec')}`);
  assert.is(e.causes[0]?.field, 'spec.domain.resources.requests.memory');
});

test('a VMI spec update is refused for a user, admitted for virt-controller; status updates pass', async () => {
  const vmi = await admin.create(Resources.virtualMachineInstances, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'upd', namespace: 'default' }, spec: spec() } as unknown as VirtualMachineInstance);
  const e = await refused(admin.update(Resources.virtualMachineInstances, { ...vmi, spec: { ...vmi.spec, hostname: 'h' } }));
  assert.is(e.code, 422);
  assert.is(e.message, 'admission webhook "virtualmachineinstances-update-validator.kubevirt.io" denied the request: spec: update of VMI object is restricted');
  const patched = await admin.patch(Resources.virtualMachineInstances, 'default', 'upd', { status: { phase: 'Scheduling' } }, 'merge') as VirtualMachineInstance;
  assert.is(patched.status?.phase, 'Scheduling');
  const byController = await controller.patch(Resources.virtualMachineInstances, 'default', 'upd', { spec: { hostname: 'h' } }, 'merge') as VirtualMachineInstance;
  assert.is(byController.spec.hostname, 'h');
});

test('KubeVirt\'s example manifests apply unchanged with kubectl (HostDisk from the KubeVirt CR); spec.running is a Warning', async () => {
  const files = readdirSync(EXAMPLES_DIR).filter((f) => f.endsWith('.yaml')).sort();
  const hostDisk = await kubectl(['apply', '-n', 'default', '-f', join(EXAMPLES_DIR, 'vmi-host-disk.yaml')]);
  assert.is.not(hostDisk.exitCode, 0);
  assert.match(hostDisk.stderr, 'HostDisk feature gate is not enabled');
  await admin.create({ group: 'kubevirt.io', version: 'v1', plural: 'kubevirts', kind: 'KubeVirt', namespaced: true }, { apiVersion: 'kubevirt.io/v1', kind: 'KubeVirt', metadata: { name: 'kubevirt', namespace: 'default' }, spec: { configuration: { developerConfiguration: { featureGates: ['HostDisk'] } } } });
  assert.is((await kubectl(['create', 'namespace', 'ex'])).exitCode, 0);
  // The migration needs its VMI: apply it last.
  for (const f of [...files.filter((x) => x !== 'migration-job.yaml'), 'migration-job.yaml']) {
    const r = await kubectl(['apply', '-n', 'ex', '-f', join(EXAMPLES_DIR, f)]);
    assert.is(r.exitCode, 0, `${f}: ${r.stderr}`);
  }
  const running = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'legacy', namespace: 'default' }, spec: { running: false, template: { spec: spec() } } };
  const file = join(tmp.path, 'legacy.json');
  writeFileSync(file, JSON.stringify(running));
  const r = await kubectl(['apply', '-f', file]);
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stderr, 'Warning: spec.running is deprecated, please use spec.runStrategy instead.');
});

test.run();

// The VM admitter with instance types and preferences, inside the embedded API server through
// Debian's kubectl and qvirt's client, and behind a real kube-apiserver's AdmissionReview: KubeVirt's
// instancetype and preference examples apply unchanged and answer to KubeVirt's short names; KubeVirt's
// vm-cirros-csmall example (its template sets memory.guest) is refused with KubeVirt's conflict
// message at the field's path; a VM naming a missing instance type is admitted (the VM controller
// reports it); matchers and preference requirements are refused as KubeVirt's webhooks refuse them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import yaml from 'js-yaml';
import type { ApiServer } from '../../src/apiserver/index.ts';
import type { KubeClient, KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { defaultClusterConfig } from '../../src/api/cluster-config.ts';
import { kubeVirtObjectWebhooks } from '../../src/admission/object-webhooks.ts';
import { reviewThrough } from '../../src/admission/webhook-server.ts';
import { sourceFromFetched } from '../../src/api/instancetype/find.ts';
import type { VirtualMachine } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { refused, startAdmissionCluster, type AdmissionCluster } from './lib.ts';
import { INSTANCETYPE_EXAMPLES_DIR } from '../api/fixtures.ts';

let api: ApiServer;
let admin: KubeClient;
const tmp = tempDir('qit');
let cluster: AdmissionCluster;

test.before(async () => {
  cluster = await startAdmissionCluster(join(tmp.path, 'api'));
  ({ api, admin } = cluster);
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
const example = (f: string) => join(INSTANCETYPE_EXAMPLES_DIR, f);
const CONFLICT = 'VM field(s) spec.template.spec.domain.memory.guest conflicts with selected instance type';

/** KubeVirt's vm-cirros-csmall without the template memory that conflicts, under another name. */
function vmLike(name: string, matchers: Record<string, unknown>): VirtualMachine {
  const vm = yaml.load(readFileSync(example('vm-cirros-csmall.yaml'), 'utf8')) as VirtualMachine;
  vm.metadata = { name, namespace: 'default' };
  delete vm.spec.template.spec!.domain.memory;
  delete vm.spec.template.spec!.domain.resources;
  delete vm.spec.instancetype;
  return { ...vm, spec: { ...vm.spec, ...matchers } };
}

test('KubeVirt\'s instancetype and preference examples apply unchanged with kubectl and answer to vmf, vmcf, vmpref, vmp', async () => {
  for (const f of ['csmall.yaml', 'clarge.yaml', 'cluster-csmall.yaml', 'virtio.yaml', 'windows.yaml']) {
    const r = await kubectl(['apply', '-n', 'default', '-f', example(f)]);
    assert.is(r.exitCode, 0, `${f}: ${r.stderr}`);
    assert.match(r.stdout, /created/);
  }
  const names = async (...args: string[]) => (await kubectl(['get', ...args, '-o', 'name'])).stdout.trim().split('\n');
  assert.equal(await names('vmf', '-n', 'default'), ['virtualmachineinstancetype.instancetype.kubevirt.io/clarge', 'virtualmachineinstancetype.instancetype.kubevirt.io/csmall']);
  assert.equal(await names('vmcf'), ['virtualmachineclusterinstancetype.instancetype.kubevirt.io/cluster-csmall']);
  assert.equal(await names('vmpref', '-n', 'default'), ['virtualmachinepreference.instancetype.kubevirt.io/virtio', 'virtualmachinepreference.instancetype.kubevirt.io/windows']);
  assert.equal(await names('vmp', '-n', 'default'), await names('vmpref', '-n', 'default'));
  const table = (await kubectl(['get', 'vmf', '-n', 'default'])).stdout.split('\n')[0]!.trim().split(/\s+/);
  assert.equal(table, ['NAME', 'AGE'], 'no printer columns: NAME and AGE, as KubeVirt\'s CRD');
});

test('KubeVirt\'s vm-cirros-csmall (its template sets memory.guest) is refused: the conflict at the field, through kubectl and the client', async () => {
  const r = await kubectl(['apply', '-n', 'default', '-f', example('vm-cirros-csmall.yaml')]);
  assert.is.not(r.exitCode, 0);
  assert.match(r.stderr, `The request is invalid: spec.template.spec.domain.memory.guest: ${CONFLICT}`);
  const vm = yaml.load(readFileSync(example('vm-cirros-clarge-virtio.yaml'), 'utf8')) as VirtualMachine;
  const e = await refused(admin.create(Resources.virtualMachines, { ...vm, metadata: { ...vm.metadata, namespace: 'default' } } as VirtualMachine & KubeObject));
  assert.is(e.code, 422);
  assert.is(e.message, `admission webhook "virtualmachine-validator.kubevirt.io" denied the request: ${CONFLICT}`);
  assert.equal(e.causes, [{ reason: 'FieldValueInvalid', message: CONFLICT, field: 'spec.template.spec.domain.memory.guest' }]);
  assert.is((await admin.list(Resources.virtualMachines, { namespace: 'default' })).items.length, 0);
});

test('admitted: a VM the instance type sizes; a VM naming one that does not exist (the VM controller reports it)', async () => {
  await admin.create(Resources.virtualMachines, vmLike('sized', { instancetype: { kind: 'VirtualMachineInstancetype', name: 'clarge' }, preference: { kind: 'VirtualMachinePreference', name: 'windows' } }) as VirtualMachine & KubeObject);
  await admin.create(Resources.virtualMachines, vmLike('missing', { instancetype: { name: 'nonexistent' } }) as VirtualMachine & KubeObject);
  const cpu = vmLike('cpu', { instancetype: { name: 'cluster-csmall' } });
  cpu.spec.template.spec!.domain.cpu = { cores: 2 };
  const e = await refused(admin.create(Resources.virtualMachines, cpu as VirtualMachine & KubeObject));
  assert.equal(e.causes, [{ reason: 'FieldValueInvalid', message: 'VM field(s) spec.template.spec.domain.cpu.cores conflicts with selected instance type', field: 'spec.template.spec.domain.cpu.cores' }]);
});

test('the matchers and the preference\'s requirements, as KubeVirt\'s webhooks refuse them', async () => {
  let e = await refused(admin.create(Resources.virtualMachines, vmLike('noname', { instancetype: { kind: 'VirtualMachineInstancetype' } }) as VirtualMachine & KubeObject));
  assert.equal(e.causes, [{ reason: 'FieldValueNotFound', message: 'Either Name or InferFromVolume should be provided within the InstancetypeMatcher', field: 'spec.instancetype' }]);
  await admin.create(Resources.virtualMachinePreferences, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachinePreference', metadata: { name: 'big-only', namespace: 'default' }, spec: { requirements: { cpu: { guest: 4 } } } } as KubeObject);
  e = await refused(admin.create(Resources.virtualMachines, vmLike('small', { instancetype: { kind: 'VirtualMachineInstancetype', name: 'csmall' }, preference: { kind: 'VirtualMachinePreference', name: 'big-only' } }) as VirtualMachine & KubeObject));
  assert.equal(e.causes, [{ reason: 'FieldValueNotFound', message: 'failure checking preference requirements: insufficient CPU resources of 1 vCPU provided by instance type, preference requires 4 vCPU', field: 'spec.instancetype' }]);
  // An update that renames the matcher but keeps the old revision.
  const vm = await admin.get<VirtualMachine & KubeObject>(Resources.virtualMachines, 'default', 'sized');
  const pinned = await admin.update(Resources.virtualMachines, { ...vm, spec: { ...vm.spec, instancetype: { ...vm.spec.instancetype, revisionName: 'r1' } } });
  e = await refused(admin.update(Resources.virtualMachines, { ...pinned, spec: { ...pinned.spec, instancetype: { ...pinned.spec.instancetype, name: 'csmall' } } }));
  assert.equal(e.causes, [{ reason: 'FieldValueInvalid', message: 'the Matcher Name has been updated without updating the RevisionName', field: 'spec.instancetype.revisionName' }]);
});

test('instance type and preference admitters: overcommit with hugepages and unknown topologies refused; a deprecated topology warns', async () => {
  const it = (name: string, memory: object) => ({ apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineClusterInstancetype', metadata: { name }, spec: { cpu: { guest: 1 }, memory: { guest: '1Gi', ...memory } } }) as KubeObject;
  let e = await refused(admin.create(Resources.virtualMachineClusterInstancetypes, it('huge', { overcommitPercent: 10, hugepages: { pageSize: '2Mi' } })));
  assert.equal([e.code, e.message], [422, 'admission webhook "virtualmachineclusterinstancetype-validator.instancetype.kubevirt.io" denied the request: spec.memory.overcommitPercent and spec.memory.hugepages should not be requested together.']);
  await admin.create(Resources.virtualMachineClusterInstancetypes, it('overcommitted', { overcommitPercent: 10 }));
  const pref = (name: string, cpu: object) => ({ apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachinePreference', metadata: { name, namespace: 'default' }, spec: { cpu } }) as KubeObject;
  e = await refused(admin.create(Resources.virtualMachinePreferences, pref('odd', { preferredCPUTopology: 'diagonal' })));
  assert.equal(e.causes, [{ reason: 'FieldValueInvalid', message: 'unknown preferredCPUTopology diagonal', field: 'spec.cpu.preferredCPUTopology' }]);
  e = await refused(admin.create(Resources.virtualMachinePreferences, pref('ratio', { preferredCPUTopology: 'spread', spreadOptions: { across: 'CoresThreads', ratio: 4 } })));
  assert.equal(e.causes, [{ reason: 'FieldValueInvalid', message: 'only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs over cores and threads', field: 'spec.cpu.spreadOptions.ratio' }]);
  const file = join(tmp.path, 'old.yaml');
  writeFileSync(file, JSON.stringify(pref('old', { preferredCPUTopology: 'preferCores' })));
  const r = await kubectl(['apply', '-f', file]);
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stderr, 'Warning: PreferredCPUTopology preferCores is deprecated for removal in a future release, please use cores instead');
});

test('behind a real kube-apiserver: the VM admitter reads what the VM names, then refuses a conflict the same way', async () => {
  const webhook = kubeVirtObjectWebhooks(() => false).find((w) => w.path === '/virtualmachines-validate')!;
  const vm = yaml.load(readFileSync(example('vm-cirros-csmall.yaml'), 'utf8')) as VirtualMachine;
  vm.metadata = { ...vm.metadata, namespace: 'ns' };
  const body = {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: 'u1', kind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' }, resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachines' },
      requestKind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' }, requestResource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachines' },
      name: 'vm-cirros-csmall', namespace: 'ns', operation: 'CREATE', userInfo: { username: 'alice', groups: ['system:authenticated'] }, object: vm, oldObject: null, dryRun: false,
    },
  };
  const asked: string[] = [];
  const lookup = async (v: VirtualMachine) => {
    asked.push(`${v.metadata?.namespace}/${v.spec.instancetype?.name}`);
    return sourceFromFetched(new Map([['virtualmachineinstancetypes/ns/csmall', { metadata: { name: 'csmall' }, spec: { cpu: { guest: 1 }, memory: { guest: '128Mi' } } }]]));
  };
  const r = await reviewThrough(webhook, body, defaultClusterConfig(), lookup) as { response: { allowed: boolean; status?: { code: number; message: string } } };
  assert.equal(asked, ['ns/csmall']);
  assert.equal([r.response.allowed, r.response.status?.code, r.response.status?.message], [false, 422, CONFLICT]);
  const none = await reviewThrough(webhook, body, defaultClusterConfig(), async () => sourceFromFetched(new Map())) as { response: { allowed: boolean } };
  assert.is(none.response.allowed, true, 'the instance type not found: admitted');
});

test.run();

// KubeVirt's CRDs as qvirt generates them (deploy/crds/, from scripts/gen-crds.ts): the server
// accepts them (every CEL rule compiles), serves VirtualMachines and VirtualMachineInstances,
// validates them (schema and CEL), prints their columns for kubectl, and kubectl applies an
// unchanged KubeVirt example manifest.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { execa } from 'execa';
import { writeKubeconfig } from '../../src/apiserver/index.ts';
import { apiError, createCrd, raw, startTestServer, type TestServer } from './lib.ts';

const CRD_DIR = new URL('../../deploy/crds/', import.meta.url).pathname;
const TABLE = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' };

const vm = (name: string, disks = ['containerdisk', 'cloudinitdisk']) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name },
  spec: {
    runStrategy: 'Always',
    template: {
      metadata: { labels: { 'kubevirt.io/domain': name } },
      spec: {
        domain: { devices: { disks: disks.map((d) => ({ name: d, disk: { bus: 'virtio' } })), interfaces: [{ name: 'default', masquerade: {} }] }, resources: { requests: { memory: '64M' } } },
        networks: [{ name: 'default', pod: {} }],
        volumes: [
          { name: 'containerdisk', containerDisk: { image: 'quay.io/kubevirt/cirros-container-disk-demo' } },
          { name: 'cloudinitdisk', cloudInitNoCloud: { userDataBase64: 'SGkuXG4=' } },
        ],
      },
    },
  },
});

let s: TestServer;
const kv = (plural: string) => ({ group: 'kubevirt.io', version: 'v1', namespace: 'default', plural });
const kvn = (plural: string, name: string) => ({ ...kv(plural), name });

test.before(async () => {
  s = await startTestServer();
});
test.after(async () => { await s.close(); });

test('every generated KubeVirt CRD is accepted and established', async () => {
  const files = readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'));
  assert.ok(files.includes('virtualmachines.kubevirt.io.yaml') && files.includes('virtualmachineinstances.kubevirt.io.yaml'), files.join(','));
  for (const f of files) {
    const r = await createCrd(s.api.url, yaml.load(readFileSync(join(CRD_DIR, f), 'utf8')));
    assert.is(r.status, 201, `${f}: ${JSON.stringify(r.json).slice(0, 500)}`);
  }
  const rl = (await raw(`${s.api.url}/apis/kubevirt.io/v1`)).json as { resources: { name: string; shortNames?: string[] }[] };
  const vms = rl.resources.find((r) => r.name === 'virtualmachines');
  assert.ok(vms?.shortNames?.includes('vm'), JSON.stringify(vms));
});

test('a VirtualMachine is created, validated by its CEL rules, and printed with its columns', async () => {
  const created = (await s.custom.createNamespacedCustomObject({ ...kv('virtualmachines'), body: vm('testvm') })) as { metadata: { generation: number }; spec: { template: { metadata: { labels: Record<string, string> } } } };
  assert.is(created.metadata.generation, 1);
  assert.is(created.spec.template.metadata.labels['kubevirt.io/domain'], 'testvm', 'template metadata is kept');
  const dup = await apiError(() => s.custom.createNamespacedCustomObject({ ...kv('virtualmachines'), body: vm('dupvm', ['containerdisk', 'containerdisk']) }));
  assert.is(dup.code, 422);
  const cause = dup.status.details!.causes!.find((c) => /disk names must be unique/.test(c.message));
  assert.ok(cause, JSON.stringify(dup.status));
  assert.is(cause!.field, 'spec.template.spec.domain.devices.disks');
  await s.custom.patchNamespacedCustomObjectStatus({ ...kvn('virtualmachines', 'testvm'), body: { status: { printableStatus: 'Running', ready: true, conditions: [{ type: 'Ready', status: 'True' }] } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const t = (await raw(`${s.api.url}/apis/kubevirt.io/v1/namespaces/default/virtualmachines`, { headers: TABLE })).json as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
  assert.equal(t.columnDefinitions.map((c) => c.name), ['Name', 'Age', 'Status', 'Ready']);
  assert.equal([t.rows[0]!.cells[0], t.rows[0]!.cells[2], t.rows[0]!.cells[3]], ['testvm', 'Running', 'True']);
});

test('a VirtualMachineInstance (no status subresource) keeps status written through the main resource', async () => {
  const tmpl = vm('testvm').spec.template;
  await s.custom.createNamespacedCustomObject({ ...kv('virtualmachineinstances'), body: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'testvm' }, spec: tmpl.spec } });
  const got = (await s.custom.getNamespacedCustomObject(kvn('virtualmachineinstances', 'testvm'))) as Record<string, unknown>;
  const updated = { ...got, status: { phase: 'Running', nodeName: 'node1', interfaces: [{ name: 'default', ipAddress: '10.0.2.2' }], conditions: [{ type: 'Ready', status: 'True' }, { type: 'LiveMigratable', status: 'False' }] } };
  await s.custom.replaceNamespacedCustomObject({ ...kvn('virtualmachineinstances', 'testvm'), body: updated });
  const t = (await raw(`${s.api.url}/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances`, { headers: TABLE })).json as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
  assert.equal(t.columnDefinitions.map((c) => c.name), ['Name', 'Age', 'Phase', 'IP', 'NodeName', 'Ready', 'Live-Migratable', 'Paused']);
  assert.equal(t.rows[0]!.cells.filter((_, i) => i !== 1), ['testvm', 'Running', '10.0.2.2', 'node1', 'True', 'False', null]);
});

test('a deprecated version warns on every request (VirtualMachineInstancePresets), kubectl prints it; others do not', async () => {
  const want = '299 - "kubevirt.io/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2."';
  const base = `${s.api.url}/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstancepresets`;
  const preset = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstancePreset', metadata: { name: 'small' }, spec: { selector: { matchLabels: { 'kubevirt.io/size': 'small' } }, domain: { resources: { requests: { memory: '64M' } } } } };
  const created = await raw(base, { method: 'POST', body: preset });
  assert.is(created.status, 201, created.text);
  assert.is(created.headers.get('warning'), want);
  assert.is((await raw(`${base}/small`)).headers.get('warning'), want);
  assert.is((await raw(base)).headers.get('warning'), want);
  // With another warning in the same response, both (unknown-field warning from fieldValidation=Warn).
  const both = await raw(`${base}?fieldValidation=Warn`, { method: 'POST', body: { ...preset, metadata: { name: 'small2' }, bogus: 1 } });
  assert.is(both.status, 201, both.text);
  assert.match(both.headers.get('warning') ?? '', /^299 - "kubevirt\.io\/v1 VirtualMachineInstancePresets is now deprecated.*", 299 - "unknown field \\"bogus\\""$/);
  assert.is((await raw(`${base}/nope`)).headers.get('warning'), want, 'an error answer warns too');
  assert.is((await raw(`${s.api.url}/apis/kubevirt.io/v1/namespaces/default/virtualmachines`)).headers.get('warning'), null);
  const dir = join(s.dir, 'kc-presets');
  const env = { KUBECONFIG: writeKubeconfig(dir, { server: s.api.url }), HOME: dir };
  const get = await execa('kubectl', ['get', 'virtualmachineinstancepresets.kubevirt.io'], { env, reject: false });
  assert.is(get.exitCode, 0, get.stderr);
  assert.match(get.stderr, /^Warning: kubevirt\.io\/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2\.$/m);
  await raw(`${base}/small`, { method: 'DELETE' });
  await raw(`${base}/small2`, { method: 'DELETE' });
});

test('kubectl applies an unchanged KubeVirt example manifest and prints VMs', async () => {
  const dir = join(s.dir, 'kc');
  const kubeconfig = writeKubeconfig(dir, { server: s.api.url });
  const manifest = join(dir, 'vm.yaml');
  writeFileSync(manifest, yaml.dump(vm('kubectl-vm')));
  const env = { KUBECONFIG: kubeconfig, HOME: dir };
  const apply = await execa('kubectl', ['apply', '-f', manifest], { env, reject: false });
  assert.is(apply.exitCode, 0, apply.stderr);
  assert.match(apply.stdout, /virtualmachine.kubevirt.io\/kubectl-vm created/);
  const get = await execa('kubectl', ['get', 'vms'], { env, reject: false });
  assert.is(get.exitCode, 0, get.stderr);
  assert.match(get.stdout.split('\n')[0]!, /^NAME\s+AGE\s+STATUS\s+READY$/);
  assert.match(get.stdout, /^kubectl-vm\s+\d+s\s*$/m);
  const del = await execa('kubectl', ['delete', 'vm', 'kubectl-vm'], { env, reject: false });
  assert.match(del.stdout, /virtualmachine.kubevirt.io "kubectl-vm" deleted/);
});

test.run();

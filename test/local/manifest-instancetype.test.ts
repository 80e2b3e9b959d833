// `qvirt run` of a VirtualMachine naming an instance type and preference: without a cluster they
// are read from the same file (KubeVirt's own examples, concatenated), and the VMI is made as the VM
// controller makes it — sized by the instance type, defaulted by the preference; one the file does
// not hold, or a template that conflicts, is refused with KubeVirt's words.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { loadVmiManifest, ManifestError } from '../../src/local/manifest.ts';
import { INSTANCETYPE_EXAMPLES_DIR } from '../api/fixtures.ts';
import { tempDir } from '../lib/tmp.ts';

const t = tempDir('qman');
test.after(() => t.cleanup());
const example = (f: string) => readFileSync(join(INSTANCETYPE_EXAMPLES_DIR, f), 'utf8');
const file = (name: string, ...docs: string[]) => { const p = join(t.path, name); writeFileSync(p, docs.join('\n')); return p; };
const refusal = async (p: string) => { try { await loadVmiManifest(p); } catch (e) { return e instanceof ManifestError ? e.errors : e; } return undefined; };

test('KubeVirt\'s clarge and virtio beside a VM naming them: the VMI has 4 vCPUs, 2 GiB, virtio disks and NIC, the reference annotations', async () => {
  const vm = yaml.load(example('vm-cirros-clarge-virtio.yaml')) as Record<string, any>;
  delete vm.spec.template.spec.domain.memory;
  const vmi = await loadVmiManifest(file('ok.yaml', example('clarge.yaml'), example('virtio.yaml'), '---', yaml.dump(vm)));
  assert.equal([vmi.spec.domain.cpu?.sockets, vmi.spec.domain.cpu?.cores, vmi.spec.domain.memory?.guest], [4, 1, '2Gi']);
  assert.equal(vmi.spec.domain.devices.disks?.map((d) => d.disk?.bus), ['virtio', 'virtio']);
  assert.equal(vmi.spec.domain.devices.interfaces?.map((i) => i.model), ['virtio']);
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/instancetype-name'], 'clarge');
  assert.is(vmi.metadata?.annotations?.['kubevirt.io/preference-name'], 'virtio');
});

test('refused: an instance type the file does not hold; KubeVirt\'s vm-cirros-csmall, whose template sets memory.guest', async () => {
  assert.equal(await refusal(file('missing.yaml', example('vm-cirros-csmall.yaml'))), [
    'virtualmachineinstancetypes.instancetype.kubevirt.io "csmall" not found (without a cluster, the instance type and preference a VirtualMachine names are read from the same file)',
  ]);
  assert.equal(await refusal(file('conflict.yaml', example('csmall.yaml'), example('vm-cirros-csmall.yaml'))), [
    'spec.template.spec.domain.memory.guest: VM field(s) spec.template.spec.domain.memory.guest conflicts with selected instance type',
  ]);
});

test.run();

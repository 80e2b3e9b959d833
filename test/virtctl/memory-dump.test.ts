// KubeVirt's own virtctl v1.9.0 `memory-dump` against the local mode, asserted on what it did:
// `get --create-claim` makes the claim of the size virt-api asks for and the guest's memory ends up
// in it as an ELF core (file name and times in the VM's status.memoryDumpRequest, the claim
// annotated with the file, the volume out of the VMI again); `get` without a claim dumps again into
// the associated claim (the older dump replaced); `remove` dissociates the claim from VM and VMI;
// virt-api's refusals (a claim too small, another claim while one is associated, nothing to remove)
// are virtctl's error messages. `download` / `get --output` need a VirtualMachineExport, which qvirt
// does not serve: virtctl says the resource is not found.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { elfHeader } from '../lib/elf-header.ts';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { VirtualMachine } from '../../src/api/types.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { Informer } from '../../src/kube/informer.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { LOCAL_PATH_ANNOTATION } from '../../src/kube/local-path.ts';
import { virtctl, type VirtctlResult } from '../lib/virtctl.ts';
import { tempDir } from '../lib/tmp.ts';
import { eventually, getVm, getVmi, runningVmi, startEnv, testVm, type Env } from './lib.ts';

let env!: Env;
let watch: Informer<VirtualMachine> | undefined;
test.before(async () => { env = await startEnv('qvmd'); });
test.after(async () => { watch?.stop(); await env?.stop(); });

const run = (...args: string[]): Promise<VirtctlResult> => virtctl(env.local.kubeconfig, args);
const MiB = 1024 * 1024;

interface Claim extends KubeObject { spec?: { resources?: { requests?: { storage?: string } }; accessModes?: string[] } }
const getClaim = (name: string) => env.local.client.get<Claim>(Resources.persistentVolumeClaims, 'default', name);

const request = async () => (await getVm(env, 'vmd')).status?.memoryDumpRequest;
const completed = (notFile?: string) => eventually(async () => {
  const r = await request();
  if (r?.phase === 'Failed') throw new Error(`the memory dump failed: ${r.message}`);
  return r?.phase === 'Completed' && r.fileName !== notFile ? r : undefined;
}, 120_000, 'status.memoryDumpRequest Completed').catch(async (err: Error) => {
  // Say where it stood: the request and the dump volume's status on the VMI.
  const vmi = await getVmi(env, 'vmd').catch(() => undefined);
  throw new Error(`${err.message}; request ${JSON.stringify(await request().catch(() => undefined))}; volume status ${JSON.stringify(vmi?.status?.volumeStatus?.filter((v) => v.memoryDumpVolume || v.hotplugVolume))}`);
});

test('virtctl memory-dump get / get again / remove', async () => {
  await env.local.client.create(Resources.virtualMachines, testVm('vmd', 'Always'));
  const vmi = await runningVmi(env, 'vmd');

  // Refusals first, while nothing is associated.
  await env.local.client.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'small', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } } as Claim);
  let r = await run('memory-dump', 'get', 'vmd', '--claim-name=small');
  assert.is(r.code, 1);
  assert.match(r.err, 'error dumping vm memory, Operation cannot be fulfilled on persistentvolumeclaim.kubevirt.io "small": pvc size [67109k] should be bigger then [309Mi]');
  r = await run('memory-dump', 'remove', 'vmd');
  assert.is(r.code, 1);
  assert.match(r.err, 'error removing memory dump association, Operation cannot be fulfilled on virtualmachine.kubevirt.io "vmd": can\'t remove memory dump association for vm vmd, no association found');

  // Every phase the request goes through, as a watch of the VM sees them.
  const phases: string[] = [];
  watch = new Informer<VirtualMachine>(env.local.client, Resources.virtualMachines, { log: componentLogger('test', { level: 'error' }) });
  watch.on('update', (_o, vm) => {
    const p = vm.metadata?.name === 'vmd' ? vm.status?.memoryDumpRequest?.phase : undefined;
    if (p && phases.at(-1) !== p) phases.push(p);
  });
  await watch.start();

  // get --create-claim: the claim virtctl creates is bound by the local-path provisioner. virtctl
  // sizes it with the filesystem overhead of the local mode's CDIConfig (CDI's 6 %: 192Mi guest →
  // 310Mi; virt-api's own floor stays 309Mi, KubeVirt's 5.5 %).
  r = await run('memory-dump', 'get', 'vmd', '--claim-name=dump-claim', '--create-claim');
  assert.is(r.code, 0, r.err);
  assert.match(r.out, 'PVC default/dump-claim created\n');
  assert.match(r.out, 'Successfully submitted memory dump request of VM vmd\n');
  const claim = await getClaim('dump-claim');
  assert.equal([claim.spec?.resources?.requests?.storage, claim.spec?.accessModes], ['310Mi', ['ReadWriteOnce']]);
  const first = await completed();
  // The watch sees Completed with its next event, which may come after the GET above: wait for it.
  await eventually(() => phases.at(-1) === 'Completed', 30_000, `the watch to see Completed (seen: ${phases.join(', ')})`);
  watch.stop();
  assert.equal(phases, ['Associating', 'InProgress', 'Unmounting', 'Completed'], 'the phases of KubeVirt\'s memory dump');
  assert.match(first.fileName ?? '', /^vmd-dump-claim-\d{8}-\d{6}\.memory\.dump$/);
  assert.ok(first.startTimestamp && first.endTimestamp, 'start and end of the dump recorded');
  const dir = (await getClaim('dump-claim')).metadata?.annotations?.[LOCAL_PATH_ANNOTATION];
  assert.ok(dir, 'the claim has its local path');
  const file = join(dir, first.fileName!);
  assert.equal(elfHeader(file), { magic: '\x7fELF', cls: 2, type: 4 }, 'an ELF64 core file');
  const size = statSync(file).size;
  // The guest's RAM and what else is mapped as RAM (the VGA framebuffer's 16 MiB, firmware ROMs), plus headers.
  assert.ok(size >= 192 * MiB && size < 224 * MiB, `a dump of a 192 MiB guest is ${size} bytes`);
  assert.is((await getClaim('dump-claim')).metadata?.annotations?.['kubevirt.io/memory-dump'], first.fileName, 'the claim names its dump');
  const after = await getVmi(env, 'vmd');
  assert.is(after?.metadata?.uid, vmi.metadata?.uid, 'the same VMI');
  assert.is(after?.status?.phase, 'Running');
  assert.not.ok(after?.spec.volumes?.some((v) => v.name === 'dump-claim'), 'the claim left the VMI once the dump was done');
  assert.not.ok(after?.status?.volumeStatus?.some((v) => v.name === 'dump-claim'), 'and its volume status');
  assert.equal((await getVm(env, 'vmd')).spec.template.spec?.volumes?.find((v) => v.name === 'dump-claim'), { name: 'dump-claim', memoryDump: { claimName: 'dump-claim', hotpluggable: true } }, 'the VM keeps the association');

  // Another claim while this one is associated: refused.
  r = await run('memory-dump', 'get', 'vmd', '--claim-name=small');
  assert.is(r.code, 1);
  assert.match(r.err, 'can\'t request memory dump for pvc [small] while pvc [dump-claim] is still associated as the memory dump pvc');

  // get without a claim name: again into the associated claim; the older dump goes. A dump's file
  // is named to the second (KubeVirt's <vm>-<claim>-YYYYMMDD-HHMMSS.memory.dump): a second dump
  // within the first one's second would take its name, so this one starts in a later second.
  await eventually(async () => new Date().toISOString().slice(0, 19) > first.endTimestamp!.slice(0, 19), 5_000, 'a second after the first dump');
  r = await run('memory-dump', 'get', 'vmd');
  assert.is(r.code, 0, r.err);
  const second = await completed(first.fileName);
  // download (and get --output) goes through a VirtualMachineExport of the claim, which qvirt does not serve.
  const out = tempDir('qvmdo');
  try {
    r = await run('memory-dump', 'download', 'vmd', `--output=${join(out.path, 'dump.gz')}`);
    assert.is(r.code, 1);
    assert.match(r.out, 'Memory dump completed successfully\n', 'virtctl saw the dump completed');
    assert.match(r.err, 'the server could not find the requested resource', 'no export.kubevirt.io VirtualMachineExport');
  } finally { out.cleanup(); }
  assert.equal(readdirSync(dir).filter((f) => f.includes('memory.dump')), [second.fileName], 'one dump in the claim: the new one');
  assert.equal(elfHeader(join(dir, second.fileName!)).type, 4);

  // remove: the association goes from the VM status, the template and the VMI; the dump stays in the claim.
  r = await run('memory-dump', 'remove', 'vmd');
  assert.is(r.code, 0, r.err);
  assert.match(r.out, 'Successfully submitted remove memory dump association of VM vmd\n');
  await eventually(async () => {
    const vm: VirtualMachine = await getVm(env, 'vmd');
    const v = await getVmi(env, 'vmd');
    return !vm.status?.memoryDumpRequest && !vm.spec.template.spec?.volumes?.some((x) => x.name === 'dump-claim') && !v?.spec.volumes?.some((x) => x.name === 'dump-claim');
  }, 60_000, 'the memory dump association removed from the VM and the VMI');
  assert.ok(statSync(join(dir, second.fileName!)).size >= 192 * MiB, 'the dump stays in the claim');
  assert.is((await getVmi(env, 'vmd'))?.status?.phase, 'Running');
});

test('qvirt memory-dump get --create-claim / remove: the same claim, dump and association as virtctl\'s', async () => {
  // The VM of the test above, its earlier association removed.
  let r = await env.qvirt('memory-dump', 'get', 'vmd', '--claim-name=qdump', '--create-claim');
  assert.is(r.code, 0, r.err);
  assert.is(r.out, 'PVC default/qdump created\nSuccessfully submitted memory dump request of VM vmd\n', 'the CDIConfig gives the overhead: no default said');
  const claim = await getClaim('qdump');
  assert.equal([claim.spec?.resources?.requests?.storage, claim.spec?.accessModes], ['310Mi', ['ReadWriteOnce']], 'sized as virtctl sizes it (the CDIConfig\'s overhead)');
  const done = await completed();
  const dir = (await getClaim('qdump')).metadata?.annotations?.[LOCAL_PATH_ANNOTATION];
  assert.equal(elfHeader(join(dir!, done.fileName!)), { magic: '\x7fELF', cls: 2, type: 4 });
  r = await env.qvirt('memory-dump', 'get', 'vmd', '--claim-name=other', '--create-claim');
  assert.is(r.code, 1);
  assert.match(r.err, 'please remove current memory dump association before creating a new claim for a new memory dump');
  r = await env.qvirt('memory-dump', 'download', 'vmd', '--output', '/tmp/x');
  assert.is(r.code, 1);
  assert.match(r.err, /VirtualMachineExport/);
  r = await env.qvirt('memory-dump', 'remove', 'vmd');
  assert.is(r.out, 'Successfully submitted remove memory dump association of VM vmd\n', r.err);
  await eventually(async () => !(await getVm(env, 'vmd')).status?.memoryDumpRequest, 60_000, 'the association removed');
  r = await env.qvirt('memory-dump', 'remove', 'vmd');
  assert.is(r.code, 1);
  assert.match(r.err, "error removing memory dump association, Operation cannot be fulfilled on virtualmachine.kubevirt.io \"vmd\": can't remove memory dump association for vm vmd, no association found");
});

test.run();

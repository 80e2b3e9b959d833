// `qvirt create vm|instancetype|preference` against KubeVirt's own virtctl v1.9.0: for a table of flag
// sets both print a manifest and the parsed objects are equal; for bad flags both fail with the same
// message. Names are always given in the comparisons (virtctl makes random ones otherwise); the
// generated names are checked for virtctl's form separately, as are the pure decisions.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { virtctlPath } from '../lib/virtctl.ts';
import { tempDir } from '../lib/tmp.ts';
import { mapParams, parseCreateFlags, RAND_SUFFIX_RE, splitPrefixedName, CreateError, checkExclusiveGroups } from '../../src/cli/create-params.ts';
import { createVM, VM_FLAGS } from '../../src/cli/create-vm.ts';
import { createInstancetype, INSTANCETYPE_FLAGS } from '../../src/cli/create-instancetype.ts';

const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
const tmp = tempDir('create');
const passwordFile = join(tmp.path, 'pw');
writeFileSync(passwordFile, '  s3cret\n');
const emptyPasswordFile = join(tmp.path, 'empty');
writeFileSync(emptyPasswordFile, '\n');

interface Run { code: number; out: string; err: string }
function exec(bin: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(bin, args, { env: { PATH: process.env.PATH ?? '', HOME: tmp.path, KUBECONFIG: join(tmp.path, 'none') }, timeout: 60_000 }, (err, out, errOut) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) });
    });
  });
}
const virtctl = async (args: readonly string[]) => exec(await virtctlPath(), ['create', ...args]);
const ours = (args: readonly string[]) => exec(qvirt, ['create', ...args]);

/** The last line of stderr without qvirt's `Error: ` (virtctl prints the bare message). */
function lastError(err: string): string {
  const lines = err.trim().split('\n');
  return (lines[lines.length - 1] ?? '').replace(/^Error: /, '');
}

const SAME: readonly (readonly string[])[] = [
  ['vm', '--name', 'a'],
  ['vm', '--name=a', '--run-strategy=halted', '--termination-grace-period', '30', '--memory', '1.5Gi'],
  ['vm', '--name', 'a', '--run-strategy', 'RerunOnFailure', '--memory', '1024Mi'],
  ['vm', '--name', 'a', '--instancetype', 'u1.medium', '--preference', 'fedora'],
  ['vm', '--name', 'a', '--instancetype', 'virtualmachineinstancetype/small', '--preference', 'VirtualMachinePreference/pref'],
  ['vm', '--name', 'a', '--instancetype', 'virtualmachineclusterinstancetype/small', '--preference', 'virtualmachineclusterpreference/p'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:quay.io/containerdisks/fedora:41'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:img1,name:one', '--volume-containerdisk', 'src:img2,bootorder:1'],
  ['vm', '--name', 'a', '--volume-pvc', 'src:mypvc'],
  ['vm', '--name', 'a', '--volume-pvc', 'src:mypvc,name:disk0,bootorder:2', '--volume-containerdisk', 'src:img,bootorder:5'],
  ['vm', '--name', 'a', '--volume-pvc', 'src:p1', '--memory', '2Gi'],
  ['vm', '--name', 'a', '--volume-import', 'type:ds,src:my-ns/my-ds,size:50Gi,name:root'],
  ['vm', '--name', 'a', '--volume-import', 'type:ds,src:my-ds,name:root', '--infer-instancetype', '--infer-preference'],
  ['vm', '--name', 'a', '--volume-import', 'type:ds,src:ds1,name:r', '--volume-pvc', 'src:p2', '--infer-instancetype-from', 'r', '--infer-preference-from', 'p2'],
  ['vm', '--name', 'a', '--volume-import', 'type:pvc,src:ns/p,name:c', '--volume-import', 'type:blank,size:10Gi,name:b,bootorder:1'],
  ['vm', '--name', 'a', '--volume-import', 'type:snapshot,src:ns/snap,name:s,size:1Gi'],
  ['vm', '--name', 'a', '--volume-import', 'type:registry,url:docker://quay.io/x:1,pullmethod:node,name:reg,size:5Gi'],
  ['vm', '--name', 'a', '--volume-import', 'type:http,url:http://x/y.img,extraheaders:a=b;c=d,secretref:s,name:h,size:5Gi'],
  ['vm', '--name', 'a', '--volume-import', 'type:s3,url:s3://b/o,name:s,size:5Gi', '--volume-import', 'type:gcs,url:gs://b/o,name:g,size:1Gi'],
  ['vm', '--name', 'a', '--volume-import', 'type:imageio,url:https://e/api,diskid:123,name:i,size:5Gi'],
  ['vm', '--name', 'a', '--volume-import', 'type:vddk,url:https://vc,uuid:u,thumbprint:t,secretref:s,backingfile:[ds] f.vmdk,name:v,size:5Gi'],
  ['vm', '--name', 'a', '--volume-blank', 'name:b1,size:1Gi', '--volume-datasource', 'src:ns/ds,name:d1', '--volume-clone-pvc', 'src:ns/p,name:c1', '--volume-import', 'type:blank,size:2Gi,name:last'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:img', '--volume-sysprep', 'src:unattend'],
  ['vm', '--name', 'a', '--volume-sysprep', 'src:unattend,type:Secret'],
  ['vm', '--name', 'a', '--user', 'cloud-user', '--ssh-key', 'ssh-ed25519 AAAA one', '--ssh-key', 'ssh-rsa BBBB two,ssh-rsa CCCC three'],
  ['vm', '--name', 'a', '--user', 'cloud-user', '--password-file', passwordFile],
  ['vm', '--name', 'a', '--password-file', emptyPasswordFile],
  ['vm', '--name', 'a', '--ga-manage-ssh', '--cloud-init', 'configdrive'],
  ['vm', '--name', 'a', '--cloud-init', 'nocloud'],
  ['vm', '--name', 'a', '--cloud-init', 'none', '--user', 'x'],
  ['vm', '--name', 'a', '--cloud-init-user-data', 'I2Nsb3VkLWNvbmZpZwo=', '--cloud-init-network-data', 'bmV0d29yazoK'],
  ['vm', '--name', 'a', '--cloud-init', 'ConfigDrive', '--cloud-init-network-data', 'bmV0d29yazoK'],
  ['vm', '--name', 'a', '--user', 'cloud-user', '--access-cred', 'type:ssh,src:my-keys'],
  ['vm', '--name', 'a', '--access-cred', 'src:my-keys,user:myuser', '--access-cred', 'type:password,src:my-pws'],
  ['vm', '--name', 'a', '--access-cred', 'type:ssh,src:k,method:nocloud'],
  ['vm', '--name', 'a', '--access-cred', 'type:ssh,src:k,method:configdrive', '--user', 'u'],
  ['vm', '--name', 'a', '-n', 'my-ns'],
  ['-n', 'my-ns', 'vm', '--name', 'a', '--namespace=other'],
  ['instancetype', '--name', 'it', '--cpu', '2', '--memory', '256Mi'],
  ['instancetype', '--name', 'it', '--cpu', '4', '--memory', '1024Mi', '--namespaced', '--iothreadspolicy', 'shared'],
  ['instancetype', '--name', 'it', '--cpu', '1', '--memory', '1G', '--gpu', 'name:gpu1,devicename:nvidia/A', '--hostdevice', 'name:h,devicename:vendor/x', '--iothreadspolicy', 'auto'],
  ['instancetype', '--name', 'it', '--cpu', '1', '--memory', '1Gi', '-n', 'ns'],
  ['preference', '--name', 'p'],
  ['preference', '--name', 'p', '--namespaced', '--cpu-topology', 'sockets', '--machine-type', 'q35', '--volume-storage-class', 'hp'],
  ['preference', '--name', 'p', '--cpu-topology', 'preferSpread'],
  ['preference', '--name', 'p', '-n', 'ns', '--volume-storage-class', ''],
];

test('the same manifest as virtctl for each flag set', async () => {
  for (const args of SAME) {
    const [want, got] = await Promise.all([virtctl(args), ours(args)]);
    assert.is(want.code, 0, `virtctl create ${args.join(' ')}: ${want.err}`);
    assert.is(got.code, 0, `qvirt create ${args.join(' ')}: ${got.err}`);
    assert.equal(yaml.load(got.out), yaml.load(want.out), `create ${args.join(' ')}`);
  }
});

const FAIL: readonly (readonly string[])[] = [
  ['vm', '--name', 'a', '--run-strategy', 'sometimes'],
  ['vm', '--name', 'a', '--memory', 'lots'],
  ['vm', '--name', 'a', '--memory', '1Gi', '--instancetype', 'x'],
  ['vm', '--name', 'a', '--preference', 'x', '--infer-preference'],
  ['vm', '--name', 'a', '--cloud-init-user-data', 'eA==', '--user', 'x'],
  ['vm', '--name', 'a', '--instancetype', 'vi/foo'],
  ['vm', '--name', 'a', '--preference', 'a/b/c'],
  ['vm', '--name', 'a', '--instancetype', 'virtualmachineinstancetype/'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'img'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'name:x'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:i,bootorder:0'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:i,bootorder:x'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:i,name:Bad_Name'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:i,bootorder:1', '--volume-pvc', 'src:p,bootorder:1'],
  ['vm', '--name', 'a', '--volume-containerdisk', 'src:i,name:d', '--volume-pvc', 'src:d'],
  ['vm', '--name', 'a', '--volume-pvc', 'src:ns/p'],
  ['vm', '--name', 'a', '--volume-import', 'src:x'],
  ['vm', '--name', 'a', '--volume-import', 'type:nfs,src:x'],
  ['vm', '--name', 'a', '--volume-import', 'type:blank'],
  ['vm', '--name', 'a', '--volume-import', 'type:blank,size:huge'],
  ['vm', '--name', 'a', '--volume-import', 'type:pvc,src:p'],
  ['vm', '--name', 'a', '--volume-import', 'type:ds'],
  ['vm', '--name', 'a', '--volume-import', 'type:http,size:1Gi'],
  ['vm', '--name', 'a', '--volume-import', 'type:registry,size:1Gi,url:u,imagestream:i'],
  ['vm', '--name', 'a', '--volume-import', 'type:registry,size:1Gi,url:u,pullmethod:x'],
  ['vm', '--name', 'a', '--volume-sysprep', 'src:s,type:disk'],
  ['vm', '--name', 'a', '--access-cred', 'src:k'],
  ['vm', '--name', 'a', '--access-cred', 'type:password,src:k,user:u'],
  ['vm', '--name', 'a', '--access-cred', 'type:ssh,src:k,method:nocloud', '--cloud-init', 'configdrive'],
  ['vm', '--name', 'a', '--access-cred', 'type:token,src:k'],
  ['vm', '--name', 'a', '--cloud-init', 'floppy'],
  ['vm', '--name', 'a', '--infer-instancetype-from', 'nope', '--volume-containerdisk', 'src:i'],
  ['vm', '--name', 'a', '--infer-instancetype'],
  ['vm', '--name', 'a', '--infer-preference', '--volume-containerdisk', 'src:i'],
  ['vm', '--name', 'a', '--termination-grace-period', 'soon'],
  ['vm', '--name', 'a', '--password-file', '/nonexistent/pw'],
  ['vm', '--name', 'a', '--bogus'],
  ['instancetype', '--name', 'it', '--cpu', '0', '--memory', '1Gi'],
  ['instancetype', '--name', 'it', '--memory', '1Gi'],
  ['instancetype', '--name', 'it'],
  ['instancetype', '--name', 'it', '--cpu', '1', '--memory', 'much'],
  ['instancetype', '--name', 'it', '--cpu', '-1', '--memory', '1Gi'],
  ['instancetype', '--name', 'it', '--cpu', '1', '--memory', '1Gi', '--iothreadspolicy', 'dedicated'],
  ['instancetype', '--name', 'it', '--cpu', '1', '--memory', '1Gi', '--gpu', 'name:g'],
  ['instancetype', '--name', 'it', '--cpu', '1', '--memory', '1Gi', '--hostdevice', 'devicename:d'],
  ['preference', '--name', 'p', '--cpu-topology', 'cubes'],
];

test('the same error as virtctl for bad flags', async () => {
  for (const args of FAIL) {
    const [want, got] = await Promise.all([virtctl(args), ours(args)]);
    assert.is.not(want.code, 0, `virtctl create ${args.join(' ')} succeeded`);
    assert.is(got.code, 1, `qvirt create ${args.join(' ')}: exit ${got.code}, ${got.err}`);
    assert.is(got.out, '', `qvirt create ${args.join(' ')} printed a manifest`);
    assert.is(lastError(got.err), lastError(want.err), `create ${args.join(' ')}`);
  }
});

test('without --name: names of virtctl\'s form', async () => {
  for (const [args, prefix] of [[['vm'], 'vm-'], [['instancetype', '--cpu', '1', '--memory', '1Gi'], 'clusterinstancetype-'], [['instancetype', '--cpu', '1', '--memory', '1Gi', '--namespaced'], 'instancetype-'], [['preference'], 'clusterpreference-'], [['preference', '-n', 'x'], 'preference-']] as const) {
    const [want, got] = await Promise.all([virtctl(args), ours(args)]);
    const w = yaml.load(want.out) as { metadata: { name: string } };
    const g = yaml.load(got.out) as { metadata: { name: string } };
    for (const n of [w.metadata.name, g.metadata.name]) {
      assert.ok(n.startsWith(prefix) && RAND_SUFFIX_RE.test(n.slice(prefix.length)), `${args.join(' ')}: ${n}`);
    }
    const wo = { ...w, metadata: { ...w.metadata, name: '' } };
    const go = { ...g, metadata: { ...g.metadata, name: '' } };
    assert.equal(go, wo);
  }
  const v = createVM(parseCreateFlags(VM_FLAGS, ['--volume-import', 'type:blank,size:1Gi']), { random: () => 0 });
  const tmpl = (v.vm.spec as { dataVolumeTemplates: { metadata: { name: string } }[] }).dataVolumeTemplates[0]!;
  assert.is(tmpl.metadata.name, 'imported-volume-bbbbb');
  assert.is((v.vm.metadata as { name: string }).name, 'vm-bbbbb');
});

test('params as virtctl splits them', () => {
  assert.equal(mapParams('f', 'src:a:b,bootorder:3,size:1024Mi', { src: 'string', bootorder: 'uint', size: 'quantity' }), { src: 'a:b', bootorder: 3, size: '1Gi' });
  assert.equal(mapParams('f', 'h:a;b', { h: 'strings' }), { h: ['a', 'b'] });
  assert.throws(() => mapParams('f', '', { a: 'string' }), (e: Error) => e.message === 'failed to parse "--f" flag: params may not be empty');
  assert.throws(() => mapParams('f', 'a:1,b:2', { a: 'string' }), (e: Error) => e.message === 'failed to parse "--f" flag: unknown param(s): b:2');
  assert.equal(splitPrefixedName('x'), { prefix: '', name: 'x' });
  assert.equal(splitPrefixedName('k/x'), { prefix: 'k', name: 'x' });
  assert.throws(() => splitPrefixedName('a/b/c'), /invalid count 2 of slashes/);
  assert.throws(() => checkExclusiveGroups([['a', 'b', 'c']], new Set(['c', 'a'])), (e: Error) => e instanceof CreateError && e.message.endsWith('[a c] were all set'));
});

test('flags: set ones are recorded, defaults are not', () => {
  const f = parseCreateFlags(INSTANCETYPE_FLAGS, ['--cpu=2', '--memory', '1Gi', '--namespaced']);
  assert.equal([...f.changed].sort(), ['cpu', 'memory', 'namespaced']);
  assert.equal(createInstancetype(f, () => 0.99), {
    apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineInstancetype', metadata: { name: 'instancetype-99999' }, spec: { cpu: { guest: 2 }, memory: { guest: '1Gi' } },
  });
  const vm = parseCreateFlags(VM_FLAGS, []);
  assert.is(vm.values.get('memory'), '512Mi');
  assert.is(vm.values.get('infer-instancetype'), true);
  assert.is(vm.changed.size, 0);
});

test("flags: pflag's grammar and errors on the shared argv scan", () => {
  const f = parseCreateFlags(VM_FLAGS, ['-n', 'ns1', '--name=vm1', '--run-strategy', 'Always', 'extra', '--', '--not-a-flag']);
  assert.is(f.values.get('namespace'), 'ns1');
  assert.is(f.values.get('name'), 'vm1');
  assert.equal(f.args, ['extra', '--not-a-flag']);
  assert.is(parseCreateFlags(VM_FLAGS, ['-n=ns2']).values.get('namespace'), 'ns2');
  assert.is(parseCreateFlags(VM_FLAGS, ['--infer-instancetype=F']).values.get('infer-instancetype'), false);
  assert.is(parseCreateFlags(VM_FLAGS, ['-h']).help, true);
  const fails = (argv: string[], message: string) =>
    assert.throws(() => parseCreateFlags(VM_FLAGS, argv), (e: Error) => e instanceof CreateError && e.message === message, message);
  fails(['-x'], "unknown shorthand flag: 'x' in -x");
  fails(['--nope'], 'unknown flag: --nope');
  fails(['--name'], 'flag needs an argument: --name');
  fails(['--infer-instancetype=maybe'], 'invalid argument "maybe" for "--infer-instancetype" flag: strconv.ParseBool: parsing "maybe": invalid syntax');
});

test.after(() => tmp.cleanup());
test.run();

// KubeVirt's own virtctl v1.9.0 (../shared/virtctl) against the local mode: every verb goes
// through the subresources.kubevirt.io group the embedded API server serves (virt-api's routes),
// and each is asserted on what it did to the VM — its VMI, its conditions, its guest — not only on
// virtctl's exit code: version, start/stop/restart, pause/unpause, console (typing into the guest's
// shell), port-forward (TCP, and --stdio as ssh's ProxyCommand uses it), vnc and vnc screenshot, guestosinfo/fslist,
// soft-reboot, addvolume/removevolume, migrate (refused: the VM is not live-migratable; the
// migration suites migrate through virtctl), objectgraph (feature gate ObjectGraph), evacuate-cancel; and the errors
// virt-api answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { VirtualMachine } from '../../src/api/types.ts';
import { Resources } from '../../src/kube/resource.ts';
import { virtctl, virtctlSpawn, type VirtctlResult } from '../lib/virtctl.ts';
import { tempDir } from '../lib/tmp.ts';
import { decodePng, distinctColours } from '../lib/png.ts';
import { eventually, getVm, getVmi, runningVmi, startEnv, testVm, type Env } from './lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvk'); });
test.after(async () => { await env?.stop(); });

const run = (...args: string[]): Promise<VirtctlResult> => virtctl(env.local.kubeconfig, args);

function spawned(child: ChildProcess): { out: () => string; err: () => string; exit: Promise<number | null> } {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString('latin1'); });
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  return { out: () => out, err: () => err, exit: new Promise((r) => child.once('exit', (c) => r(c))) };
}

/** One line to a TCP echo and its answer. */
function echoThrough(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d: Buffer) => { got += d.toString(); if (got.includes('\n')) { s.destroy(); resolve(got); } });
    s.on('error', reject);
    s.write(`${line}\n`);
    setTimeout(() => { s.destroy(); reject(new Error(`no echo of ${line} on port ${port} (got ${JSON.stringify(got)})`)); }, 20_000);
  });
}

const paused = async () => (await getVmi(env, 'vk'))?.status?.conditions?.some((c) => c.type === 'Paused' && c.status === 'True') ?? false;

test('virtctl version reads the server version from the subresource group', async () => {
  const r = await run('version');
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /^Client Version: version\.Info\{GitVersion:"v1\.9\.0"/);
  assert.match(r.out, /\nServer Version: version\.Info\{GitVersion:"v\d+\.\d+\.\d+", .*Platform:"linux\/amd64"\}\n$/);
});

test('virtctl objectgraph: refused without the ObjectGraph feature gate; with it, what a VM depends on, filtered as asked', async () => {
  const client = env.local.client;
  await client.create(Resources.virtualMachineInstancetypes, { apiVersion: 'instancetype.kubevirt.io/v1beta1', kind: 'VirtualMachineInstancetype', metadata: { name: 'og-it', namespace: 'default' }, spec: { cpu: { guest: 1 }, memory: { guest: '192Mi' } } } as never);
  const disk = (name: string) => ({ name, disk: { bus: 'virtio' } });
  await client.create(Resources.virtualMachines, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'og', namespace: 'default' },
    spec: {
      runStrategy: 'Halted',
      instancetype: { kind: 'VirtualMachineInstancetype', name: 'og-it' },
      template: { spec: {
        accessCredentials: [{ sshPublicKey: { source: { secret: { secretName: 'og-ssh' } }, propagationMethod: { qemuGuestAgent: { users: ['root'] } } } }],
        domain: { devices: { disks: ['claim', 'dv', 'cm', 'ci'].map(disk), interfaces: [{ name: 'default', masquerade: {} }, { name: 'og-net', bridge: {} }] } },
        networks: [{ name: 'default', pod: {} }, { name: 'og-net', multus: { networkName: 'other/og-nad' } }],
        volumes: [
          { name: 'claim', persistentVolumeClaim: { claimName: 'og-claim' } },
          { name: 'dv', dataVolume: { name: 'og-dv' } },
          { name: 'cm', configMap: { name: 'og-cm' } },
          { name: 'ci', cloudInitNoCloud: { secretRef: { name: 'og-userdata' } } },
        ],
      } },
    },
  } as never);
  let r = await run('objectgraph', 'og');
  assert.is(r.code, 1);
  assert.match(r.err, /error listing object graph of VirtualMachine og: ObjectGraph feature gate not enabled: Unable to return object graph\./);
  await client.patch(Resources.kubeVirts, 'kubevirt', 'kubevirt', { spec: { configuration: { developerConfiguration: { featureGates: ['ObjectGraph'] } } } }, 'merge');
  // The VM controller keeps the instance type's ControllerRevision in the VM's status.
  const revision = await eventually(async () => (await getVm(env, 'og')).status?.instancetypeRef?.controllerRevisionRef?.name, 60_000, 'the instance type revision in the VM status');
  r = await eventually(async () => { const x = await run('objectgraph', 'og'); return x.code === 0 ? x : undefined; }, 30_000, 'objectgraph once the feature gate is on');
  const ref = (kind: string, name: string, group = '', ns = 'default') => ({ apiGroup: group, kind, name, namespace: ns });
  const dep = (t: string) => ({ 'kubevirt.io/dependency-type': t });
  assert.equal(JSON.parse(r.out), {
    objectReference: ref('VirtualMachine', 'og', 'kubevirt.io'), labels: dep('compute'),
    children: [
      { objectReference: ref('VirtualMachineInstancetype', 'og-it', 'instancetype.kubevirt.io'), labels: dep('config'), optional: true },
      { objectReference: ref('ControllerRevision', revision, 'apps'), labels: dep('config') },
      { objectReference: ref('Secret', 'og-ssh'), labels: dep('config') },
      { objectReference: ref('PersistentVolumeClaim', 'og-claim'), labels: dep('storage') },
      { objectReference: ref('DataVolume', 'og-dv', 'cdi.kubevirt.io'), labels: dep('storage'), children: [{ objectReference: ref('PersistentVolumeClaim', 'og-dv'), labels: dep('storage') }] },
      { objectReference: ref('ConfigMap', 'og-cm'), labels: dep('config') },
      { objectReference: ref('Secret', 'og-userdata'), labels: dep('config') },
      { objectReference: ref('NetworkAttachmentDefinition', 'og-nad', 'k8s.cni.cncf.io', 'other'), labels: dep('network'), optional: true },
    ],
  });
  // qvirt's own verb builds the same graph from what the user can read (no feature gate: it is no virt-api route).
  let q = await env.qvirt('objectgraph', 'og');
  assert.equal(JSON.parse(q.out), JSON.parse(r.out), q.err);
  const names = (out: string) => (JSON.parse(out).children ?? []).map((c: { objectReference: { name: string } }) => c.objectReference.name);
  q = await env.qvirt('objectgraph', 'og', '--exclude-optional', '--selector', 'kubevirt.io/dependency-type=storage');
  assert.equal(names(q.out), ['og-claim', 'og-dv'], q.err);
  q = await env.qvirt('objectgraph', 'og', '--selector', 'storage');
  assert.is(q.code, 2, q.out);
  assert.match(q.err, /--selector: "storage" must be KEY=VALUE/);
  r = await run('objectgraph', 'og', '--exclude-optional');
  assert.equal(names(r.out), [revision, 'og-ssh', 'og-claim', 'og-dv', 'og-cm', 'og-userdata'], r.err);
  r = await run('objectgraph', 'og', '--selector', 'kubevirt.io/dependency-type=storage');
  assert.equal(names(r.out), ['og-claim', 'og-dv'], r.err);
  r = await run('objectgraph', 'og', '-o', 'yaml');
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /^children:\n/);
  assert.match(r.out, /\n {4}name: og-nad\n {4}namespace: other\n/, r.out);
  r = await run('objectgraph', 'nope');
  assert.is(r.code, 1);
  assert.match(r.err, /error listing object graph of VirtualMachine nope: virtualmachine\.kubevirt\.io "nope" not found/);
  r = await run('objectgraph', 'og', '--vmi');
  assert.match(r.err, /error listing object graph of VirtualMachineInstance og: virtualmachineinstance\.kubevirt\.io "og" not found/);
  await client.delete(Resources.virtualMachines, 'default', 'og');
});

test('every VM verb of virtctl, asserted on the VM', async () => {
  await env.local.client.create(Resources.virtualMachines, testVm('vk', 'Halted'));
  let r = await run('start', 'vk');
  assert.is(r.code, 0, r.err);
  assert.is(r.out, 'VM vk was scheduled to start\n');
  const first = await runningVmi(env, 'vk');
  assert.is((await getVm(env, 'vk')).spec.runStrategy, 'Always');
  r = await run('start', 'vk');
  assert.is(r.code, 1);
  assert.match(r.err, /Error starting VirtualMachine Operation cannot be fulfilled on virtualmachine\.kubevirt\.io "vk": VM is already running/);

  // objectgraph of the running VM: its VMI with the launcher pod below it; of the VMI: the pod.
  const pod = (await env.local.client.list(Resources.pods, { namespace: 'default', labelSelector: 'kubevirt.io=virt-launcher,vm.kubevirt.io/name=vk' })).items.find((p) => !p.metadata?.deletionTimestamp)!.metadata!.name!;
  const podNode = { objectReference: { apiGroup: '', kind: 'Pod', name: pod, namespace: 'default' }, labels: { 'kubevirt.io/dependency-type': 'compute' } };
  const vmiRef = { apiGroup: 'kubevirt.io', kind: 'VirtualMachineInstance', name: 'vk', namespace: 'default' };
  r = await run('objectgraph', 'vk');
  assert.equal(JSON.parse(r.out).children, [{ objectReference: vmiRef, labels: { 'kubevirt.io/dependency-type': 'compute' }, children: [podNode] }], r.err);
  r = await run('objectgraph', 'vk', '--vmi');
  assert.equal(JSON.parse(r.out), { objectReference: vmiRef, labels: { 'kubevirt.io/dependency-type': 'compute' }, children: [podNode] }, r.err);
  const q = await env.qvirt('objectgraph', 'vk', '--vmi');
  assert.equal(JSON.parse(q.out), JSON.parse(r.out), q.err);

  // evacuate-cancel: an eviction's mark (set here as the eviction admitter sets it) taken back; the
  // VMI controller's EvictionRequested condition follows the mark.
  const vmis = env.local.client;
  const nodeName = first.status!.nodeName!;
  const mark = () => vmis.patch(Resources.virtualMachineInstances, 'default', 'vk', [{ op: 'add', path: '/status/evacuationNodeName', value: nodeName }], 'json');
  const evictionRequested = async () => (await getVmi(env, 'vk'))?.status?.conditions?.some((c) => c.type === 'EvictionRequested' && c.status === 'True') ?? false;
  const podAnnotations = async () => (await env.local.client.get(Resources.pods, 'default', pod)).metadata?.annotations ?? {};
  const inProgress = 'descheduler.alpha.kubernetes.io/eviction-in-progress';
  await mark();
  await eventually(evictionRequested, 30_000, 'EvictionRequested=True once marked');
  await eventually(async () => (await podAnnotations())[inProgress] === 'true', 30_000, 'the launcher pod marked eviction-in-progress for the descheduler');
  r = await run('evacuate-cancel', 'vm', 'vk', '--dry-run');
  assert.is(r.out, 'Dry Run execution\nVM default/vk was canceled evacuation\n', r.err);
  assert.is((await getVmi(env, 'vk'))?.status?.evacuationNodeName, nodeName, 'a dry run keeps the mark');
  r = await run('evacuate-cancel', 'vm', 'vk');
  assert.is(r.out, 'VM default/vk was canceled evacuation\n', r.err);
  assert.is((await getVmi(env, 'vk'))?.status?.evacuationNodeName, undefined);
  await eventually(async () => !(await evictionRequested()), 30_000, 'EvictionRequested gone once the mark is');
  await eventually(async () => !(inProgress in (await podAnnotations())), 30_000, 'eviction-in-progress gone from the pod');
  r = await run('evacuate-cancel', 'vmi', 'vk');
  assert.is(r.out, 'VMI default/vk was canceled evacuation\n', `not marked: nothing to do, 200: ${r.err}`);
  await mark();
  let q2 = await env.qvirt('evacuate-cancel', 'vmi', 'vk');
  assert.is(q2.out, 'VMI default/vk was canceled evacuation\n', q2.err);
  assert.is((await getVmi(env, 'vk'))?.status?.evacuationNodeName, undefined, 'qvirt evacuate-cancel removed the mark');
  // The drain taint evacuates every VMI on the node whatever the mark says: refused while it is there.
  await vmis.patch(Resources.nodes, undefined, nodeName, [{ op: 'add', path: '/spec/taints', value: [{ key: 'kubevirt.io/drain', effect: 'NoSchedule' }] }], 'json');
  try {
    r = await run('evacuate-cancel', 'vmi', 'vk');
    assert.is(r.code, 1);
    assert.match(r.err, new RegExp(`error canceling evacuation for VMI default/vk: Node "${nodeName}" has NodeDrainTaintKey "kubevirt\\.io/drain:NoSchedule"`));
    q2 = await env.qvirt('evacuate-cancel', 'vmi', 'vk');
    assert.match(q2.err, /has NodeDrainTaintKey "kubevirt\.io\/drain:NoSchedule"/);
  } finally {
    await vmis.patch(Resources.nodes, undefined, nodeName, [{ op: 'remove', path: '/spec/taints' }], 'json');
  }

  // console: the guest's boot and its shell, through the websocket.
  const conChild = await virtctlSpawn(env.local.kubeconfig, ['console', 'vk']);
  const con = spawned(conChild);
  try {
    await eventually(() => con.err().includes('Successfully connected to vk console'), 30_000, `virtctl console connected (stderr: ${con.err()})`);
    await eventually(() => con.out().includes('QVIRT-GUEST-READY'), 120_000, 'the guest booted, seen on virtctl console');
    await eventually(() => { conChild.stdin!.write('echo VK-$((6*7))\n'); return con.out().includes('VK-42'); }, 60_000, 'the guest shell answering on virtctl console');
    // A TCP echo in the guest for the port-forwards.
    await eventually(() => { conChild.stdin!.write('nc -ll -p 7777 -e cat & echo NC-$((2+3))\n'); return con.out().includes('NC-5'); }, 30_000, 'nc listening in the guest');

    // port-forward: a local port to the guest's 7777.
    const pfChild = await virtctlSpawn(env.local.kubeconfig, ['port-forward', 'vmi/vk', '17771:7777']);
    const pf = spawned(pfChild);
    try {
      await eventually(() => pf.err().includes('forwarding tcp 127.0.0.1:17771 to 7777'), 30_000, `virtctl port-forward listening (${pf.err()})`);
      assert.is(await eventually(() => echoThrough(17771, 'through-port-forward').catch(() => undefined), 30_000, 'echo through port-forward'), 'through-port-forward\n');
    } finally {
      pfChild.kill();
    }
    // A guest that sends and closes at once: every byte arrives before the close (4 MiB, 5 times).
    await eventually(() => { conChild.stdin!.write("printf '#!/bin/sh\\ndd if=/dev/zero bs=65536 count=64 2>/dev/null\\n' > /tmp/send4m; chmod +x /tmp/send4m; nc -ll -p 7778 -e /tmp/send4m & echo SENDER-$((3+4))\n"); return con.out().includes('SENDER-7'); }, 30_000, 'the sender listening in the guest');
    const pf2Child = await virtctlSpawn(env.local.kubeconfig, ['port-forward', 'vmi/vk', '17772:7778']);
    const pf2 = spawned(pf2Child);
    try {
      await eventually(() => pf2.err().includes('forwarding tcp 127.0.0.1:17772 to 7778'), 30_000, `virtctl port-forward listening (${pf2.err()})`);
      const transfer = () => new Promise<number>((resolve, reject) => {
        let n = 0;
        const s = net.connect(17772, '127.0.0.1');
        s.on('data', (d: Buffer) => { n += d.length; });
        s.on('end', () => resolve(n));
        s.on('error', reject);
      });
      // nc binds its port a moment after the shell echoed SENDER-7 (later on a loaded host): a connection
      // before that ends at once with nothing. The first that brings data counts as transfer 0.
      let first = 0;
      await eventually(async () => (first = await transfer()) > 0, 30_000, 'the guest\'s sender accepting connections');
      assert.is(first, 4 * 1024 * 1024, 'transfer 0: all of the guest\'s 4 MiB before its close');
      for (let i = 1; i < 5; i++) assert.is(await transfer(), 4 * 1024 * 1024, `transfer ${i}: all of the guest's 4 MiB before its close`);
    } finally {
      pf2Child.kill();
    }
    // --stdio, as `virtctl ssh` runs it as ssh's ProxyCommand.
    const stdioChild = await virtctlSpawn(env.local.kubeconfig, ['port-forward', '--stdio=true', 'vm/vk', '7777']);
    const stdio = spawned(stdioChild);
    stdioChild.stdin!.write('through-stdio\n');
    await eventually(() => stdio.out().includes('through-stdio'), 30_000, `echo through port-forward --stdio (${stdio.err()})`);
    stdioChild.kill();

    // vnc: the RFB greeting of QEMU's VNC server through the websocket.
    const vncChild = await virtctlSpawn(env.local.kubeconfig, ['vnc', 'vk', '--proxy-only']);
    const vnc = spawned(vncChild);
    const port = Number((await eventually(() => /"port":\s*(\d+)/.exec(vnc.out()) ?? undefined, 30_000, `virtctl vnc --proxy-only port (${vnc.err()})`))[1]);
    const greeting = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('data', (d: Buffer) => { resolve(d.toString('latin1')); s.destroy(); });
      s.once('error', reject);
    });
    assert.match(greeting, /^RFB 003\.00\d\n/);
    vncChild.kill();

    // vnc screenshot: the display as a PNG (QEMU's screendump in the launcher), virtctl's and qvirt's.
    // The test guest's console is the serial port: VGA keeps the firmware's text screen, 720×400.
    const shots = tempDir('vk-shot');
    try {
      r = await run('vnc', 'screenshot', 'vk', '-f', join(shots.path, 'virtctl.png'));
      assert.is(r.code, 0, r.err);
      const png = decodePng(readFileSync(join(shots.path, 'virtctl.png')));
      assert.equal([png.width, png.height], [720, 400], 'the VGA text screen');
      assert.ok(distinctColours(png) >= 2, 'text on the screen, not a blank picture');
      const q = await env.qvirt('vnc', 'screenshot', 'vk', '-f', join(shots.path, 'qvirt.png'));
      assert.is(q.code, 0, q.err);
      const qpng = decodePng(readFileSync(join(shots.path, 'qvirt.png')));
      assert.equal([qpng.width, qpng.height], [720, 400], 'qvirt\'s: the same screen');
      // -f is required, by both.
      r = await run('vnc', 'screenshot', 'vk');
      assert.match(r.err, /required flag\(s\) "file" not set/);
      assert.match((await env.qvirt('vnc', 'screenshot', 'vk')).err, /--file \(-f\) is required/);
    } finally {
      shots.cleanup();
    }

    // pause / unpause: the VMI's Paused condition.
    r = await run('pause', 'vmi', 'vk');
    assert.is(r.out, 'VMI vk was scheduled to pause\n', r.err);
    await eventually(paused, 30_000, 'VMI Paused');
    r = await run('pause', 'vm', 'vk');
    assert.is(r.code, 1);
    assert.match(r.err, /Error pausing VirtualMachineInstance vk: Operation cannot be fulfilled on virtualmachineinstance\.kubevirt\.io "vk": VMI is already paused/);
    r = await run('unpause', 'vm', 'vk');
    assert.is(r.out, 'VMI vk was scheduled to unpause\n', r.err);
    await eventually(async () => !(await paused()), 30_000, 'VMI not Paused');
    conChild.stdin!.write('echo AFTER-$((5*5))\n');
    await eventually(() => con.out().includes('AFTER-25'), 30_000, 'the guest runs again after unpause');

    // The guest agent (the test guest runs qemu-guest-agent).
    const info = await eventually(async () => { const x = await run('guestosinfo', 'vk'); return x.code === 0 ? x : undefined; }, 90_000, 'virtctl guestosinfo');
    assert.type(JSON.parse(info.out), 'object');
    r = await run('fslist', 'vk');
    assert.is(r.code, 0, r.err);
    assert.type(JSON.parse(r.out), 'object');

    // addvolume / removevolume: a claim bound by the local-path provisioner, into the VM and its guest.
    const t = tempDir('qvkc');
    try {
      const f = join(t.path, 'pvc.yaml');
      writeFileSync(f, 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: vk-data, namespace: default}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 64Mi}}}\n');
      await promisify(execFile)('kubectl', ['--kubeconfig', env.local.kubeconfig, 'apply', '-f', f], { timeout: 30_000 });
    } finally { t.cleanup(); }
    r = await run('addvolume', 'vk', '--volume-name=vk-data', '--serial=VKDATA');
    assert.is(r.code, 0, r.err);
    assert.match(r.out, /Successfully submitted add volume request to VM vk for volume vk-data/);
    await eventually(async () => (await getVmi(env, 'vk'))?.status?.volumeStatus?.find((v) => v.name === 'vk-data')?.phase === 'Ready', 90_000, 'the hotplugged volume Ready on the VMI');
    assert.equal((await getVm(env, 'vk')).spec.template?.spec?.volumes?.find((v) => v.name === 'vk-data'), { name: 'vk-data', persistentVolumeClaim: { claimName: 'vk-data', hotpluggable: true } });
    conChild.stdin!.write('grep -l VKDATA /sys/block/*/serial && echo DISK-SEEN\n');
    await eventually(() => con.out().includes('DISK-SEEN'), 30_000, 'the guest sees the hotplugged disk (serial VKDATA)');
    r = await run('removevolume', 'vk', '--volume-name=vk-data');
    assert.is(r.code, 0, r.err);
    await eventually(async () => !(await getVmi(env, 'vk'))?.status?.volumeStatus?.some((v) => v.name === 'vk-data') && !(await getVm(env, 'vk')).spec.template?.spec?.volumes?.some((v) => v.name === 'vk-data'), 90_000, 'the volume gone from the VM and the VMI');

    // soft-reboot: the guest boots again on the same console.
    const before = con.out().length;
    r = await run('soft-reboot', 'vk');
    assert.is(r.out, 'VMI vk was scheduled to soft-reboot\n', r.err);
    await eventually(() => con.out().slice(before).includes('QVIRT-GUEST-READY'), 120_000, 'the guest booted again after soft-reboot');
    assert.is((await getVmi(env, 'vk'))?.metadata?.uid, first.metadata?.uid, 'a soft reboot keeps the VMI');

    // migrate: virt-api creates the migration; this VM (user-mode networking) is not live-migratable,
    // so the migration-create webhook refuses it, as KubeVirt's does — through virt-api, to virtctl.
    r = await run('migrate', 'vk');
    assert.is(r.code, 1);
    assert.match(r.err, /Error migrating VirtualMachine Internal error occurred: admission webhook "migration-create-validator\.kubevirt\.io" denied the request: Cannot migrate VMI, Reason: InterfaceNotLiveMigratable/);
    assert.is((await env.local.client.list(Resources.virtualMachineInstanceMigrations, { namespace: 'default' })).items.length, 0);
  } finally {
    conChild.kill();
  }

  // restart: a new VMI.
  r = await run('restart', 'vk');
  assert.is(r.out, 'VM vk was scheduled to restart\n', r.err);
  await runningVmi(env, 'vk', [first.metadata!.uid!]);

  // stop: the VMI goes, the VM is Halted.
  r = await run('stop', 'vk');
  assert.is(r.out, 'VM vk was scheduled to stop\n', r.err);
  await eventually(async () => (await getVmi(env, 'vk')) === undefined, 120_000, 'VMI gone after stop');
  assert.is(((await getVm(env, 'vk')) as VirtualMachine).spec.runStrategy, 'Halted');
  r = await run('unpause', 'vm', 'vk');
  assert.is(r.code, 1);
  await env.local.client.delete(Resources.virtualMachines, 'default', 'vk');
});

test('virt-api\'s errors, as virtctl prints them', async () => {
  let r = await run('pause', 'vmi', 'nope');
  assert.is(r.code, 1);
  assert.match(r.err, /Error pausing VirtualMachineInstance nope: virtualmachineinstance\.kubevirt\.io "nope" not found/);
  r = await run('start', 'nope', '-n', 'other');
  assert.is(r.code, 1);
  assert.match(r.err, /virtualmachine\.kubevirt\.io "nope" not found/);
  r = await run('console', 'nope', '--timeout', '1');
  assert.is(r.code, 1);
});

test.run();

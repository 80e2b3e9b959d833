// The local mode end to end, with the real kubectl, real QEMU and the test guest, in one local-mode
// instance (restarted once at the end, as a user would): cloud-init user-data the guest runs (it
// writes a boot counter to a disk on a PVC: the local-path directory's disk.img), bad manifests refused with errors naming the field
// while nothing else is disturbed, runStrategy Always with QEMU killed (an immediate restart after
// a crash of a running VM; crash-loop backoff in status when it keeps dying before it runs, then
// Running again), and `qvirt local up` stopped (drain) and started again: objects intact, the Always
// VM back with its PVC data, the Halted VM still stopped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { importTestGuest, TEST_GUEST_IMAGE } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const t = tempDir('qle');
const store = new ImageStore(join(t.path, 'store'));
const dataDir = join(t.path, 'data');
const log = componentLogger('e2e', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' });
let local: LocalMode | undefined;

interface Vm extends KubeObject { status?: { printableStatus?: string; ready?: boolean; startFailure?: { consecutiveFailCount?: number; retryAfterTimestamp?: string } } }
interface Vmi extends KubeObject { status?: { phase?: string } }
interface Pvc extends KubeObject { spec?: { volumeName?: string }; status?: { phase?: string } }

const L = () => local!;
const kubectl = async (...args: string[]) => (await promisify(execFile)('kubectl', ['--kubeconfig', L().kubeconfig, ...args], { timeout: 60_000 })).stdout;
const kubectlFails = (...args: string[]) => promisify(execFile)('kubectl', ['--kubeconfig', L().kubeconfig, ...args], { timeout: 60_000 }).then(
  (r) => { throw new Error(`kubectl ${args.join(' ')} succeeded: ${r.stdout}`); },
  (e: { stderr?: string }) => e.stderr ?? '');
const apply = async (name: string, yaml: string) => { const f = join(t.path, `${name}.yaml`); writeFileSync(f, yaml); return kubectl('apply', '-f', f); };
const getVm = (name: string) => L().client.get<Vm>(Resources.virtualMachines, 'default', name);
const getVmi = (name: string) => L().client.get<Vmi>(Resources.virtualMachineInstances, 'default', name).catch(() => undefined);

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await f(); if (v) return v; } catch (err) { last = err; }
    await sleep(200);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

const running = (name: string, notUid?: string) => waitFor(`VMI ${name} Running${notUid ? ' (a new one)' : ''}`, async () => {
  const v = await getVmi(name);
  return v?.status?.phase === 'Running' && v.metadata?.uid !== notUid && v;
}, 120_000);

/** The guest's serial console as `kubectl logs -c guest-console-log` of its launcher pod shows it. */
async function consoleOf(vmi: Vmi): Promise<string> {
  const pod = (await kubectl('get', 'pods', '-l', `kubevirt.io/created-by=${vmi.metadata!.uid}`, '-o', 'name')).trim().split('\n')[0]!;
  if (!pod) return '';
  return kubectl('logs', pod.slice('pod/'.length), '-c', 'guest-console-log');
}
const consoleMatches = (vmi: Vmi, re: RegExp) => waitFor(`console of ${vmi.metadata!.name} matching ${re}`, async () => { const c = await consoleOf(vmi); return re.test(c) && c; }, 120_000);

/** QEMU processes of a VM (its domain is default_<name>). */
function qemuPids(name: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/comm`, 'utf8').startsWith('qemu-system')) continue;
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(`guest=default_${name},`)) out.push(Number(d));
    } catch { /* gone */ }
  }
  return out;
}

/** A thread's cpu cgroup: the cgroup v1 cpu controller's path when it has one, else cgroup v2's. */
function cpuCgroupOf(pid: number, tid: number): { version: 1 | 2; path: string } {
  const lines = readFileSync(`/proc/${pid}/task/${tid}/cgroup`, 'utf8').split('\n');
  const v1 = lines.map((l) => /^\d+:([^:]*):(.*)$/.exec(l)).find((m) => m && m[1]!.split(',').includes('cpu'));
  if (v1) return { version: 1, path: v1[2]! };
  return { version: 2, path: lines.find((l) => l.startsWith('0::'))!.slice(3) };
}

const vmYaml = (name: string, runStrategy: string, extra: { disks?: string; volumes?: string } = {}) => `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: ${name}
spec:
  runStrategy: ${runStrategy}
  template:
    spec:
      terminationGracePeriodSeconds: 20
      domain:
        firmware:
          kernelBoot:
            kernelArgs: console=ttyS0 quiet cryptomgr.notests
            container:
              image: ${TEST_GUEST_IMAGE}
              kernelPath: /boot/vmlinuz
              initrdPath: /boot/initrd.img
        devices:
          disks:${extra.disks ?? ' []'}
        resources:
          requests:
            memory: 128Mi
      volumes:${extra.volumes ?? ' []'}
`;

// The guest counts its boots on the PVC-backed disk (serial e2edata): it prints what it found and
// writes the next count, so a later boot proves the data outlived the VM and the local mode.
const USER_DATA = `#!/bin/sh
echo "hello from $(hostname), user-data running"
dev=
for b in /sys/block/vd*; do [ "$(cat $b/serial 2>/dev/null)" = e2edata ] && dev=/dev/\${b##*/}; done
prev=$(head -c 16 "$dev" | tr -dc 'a-z0-9=')
echo "QVIRT-E2E prev=[$prev]"
n=$(( \${prev#boots=} + 0 )) 2>/dev/null || n=0
printf 'boots=%d\\0' $((n + 1)) | dd of="$dev" conv=notrunc,fsync 2>/dev/null
echo "QVIRT-E2E wrote boots=$((n + 1))"
`;

test.before(async () => {
  await importTestGuest(store);
  local = await startLocalMode({ dataDir, port: 0, emulation: 'auto', imageStore: store, log });
});

test.after(async () => {
  try { await local?.stop(); } finally { t.cleanup(); }
});

test('a VM whose cloud-init user-data the guest runs, with a PVC disk; a Halted VM stays stopped', async () => {
  await apply('pvc', `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: keeper-data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 16Mi
`);
  await apply('keeper', vmYaml('keeper', 'Always', {
    disks: `
            - name: data
              serial: e2edata
              disk:
                bus: virtio
            - name: cloudinit
              disk:
                bus: virtio`,
    volumes: `
        - name: data
          persistentVolumeClaim:
            claimName: keeper-data
        - name: cloudinit
          cloudInitNoCloud:
            userData: |
${USER_DATA.split('\n').map((l) => `              ${l}`).join('\n')}`,
  }));
  await apply('sleeper', vmYaml('sleeper', 'Halted'));
  const vmi = await running('keeper');
  const out = await consoleMatches(vmi, /QVIRT-USERDATA-EXIT code=\d+/);
  assert.match(out, /QVIRT-USERDATA-START/);
  assert.match(out, /hello from keeper, user-data running/);
  assert.match(out, /QVIRT-E2E prev=\[\]/);
  assert.match(out, /QVIRT-E2E wrote boots=1/);
  assert.match(out, /QVIRT-USERDATA-EXIT code=0/);
  // The guest's vCPU thread below every pod's control threads: on cgroup v1 in the pod's cgroup of the vCPU
  // tier (kubepods-<hash>/vcpus/pod<uid>), QEMU's main loop in the compute container's cgroup (kubepods-…/<qos>/pod<uid>/compute); where the runner has no
  // cgroup v1 (cgroup v2, or nothing writable) the vCPU stays where QEMU is (below it by nice only).
  const [qemu] = qemuPids('keeper');
  assert.ok(qemu, 'the keeper VM\'s QEMU runs');
  const vcpuTids = readdirSync(`/proc/${qemu}/task`).map(Number).filter((tid) => /^CPU \d+\/(TCG|KVM)$/.test(readFileSync(`/proc/${qemu}/task/${tid}/comm`, 'utf8').trim()));
  assert.is(vcpuTids.length, 1, 'one vCPU thread');
  const mainCg = cpuCgroupOf(qemu!, qemu!);
  const vcpuCg = cpuCgroupOf(qemu!, vcpuTids[0]!);
  const inPod = /^(.*\/kubepods-[0-9a-f]+)\/(?:burstable\/|besteffort\/)?pod([0-9a-f-]+)\/compute$/.exec(mainCg.path);
  if (mainCg.version === 1 && inPod) assert.is(vcpuCg.path, `${inPod[1]}/vcpus/pod${inPod[2]}`, `the vCPU in the vCPU tier (QEMU's main loop in ${mainCg.path})`);
  else assert.is(vcpuCg.path, mainCg.path, `cgroup v${mainCg.version}${inPod ? '' : ', no pod cgroup'}: the vCPU beside QEMU's main loop`);
  assert.match(await kubectl('get', 'vm'), /keeper\s+\S+\s+Running\s+True[\s\S]*sleeper\s+\S+\s+Stopped\s+False/);
  assert.is(await getVmi('sleeper'), undefined);
});

test('bad manifests: kubectl shows an error naming the field; nothing else is disturbed', async () => {
  const before = (await getVmi('keeper'))!;
  const unknown = await kubectlFails('apply', '-f', (writeFileSync(join(t.path, 'bad1.yaml'), vmYaml('bad-unknown', 'Always').replace('  runStrategy:', '  runStrategyy: Always\n  runStrategy:')), join(t.path, 'bad1.yaml')));
  assert.match(unknown, /unknown field "spec\.runStrategyy"/);
  const wrongType = await kubectlFails('apply', '-f', (writeFileSync(join(t.path, 'bad2.yaml'), vmYaml('bad-type', 'Always').replace('terminationGracePeriodSeconds: 20', 'terminationGracePeriodSeconds: twenty')), join(t.path, 'bad2.yaml')));
  assert.match(wrongType, /spec\.template\.spec\.terminationGracePeriodSeconds/);
  const invalid = await kubectlFails('apply', '-f', (writeFileSync(join(t.path, 'bad3.yaml'), vmYaml('bad-value', 'Sometimes')), join(t.path, 'bad3.yaml')));
  assert.match(invalid, /spec\.runStrategy/);
  assert.match(invalid, /Sometimes/);
  for (const err of [unknown, wrongType, invalid]) assert.not.match(err, /panic|TypeError|undefined/, err);
  // Nothing was created, the running VM was not touched.
  assert.not.match(await kubectl('get', 'vm', '-o', 'name'), /bad-/);
  const after = (await getVmi('keeper'))!;
  assert.is(after.metadata!.uid, before.metadata!.uid);
  assert.is(after.status!.phase, 'Running');
});

test('runStrategy Always + QEMU killed: restarted at once after a crash, crash-loop backoff when it keeps dying before it runs, then Running again', async () => {
  await apply('crashy', vmYaml('crashy', 'Always'));
  const first = await running('crashy');
  let pids = await waitFor('QEMU of crashy', async () => { const p = qemuPids('crashy'); return p.length > 0 && p; }, 30_000);
  for (const p of pids) process.kill(p, 'SIGKILL');
  // It had been Running: a crash, not a failed start — a new VMI without backoff.
  const second = await running('crashy', first.metadata!.uid);
  assert.is((await getVm('crashy')).status?.startFailure, undefined);

  // Now each start fails before the VM runs: its launcher pod goes away as soon as it appears
  // (force-deleted). Failed starts → CrashLoopBackOff. (A launcher killed with SIGKILL while its VMI
  // is Scheduled is not noticed by the node agent, which retries the Sync: see the report.)
  let killing = true;
  let kills = 0;
  const killer = (async () => {
    while (killing) {
      const pods = await L().client.list<KubeObject>(Resources.pods, { namespace: 'default' }).catch(() => ({ items: [] as KubeObject[] }));
      for (const p of pods.items) {
        if (!p.metadata?.name?.startsWith('virt-launcher-crashy-') || p.metadata.deletionTimestamp) continue;
        await L().client.delete(Resources.pods, 'default', p.metadata.name, { gracePeriodSeconds: 0 }).then(() => { kills++; }, () => undefined);
      }
      await sleep(100);
    }
  })();
  pids = [];
  for (const p of qemuPids('crashy')) process.kill(p, 'SIGKILL');
  let vm: Vm;
  try {
    vm = await waitFor('VM crashy in CrashLoopBackOff', async () => { const v = await getVm('crashy'); return v.status?.printableStatus === 'CrashLoopBackOff' && v; }, 180_000);
  } finally {
    killing = false;
    await killer;
  }
  assert.ok(kills > 0);
  assert.ok((vm.status?.startFailure?.consecutiveFailCount ?? 0) >= 1, JSON.stringify(vm.status));
  assert.ok(vm.status?.startFailure?.retryAfterTimestamp, 'retryAfterTimestamp set');
  assert.match(await kubectl('get', 'vm', 'crashy'), /crashy\s+\S+\s+CrashLoopBackOff\s+False/);
  // Left alone, it starts again after the backoff and runs; the failure record is cleared.
  const third = await running('crashy', second.metadata!.uid);
  assert.ok(third);
  await waitFor('startFailure cleared', async () => (await getVm('crashy')).status?.startFailure === undefined, 30_000);
  assert.match(await kubectl('get', 'vm', 'crashy'), /crashy\s+\S+\s+Running\s+True/);
  await kubectl('delete', 'vm', 'crashy', '--wait=true', '--timeout=60s');
});

test('qvirt local up stopped and started again: objects intact, Always VM back with its PVC data, Halted VM still stopped', async () => {
  const keeperVm = await getVm('keeper');
  const sleeperVm = await getVm('sleeper');
  const oldVmi = (await getVmi('keeper'))!;
  const pvc = await L().client.get<Pvc>(Resources.persistentVolumeClaims, 'default', 'keeper-data');
  await L().stop();
  local = undefined;
  assert.equal(qemuPids('keeper'), [], 'the drain stopped the guest');
  local = await startLocalMode({ dataDir, port: 0, emulation: 'auto', imageStore: store, log });
  assert.is((await getVm('keeper')).metadata!.uid, keeperVm.metadata!.uid);
  assert.is((await getVm('sleeper')).metadata!.uid, sleeperVm.metadata!.uid);
  const pvcAfter = await L().client.get<Pvc>(Resources.persistentVolumeClaims, 'default', 'keeper-data');
  assert.is(pvcAfter.metadata!.uid, pvc.metadata!.uid);
  assert.is(pvcAfter.status?.phase, 'Bound');
  assert.is(pvcAfter.spec?.volumeName, pvc.spec?.volumeName);
  const vmi = await running('keeper', oldVmi.metadata!.uid);
  const out = await consoleMatches(vmi, /QVIRT-E2E wrote boots=\d/);
  assert.match(out, /QVIRT-E2E prev=\[boots=1\]/, 'the guest found what it wrote before the restart');
  assert.match(out, /QVIRT-E2E wrote boots=2/);
  await sleep(2000);
  assert.is(await getVmi('sleeper'), undefined, 'Halted stays stopped');
  assert.is((await getVm('sleeper')).status?.printableStatus, 'Stopped');
});

test.run();

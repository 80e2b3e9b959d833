// The whole life of a user's VM on a real Kubernetes cluster (kube-apiserver, scheduler,
// controller-manager, kubelet with containerd and runc, the CNI bridge, kube-proxy), each step
// asserted: qvirt's images built and loaded into the node's containerd; `qvirt install
// --use-emulation` until ready, and ready means serving; the CRDs' rules and the admission webhooks
// enforced by the real API server; a VirtualMachine booting the test guest from a kernel-boot
// container image with a containerDisk (KubeVirt's container-disk mechanism: OCI images in
// containerd, no image store) and a disk on a PersistentVolumeClaim (a static hostPath PV) →
// VMI Running; `kubectl get vmi -o wide`; `qvirt console`; virt-handler SIGKILLed and restarted by
// the kubelet with the VM running on; pause/unpause; the masquerade guest
// answering on its pod IP through the real CNI; KubeVirt's own virtctl through the aggregation
// layer (version, objectgraph, pause/unpause, console, port-forward, vnc, vnc screenshot; RBAC on the subresources); instance
// types (KubeVirt's examples, a pinning ControllerRevision, a missing one, a conflict refused by the
// webhook, virtctl expand); stop; delete; `qvirt uninstall`, after which no
// qvirt object, mount, process, socket or QEMU is left on the node.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chownSync, existsSync, mkdirSync, openSync, closeSync, readFileSync, readdirSync, rmSync, ftruncateSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { withRealCluster, kubectl, loadImages, pruneSharedClusterImages, type RealCluster } from '../lib/real-cluster.ts';
import { tempDir } from '../lib/tmp.ts';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { apply, buildGuestImages, buildQvirtImages, getJson, openConsole, qvirt, repoRoot, type GuestImages } from './lib.ts';
import { waitFor } from '../lib/within.ts';
import { virtctl, virtctlSpawn } from '../lib/virtctl.ts';
import { decodePng } from '../lib/png.ts';

const NS = 'qvirt-e2e';
const VM = 'e2e-vm';
const work = tempDir('qe2e');
const pvDir = `/var/lib/qvirt-e2e-pv-${process.pid}`;
/** A PersistentVolume's source cannot change once bound: each run its own. */
const PV = `e2e-pv-${process.pid}`;
const HP_PV = `e2e-hp-pv-${process.pid}`;
const hpDir = `/var/lib/qvirt-e2e-hp-${process.pid}`;
let c: RealCluster;
let guest: GuestImages;
let installed = false;

/** The command lines of the processes the kubelet runs in pods (their cgroup is under kubepods). */
function podProcesses(): string[] {
  const out: string[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      // The kubelet's pods (cgroupfs /kubepods/..., systemd /kubepods.slice/...), not the local mode's
      // (/qvirt/kubepods-<id>/...) that other test files run beside this one.
      if (!/:\/kubepods(\/|\.slice)/m.test(readFileSync(`/proc/${d}/cgroup`, 'utf8'))) continue;
      out.push(`${d} ${readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 200)}`);
    } catch { /* gone */ }
  }
  return out;
}

const vmiJson = () => getJson(c, ['vmi', VM, '-n', NS]);
const launcherPod = () => getJson<{ items: any[] }>(c, ['pods', '-n', NS, '-l', `kubevirt.io=virt-launcher,vm.kubevirt.io/name=${VM}`])?.items.find((p) => !p.metadata.deletionTimestamp);

function vmManifest(): Record<string, unknown> {
  const userData = [
    '#!/bin/sh',
    'for b in /sys/block/*; do [ "$(cat $b/serial 2>/dev/null)" = pvcdisk ] && d=${b##*/}; done',
    'printf "QVIRT-E2E-PVC %s" "$(hostname)" | dd of=/dev/$d bs=512 count=1 conv=sync,fsync 2>/dev/null && echo "QVIRT-E2E-PVC-WRITTEN dev=$d"',
    'printf \'#!/bin/sh\\necho qvirt-e2e-answer\\n\' > /tmp/answer; chmod +x /tmp/answer',
    'nc -ll -p 8080 -e /tmp/answer </dev/null >/dev/null 2>&1 &',
  ].join('\n');
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine',
    metadata: { name: VM, namespace: NS },
    spec: {
      runStrategy: 'Halted',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': VM } },
        spec: {
          terminationGracePeriodSeconds: 10,
          domain: {
            firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests', container: { image: guest.kernel, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img', imagePullPolicy: 'IfNotPresent' } } },
            devices: {
              disks: [
                { name: 'containerdisk', serial: 'containerdisk', disk: { bus: 'virtio' } },
                { name: 'pvcdisk', serial: 'pvcdisk', disk: { bus: 'virtio' } },
                { name: 'cloudinit', disk: { bus: 'virtio' } },
              ],
              interfaces: [{ name: 'default', masquerade: {} }],
            },
            resources: { requests: { memory: '256Mi' } },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [
            { name: 'containerdisk', containerDisk: { image: guest.disk, imagePullPolicy: 'IfNotPresent' } },
            { name: 'pvcdisk', persistentVolumeClaim: { claimName: 'e2e-claim' } },
            { name: 'cloudinit', cloudInitNoCloud: { userData } },
          ],
        },
      },
    },
  };
}

test.before(async () => {
  c = await withRealCluster();
});

test.after(async () => {
  // Whatever failed above: the cluster is left without qvirt (the runner stops a shared cluster).
  if (installed) await qvirt(c, ['uninstall', '--force', '--timeout', '120s']).catch(() => undefined);
  try { kubectl(c, ['delete', 'namespace', NS, '--ignore-not-found', '--wait=false']); } catch { /* best effort */ }
  try { kubectl(c, ['delete', 'pv', PV, '--ignore-not-found', '--wait=false']); } catch { /* best effort */ }
  try { kubectl(c, ['delete', 'pv', HP_PV, '--ignore-not-found', '--wait=false']); } catch { /* best effort */ }
  rmSync(pvDir, { recursive: true, force: true });
  rmSync(hpDir, { recursive: true, force: true });
  work.cleanup();
});

test('images: npm run images and the guest images, loaded into the node\'s containerd', async () => {
  const built = await buildQvirtImages();
  assert.is(built.length, 2);
  guest = await buildGuestImages(work.path);
  if (process.env.QVIRT_E2E_SHARED === '1') pruneSharedClusterImages([...built.map((b) => b.ref), guest.kernel, guest.disk]);
  loadImages(c, [...built.map((b) => b.archive), ...guest.archives]);
  // The kubelet reports the node's images with its next status update.
  const want = [...built.map((b) => b.ref), guest.kernel, guest.disk].map((r) => r.replace(/^docker\.io\//, ''));
  const images = await waitFor('the images in the node\'s status', () => {
    const names = kubectl(c, ['get', 'nodes', '-o', 'jsonpath={.items[*].status.images[*].names}']);
    return want.every((w) => names.includes(w)) ? names : undefined;
  }, 90_000, 2000);
  for (const w of want) assert.ok(images.includes(w), w);
});

test('qvirt install --use-emulation: ready means serving — the first VM apply after it passes the webhooks', async () => {
  const r = await qvirt(c, ['install', '--use-emulation', '--timeout', '300s']);
  installed = true;
  kubectl(c, ['create', 'namespace', NS]);
  assert.is(r.code, 0, r.out);
  assert.match(r.out, /qvirt is installed\./);
  assert.match(r.out, /admission webhooks: serving/);
  const node = getJson(c, ['nodes'])!.items[0];
  assert.is(node.metadata.labels['kubevirt.io/schedulable'], 'true', 'the node takes VMs');
  // KubeVirt's device plugins advertise 1000 devices, unhealthy where the node lacks the device: a node
  // without /dev/kvm (some machines here have none) shows kvm allocatable 0, and an emulating cluster's
  // launcher pods do not request it. The node agent's log says which it saw; the shared cluster is this machine.
  const allocatable = JSON.stringify(node.status.allocatable);
  assert.is(node.status.allocatable['devices.kubevirt.io/tun'], '1k', `devices.kubevirt.io/tun allocatable: ${allocatable}`);
  const handlerLogAtInstall = kubectl(c, ['logs', '-n', 'kubevirt', 'daemonset/virt-handler']);
  const kvmAbsent = handlerLogAtInstall.split('\n').some((l) => l.includes('"device":"/dev/kvm"') && l.includes('device is not present'));
  if (c.shared) assert.is(kvmAbsent, !existsSync('/dev/kvm'), `the node agent's view of /dev/kvm matches this machine's (absent: ${!existsSync('/dev/kvm')})`);
  assert.is(node.status.allocatable['devices.kubevirt.io/kvm'], kvmAbsent ? '0' : '1k', `devices.kubevirt.io/kvm allocatable with /dev/kvm ${kvmAbsent ? 'absent' : 'present'}: ${allocatable}`);
  // KubeVirt's scrape target: both controller replicas and the node agent behind kubevirt-prometheus-metrics, on `metrics`.
  type Slices = { items: { endpoints?: { conditions?: { ready?: boolean }; targetRef?: { name: string } }[]; ports?: { name: string; port: number }[] }[] };
  const metricsPods = () => {
    const slices = getJson<Slices>(c, ['endpointslices', '-n', 'kubevirt', '-l', 'kubernetes.io/service-name=kubevirt-prometheus-metrics'])?.items ?? [];
    const pods = slices.flatMap((x) => x.endpoints ?? []).filter((e) => e.conditions?.ready).map((e) => e.targetRef?.name ?? '').sort();
    return { pods, named: slices.length > 0 && slices.every((x) => x.ports?.some((p) => p.name === 'metrics')) };
  };
  const behind = await waitFor('both controller replicas and the node agent ready behind kubevirt-prometheus-metrics', () => {
    const m = metricsPods();
    return m.pods.filter((p) => p.startsWith('virt-controller-')).length === 2 && m.pods.some((p) => p.startsWith('virt-handler-')) ? m : undefined;
  }, 120_000, 1000).catch((err: Error) => { throw new Error(`${err.message}; behind it now: ${JSON.stringify(metricsPods())}`); });
  assert.ok(behind.named, 'on the port named metrics');
  // Live migration on the node agent: it made the migration CA's Secret (its Role allows that one) and issued
  // itself a handler certificate from it; its relays listen on its pod IP.
  const caSecret = getJson(c, ['secret', 'kubevirt-virt-handler-migration-ca', '-n', 'kubevirt']);
  assert.ok(caSecret?.data?.['ca.crt'] && caSecret.data['ca.key'], 'the migration CA Secret holds ca.crt and ca.key');
  const handlerLog = kubectl(c, ['logs', '-n', 'kubevirt', 'daemonset/virt-handler']);
  assert.match(handlerLog, 'live migration: relays on this address, TLS from the migration CA');
  // The very first write after install: no "connection refused" from the webhooks.
  apply(c, [vmManifest()]);
  assert.ok(getJson(c, ['vm', VM, '-n', NS]), 'the VM was stored');
});

test('the real API server enforces the CRD rules and KubeVirt\'s webhooks, in KubeVirt\'s words', async () => {
  const bad = structuredClone(vmManifest()) as any;
  bad.metadata.name = 'e2e-bad';
  bad.spec.template.spec.domain.devices.disks[0].disk.bus = 'ide';
  let err = '';
  try { apply(c, [bad]); } catch (e) { err = (e as Error).message; }
  assert.match(err, /spec\.template\.spec\.domain\.devices\.disks\[0\]\.disk\.bus/, err);
  assert.match(err, /virtio|sata|scsi|usb/, err);
  // A hostDisk volume: the CRD's rules let it through (they cannot know the cluster's feature
  // gates), KubeVirt's webhook refuses it.
  const gated = structuredClone(vmManifest()) as any;
  gated.metadata.name = 'e2e-gated';
  gated.spec.template.spec.volumes[1] = { name: 'pvcdisk', hostDisk: { path: '/var/tmp/e2e.img', type: 'DiskOrCreate', capacity: '64Mi' } };
  err = '';
  try { apply(c, [gated]); } catch (e) { err = (e as Error).message; }
  // kubectl shows the causes (as for KubeVirt: "The request is invalid: <field>: <message>") ...
  assert.match(err, /spec\.template\.spec\.volumes\[1\]: HostDisk feature gate is not enabled/, err);
  // ... the API server's Status names the webhook.
  const client = new KubeClient(loadKubeConfig(c.kubeconfig));
  try {
    err = await client.create(Resources.virtualMachines, gated).then(() => 'created', (e: Error) => e.message);
  } finally {
    await client.close();
  }
  assert.match(err, /admission webhook "virtualmachine-validator\.kubevirt\.io" denied the request: .*HostDisk feature gate is not enabled/, err);
  assert.not.ok(getJson(c, ['vm', 'e2e-bad', '-n', NS]));
  assert.not.ok(getJson(c, ['vm', 'e2e-gated', '-n', NS]));
});

test('instance types on the real API server: KubeVirt\'s examples apply, a VM naming one is pinned by a ControllerRevision, a missing one fails its sync, a conflict is refused by the webhook, virtctl expand', async () => {
  const examples = join(repoRoot, 'test/fixtures/kubevirt-examples/instancetype');
  kubectl(c, ['apply', '-n', NS, '-f', join(examples, 'csmall.yaml'), '-f', join(examples, 'virtio.yaml'), '-f', join(examples, 'cluster-csmall.yaml')]);
  assert.match(kubectl(c, ['get', 'vmf', '-n', NS, '-o', 'name']), /virtualmachineinstancetype\.instancetype\.kubevirt\.io\/csmall/);
  assert.match(kubectl(c, ['get', 'vmcf', '-o', 'name']), /cluster-csmall/);
  const sized = structuredClone(vmManifest()) as any;
  sized.metadata.name = 'e2e-sized';
  delete sized.spec.template.spec.domain.resources;
  sized.spec.instancetype = { kind: 'VirtualMachineInstancetype', name: 'csmall' };
  sized.spec.preference = { kind: 'VirtualMachinePreference', name: 'virtio' };
  const missing = structuredClone(sized);
  missing.metadata.name = 'e2e-missing';
  missing.spec.instancetype = { name: 'nonexistent' };
  delete missing.spec.preference;
  apply(c, [sized, missing]);
  const vm = await waitFor('e2e-sized pinned', () => { const v = getJson(c, ['vm', 'e2e-sized', '-n', NS]); return v?.status?.instancetypeRef?.controllerRevisionRef?.name ? v : undefined; }, 60_000);
  const revision = getJson(c, ['controllerrevision', vm.status.instancetypeRef.controllerRevisionRef.name, '-n', NS])!;
  assert.is(revision.metadata.labels['instancetype.kubevirt.io/object-name'], 'csmall');
  assert.is(revision.metadata.ownerReferences[0].uid, vm.metadata.uid);
  const failed = await waitFor('e2e-missing Failure', () => getJson(c, ['vm', 'e2e-missing', '-n', NS])?.status?.conditions?.find((x: any) => x.type === 'Failure'), 60_000);
  assert.equal([failed.reason, failed.message], ['FailedFindInstancetype', 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nonexistent" not found']);
  let err = '';
  try { kubectl(c, ['apply', '-n', NS, '-f', join(examples, 'vm-cirros-csmall.yaml')]); } catch (e) { err = (e as Error).message; }
  assert.match(err, /spec\.template\.spec\.domain\.memory\.guest: VM field\(s\) spec\.template\.spec\.domain\.memory\.guest conflicts with selected instance type/, err);
  const expanded = await virtctl(c.kubeconfig, ['expand', '--vm', 'e2e-sized', '-n', NS, '--output', 'json']);
  assert.is(expanded.code, 0, expanded.err);
  const spec = JSON.parse(expanded.out).spec.template.spec;
  assert.equal([spec.domain.cpu.sockets, spec.domain.memory.guest], [1, '128Mi']);
  kubectl(c, ['delete', 'vm', 'e2e-sized', 'e2e-missing', '-n', NS, '--wait=true', '--timeout=60s']);
  kubectl(c, ['delete', 'vmcf', 'cluster-csmall']);
});

test('a claim on a static hostPath PersistentVolume, bound', async () => {
  mkdirSync(pvDir, { recursive: true });
  // A raw disk image, as CDI leaves it in a Filesystem claim: owned by the launcher's user, qemu (107)
  // — a hostPath volume gets no fsGroup, and KubeVirt's launcher runs as non-root.
  const fd = openSync(join(pvDir, 'disk.img'), 'w');
  ftruncateSync(fd, 64 << 20);
  closeSync(fd);
  chownSync(join(pvDir, 'disk.img'), 107, 107);
  apply(c, [
    { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: PV }, spec: { capacity: { storage: '64Mi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'qvirt-e2e', hostPath: { path: pvDir, type: 'Directory' } } },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'e2e-claim', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'qvirt-e2e', volumeName: PV, resources: { requests: { storage: '64Mi' } } } },
  ]);
  await waitFor('the claim Bound', () => getJson(c, ['pvc', 'e2e-claim', '-n', NS])?.status?.phase === 'Bound', 60_000);
});

test('qvirt start → VMI Running from OCI images in containerd; kubectl get vmi -o wide shows KubeVirt\'s columns', async () => {
  const r = await qvirt(c, ['start', VM, '-n', NS]);
  assert.is(r.code, 0, r.out);
  const vmi = await waitFor('VMI Running', () => { const v = vmiJson(); return v?.status?.phase === 'Running' ? v : undefined; }, 240_000, 2000)
    .catch((err: Error) => { throw new Error(`${err.message}\nVMI: ${JSON.stringify(vmiJson()?.status ?? {})}\npod: ${JSON.stringify(launcherPod()?.status ?? {}).slice(0, 3000)}\n${kubectl(c, ['get', 'events', '-n', NS, '--sort-by=.lastTimestamp'])}`); });
  const pod = launcherPod();
  assert.ok(pod, 'a launcher pod');
  const names = pod.spec.containers.map((x: any) => x.name);
  assert.ok(names.includes('compute'), names.join(','));
  assert.ok(names.includes('volumecontainerdisk'), `containerDisk container: ${names.join(',')}`);
  const wide = kubectl(c, ['get', 'vmi', VM, '-n', NS, '-o', 'wide']);
  const [header, row] = wide.trim().split('\n');
  assert.equal(header!.split(/\s{2,}/), ['NAME', 'AGE', 'PHASE', 'IP', 'NODENAME', 'READY', 'LIVE-MIGRATABLE', 'PAUSED']);
  assert.match(row!, new RegExp(`^${VM}\\s+\\S+\\s+Running\\s+${vmi.status.interfaces[0].ipAddress.replace(/\./g, '\\.')}\\s+${vmi.status.nodeName}\\s+True\\s+`));
  assert.is(vmi.status.interfaces[0].ipAddress, pod.status.podIP, 'masquerade: the VMI shows its pod IP');
  const vm = await waitFor('VM Ready', () => { const v = getJson(c, ['vm', VM, '-n', NS]); return v?.status?.ready ? v : undefined; }, 60_000);
  assert.is(vm.status.printableStatus, 'Running');
});

test('the guest booted with both disks; the containerDisk came from containerd; the guest wrote the claim\'s disk', async () => {
  const pod = launcherPod();
  const logs = await waitFor('QVIRT-GUEST-READY in the guest-console-log container', () => {
    const l = kubectl(c, ['logs', '-n', NS, pod.metadata.name, '-c', 'guest-console-log']);
    return l.includes('QVIRT-GUEST-READY') && l.includes('QVIRT-E2E-PVC-WRITTEN') ? l : undefined;
  }, 240_000, 2000);
  assert.match(logs, /QVIRT-DISK name=vd\w+ serial=containerdisk size=131072 /);
  assert.match(logs, /QVIRT-DISK name=vd\w+ serial=pvcdisk /);
  const written = readFileSync(join(pvDir, 'disk.img')).subarray(0, 64).toString('latin1');
  assert.match(written, /^QVIRT-E2E-PVC /, 'the guest\'s write is in the claim\'s disk.img on the node');
});

test('qvirt console shows the guest and takes input', async () => {
  const con = openConsole(c, VM, NS);
  try {
    await con.waitFor(/Successfully connected|escape sequence|Ctrl-\]/i, 30_000).catch(() => undefined);
    con.send('\r');
    con.send('echo QVIRT-E2E-$((20+22))\r');
    await con.waitFor('QVIRT-E2E-42', 60_000);
  } finally {
    const code = await con.close();
    assert.is(code, 0, con.output.slice(-2000));
  }
});

test('SIGKILL to virt-handler: the kubelet restarts it, the same QEMU runs on, the VMI stays Running (the next steps go through the new handler)', async () => {
  const handlerPod = () => getJson<{ items: any[] }>(c, ['pods', '-n', 'kubevirt', '-l', 'kubevirt.io=virt-handler'])!.items[0];
  const handlerStatus = () => (handlerPod()?.status?.containerStatuses ?? []).find((s: any) => s.name === 'virt-handler');
  const restarts = handlerStatus().restartCount as number;
  const qemus = () => podProcesses().filter((p) => p.includes('qemu-system'));
  const handlers = () => podProcesses().filter((p) => /\/qvirt\.mjs handler /.test(p));
  const qemuBefore = qemus();
  assert.is(qemuBefore.length, 1, qemuBefore.join('\n'));
  const [handler, ...more] = handlers();
  assert.ok(handler && more.length === 0, `one handler process: ${handlers().join('\n')}`);
  const vmiBefore = vmiJson()!;
  const podUid = launcherPod().metadata.uid;
  process.kill(Number(handler.split(' ')[0]), 'SIGKILL');
  await waitFor('virt-handler restarted by the kubelet and Ready', () => { const s = handlerStatus(); return s?.restartCount > restarts && s.ready; }, 180_000, 1000)
    .catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(handlerStatus())}`); });
  const [again, ...others] = handlers();
  assert.ok(again && others.length === 0 && again !== handler, `one new handler process: ${handlers().join('\n')}`);
  assert.equal(qemus(), qemuBefore, 'the same QEMU, and no second one');
  const vmi = vmiJson()!;
  assert.is(vmi.metadata.uid, vmiBefore.metadata.uid, 'the same VMI');
  assert.is(vmi.status.phase, 'Running');
  assert.is(launcherPod().metadata.uid, podUid, 'the same launcher pod');
  assert.ok((vmi.status.conditions ?? []).some((x: any) => x.type === 'Ready' && x.status === 'True'), JSON.stringify(vmi.status.conditions));
});

test('pause / unpause: the VMI\'s Paused condition and printer column follow', async () => {
  let r = await qvirt(c, ['pause', 'vm', VM, '-n', NS]);
  assert.is(r.code, 0, r.out);
  await waitFor('Paused=True', () => (vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused' && x.status === 'True'), 60_000);
  assert.match(kubectl(c, ['get', 'vmi', VM, '-n', NS, '-o', 'wide']).trim().split('\n')[1]!, /\sTrue\s*$/);
  r = await qvirt(c, ['unpause', 'vm', VM, '-n', NS]);
  assert.is(r.code, 0, r.out);
  await waitFor('Paused gone', () => !(vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused'), 60_000);
});

test('addvolume / removevolume of a claim on the running VM, through KubeVirt\'s attachment pod', async () => {
  // An empty claim: the handler makes its disk.img (the claim's size) as KubeVirt does.
  mkdirSync(hpDir, { recursive: true });
  apply(c, [
    { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: HP_PV }, spec: { capacity: { storage: '32Mi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'qvirt-e2e', hostPath: { path: hpDir, type: 'Directory' } } },
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'hp-claim', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'qvirt-e2e', volumeName: HP_PV, resources: { requests: { storage: '32Mi' } } } },
  ]);
  await waitFor('hp-claim Bound', () => getJson(c, ['pvc', 'hp-claim', '-n', NS])?.status?.phase === 'Bound', 60_000);
  const consoleLog = () => kubectl(c, ['logs', '-n', NS, launcherPod().metadata.name, '-c', 'guest-console-log']);
  let r = await qvirt(c, ['addvolume', VM, '-n', NS, '--volume-name=hp-claim', '--serial=hpdisk', '--bus=virtio']);
  assert.is(r.code, 0, r.out);
  const volStatus = () => (vmiJson()?.status?.volumeStatus ?? []).find((v: any) => v.name === 'hp-claim');
  await waitFor('hp-claim Ready', () => volStatus()?.phase === 'Ready', 180_000, 2000)
    .catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(volStatus())}\nVM status: ${JSON.stringify(getJson(c, ['vm', VM, '-n', NS])?.status)}\nVMI volumes: ${JSON.stringify(vmiJson()?.spec?.volumes)}\n${kubectl(c, ['logs', '-n', 'kubevirt', '-l', 'kubevirt.io=virt-controller', '--tail=30'])}`); });
  const attach = getJson<{ items: any[] }>(c, ['pods', '-n', NS, '-l', 'kubevirt.io=hotplug-disk'])!.items;
  assert.is(attach.length, 1, 'one attachment pod');
  assert.match(attach[0].metadata.name, /^hp-volume-/);
  assert.is(attach[0].spec.nodeName, vmiJson()!.status.nodeName, 'on the VMI\'s node');
  assert.is(volStatus().hotplugVolume.attachPodName, attach[0].metadata.name);
  await waitFor('the guest sees the hotplugged disk', () => /QVIRT-DISK-ADDED name=vd\w+ serial=hpdisk size=65536 /.test(consoleLog()), 120_000, 2000);
  assert.ok(existsSync(join(hpDir, 'disk.img')), 'disk.img made in the empty claim');
  r = await qvirt(c, ['removevolume', VM, '-n', NS, '--volume-name=hp-claim']);
  assert.is(r.code, 0, r.out);
  await waitFor('the guest saw the disk go', () => /QVIRT-DISK-REMOVED name=vd\w+ serial=hpdisk/.test(consoleLog()), 120_000, 2000);
  await waitFor('hp-claim gone from the VMI', () => !volStatus() && !(vmiJson()!.spec.volumes ?? []).some((v: any) => v.name === 'hp-claim'), 120_000, 2000);
  await waitFor('the attachment pod gone', () => getJson<{ items: any[] }>(c, ['pods', '-n', NS, '-l', 'kubevirt.io=hotplug-disk'])!.items.length === 0, 120_000, 2000);
  assert.not.ok(readFileSync('/proc/self/mountinfo', 'utf8').includes('hotplug-disks/hp-claim.img'), 'the bind mount is gone');
});

test('the masquerade guest answers on its pod IP through the real CNI', async () => {
  const ip = vmiJson()!.status.interfaces[0].ipAddress as string;
  const answer = await waitFor(`qvirt-e2e-answer from ${ip}:8080`, () => new Promise<string>((resolve) => {
    let got = '';
    const s = connect({ host: ip, port: 8080, timeout: 5000 });
    s.on('data', (d) => { got += d.toString(); });
    s.on('end', () => resolve(got));
    s.on('timeout', () => { s.destroy(); resolve(''); });
    s.on('error', () => resolve(''));
  }).then((g) => (g.includes('qvirt-e2e-answer') ? g : undefined)), 90_000, 2000);
  assert.match(answer, /qvirt-e2e-answer/);
});

test('KubeVirt\'s virtctl through kube-apiserver\'s aggregation layer: version, pause/unpause, console, port-forward, vnc, vnc screenshot, RBAC on the subresources', async () => {
  await waitFor('APIService v1.subresources.kubevirt.io Available', () => (getJson(c, ['apiservice', 'v1.subresources.kubevirt.io'])?.status?.conditions ?? []).some((x: any) => x.type === 'Available' && x.status === 'True'), 120_000, 2000)
    .catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify(getJson(c, ['apiservice', 'v1.subresources.kubevirt.io'])?.status)}`); });
  const kc = c.kubeconfig;
  let r = await virtctl(kc, ['version']);
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /\nServer Version: version\.Info\{GitVersion:"v\d+\.\d+\.\d+"/);

  // objectgraph (a GET with a body, through the aggregator), once the KubeVirt CR turns its feature gate on.
  const cr = getJson(c, ['kubevirt', 'kubevirt', '-n', 'kubevirt'])!;
  const gates: string[] = cr.spec?.configuration?.developerConfiguration?.featureGates ?? [];
  kubectl(c, ['patch', 'kubevirt', 'kubevirt', '-n', 'kubevirt', '--type=merge', '-p', JSON.stringify({ spec: { configuration: { developerConfiguration: { featureGates: [...gates, 'ObjectGraph'] } } } })]);
  r = await waitFor('virtctl objectgraph answered', async () => { const x = await virtctl(kc, ['objectgraph', VM, '-n', NS]); return x.code === 0 ? x : undefined; }, 60_000, 2000);
  const graph = JSON.parse(r.out);
  assert.equal(graph.objectReference, { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: VM, namespace: NS });
  assert.equal(graph.children.map((x: any) => `${x.objectReference.kind}/${x.objectReference.name}`), [`VirtualMachineInstance/${VM}`, 'PersistentVolumeClaim/e2e-claim']);
  assert.equal(graph.children[0].children.map((x: any) => x.objectReference.name), [launcherPod().metadata.name], 'the launcher pod below the VMI');

  r = await virtctl(kc, ['pause', 'vm', VM, '-n', NS]);
  assert.is(r.out, `VMI ${VM} was scheduled to pause\n`, r.err);
  await waitFor('Paused=True', () => (vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused' && x.status === 'True'), 60_000);
  r = await virtctl(kc, ['pause', 'vmi', VM, '-n', NS]);
  assert.is(r.code, 1);
  assert.match(r.err, /VMI is already paused/);
  r = await virtctl(kc, ['unpause', 'vmi', VM, '-n', NS]);
  assert.is(r.out, `VMI ${VM} was scheduled to unpause\n`, r.err);
  await waitFor('Paused gone', () => !(vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused'), 60_000);

  // migrate: the VM's claim is ReadWriteOnce, so the node agent reports LiveMigratable=False and virt-api refuses
  // the migration in KubeVirt's words (qvirt's CLI says the same); nothing to cancel either.
  const notMigratable = (vmiJson()?.status?.conditions ?? []).find((x: any) => x.type === 'LiveMigratable');
  assert.equal([notMigratable?.status, notMigratable?.reason], ['False', 'DisksNotLiveMigratable'], JSON.stringify(notMigratable));
  for (const cli of ['virtctl', 'qvirt'] as const) {
    const m = cli === 'virtctl' ? await virtctl(kc, ['migrate', VM, '-n', NS]) : await qvirt(c, ['migrate', VM, '-n', NS]).then((x) => ({ code: x.code, out: '', err: x.out }));
    assert.is(m.code, 1, `${cli} migrate: ${m.out}`);
    assert.match(m.err, `Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: ${notMigratable.message}`, cli);
    const cancel = cli === 'virtctl' ? await virtctl(kc, ['migrate-cancel', VM, '-n', NS]) : await qvirt(c, ['migrate-cancel', VM, '-n', NS]).then((x) => ({ code: x.code, out: '', err: x.out }));
    assert.is(cancel.code, 1, `${cli} migrate-cancel: ${cancel.out}`);
    assert.match(cancel.err, `Found no migration to cancel for ${VM}`, cli);
  }
  assert.is(getJson(c, ['virtualmachineinstancemigrations', '-n', NS])?.items?.length, 0, 'no migration object was made');

  // console: a websocket through kube-apiserver, virt-controller's virt-api, the node agent.
  const con = await virtctlSpawn(kc, ['console', VM, '-n', NS]);
  let conOut = '';
  let conErr = '';
  con.stdout!.on('data', (d: Buffer) => { conOut += d.toString('latin1'); });
  con.stderr!.on('data', (d: Buffer) => { conErr += d.toString(); });
  try {
    await waitFor(`virtctl console connected (${conErr})`, () => conErr.includes(`Successfully connected to ${VM} console`), 30_000);
    await waitFor('the guest shell on virtctl console', () => { con.stdin!.write('echo VIRTCTL-$((40+2))\n'); return conOut.includes('VIRTCTL-42'); }, 60_000, 2000);
  } finally {
    con.kill();
  }

  // port-forward to the guest's 8080 (its nc answers qvirt-e2e-answer).
  const pf = await virtctlSpawn(kc, ['port-forward', `vmi/${VM}/${NS}`, '18080:8080']);
  let pfErr = '';
  pf.stderr!.on('data', (d: Buffer) => { pfErr += d.toString(); });
  try {
    await waitFor(`virtctl port-forward listening (${pfErr})`, () => pfErr.includes('forwarding tcp 127.0.0.1:18080 to 8080'), 30_000);
    const answer = await waitFor('qvirt-e2e-answer through virtctl port-forward', () => new Promise<string>((resolve) => {
      let got = '';
      const s = connect({ host: '127.0.0.1', port: 18080, timeout: 5000 });
      s.on('data', (d) => { got += d.toString(); });
      s.on('end', () => resolve(got));
      s.on('timeout', () => { s.destroy(); resolve(''); });
      s.on('error', () => resolve(''));
    }).then((g) => (g.includes('qvirt-e2e-answer') ? g : undefined)), 60_000, 2000);
    assert.match(answer, /qvirt-e2e-answer/);
  } finally {
    pf.kill();
  }

  // vnc: QEMU's RFB greeting.
  const vnc = await virtctlSpawn(kc, ['vnc', VM, '-n', NS, '--proxy-only']);
  let vncOut = '';
  vnc.stdout!.on('data', (d: Buffer) => { vncOut += d.toString(); });
  try {
    const port = Number((await waitFor('virtctl vnc --proxy-only port', () => /"port":\s*(\d+)/.exec(vncOut) ?? undefined, 30_000))[1]);
    const greeting = await new Promise<string>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port });
      s.once('data', (d: Buffer) => { resolve(d.toString('latin1')); s.destroy(); });
      s.once('error', reject);
    });
    assert.match(greeting, /^RFB 003\.00\d\n/);
  } finally {
    vnc.kill();
  }
  // vnc screenshot: a binary answer (image/png) through the aggregator.
  r = await virtctl(kc, ['vnc', 'screenshot', VM, '-n', NS, '-f', join(work.path, 'screen.png')]);
  assert.is(r.code, 0, r.err);
  const screen = decodePng(readFileSync(join(work.path, 'screen.png')));
  assert.ok(screen.width >= 640 && screen.height >= 400, `a whole screen: ${screen.width}×${screen.height}`);

  // RBAC decides, for the caller's own identity: a service account without rights is refused;
  // given update on virtualmachineinstances/pause and /unpause, it may pause.
  kubectl(c, ['create', 'serviceaccount', 'e2e-user', '-n', NS]);
  const token = kubectl(c, ['create', 'token', 'e2e-user', '-n', NS, '--duration', '10m']).trim();
  const server = kubectl(c, ['config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']);
  const ca = kubectl(c, ['config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}']);
  const userKc = join(work.path, 'e2e-user.kubeconfig');
  writeFileSync(userKc, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}", certificate-authority-data: "${ca}"}}]\nusers: [{name: u, user: {token: "${token}"}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: ${NS}}}]\ncurrent-context: x\n`, { mode: 0o600 });
  r = await virtctl(userKc, ['pause', 'vmi', VM]);
  assert.is(r.code, 1);
  assert.match(r.err, new RegExp(`User "system:serviceaccount:${NS}:e2e-user" cannot update resource "virtualmachineinstances/pause" in API group "subresources\\.kubevirt\\.io"`));
  apply(c, [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'e2e-pauser', namespace: NS }, rules: [{ apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachineinstances/pause', 'virtualmachineinstances/unpause'], verbs: ['update'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'e2e-pauser', namespace: NS }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'e2e-pauser' }, subjects: [{ kind: 'ServiceAccount', name: 'e2e-user', namespace: NS }] },
  ]);
  r = await waitFor('the granted user may pause', async () => { const x = await virtctl(userKc, ['pause', 'vmi', VM]); return x.code === 0 ? x : undefined; }, 30_000, 1000);
  assert.is(r.out, `VMI ${VM} was scheduled to pause\n`);
  await waitFor('Paused=True (by the granted user)', () => (vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused' && x.status === 'True'), 60_000);
  r = await virtctl(userKc, ['unpause', 'vmi', VM]);
  assert.is(r.code, 0, r.err);
  await waitFor('Paused gone', () => !(vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused'), 60_000);
  r = await virtctl(userKc, ['soft-reboot', VM]);
  assert.is(r.code, 1, 'soft-reboot was not granted');
  assert.match(r.err, /cannot update resource "virtualmachineinstances\/softreboot"/);
  // Kubernetes' own edit role carries KubeVirt's verbs (kubevirt.io:edit aggregates into it).
  kubectl(c, ['create', 'rolebinding', 'e2e-user-edit', '--clusterrole=edit', `--serviceaccount=${NS}:e2e-user`, '-n', NS]);
  r = await waitFor('pause as an editor', async () => { const x = await virtctl(userKc, ['pause', 'vm', VM]); return x.code === 0 ? x : undefined; }, 30_000, 1000);
  await waitFor('Paused=True (by the editor)', () => (vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused' && x.status === 'True'), 60_000);
  r = await virtctl(userKc, ['unpause', 'vm', VM]);
  assert.is(r.code, 0, r.err);
  await waitFor('Paused gone', () => !(vmiJson()?.status?.conditions ?? []).some((x: any) => x.type === 'Paused'), 60_000);
  r = await virtctl(userKc, ['version']);
  assert.match(r.out, /Server Version: /, 'kubevirt.io:default lets every authenticated user read the version');
});

test('qvirt stop: the VMI and its launcher pod go, the VM is Stopped', async () => {
  const r = await qvirt(c, ['stop', VM, '-n', NS]);
  assert.is(r.code, 0, r.out);
  await waitFor('VMI gone', () => !vmiJson(), 120_000, 2000);
  await waitFor('launcher pod gone', () => !getJson<{ items: any[] }>(c, ['pods', '-n', NS, '-l', 'kubevirt.io=virt-launcher'])?.items.length, 120_000, 2000);
  await waitFor('VM Stopped', () => getJson(c, ['vm', VM, '-n', NS])?.status?.printableStatus === 'Stopped', 60_000);
});

test('delete the VM; qvirt uninstall; nothing of qvirt is left on the node', async () => {
  kubectl(c, ['delete', 'vm', VM, '-n', NS, '--wait=true', '--timeout=60s']);
  kubectl(c, ['delete', 'namespace', NS, '--wait=true', '--timeout=120s']);
  const r = await qvirt(c, ['uninstall', '--timeout', '180s']);
  assert.is(r.code, 0, r.out);
  installed = false;
  assert.match(r.out, /qvirt is uninstalled\./);
  for (const kind of ['virtualmachines.kubevirt.io', 'virtualmachineinstances.kubevirt.io', 'kubevirts.kubevirt.io']) assert.not.ok(getJson(c, ['crd', kind]), `${kind} left`);
  assert.not.ok(getJson(c, ['namespace', 'kubevirt']), 'namespace kubevirt left');
  assert.not.ok(getJson(c, ['validatingwebhookconfiguration', 'qvirt-validator']), 'webhook configuration left');
  await waitFor('no qvirt process in the node\'s pods', () => {
    const left = podProcesses().filter((p) => /qemu-system|qvirt|container-disk/.test(p));
    return left.length === 0 ? true : (console.log(`  still running:\n${left.join('\n')}`), false);
  }, 90_000, 2000);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => /container-disks|hotplug-disks|kubevirt/.test(l));
  assert.equal(mounts, [], 'no container-disk, hotplug or kubevirt mount left');
  const sockets: string[] = [];
  for (const d of ['/var/run/kubevirt', '/var/run/kubevirt-private', '/var/lib/kubelet/device-plugins']) {
    if (!existsSync(d)) continue;
    const walk = (p: string): void => { for (const e of readdirSync(p, { withFileTypes: true })) { const f = join(p, e.name); if (e.isDirectory()) walk(f); else if (e.isSocket() && !/kubelet\.sock$/.test(f)) sockets.push(f); } };
    walk(d);
  }
  assert.equal(sockets, [], 'no qvirt socket left');
});

test.run();

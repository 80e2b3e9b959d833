// `qvirt install` against the embedded API server: it applies every object (CRDs established
// before the KubeVirt CR, RBAC, workloads) and waits, printing progress, until virt-controller and
// virt-handler are ready. Meanwhile this test plays the parts a cluster would: the virt-controller
// Deployment's pod template becomes two pods run by the local pod runner (the local mode's kubelet)
// exactly as rendered — `/usr/bin/qvirt controller` with the manifest's flags — plus a kubeconfig
// (the local mode has no in-cluster networking), and the workload statuses are written from those
// pods as the Deployment and DaemonSet controllers would. The running replicas elect one leader on
// the Lease the manifest names, read the KubeVirt CR's configuration at start (useEmulation from
// `install --use-emulation`: no /dev/kvm request in launcher pods) and follow its changes; every
// request they make (through a recording proxy) is one their RBAC allows. Then
// `qvirt uninstall` refuses while a VMI exists and, forced, removes everything.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { KubeClient, isNotFound, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { kubeConfigForServer } from '../../src/kube/kubeconfig.ts';
import { startPodRunner, type PodRunner } from '../../src/local/pod-runner/index.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import type { Pod } from '../../src/local/pod-runner/pod.ts';
import { install, resourceOf, uninstall, WorkloadsExistError } from '../../src/cli/install.ts';
import { CONTROLLER_CLUSTER_RULES, CONTROLLER_NAMESPACE_RULES, HANDLER_AUTH_NAMESPACE, HANDLER_AUTH_RULES, INSTALL_NAMESPACE, Names, installObjects } from '../../src/deploy/manifests.ts';
import { rbacAllows, requestAttributes } from './api-calls.ts';
import { ImageNames } from '../../src/deploy/images.ts';
import { DEFAULT_LEASE_NAME } from '../../src/kube/controller-lease.ts';
import { tempDir } from '../lib/tmp.ts';
import { WEBHOOK_CONFIGURATION, WEBHOOK_SECRET } from '../../src/admission/controller-webhooks.ts';


const log = componentLogger('install-test', { level: 'error' });
const NODE = 'local';
const images = { [ImageNames.Launcher]: 'qvirt/launcher:0123456789ab', [ImageNames.Virt]: 'qvirt/virt:ba9876543210' };

async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 180_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try { const v = await f(); if (v) return v; } catch (err) { last = err; }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

/** Ends (SIGKILL, by process group) every container process the pod runner recorded under podsDir that still runs. */
async function endRecordedProcesses(podsDir: string): Promise<void> {
  const { existsSync, readdirSync, readFileSync } = await import('node:fs');
  if (!existsSync(podsDir)) return;
  for (const uid of readdirSync(podsDir)) {
    const file = join(podsDir, uid, 'state.json');
    if (!existsSync(file)) continue;
    const state = JSON.parse(readFileSync(file, 'utf8')) as { containers?: Record<string, { pid?: number; startTicks?: string }> };
    for (const c of Object.values(state.containers ?? {})) {
      if (!c.pid) continue;
      // The same process (start time), not a reused pid.
      const stat = existsSync(`/proc/${c.pid}/stat`) ? readFileSync(`/proc/${c.pid}/stat`, 'utf8') : '';
      if (!stat || stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] !== c.startTicks) continue;
      try { process.kill(-c.pid, 'SIGKILL'); } catch { try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ } }
    }
  }
}

const vmi = (name: string) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name, namespace: 'default' },
  spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } } },
});

interface Workload extends KubeObject { spec: { template: { metadata: { labels: Record<string, string> }; spec: Pod['spec'] & { containers: { env?: { name: string; value?: string }[] }[] } } }; status?: Record<string, unknown> }

test('qvirt install applies everything, runs the controller pods as rendered, waits; uninstall removes it', async () => {
  const dir = tempDir('qvin');
  const api: ApiServer = await startApiServer({ tls: false, log });
  const client = new KubeClient(kubeConfigForServer(api.url));
  // The controller pods reach the API server through a recording proxy: every request they make
  // is checked against the RBAC the manifests grant their service account.
  const seen: { method: string; url: string }[] = [];
  const proxy = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '' });
    const up = http.request(new URL(req.url ?? '/', api.url), { method: req.method, headers: req.headers }, (r) => { res.writeHead(r.statusCode ?? 502, r.headers); r.pipe(res); });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const kubeconfig = join(dir.path, 'kubeconfig');
  writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: e, cluster: {server: "${proxyUrl}", insecure-skip-tls-verify: true}}]\nusers: [{name: e, user: {}}]\ncontexts: [{name: e, context: {cluster: e, user: e}}]\ncurrent-context: e\n`);
  let runner: PodRunner | undefined;
  const lines: string[] = [];
  try {
    const installed = install({ client, images, useEmulation: true, timeoutMs: 300_000, out: (s) => lines.push(s) });
    installed.catch(() => {});

    // The Deployment controller's part: the pod template, as rendered, on this node.
    const deploy = await waitFor('the virt-controller Deployment', () => client.get<Workload>(Resources.deployments, INSTALL_NAMESPACE, Names.ControllerDeployment));
    runner = await startPodRunner({ client, nodeName: NODE, podsDir: join(dir.path, 'pods'), rootsDir: join(dir.path, 'r'), imageStore: new ImageStore(join(dir.path, 'images')), log, schedule: false });
    for (const i of [0, 1]) {
      const spec = structuredClone(deploy.spec.template.spec);
      spec.nodeName = NODE;
      for (const c of spec.containers) c.env = [...(c.env ?? []), { name: 'KUBECONFIG', value: kubeconfig }];
      await client.create(Resources.pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name: `virt-controller-${i}`, namespace: INSTALL_NAMESPACE, labels: deploy.spec.template.metadata.labels }, spec } as KubeObject);
    }
    const container = deploy.spec.template.spec.containers[0]!;
    assert.equal(container.command, ['/usr/bin/qvirt', 'controller']);
    assert.is(container.image, images[ImageNames.Virt]);
    const running = await waitFor('both controller pods Running', async () => {
      const pods = (await client.list<Pod>(Resources.pods, { namespace: INSTALL_NAMESPACE })).items;
      return pods.filter((p) => p.status?.phase === 'Running').length === 2 && pods;
    });
    assert.is(running.length, 2);
    // Leader election on the Lease the manifest's flags name: one of the two replicas holds it.
    const lease = await waitFor('the Lease held', async () => {
      const l = await client.get<KubeObject & { spec?: { holderIdentity?: string } }>(Resources.leases, INSTALL_NAMESPACE, DEFAULT_LEASE_NAME);
      return l.spec?.holderIdentity ? l : undefined;
    });
    assert.ok(lease.spec!.holderIdentity);

    // The Deployment and DaemonSet controllers' status writes.
    const d = await client.get<Workload>(Resources.deployments, INSTALL_NAMESPACE, Names.ControllerDeployment);
    await client.updateStatus(Resources.deployments, { ...d, status: { observedGeneration: d.metadata?.generation ?? 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 } });
    const ds = await client.get<Workload>(Resources.daemonSets, INSTALL_NAMESPACE, Names.HandlerDaemonSet);
    await client.updateStatus(Resources.daemonSets, { ...ds, status: { observedGeneration: ds.metadata?.generation ?? 1, desiredNumberScheduled: 1, currentNumberScheduled: 1, updatedNumberScheduled: 1, numberReady: 1, numberAvailable: 1, numberMisscheduled: 0 } });
    // virt-handler's heartbeat: the node takes VMs (install waits for one such node).
    const node = await client.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubevirt.io/schedulable': 'true' } } } as KubeObject);
    // The kubelet's part: the device plugins' devices allocatable (emulation: tun, no kvm).
    await client.updateStatus(Resources.nodes, { ...node, status: { allocatable: { 'devices.kubevirt.io/tun': '1k' } } } as KubeObject);
    await installed;
    const out = lines.join('');
    assert.match(out, new RegExp(`schedulable, devices\\.kubevirt\\.io/tun allocatable: ${NODE}`));
    assert.match(out, /admission webhooks: serving \(a VirtualMachine dry-run passed them\)/);
    for (const o of installObjects({ images })) assert.ok(out.includes(`${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name} created`), `${o.kind} ${o.metadata?.name} not reported in:\n${out}`);
    assert.match(out, /Deployment virt-controller: 0\/2 ready/);
    assert.match(out, /Deployment virt-controller: 2\/2 ready; DaemonSet virt-handler: 1\/1 nodes ready/);
    assert.match(out, /qvirt is installed\./);
    // The controllers made the webhooks' certificate Secret and put its CA bundle on the configuration.
    const secret = await waitFor('the webhook Secret', () => client.get<KubeObject & { data: Record<string, string> }>(Resources.secrets, INSTALL_NAMESPACE, WEBHOOK_SECRET), 20_000);
    const vwc = await waitFor('the caBundle', async () => {
      const v = await client.get<KubeObject & { webhooks: { clientConfig: { caBundle?: string } }[] }>(Resources.validatingWebhookConfigurations, undefined, WEBHOOK_CONFIGURATION);
      return v.webhooks.every((w) => w.clientConfig.caBundle) && v;
    }, 20_000);
    assert.equal([...new Set(vwc.webhooks.map((w) => w.clientConfig.caBundle))], [secret.data['ca-bundle.crt']]);

    // The controller read the KubeVirt CR at start: emulation, so no /dev/kvm in the launcher pod.
    const podOf = async (name: string) => waitFor(`the launcher pod of ${name}`, async () => (await client.list<Pod>(Resources.pods, { namespace: 'default', labelSelector: 'kubevirt.io=virt-launcher' })).items.find((p) => p.metadata?.annotations?.['kubevirt.io/domain'] === name));
    await client.create(Resources.virtualMachineInstances, vmi('emulated'));
    const limits1 = (await podOf('emulated')).spec.containers.find((c) => c.name === 'compute')?.resources?.limits ?? {};
    assert.is(limits1['devices.kubevirt.io/kvm'], undefined, JSON.stringify(limits1));
    // ... and follows its changes.
    await client.patch(Resources.kubeVirts, INSTALL_NAMESPACE, Names.KubeVirt, { spec: { configuration: { developerConfiguration: { useEmulation: false } } } }, 'merge');
    // Both replicas log the new configuration (the ControllerManager's 'cluster configuration updated').
    await waitFor('the controllers to take the new configuration', async () => {
      const { readdirSync, readFileSync } = await import('node:fs');
      const pods = join(dir.path, 'pods');
      const logs = readdirSync(pods).flatMap((uid) => readdirSync(join(pods, uid, 'logs'), { recursive: true }).map(String).filter((f) => f.endsWith('.log')).map((f) => readFileSync(join(pods, uid, 'logs', f), 'utf8')));
      return logs.filter((t) => t.includes('cluster configuration updated') && t.includes('"useEmulation":false')).length >= 2;
    });
    await client.create(Resources.virtualMachineInstances, vmi('withkvm'));
    const limits2 = (await podOf('withkvm')).spec.containers.find((c) => c.name === 'compute')?.resources?.limits ?? {};
    assert.is(limits2['devices.kubevirt.io/kvm'], '1', JSON.stringify(limits2));

    // Installing again (an upgrade) replaces the components but keeps the operator's KubeVirt CR.
    await client.patch(Resources.kubeVirts, INSTALL_NAMESPACE, Names.KubeVirt, { spec: { configuration: { cpuModel: 'host-model' } } }, 'merge');
    const again: string[] = [];
    await install({ client, images, wait: false, out: (s) => again.push(s) });
    assert.match(again.join(''), new RegExp(`KubeVirt ${INSTALL_NAMESPACE}/${Names.KubeVirt} unchanged`));
    assert.match(again.join(''), /Deployment kubevirt\/virt-controller configured/);
    const kv = await client.get<KubeObject & { spec: { configuration: { cpuModel?: string; developerConfiguration: { useEmulation: boolean } } } }>(Resources.kubeVirts, INSTALL_NAMESPACE, Names.KubeVirt);
    assert.equal([kv.spec.configuration.cpuModel, kv.spec.configuration.developerConfiguration.useEmulation], ['host-model', false]);

    // Every request the running controllers made is allowed by their RBAC (kube-apiserver's evaluation).
    const attrs = seen.map((r) => ({ r, a: requestAttributes(r.method, r.url) }));
    const denied = attrs.filter(({ a }) => a && !rbacAllows(a, CONTROLLER_CLUSTER_RULES, { [INSTALL_NAMESPACE]: CONTROLLER_NAMESPACE_RULES, [HANDLER_AUTH_NAMESPACE]: HANDLER_AUTH_RULES })).map(({ r }) => `${r.method} ${r.url}`);
    assert.equal([...new Set(denied)], [], 'requests the controller made that its RBAC does not allow');
    const made = new Set(attrs.flatMap(({ a }) => (a ? [`${a.group}|${a.resource}|${a.verb}`] : [])));
    for (const k of ['coordination.k8s.io|leases|get', '|pods|create', 'kubevirt.io|virtualmachineinstances|watch', 'kubevirt.io|kubevirts|watch', '|secrets|create', 'admissionregistration.k8s.io|validatingwebhookconfigurations|patch']) assert.ok(made.has(k), `${k} in ${[...made].join(', ')}`);
    const nonResource = [...new Set(attrs.filter(({ a }) => !a).map(({ r }) => r.url.split('?')[0]))];
    assert.equal(nonResource, [], 'the controller only makes resource requests');

    // Uninstall refuses while workloads exist (KubeVirt's BlockUninstallIfWorkloadsExist).
    const refused = await uninstall({ client, out: () => {} }).then(() => undefined, (e: unknown) => e);
    assert.instance(refused, WorkloadsExistError);
    assert.match((refused as Error).message, /2 VirtualMachineInstance/);
    // Forced, the VMIs go first while virt-controller still runs, then everything else.
    const ulines: string[] = [];
    await uninstall({ client, force: true, timeoutMs: 180_000, out: (s) => ulines.push(s) });
    assert.match(ulines.join(''), /VirtualMachineInstance default\/emulated deleted/);
    assert.match(ulines.join(''), /qvirt is uninstalled\./);
    for (const o of installObjects()) {
      const gone = await client.get(resourceOf(o), o.metadata?.namespace, o.metadata!.name!).then(() => false, (e: unknown) => isNotFound(e));
      assert.ok(gone, `${o.kind} ${o.metadata?.name} is still there`);
    }
    await client.list(Resources.virtualMachineInstances, {}).then(() => assert.unreachable('the VMI CRD is gone'), (e: unknown) => assert.ok(isNotFound(e)));
  } catch (err) {
    // The controller pods' logs say why, if they are the reason.
    const { readdirSync, readFileSync, existsSync } = await import('node:fs');
    const pods = join(dir.path, 'pods');
    if (existsSync(pods)) for (const uid of readdirSync(pods)) for (const f of existsSync(join(pods, uid, "logs")) ? readdirSync(join(pods, uid, "logs"), { recursive: true }).map(String).filter((x) => x.endsWith(".log")) : []) process.stderr.write(`--- ${uid}/${f}\n${readFileSync(join(pods, uid, 'logs', f), 'utf8').slice(-3000)}\n`);
    throw err;
  } finally {
    // The controller processes end with their pods: delete them while the runner runs (it stops the
    // processes, then confirms), and end whatever it recorded that is still alive (pods that went
    // with their namespace).
    const pods = await client.list<Pod>(Resources.pods, {}).catch(() => ({ items: [] as Pod[] }));
    for (const p of pods.items) await client.delete(Resources.pods, p.metadata?.namespace, p.metadata?.name ?? '', { gracePeriodSeconds: 1 }).catch(() => undefined);
    await waitFor('pods gone', async () => (await client.list<Pod>(Resources.pods, {})).items.length === 0, 20_000).catch(() => undefined);
    await runner?.stop();
    await endRecordedProcesses(join(dir.path, 'pods'));
    await client.close();
    proxy.closeAllConnections();
    await new Promise((r) => proxy.close(r));
    await api.stop();
    dir.cleanup();
  }
});

test.run();

// KubeVirt's Prometheus metrics on the node agent and on virt-controller, scraped by a real
// Prometheus (Debian's `prometheus`) started here on loopback, every second: the agent over its HTTPS
// endpoint with the local mode's admin token and the agent's CA — as a cluster's Prometheus scrapes
// virt-handler — and the controllers through the API server's service proxy of
// kubevirt/kubevirt-prometheus-metrics (what `kubectl get --raw` reads).
// The VM is the test guest with a scratch disk its user-data writes and reads back, and (as root)
// a masquerade NIC on a pod network, whose DHCP exchange moves the tap's counters. PromQL over
// Prometheus' HTTP API then checks the series: kubevirt_vmi_info, vCPU time that grows, storage
// bytes/ops/flushes, the balloon's memory figures, network counters, the agent's own metrics; and
// the controller's: leading/ready, its work queues, REST client requests, kubevirt_vmi_info with the
// launcher pod, the launcher memory overhead.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import yaml from 'js-yaml';
import { existsSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { HANDLER_CA_ANNOTATION, HANDLER_ENDPOINT_ANNOTATION } from '../../src/api/constants.ts';
import { Resources } from '../../src/kube/resource.ts';
import { tempDir } from '../lib/tmp.ts';
import { waitFor } from '../lib/within.ts';
import { runningVmi, serialLog, startEnv, type Env } from './lib.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const VM = 'metrics-vm';
const root = process.getuid?.() === 0;
const CONTROLLER_METRICS = '/api/v1/namespaces/kubevirt/services/https:kubevirt-prometheus-metrics:metrics/proxy/metrics';
const suffix = String(process.pid % 10000);
const octet = 100 + (process.pid % 100);

let env!: Env;
let prom: ChildProcess | undefined;
let promUrl = '';
let endpoint = '';
let ca = '';
let token = '';
const t = tempDir('qprom');

const freePort = () => new Promise<number>((resolve, reject) => {
  const s = createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => { const a = s.address(); s.close(() => resolve(typeof a === 'object' && a ? a.port : 0)); });
});

/** GET on the node agent's endpoint: status, body and how long it took. */
function agentGet(path: string, bearer?: string): Promise<{ code: number; body: string; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(path, endpoint), { ca, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - start }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface PromSample { metric: Record<string, string>; value: [number, string] }

async function query(promql: string): Promise<PromSample[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = await res.json() as { status: string; error?: string; data?: { result?: PromSample[] } };
  if (body.status !== 'success') throw new Error(`${promql}: ${body.error ?? res.status}`);
  return body.data?.result ?? [];
}

/** Waits until `promql` returns at least one series; returns them. */
const series = (promql: string, timeoutMs = 30_000) => waitFor(`Prometheus series for ${promql}`, async () => {
  const r = await query(promql);
  return r.length ? r : undefined;
}, timeoutMs, 500);

const USER_DATA = `#!/bin/sh
for d in /sys/block/vd*; do [ "$(cat $d/serial 2>/dev/null)" = scratch ] && dev=/dev/\${d##*/}; done
dd if=/dev/urandom of=$dev bs=64k count=32 conv=fsync 2>/dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
dd if=$dev of=/dev/null bs=64k count=32 2>/dev/null
echo QVIRT-METRICS-IO-DONE dev=$dev
`;

test.before(async () => {
  assert.ok(existsSync(PROMETHEUS), `${PROMETHEUS} missing: scripts/setup.sh installs Debian's prometheus package`);
  env = await startEnv('qmet', root ? { podNetwork: { bridge: `qvm${suffix}`, subnet: `10.247.${octet}.0/24`, subnet6: false, stateDir: join(t.path, 'cni') } } : {});
  const node = await env.local.client.get<{ metadata?: { annotations?: Record<string, string> } }>(Resources.nodes, undefined, env.local.nodeName);
  endpoint = node.metadata?.annotations?.[HANDLER_ENDPOINT_ANNOTATION] ?? '';
  ca = Buffer.from(node.metadata?.annotations?.[HANDLER_CA_ANNOTATION] ?? '', 'base64').toString('utf8');
  assert.ok(endpoint && ca, 'the node agent advertises its endpoint and CA on the Node');
  const tokenFile = join(dirname(env.local.kubeconfig), 'api', 'pki', 'token');
  token = (await import('node:fs')).readFileSync(tokenFile, 'utf8').trim();

  const vm = {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine',
    metadata: { name: VM, namespace: 'default', labels: { 'app.example.com/tier': 'metrics' } },
    spec: {
      runStrategy: 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': VM, 'app.example.com/tier': 'metrics' } },
        spec: {
          terminationGracePeriodSeconds: 5,
          domain: {
            firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests', container: { image: 'qvirt/test-guest:latest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
            devices: {
              disks: [{ name: 'scratch', serial: 'scratch', disk: { bus: 'virtio' } }, { name: 'cloudinit', disk: { bus: 'virtio' } }],
              ...(root ? { interfaces: [{ name: 'default', masquerade: {} }] } : {}),
            },
            resources: { requests: { memory: '192Mi' } },
          },
          ...(root ? { networks: [{ name: 'default', pod: {} }] } : {}),
          volumes: [{ name: 'scratch', emptyDisk: { capacity: '64Mi' } }, { name: 'cloudinit', cloudInitNoCloud: { userData: USER_DATA } }],
        },
      },
    },
  };
  await env.local.client.create(Resources.virtualMachines, vm as never);

  // Prometheus on loopback, scraping the agent every second with the admin's token and the agent's CA.
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  writeFileSync(join(t.path, 'ca.pem'), ca);
  writeFileSync(join(t.path, 'token'), token);
  const target = new URL(endpoint).host;
  const kubeconfig = yaml.load((await import('node:fs')).readFileSync(env.local.kubeconfig, 'utf8')) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[] };
  const apiServer = kubeconfig.clusters[0]!.cluster;
  writeFileSync(join(t.path, 'api-ca.pem'), Buffer.from(apiServer['certificate-authority-data'], 'base64'));
  writeFileSync(join(t.path, 'prometheus.yml'), [
    'global:', '  scrape_interval: 1s', '  scrape_timeout: 1s',
    'scrape_configs:',
    '  - job_name: kubevirt-handler',
    '    scheme: https',
    '    metrics_path: /metrics',
    '    authorization:', `      credentials_file: ${join(t.path, 'token')}`,
    '    tls_config:', `      ca_file: ${join(t.path, 'ca.pem')}`,
    '    static_configs:', `      - targets: ['${target}']`,
    '  - job_name: kubevirt-controller',
    '    scheme: https',
    `    metrics_path: ${CONTROLLER_METRICS}`,
    '    authorization:', `      credentials_file: ${join(t.path, 'token')}`,
    '    tls_config:', `      ca_file: ${join(t.path, 'api-ca.pem')}`,
    '    static_configs:', `      - targets: ['${new URL(apiServer.server).host}']`,
    '',
  ].join('\n'));
  prom = spawn(PROMETHEUS, [`--config.file=${join(t.path, 'prometheus.yml')}`, `--storage.tsdb.path=${join(t.path, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let promLog = '';
  prom.stderr?.on('data', (c: Buffer) => { promLog = (promLog + c.toString()).slice(-4000); });
  await waitFor(`Prometheus ready on ${promUrl} (its log: ${promLog})`, async () => (await fetch(`${promUrl}/-/ready`)).ok, 30_000, 250);
});

test.after(async () => {
  if (prom && prom.exitCode === null) {
    const exited = new Promise((r) => prom!.once('exit', r));
    prom.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (prom.exitCode === null) prom.kill('SIGKILL');
  }
  await env?.stop();
  t.cleanup();
});

test('/metrics is read-only and needs the caller\'s credentials and get on the non-resource URL', async () => {
  assert.is((await agentGet('/metrics')).code, 401, 'no credentials');
  assert.is((await agentGet('/metrics', 'not-a-token')).code, 401, 'an unknown token');
  const ok = await agentGet('/metrics', token);
  assert.is(ok.code, 200, ok.body);
  assert.match(ok.body, /^# HELP kubevirt_info Version information\.$/m);
  assert.match(ok.body, /^kubevirt_virt_handler_ready_status 1$/m);
});

test('Prometheus scrapes the agent: up, ready, its work queue and REST client requests', async () => {
  await runningVmi(env, VM, [], 90_000);
  const [up] = await series('up{job="kubevirt-handler"} == 1');
  assert.ok(up, 'the target is up');
  await series(`kubevirt_virt_handler_ready_status == 1`);
  await series(`kubevirt_workqueue_adds_total{job="kubevirt-handler",name="virt-handler-vm"} > 0`);
  await series(`kubevirt_rest_client_requests_total{job="kubevirt-handler",resource="virtualmachineinstances",verb="WATCH",code="200"} > 0`);
  const [info] = await query(`kubevirt_vmi_info{job="kubevirt-handler"}`);
  assert.is(info, undefined, 'kubevirt_vmi_info is virt-controller\'s, as in KubeVirt');
});

test('the controller\'s /metrics through the API server (kubectl get --raw): read-only, leading and ready', async () => {
  const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', env.local.kubeconfig, 'get', '--raw', CONTROLLER_METRICS], { timeout: 30_000 });
  assert.match(stdout, /^kubevirt_virt_controller_leading_status 1$/m);
  assert.match(stdout, /^kubevirt_virt_controller_ready_status 1$/m);
  assert.match(stdout, /^# TYPE kubevirt_workqueue_queue_duration_seconds histogram$/m);
  const post = await promisify(execFile)('kubectl', ['--kubeconfig', env.local.kubeconfig, 'create', '--raw', CONTROLLER_METRICS, '-f', '-'], { timeout: 30_000 }).then(() => '', (e: Error & { stderr?: string }) => e.stderr ?? e.message);
  assert.match(post, /read-only|MethodNotAllowed|405/, `a POST is refused: ${post}`);
});

test('Prometheus scrapes the controller: kubevirt_vmi_info with KubeVirt\'s labels and the launcher pod, overhead, queues, REST client', async () => {
  const vmi = await runningVmi(env, VM, [], 90_000);
  await series('up{job="kubevirt-controller"} == 1');
  await series('kubevirt_virt_controller_leading_status{job="kubevirt-controller"} == 1');
  await series('kubevirt_virt_controller_ready_status{job="kubevirt-controller"} == 1');
  const [info] = await series(`kubevirt_vmi_info{job="kubevirt-controller",name="${VM}",phase="running",vmi_pod=~"virt-launcher-${VM}-.+"} == 1`);
  assert.equal([info!.metric.namespace, info!.metric.node, info!.metric.evictable, info!.metric.outdated], ['default', vmi.status?.nodeName, 'true', 'false']);
  const pods = await env.local.client.list<{ metadata?: { name?: string; labels?: Record<string, string> } }>(Resources.pods, { namespace: 'default' });
  const launcher = pods.items.find((p) => p.metadata?.labels?.['kubevirt.io/created-by'] === vmi.metadata?.uid);
  assert.is(info!.metric.vmi_pod, launcher?.metadata?.name, 'vmi_pod is the VMI\'s launcher pod');
  const [overhead] = await series(`kubevirt_vmi_launcher_memory_overhead_bytes{job="kubevirt-controller",name="${VM}"} > 100000000`);
  assert.ok(overhead);
  for (const q of ['vm', 'vmi']) {
    await series(`kubevirt_workqueue_adds_total{job="kubevirt-controller",name="virt-controller-${q}"} > 0`);
    await series(`kubevirt_workqueue_work_duration_seconds_count{job="kubevirt-controller",name="virt-controller-${q}"} > 0`);
    await series(`kubevirt_workqueue_queue_duration_seconds_bucket{job="kubevirt-controller",name="virt-controller-${q}",le="+Inf"} > 0`);
  }
  await series(`kubevirt_workqueue_depth{job="kubevirt-controller",name="virt-controller-migration"}`);
  await series(`kubevirt_rest_client_requests_total{job="kubevirt-controller",resource="pods",verb="CREATE",code="201"} > 0`);
});

test('vCPU and CPU time grow; the labels carry the VMI\'s labels', async () => {
  const [first] = await series(`kubevirt_vmi_vcpu_seconds_total{name="${VM}",id="0",state="running"}`);
  assert.is(first!.metric.kubernetes_vmi_label_app_example_com_tier, 'metrics');
  const v0 = Number(first!.value[1]);
  await waitFor('kubevirt_vmi_vcpu_seconds_total to grow', async () => {
    const [now] = await query(`kubevirt_vmi_vcpu_seconds_total{name="${VM}",id="0"}`);
    return now && Number(now.value[1]) > v0;
  }, 30_000, 500);
  await series(`rate(kubevirt_vmi_cpu_usage_seconds_total{name="${VM}"}[5s]) > 0`);
  await series(`kubevirt_vmi_vcpu_delay_seconds_total{name="${VM}",id="0"}`);
});

test('storage: the scratch disk\'s written and read bytes, write ops and flushes after the guest used it', async () => {
  const vmi = await runningVmi(env, VM, [], 10_000);
  await waitFor('the guest\'s user-data to write and read the scratch disk', () => serialLog(env, vmi.metadata!.uid!).includes('QVIRT-METRICS-IO-DONE dev=/dev/vd'), 90_000, 500);
  const drive = `name="${VM}",drive="scratch"`;
  await series(`kubevirt_vmi_storage_write_traffic_bytes_total{${drive}} >= 2097152`);
  await series(`kubevirt_vmi_storage_read_traffic_bytes_total{${drive}} >= 2097152`);
  await series(`kubevirt_vmi_storage_iops_write_total{${drive}} > 0`);
  await series(`kubevirt_vmi_storage_flush_requests_total{${drive}} > 0`);
  await series(`kubevirt_vmi_storage_read_times_seconds_total{${drive}} > 0`);
  await series(`kubevirt_vmi_storage_read_traffic_bytes_total{name="${VM}",drive="cloudinit"} > 0`);
});

test('memory: the domain\'s 192Mi, the balloon, QEMU\'s RSS and the guest\'s own figures once the balloon driver reports', async () => {
  await series(`kubevirt_vmi_memory_domain_bytes{name="${VM}"} == 201326592`);
  await series(`kubevirt_vmi_memory_actual_balloon_bytes{name="${VM}"} == 201326592`);
  await series(`kubevirt_vmi_memory_resident_bytes{name="${VM}"} > 0`);
  // The balloon's stats polling interval is KubeVirt's 10 s: the guest's first report can take that long.
  const [avail] = await series(`kubevirt_vmi_memory_available_bytes{name="${VM}"} > 0`, 40_000);
  await series(`kubevirt_vmi_memory_usable_bytes{name="${VM}"} > 0`);
  await series(`kubevirt_vmi_memory_unused_bytes{name="${VM}"} < ${avail!.value[1]}`);
  await series(`kubevirt_vmi_memory_pgminfault_total{name="${VM}"} > 0`);
});

test('network: the masquerade NIC\'s counters from its tap, from the guest\'s side (root: pod network)', async () => {
  if (!root) { console.log('  (not root: no pod network, user-mode NICs have no counters to report)'); return; }
  await series(`kubevirt_vmi_network_transmit_packets_total{name="${VM}",interface="default"} > 0`, 60_000);
  await series(`kubevirt_vmi_network_receive_bytes_total{name="${VM}",interface="default"} > 0`, 60_000);
  await series(`kubevirt_vmi_network_traffic_bytes_total{name="${VM}",interface="default",type="tx"} > 0`);
});

test('one scrape of the agent with this VM: timed', async () => {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await agentGet('/metrics', token);
    assert.is(r.code, 200);
    assert.match(r.body, new RegExp(`kubevirt_vmi_vcpu_seconds_total\\{[^}]*name="${VM}"`));
    times.push(r.ms);
  }
  times.sort((a, b) => a - b);
  if (process.env.QVIRT_METRICS_DUMP) writeFileSync(process.env.QVIRT_METRICS_DUMP, (await agentGet('/metrics', token)).body);
  const [dur] = await query('scrape_duration_seconds{job="kubevirt-handler"}');
  console.log(`  one /metrics scrape with 1 VMI: median ${times[2]!.toFixed(1)} ms over HTTPS (min ${times[0]!.toFixed(1)}); Prometheus' scrape_duration_seconds ${dur ? (Number(dur.value[1]) * 1000).toFixed(1) : '?'} ms`);
});

test.run();

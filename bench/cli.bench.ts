// What a user waits for when running a qvirt verb: `qvirt start VM` / `qvirt stop VM` as processes
// (Node start, kubeconfig, TLS, GET VM + VMI, the JSON patch) against the embedded API server over
// TLS, beside `kubectl patch` of the same VM with the same JSON patch in the same run. No controllers
// run, so start and stop alternate forever on a Halted ⇄ Always VM and only the CLI is measured.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startApiServer } from '../src/apiserver/index.ts';
import { applyCrdFiles } from '../src/deploy/crds.ts';
import { KubeClient, loadKubeConfig } from '../src/kube/client.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { median, percentile, report, saveResults, timeMs } from './lib.ts';

const RUNS = 12;
const QVIRT = fileURLToPath(new URL('../bin/qvirt', import.meta.url));
const run = promisify(execFile);

const t = tempDir('qbc');
const api = await startApiServer({ dataDir: t.path, port: 0, host: '127.0.0.1', tls: true, log: componentLogger('bench', { level: 'error' }) });
const client = new KubeClient(loadKubeConfig(api.kubeconfigPath!));
try {
  await applyCrdFiles(client);
  await client.create(Resources.virtualMachines, {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'bench-vm', namespace: 'default' },
    spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {}, memory: { guest: '128Mi' } } } } },
  } as never);
  const env = { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: api.kubeconfigPath!, QVIRT_LOG_LEVEL: 'warn' };
  const qvirt = (verb: string) => run(QVIRT, [verb, 'bench-vm'], { env });
  const kubectl = (to: string) => run('kubectl', ['patch', 'vm', 'bench-vm', '--type=json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/runStrategy', value: to }])], { env });
  const node = () => run(process.execPath, ['-e', ''], { env });
  // Warm the page cache and the TypeScript stripping of every module once.
  await qvirt('start'); await qvirt('stop'); await kubectl('Always'); await kubectl('Halted');
  const q: number[] = [];
  const k: number[] = [];
  const n: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    q.push(await timeMs(() => qvirt(i % 2 ? 'stop' : 'start')));
    k.push(await timeMs(() => kubectl(i % 2 ? 'Halted' : 'Always')));
    n.push(await timeMs(node));
  }
  const vm = await client.get<{ spec: { runStrategy: string }; metadata?: object }>(Resources.virtualMachines, 'default', 'bench-vm');
  if (vm.spec.runStrategy !== 'Halted') throw new Error(`the verbs did not do their work: runStrategy ${vm.spec.runStrategy}`);
  report({ name: 'qvirt start|stop VM (process, TLS), median', value: median(q), unit: 'ms', baseline: median(k), baselineName: 'kubectl patch', target: { maxValue: 1500 }, details: { runs: RUNS, p90: percentile(q, 90), kubectlP90: percentile(k, 90) } });
  report({ name: 'qvirt start|stop VM beyond a bare node start', value: median(q) - median(n), unit: 'ms', baseline: median(n), baselineName: 'node -e ""', details: { runs: RUNS } });
} finally {
  await client.close();
  await api.stop();
  t.cleanup();
}
process.exitCode = saveResults('cli') ? 0 : 2;

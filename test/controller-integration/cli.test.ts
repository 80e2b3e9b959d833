// `qvirt apiserver` and `qvirt controller` as a user runs them: the API server starts with
// KubeVirt's CRDs applied and prints its kubeconfig; the controller, pointed at that kubeconfig,
// turns a VM into a VMI and a launcher pod; both stop cleanly (exit 0) on SIGINT / SIGTERM.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { tempDir } from '../lib/tmp.ts';
import { eventually } from './lib.ts';
import type { Pod } from '../../controller/pod.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const env = { ...process.env, QVIRT_LOG_LEVEL: 'warn', KUBECONFIG: '' };

const exitOf = (c: ChildProcess) => new Promise<number | null>((r) => { if (c.exitCode !== null) r(c.exitCode); else c.once('exit', (code) => r(code)); });

test('--help documents every flag', () => {
  const ctl = execFileSync(process.execPath, [MAIN, 'controller', '--help'], { env, encoding: 'utf8' });
  for (const f of ['--kubeconfig', '--namespace', '--leader-elect', '--config', '--use-emulation', '--launcher-image', '--lease-name']) assert.ok(ctl.includes(f), f);
  const api = execFileSync(process.execPath, [MAIN, 'apiserver', '--help'], { env, encoding: 'utf8' });
  for (const f of ['--data-dir', '--port', '--host', '--tls', '--crds']) assert.ok(api.includes(f), f);
});

for (const tls of [false, true]) {
  test(`qvirt apiserver (tls=${tls}) + qvirt controller: a VM becomes a VMI and a launcher pod; clean stop`, async () => {
    const dir = tempDir('qcli');
    const children: ChildProcess[] = [];
    let client: KubeClient | undefined;
    try {
      const api = spawn(process.execPath, [MAIN, 'apiserver', '--data-dir', dir.path, '--port', '0', `--tls=${tls}`], { env, stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(api);
      let out = '';
      api.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
      const kubeconfig = await eventually(() => /kubeconfig: (\S+)/.exec(out)?.[1], 15_000, 'the kubeconfig path on stdout');
      const ctl = spawn(process.execPath, [MAIN, 'controller', '--kubeconfig', kubeconfig, '--use-emulation', '--retry-period', '200ms'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
      children.push(ctl);
      client = KubeClient.fromFile(kubeconfig);
      await client.create(Resources.virtualMachines, {
        apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm-cli', namespace: 'default' },
        spec: { runStrategy: 'Always', template: { spec: { domain: { devices: {}, memory: { guest: '128Mi' } } } } },
      } as VirtualMachine);
      const vmi = await eventually(async () => (await client!.list<VirtualMachineInstance>(Resources.virtualMachineInstances, { namespace: 'default' })).items.find((v) => v.status?.phase === 'Scheduling'), 15_000, 'VMI Scheduling');
      const pods = (await client.list<Pod>(Resources.pods, { namespace: 'default', labelSelector: `kubevirt.io/created-by=${vmi.metadata!.uid}` })).items;
      assert.is(pods.length, 1);
      // --use-emulation reaches the launcher pod: no /dev/kvm resource request.
      const compute = pods[0]!.spec!.containers.find((c) => c.name === 'compute')!;
      assert.not.ok(JSON.stringify(compute.resources ?? {}).includes('devices.kubevirt.io/kvm'), JSON.stringify(compute.resources));
      ctl.kill('SIGTERM');
      assert.is(await exitOf(ctl), 0);
      api.kill('SIGINT');
      assert.is(await exitOf(api), 0);
    } finally {
      await client?.close();
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      dir.cleanup();
    }
  });
}

test.run();

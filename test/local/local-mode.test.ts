// The local mode end to end, as `npm start` runs it: a KubeVirt VM applied with the real kubectl
// runs in a launcher pod on this machine, its guest boots, and stopping drains the node with no
// QEMU left behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const repo = new URL('../../', import.meta.url).pathname;

test('kubectl apply of a VM → Running VMI in a launcher pod → guest boots → drain stops it', async () => {
  const t = tempDir('qlm');
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' }) });
  let stopped = false;
  try {
    const kubectl = (...args: string[]) => promisify(execFile)('kubectl', ['--kubeconfig', local.kubeconfig, ...args], { timeout: 30_000 });
    await kubectl('apply', '-f', join(repo, 'examples/vm-demo.yaml'));
    let vmi: { metadata?: { uid?: string }; status?: { phase?: string; nodeName?: string } } | undefined;
    for (let i = 0; i < 900 && vmi?.status?.phase !== 'Running'; i++) {
      vmi = await local.client.get(Resources.virtualMachineInstances, 'default', 'demo-vm').catch(() => undefined);
      await sleep(100);
    }
    assert.is(vmi?.status?.phase, 'Running');
    assert.is(vmi?.status?.nodeName, local.nodeName);
    const get = (await kubectl('get', 'vm', 'demo-vm')).stdout;
    assert.match(get, /demo-vm\s+\S+\s+Running\s+True/);
    const pods = (await kubectl('get', 'pods', '-l', `kubevirt.io/created-by=${vmi!.metadata!.uid}`, '-o', 'name')).stdout.trim().split('\n');
    assert.is(pods.length, 1);
    assert.match(pods[0]!, /^pod\/virt-launcher-demo-vm-\w{5}$/);
    // The guest's console, where the launcher pod's private emptyDir keeps it.
    const podsDir = join(t.path, 'data', 'pods');
    let consoleText = '';
    for (let i = 0; i < 1200 && !consoleText.includes('QVIRT-GUEST-READY'); i++) {
      for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
        const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', vmi!.metadata!.uid!, 'virt-serial0-log');
        if (existsSync(f)) consoleText = readFileSync(f, 'utf8');
      }
      await sleep(100);
    }
    assert.match(consoleText, /hello from demo-vm, started by the local mode/);
    assert.match(consoleText, /QVIRT-GUEST-READY/);

    // kubectl get pods: the launcher pod as kubelet reports it (the console-log sidecar counts).
    const podName = pods[0]!.slice('pod/'.length);
    assert.match((await kubectl('get', 'pods')).stdout, new RegExp(`${podName}\\s+3/3\\s+Running\\s+0\\s`));
    // kubectl logs through pods/log → the node's kubelet endpoint → the CRI logs of the pod runner.
    const compute = (await kubectl('logs', podName, '-c', 'compute')).stdout;
    assert.match(compute, /"msg":/, 'the launcher\'s structured log lines');
    assert.is((await kubectl('logs', podName)).stdout.slice(0, 200), compute.slice(0, 200), 'kubectl.kubernetes.io/default-container picks compute');
    assert.is((await kubectl('logs', podName, '-c', 'compute', '--tail=2')).stdout.trimEnd().split('\n').length, 2);
    assert.match((await kubectl('logs', podName, '-c', 'compute', '--tail=1', '--timestamps')).stdout, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z \{/);
    // The guest's serial console is the guest-console-log sidecar's output, as in KubeVirt.
    assert.match((await kubectl('logs', podName, '-c', 'guest-console-log')).stdout, /hello from demo-vm, started by the local mode/);
    const bad = await kubectl('logs', podName, '-c', 'nope').then(() => '', (e: { stderr?: string }) => e.stderr ?? '');
    assert.match(bad, new RegExp(`container nope is not valid for pod ${podName}`));
    // -f streams what is there and stays open while the container runs.
    const follow = execFile('kubectl', ['--kubeconfig', local.kubeconfig, 'logs', '-f', podName, '-c', 'compute', '--tail=1']);
    let followed = '';
    follow.stdout!.on('data', (c: Buffer) => { followed += c.toString(); });
    for (let i = 0; i < 100 && !followed.includes('\n'); i++) await sleep(100);
    await sleep(1000);
    assert.is(follow.exitCode, null, 'kubectl logs -f still following');
    assert.match(followed, /^\{.*\}\n$/);
    follow.kill();
    await local.stop();
    stopped = true;
    let qemu = '';
    try { qemu = execFileSync('pgrep', ['-af', vmi!.metadata!.uid!], { encoding: 'utf8' }); } catch { /* none */ }
    assert.is(qemu.trim(), '', 'no launcher or QEMU of the VM left');
  } finally {
    if (!stopped) await local.stop();
    t.cleanup();
  }
});

test.run();

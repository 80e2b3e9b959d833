// The local mode end to end, as `npm start` runs it: a KubeVirt VM applied with the real kubectl
// runs in a launcher pod on this machine, its guest boots, and stopping drains the node with no
// QEMU left behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { importTestGuest } from '../guest/guest.ts';
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
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: 'error' }) });
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

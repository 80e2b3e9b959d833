// `qvirt demo`: the first thing a newcomer runs (`npm start`). Builds the test guest (Debian kernel +
// busybox initramfs, cached), imports it into the local image store as qvirt/test-guest, starts the
// local mode (API server, controllers, node agent, pod runner) in a scratch data dir, applies
// examples/vm-demo.yaml with kubectl, shows `kubectl get vm,vmi,pods` and the guest's console until
// the guest reports it is ready, then drains and stops. `--no-cluster` boots
// examples/vmi-demo.yaml with `qvirt run` instead (no API server at all).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseFlags, usage } from '../flags/flags.ts';
import { ImageStore } from '../local/image-store.ts';
import { startLocalMode } from '../local/up.ts';
import { choosePodNetwork, probePodNetwork } from '../local/pod-network-choice.ts';
import { componentLogger } from '../log/logger.ts';
import { Resources } from '../kube/resource.ts';
import { VolumePluginDirs } from '../kube/kubelet-volume-dirs.ts';
import { importTestGuest, TEST_GUEST_IMAGE } from '../local/guest/guest.ts';
import { main as run } from './run.ts';
import { checkoutPath } from '../local/checkout.ts';

export const DEMO_IMAGE = TEST_GUEST_IMAGE;

const specs = {
  'image-store': { type: 'string', value: 'DIR', help: 'the local image store' },
  'no-cluster': { type: 'boolean', help: 'boot the demo VMI with `qvirt run` instead of through the local mode' },
  interactive: { type: 'boolean', short: 'i', help: 'with --no-cluster: keep the VM running with the console attached' },
} as const;

/** Makes sure the demo image is in the store (builds the test guest if needed). */
export async function ensureDemoImage(store: ImageStore): Promise<void> {
  if (await store.get(DEMO_IMAGE)) return;
  process.stdout.write('building the test guest from Debian packages (once)...\n');
  await importTestGuest(store, DEMO_IMAGE);
  process.stdout.write(`imported ${DEMO_IMAGE} into ${store.root}\n`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const say = (line: string) => process.stdout.write(`${line}\n`);

async function kubectl(kubeconfig: string, args: string[]): Promise<string> {
  say(`$ kubectl ${args.join(' ')}`);
  const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
  process.stdout.write(stdout);
  return stdout;
}

function findConsoleLog(podsDir: string, vmiUid: string): string | undefined {
  if (!existsSync(podsDir)) return undefined;
  for (const pod of readdirSync(podsDir)) {
    const p = join(podsDir, pod, 'volumes', VolumePluginDirs.emptyDir, 'private', vmiUid, 'virt-serial0-log');
    if (existsSync(p)) return p;
  }
  return undefined;
}

async function clusterDemo(store: ImageStore): Promise<number> {
  const dataDir = await mkdtemp('/tmp/qvirt-demo-');
  say(`$ qvirt local up --data-dir ${dataDir}`);
  // The pod network where it can work, as `qvirt local up` chooses it (the guest then has a pod IP).
  const podNetwork = choosePodNetwork({ require: false, optOut: false }, await probePodNetwork());
  if (!podNetwork.use && podNetwork.message) say(podNetwork.message);
  const local = await startLocalMode({ dataDir, port: 0, emulation: 'auto', imageStore: store, log: componentLogger('local', { level: 'error' }), ...(podNetwork.use ? { podNetwork: true } : {}) });
  say(`local mode up: API server ${local.url}, node ${local.nodeName}${local.useEmulation ? ' (software emulation: KVM cannot run guests here)' : ''}`);
  try {
    await kubectl(local.kubeconfig, ['apply', '-f', checkoutPath('examples/vm-demo.yaml')]);
    let uid: string | undefined;
    for (let i = 0; i < 600; i++) {
      const vmi = await local.client.get<{ metadata?: { uid?: string }; status?: { phase?: string } }>(Resources.virtualMachineInstances, 'default', 'demo-vm').catch(() => undefined);
      if (vmi?.status?.phase === 'Running') { uid = vmi.metadata?.uid; break; }
      await sleep(100);
    }
    if (!uid) { say('error: the VMI did not reach Running within 60 s'); return 1; }
    await kubectl(local.kubeconfig, ['get', 'vm,vmi,pods']);
    say('--- guest console (virt-serial0) ---');
    let shown = 0;
    for (let i = 0; i < 1800; i++) {
      const file = findConsoleLog(join(dataDir, 'pods'), uid);
      const text = file ? readFileSync(file, 'utf8') : '';
      if (text.length > shown) { process.stdout.write(text.slice(shown)); shown = text.length; }
      if (text.includes('QVIRT-GUEST-READY')) break;
      await sleep(100);
    }
    say('\n--- the guest is ready ---');
    await kubectl(local.kubeconfig, ['get', 'vmi', '-o', 'wide']);
    return 0;
  } finally {
    say('$ (Ctrl-C) draining the node: the guest shuts down over ACPI');
    await local.stop();
    await rm(dataDir, { recursive: true, force: true });
    say('stopped');
  }
}

export async function main(argv: string[]): Promise<number> {
  const { flags, help } = parseFlags(specs, argv);
  if (help) { process.stdout.write(usage('qvirt demo [flags]', 'Boot qvirt\'s test guest from a KubeVirt manifest on this machine.', specs)); return 0; }
  const store = new ImageStore(flags['image-store']);
  await ensureDemoImage(store);
  if (!flags['no-cluster']) return clusterDemo(store);
  const manifest = checkoutPath('examples/vmi-demo.yaml');
  say(`$ qvirt run --allow-emulation --console ${flags.interactive ? '' : '--until QVIRT-GUEST-READY '}examples/vmi-demo.yaml`);
  return run(['--allow-emulation', '--console', '--image-store', store.root, ...(flags.interactive ? [] : ['--until', 'QVIRT-GUEST-READY']), manifest]);
}

// `qvirt demo`: the first thing a newcomer runs. Builds the test guest (Debian kernel + busybox
// initramfs, cached), imports it into the local image store as qvirt/test-guest, and boots
// examples/vmi-demo.yaml with `qvirt run`, console shown, until the guest reports it is ready; then
// shuts it down gracefully.
import { join } from 'node:path';
import { parseFlags, usage } from './flags.ts';
import { ImageStore } from '../local/image-store.ts';
import { ensureGuest } from '../../test/guest/guest.ts';
import { main as run } from './run.ts';

const repoRoot = new URL('../../', import.meta.url).pathname;
export const DEMO_IMAGE = 'qvirt/test-guest:latest';

const specs = {
  'image-store': { type: 'string', value: 'DIR', help: 'the local image store' },
  interactive: { type: 'boolean', short: 'i', help: 'keep the VM running with the console attached (Ctrl-] detaches, Ctrl-C stops)' },
} as const;

/** Makes sure the demo image is in the store (builds the test guest if needed). */
export async function ensureDemoImage(store: ImageStore): Promise<void> {
  if (await store.get(DEMO_IMAGE)) return;
  process.stdout.write('building the test guest from Debian packages (once)...\n');
  const g = await ensureGuest();
  await store.importFiles(DEMO_IMAGE, [{ src: g.kernel, dest: '/boot/vmlinuz' }, { src: g.initrd, dest: '/boot/initrd.img' }]);
  process.stdout.write(`imported ${DEMO_IMAGE} into ${store.root}\n`);
}

export async function main(argv: string[]): Promise<number> {
  const { flags, help } = parseFlags(specs, argv);
  if (help) { process.stdout.write(usage('qvirt demo [flags]', 'Boot qvirt\'s test guest from a KubeVirt VMI manifest on this machine.', specs)); return 0; }
  const store = new ImageStore(flags['image-store']);
  await ensureDemoImage(store);
  const manifest = join(repoRoot, 'examples/vmi-demo.yaml');
  process.stdout.write(`$ qvirt run --allow-emulation --console ${flags.interactive ? '' : '--until QVIRT-GUEST-READY '}examples/vmi-demo.yaml\n`);
  return run(['--allow-emulation', '--console', '--image-store', store.root, ...(flags.interactive ? [] : ['--until', 'QVIRT-GUEST-READY']), manifest]);
}

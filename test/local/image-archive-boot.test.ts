// Images imported from what users have boot: the test guest as a kernel-boot image (kernel and
// initrd at paths of its own) from a docker save archive, and three container disks — from an OCI
// archive, an OCI layout directory and a bare qcow2 — in one VMI booted by the single-VM node
// (`qvirt run`'s), through the real launcher and QEMU. The guest reports each disk with its size.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { importImage } from '../../src/local/image-import.ts';
import { loadVmiManifest } from '../../src/local/manifest.ts';
import { SingleVm } from '../../src/local/single-vm.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { buildOciLayout } from '../lib/oci-image.ts';
import { tempDir } from '../lib/tmp.ts';

const t = tempDir('qab');
const log = componentLogger('test', { level: 'warn' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const skopeo = (...args: string[]) => execFileSync('skopeo', ['--insecure-policy', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });

test('a kernel-boot image from a docker save archive boots, with container disks from an OCI archive, an OCI layout and a bare qcow2', async () => {
  const guest = await ensureGuest();
  const store = new ImageStore(join(t.path, 'store'));
  // The kernel-boot image: kernel and initrd where the VMI's kernelPath/initrdPath say.
  const kbLayout = join(t.path, 'kb');
  await buildOciLayout(kbLayout, [[{ path: '/usr/lib/custom/vmlinux', src: guest.kernel }, { path: '/srv/boot/initramfs.gz', src: guest.initrd }]], 'v1');
  const kbArchive = join(t.path, 'kb.docker.tar');
  skopeo('copy', '-q', `oci:${kbLayout}:v1`, `docker-archive:${kbArchive}:example/kernel-boot:v1`);
  assert.is((await importImage(store, 'example/kernel-boot:v1', kbArchive)).source.kind, 'docker-archive');
  // Three container disks of different sizes, so the guest's report tells them apart.
  const disks: Array<[string, string, number]> = [['oci-archive', 'cdoa', 24], ['oci-layout', 'cdol', 32], ['disk', 'cdqc', 40]];
  for (const [kind, serial, mib] of disks) {
    const qcow = join(t.path, `${serial}.qcow2`);
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', qcow, `${mib}M`]);
    let path = qcow;
    if (kind !== 'disk') {
      const layout = join(t.path, `${serial}-layout`);
      await buildOciLayout(layout, [[{ path: `/disk/${serial}.qcow2`, src: qcow }]], 'v1');
      path = layout;
      if (kind === 'oci-archive') { path = join(t.path, `${serial}.oci.tar`); skopeo('copy', '-q', `oci:${layout}:v1`, `oci-archive:${path}:v1`); }
    }
    const { source } = await importImage(store, `example/${serial}:v1`, path);
    assert.is(source.kind, kind, serial);
  }
  const manifest = join(t.path, 'vmi.yaml');
  writeFileSync(manifest, `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: archives}
spec:
  terminationGracePeriodSeconds: 0
  domain:
    firmware:
      kernelBoot:
        kernelArgs: console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0 qvirt.ga=0
        container: {image: example/kernel-boot:v1, kernelPath: /usr/lib/custom/vmlinux, initrdPath: /srv/boot/initramfs.gz}
    devices:
      disks:
${disks.map(([, serial]) => `      - {name: ${serial}, serial: ${serial}, disk: {bus: virtio}}`).join('\n')}
    resources: {requests: {memory: 128Mi}}
  volumes:
${disks.map(([, serial]) => `  - {name: ${serial}, containerDisk: {image: example/${serial}:v1}}`).join('\n')}
`);
  const vmi = await loadVmiManifest(manifest);
  const launcherLog = join(t.path, 'launcher.log');
  const vm = new SingleVm({ vmi, root: join(t.path, 'r'), allowEmulation: true, imageStore: store, log, launcherLog, cacheDir: join(t.path, 'cache') });
  try {
    await vm.start();
    const consoleText = () => (existsSync(vm.paths.serialLog) ? readFileSync(vm.paths.serialLog, 'utf8') : '');
    const until = Date.now() + 90_000;
    while (!disks.every(([, serial]) => consoleText().includes(`serial=${serial} `))) {
      if (Date.now() > until || vm.currentPhase === 'Failed') throw new Error(`the guest did not report its disks; console:\n${consoleText().slice(-2000)}\nlauncher log:\n${readFileSync(launcherLog, 'utf8').slice(-2000)}`);
      await sleep(200);
    }
    const text = consoleText();
    assert.match(text, /QVIRT-GUEST-BOOTED/, 'booted from the kernel-boot image');
    for (const [, serial, mib] of disks) assert.match(text, new RegExp(`QVIRT-DISK name=vd\\w+ serial=${serial} size=${mib * 2048} `), serial);
  } finally {
    await vm.kill();
  }
});

test.after(() => t.cleanup());
test.run();

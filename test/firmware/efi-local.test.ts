// EFI in the local mode, as KubeVirt's examples ask for it: a VMI with `firmware.bootloader.efi`
// boots the test guest through OVMF from the host's firmware directory (Debian keeps it in
// /usr/share/OVMF, not KubeVirt's default /usr/share/edk2/ovmf, which the launcher falls back
// from); with secureBoot and SMM, QEMU runs the secure-boot firmware with SMM on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { ensureGuest } from '../../src/local/guest/guest.ts';
import { runningVmi, startEnv, testVm, waitForSerial, eventually, getVmi, type Env } from '../virtctl/lib.ts';

let env!: Env;
/** The test guest with its bzImage (EFI stub) as the kernel: OVMF loads PE images, not the PVH vmlinux. */
const EFI_GUEST = 'qvirt/test-guest-efi:latest';
test.before(async () => {
  env = await startEnv('qvefi');
  const g = await ensureGuest();
  await new ImageStore(join(env.podsDir, '..', '..', 'store')).importFiles(EFI_GUEST, [{ src: g.bzImage, dest: '/boot/vmlinuz' }, { src: g.initrd, dest: '/boot/initrd.img' }]);
});

function efiVm(name: string, efi: Record<string, unknown>): any {
  const vm = testVm(name, 'Always') as any;
  const fw = vm.spec.template.spec.domain.firmware;
  fw.kernelBoot.container.image = EFI_GUEST;
  fw.bootloader = { efi };
  return vm;
}
test.after(async () => { await env?.stop(); });

/** The command line of the QEMU running this VMI (its -name carries the VMI's namespace_name). */
function qemuArgs(name: string): string[] {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (args[0]?.includes('qemu-system') && args.some((a) => a.includes(name))) return args;
    } catch { /* gone */ }
  }
  return [];
}

test('an EFI VMI boots the guest through OVMF', async () => {
  const vm = efiVm('efi-vm', { secureBoot: false });
  await env.local.client.create(Resources.virtualMachines, vm);
  const vmi = await runningVmi(env, 'efi-vm');
  await waitForSerial(env, vmi.metadata!.uid!, 'QVIRT-GUEST-READY', 180_000);
  const args = qemuArgs('efi-vm').join(' ');
  assert.match(args, /OVMF_CODE_4M\.fd/, 'OVMF code as pflash');
  assert.match(args, /if=pflash|pflash/, 'pflash');
  await env.local.client.delete(Resources.virtualMachines, 'default', 'efi-vm');
  await eventually(async () => (await getVmi(env, 'efi-vm')) === undefined, 120_000, 'efi-vm gone');
});

test('secure boot with SMM (KubeVirt\'s vmi-secureboot example): the secure-boot firmware, SMM on', async () => {
  const vm = efiVm('sb-vm', { secureBoot: true });
  vm.spec.template.spec.domain.features = { smm: { enabled: true } };
  await env.local.client.create(Resources.virtualMachines, vm);
  await runningVmi(env, 'sb-vm');
  const args = qemuArgs('sb-vm').join(' ');
  assert.match(args, /OVMF_CODE_4M\.secboot\.fd/);
  assert.match(args, /smm=on/);
  await env.local.client.delete(Resources.virtualMachines, 'default', 'sb-vm');
  await eventually(async () => (await getVmi(env, 'sb-vm')) === undefined, 120_000, 'sb-vm gone');
});

test.run();

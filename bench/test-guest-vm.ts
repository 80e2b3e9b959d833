// The VirtualMachine the local-mode benches start: the busybox test guest by kernel boot, runStrategy
// Always, no grace period, with 128 MiB — the least the test guest boots with (64 MiB guests die in
// early boot under emulation).
import { TEST_GUEST_IMAGE } from '../src/local/guest/guest.ts';

export const testGuestVm = (name: string) => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: 'default' },
  spec: {
    runStrategy: 'Always',
    template: {
      metadata: { labels: { 'kubevirt.io/vm': name } },
      spec: {
        terminationGracePeriodSeconds: 0,
        domain: {
          firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests', container: { image: TEST_GUEST_IMAGE, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
          devices: {},
          resources: { requests: { memory: '128Mi' } },
        },
      },
    },
  },
});

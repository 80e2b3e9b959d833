// The fault tests' VM: the busybox test guest by kernel boot, runStrategy Always, a claim disk
// (serial `faultdata`, claim `<name>-data`) that each boot reads a counter from and writes the next
// one to, synced — so a test knows which boot it sees and that data written before a fault reads
// back whole — with the user data in the Secret `<name>-userdata`.
import type { VirtualMachine } from '../../src/api/types.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { TEST_GUEST_IMAGE } from '../../src/local/guest/guest.ts';

// Each boot prints the counter it finds on the claim disk (serial faultdata) and writes the next one, synced.
export const BOOT_COUNTER_USER_DATA = `#!/bin/sh
dev=
for b in /sys/block/vd*; do [ "$(cat $b/serial 2>/dev/null)" = faultdata ] && dev=/dev/\${b##*/}; done
prev=$(head -c 16 "$dev" | tr -dc 'a-z0-9=')
echo "QVIRT-FAULT prev=[$prev]"
n=$(( \${prev#boots=} + 0 )) 2>/dev/null || n=0
printf 'boots=%d\\0' $((n + 1)) | dd of="$dev" conv=notrunc,fsync 2>/dev/null
sync
echo "QVIRT-FAULT wrote boots=$((n + 1))"
`;

/** The Secret holding the user data. */
export const bootCounterSecret = (name: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-userdata`, namespace: 'default' }, stringData: { userdata: BOOT_COUNTER_USER_DATA } }) as KubeObject;

export interface BootCounterVmOptions {
  readonly terminationGracePeriodSeconds: number;
  /** A masquerade interface on the pod network (else none, and the guest skips DHCP). */
  readonly podNetwork: boolean;
}

export function bootCounterVm(name: string, o: BootCounterVmOptions): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: 'default' },
    spec: {
      runStrategy: 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name } },
        spec: {
          terminationGracePeriodSeconds: o.terminationGracePeriodSeconds,
          domain: {
            firmware: { kernelBoot: { kernelArgs: o.podNetwork ? 'console=ttyS0 quiet cryptomgr.notests' : 'console=ttyS0 quiet cryptomgr.notests qvirt.dhcp=0', container: { image: TEST_GUEST_IMAGE, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
            devices: {
              disks: [{ name: 'data', serial: 'faultdata', disk: { bus: 'virtio' } }, { name: 'cloudinit', disk: { bus: 'virtio' } }],
              ...(o.podNetwork ? { interfaces: [{ name: 'default', masquerade: {} }] } : {}),
            },
            resources: { requests: { memory: '192Mi' } },
          },
          ...(o.podNetwork ? { networks: [{ name: 'default', pod: {} }] } : {}),
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }, { name: 'cloudinit', cloudInitNoCloud: { secretRef: { name: `${name}-userdata` } } }],
        },
      },
    },
  } as unknown as VirtualMachine;
}

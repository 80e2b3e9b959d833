// The Debian guest: a real Debian 12 system (systemd, cloud-init, openssh-server, qemu-guest-agent,
// the cloud kernel) built from Debian's packages by test/guest/debian/build.sh, for tests where the
// guest's own software matters. A VM boots it by direct kernel boot (kernel and initrd from a
// kernel-boot image) with its root filesystem on a containerDisk (virtio), and gets its user and
// ssh key from a cloudInitNoCloud volume. See test/guest/README.md ("The Debian guest").
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { VirtualMachine } from '../../src/api/types.ts';

export interface DebianGuestArtifacts {
  /** The root filesystem (ext4, no partition table) as a compressed qcow2. */
  readonly disk: string;
  /** The kernel: the cloud kernel's vmlinux (ELF, PVH entry) when it could be extracted, else its bzImage. */
  readonly kernel: string;
  /** initramfs-tools' initrd (virtio, ext4: it finds the root filesystem by its label). */
  readonly initrd: string;
  /** The kernel command line that boots them: DEBIAN_GUEST_KERNEL_ARGS. */
  readonly kernelArgs: string;
}

/** The image the Debian guest goes under in a local image store: the disk under /disk, kernel and initrd under /boot. */
export const DEBIAN_GUEST_IMAGE = 'qvirt/debian-guest:12';
/** Where the image keeps its kernel and initrd (the VM's kernelBoot.container paths). */
export const DEBIAN_GUEST_KERNEL_PATH = '/boot/vmlinux';
export const DEBIAN_GUEST_INITRD_PATH = '/boot/initrd.img';
const DISK_PATH = '/disk/debian-12.qcow2';
/**
 * The kernel command line that boots the guest: its root filesystem by label, the serial console.
 * test/guest/debian/build.sh prints it as its fourth line; `buildDebianGuest` refuses a build whose
 * line differs (the label lives in the script).
 */
export const DEBIAN_GUEST_KERNEL_ARGS = 'root=LABEL=qvirt-debian ro console=ttyS0 quiet';

const buildScript = fileURLToPath(new URL('./debian/build.sh', import.meta.url));
let built: Promise<DebianGuestArtifacts> | undefined;

/**
 * Builds the Debian guest if needed (test/guest/debian/build.sh: as root, about a minute with a
 * fast mirror; cached under .cache/guest/debian/) and returns where its files are. The first call
 * in a process runs the script; later calls share it. Concurrent processes build once (flock).
 */
export function buildDebianGuest(): Promise<DebianGuestArtifacts> {
  built ??= new Promise<DebianGuestArtifacts>((resolve, reject) => {
    execFile('bash', [buildScript], { encoding: 'utf8', maxBuffer: 4 << 20, timeout: 1_200_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`Debian guest build failed (${buildScript}): ${err.message}\n${stderr.trim().split('\n').slice(-20).join('\n')}`));
        return;
      }
      const [disk, kernel, initrd, kernelArgs] = stdout.trim().split('\n').slice(-4);
      if (!disk?.endsWith('/disk.qcow2') || !kernel || !/\/vmlinu[xz]$/.test(kernel) || !initrd?.endsWith('/initrd.img') || !kernelArgs?.includes('root=')) {
        reject(new Error(`Debian guest build printed no disk/kernel/initrd/command line (${buildScript}): ${JSON.stringify(stdout)}`));
        return;
      }
      if (kernelArgs !== DEBIAN_GUEST_KERNEL_ARGS) {
        reject(new Error(`Debian guest build's kernel command line "${kernelArgs}" differs from DEBIAN_GUEST_KERNEL_ARGS "${DEBIAN_GUEST_KERNEL_ARGS}" (${buildScript}): make them agree`));
        return;
      }
      resolve({ disk, kernel, initrd, kernelArgs });
    });
  });
  built.catch(() => { built = undefined; });
  return built;
}

/**
 * Puts the Debian guest into an image store under `ref` (building it first if needed): one image
 * that is both the VM's containerDisk (its single file under /disk) and its kernel-boot container.
 * Returns the artifacts.
 */
export async function importDebianGuest(
  store: { importFiles(ref: string, files: ReadonlyArray<{ src: string; dest: string }>): Promise<unknown> },
  ref: string = DEBIAN_GUEST_IMAGE,
): Promise<DebianGuestArtifacts> {
  const g = await buildDebianGuest();
  await store.importFiles(ref, [
    { src: g.disk, dest: DISK_PATH },
    { src: g.kernel, dest: DEBIAN_GUEST_KERNEL_PATH },
    { src: g.initrd, dest: DEBIAN_GUEST_INITRD_PATH },
  ]);
  return g;
}

/** cloud-config user data: `user` (passwordless sudo, bash) who logs in with `sshPublicKey` only. */
export function debianUserData(user: string, sshPublicKey: string): string {
  if (!/^[a-z_][a-z0-9_-]*$/.test(user)) throw new Error(`debianUserData: user "${user}" is not a valid Debian user name`);
  const key = sshPublicKey.trim();
  if (!/^(ssh-|ecdsa-|sk-)\S+ \S+/.test(key) || key.includes('\n')) throw new Error('debianUserData: sshPublicKey is not one OpenSSH public key line');
  return ['#cloud-config', 'users:', ...cloudConfigUser(user, key), ''].join('\n');
}

/**
 * One entry of a cloud-config `users:` list: `user` with bash and passwordless sudo, no password,
 * logging in with `sshPublicKey` when given (else its keys come from elsewhere: the guest agent).
 */
export function cloudConfigUser(user: string, sshPublicKey?: string): string[] {
  return [
    `  - name: ${user}`,
    '    shell: /bin/bash',
    '    lock_passwd: true',
    "    sudo: 'ALL=(ALL) NOPASSWD:ALL'",
    ...(sshPublicKey === undefined ? [] : ['    ssh_authorized_keys:', `      - ${JSON.stringify(sshPublicKey.trim())}`]),
  ];
}

export interface DebianVmOptions {
  /** The OpenSSH public key line `user` logs in with. */
  readonly sshPublicKey: string;
  /** The guest user cloud-init creates (default `debian`, the Debian cloud images' user). */
  readonly user?: string;
  /** The kernel command line (default DEBIAN_GUEST_KERNEL_ARGS). */
  readonly kernelArgs?: string;
  readonly runStrategy?: string;
  readonly memory?: string;
  readonly namespace?: string;
  readonly image?: string;
}

/**
 * A VirtualMachine of the Debian guest: kernel boot from the image's /boot, its disk as a
 * containerDisk on virtio (the cloud kernel has no AHCI), cloud-init NoCloud on virtio, the pod
 * network, one vCPU (under TCG a second one makes the boot slower, not faster).
 */
export function debianVm(name: string, o: DebianVmOptions): VirtualMachine {
  const image = o.image ?? DEBIAN_GUEST_IMAGE;
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: o.namespace ?? 'default' },
    spec: {
      runStrategy: o.runStrategy ?? 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name } },
        spec: {
          terminationGracePeriodSeconds: 30,
          domain: {
            firmware: { kernelBoot: { kernelArgs: o.kernelArgs ?? DEBIAN_GUEST_KERNEL_ARGS, container: { image, kernelPath: DEBIAN_GUEST_KERNEL_PATH, initrdPath: DEBIAN_GUEST_INITRD_PATH } } },
            devices: {
              disks: [
                { name: 'root', disk: { bus: 'virtio' } },
                { name: 'cloudinit', disk: { bus: 'virtio' } },
              ],
            },
            resources: { requests: { memory: o.memory ?? '512Mi' } },
          },
          volumes: [
            { name: 'root', containerDisk: { image } },
            { name: 'cloudinit', cloudInitNoCloud: { userData: debianUserData(o.user ?? 'debian', o.sshPublicKey) } },
          ],
        },
      },
    },
  } as unknown as VirtualMachine;
}

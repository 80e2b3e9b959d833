// What goes into each image (pure: paths in, a RootfsSpec and an image config out).
//   qvirt/launcher: QEMU (x86_64 system emulator with the TCG accelerator and the virtio display
//     modules), qemu-img, SeaBIOS, OVMF, iPXE option ROMs, node, the launcher bundle, the CLI bundle,
//     virt-tail.sh with coreutils' tail (`qvirt tail` for guest-console-log), /usr/bin/cp and the static container-disk helper
//     (the container-disk-binary init container copies it). No libvirt.
//   qvirt/virt: node and the CLI bundle (`qvirt controller`, `qvirt handler`), and the tools the
//     handler runs in launcher pods' network namespaces (nsenter, ip, bridge, nft, sysctl).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LAUNCHER_LOADER, LAUNCHER_NODE_FLAGS } from '../../src/local/launcher-command.ts';
import { CONTROLLER_NODE_FLAGS } from '../../controller/manager.ts';
import { NON_ROOT_UID } from '../../src/api/constants.ts';
import { CONTAINER_DISK_BINARY_SOURCE, QVIRT_BINARY } from '../../controller/constants.ts';
import { ImageNames, type ImageName } from '../../src/deploy/images.ts';
import type { PlacedFile, RootfsSpec } from './rootfs.ts';

/** Built inputs the images are assembled from. */
export interface ImageInputs {
  /** The node binary (stripped copy). */
  readonly node: string;
  /** Dir with qvirt.mjs (the CLI bundle) and the .proto files. */
  readonly cliBundleDir: string;
  /** dist/launcher: the launcher's loader and bundle (LAUNCHER_LOADER, LAUNCHER_BUNDLE), virt-tail.sh, .proto files. */
  readonly launcherBundleDir: string;
  /** The static container-disk helper. */
  readonly containerDisk: string;
  /** The directory with passt (and passt.avx2 on x86_64) built by scripts/passt/build.sh. */
  readonly passtDir: string;
  readonly version: string;
}

export const QVIRT_LIB_DIR = '/usr/lib/qvirt';
const CLI_DIR = `${QVIRT_LIB_DIR}/lib/cli`;
const LAUNCHER_DIR = `${QVIRT_LIB_DIR}/launcher`;

/** The image's `/usr/bin/qvirt`: bin/qvirt's dispatch with the bundles' paths and each component's V8 flags. */
export function qvirtScript(withLauncher: boolean): string {
  return [
    '#!/bin/sh',
    '# qvirt in an image (scripts/images/spec.ts): the launcher from its bundle with the launcher\'s V8 flags,',
    '# the controller with its heap flags, everything else from the CLI bundle.',
    'case "$1" in',
    ...(withLauncher ? [
      `  launcher) shift; exec /usr/bin/node ${LAUNCHER_NODE_FLAGS.join(' ')} ${LAUNCHER_DIR}/${LAUNCHER_LOADER} "$@" ;;`,
      // guest-console-log in every launcher pod: virt-tail, a shell script around coreutils' tail (no Node process).
      `  tail) shift; exec /bin/sh ${LAUNCHER_DIR}/virt-tail.sh "$@" ;;`,
    ] : []),
    `  controller) exec /usr/bin/node ${CONTROLLER_NODE_FLAGS.join(' ')} ${CLI_DIR}/qvirt.mjs "$@" ;;`,
    `  *) exec /usr/bin/node ${CLI_DIR}/qvirt.mjs "$@" ;;`,
    'esac',
    '',
  ].join('\n');
}

const passwd = `root:x:0:0:root:/root:/bin/sh\nqemu:x:${NON_ROOT_UID}:${NON_ROOT_UID}:qemu:/var/lib/qemu:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
const group = `root:x:0:\nqemu:x:${NON_ROOT_UID}:\nkvm:x:${NON_ROOT_UID + 1}:qemu\nnogroup:x:65534:\n`;

const COMMON_DIRS: readonly (readonly [string, number])[] = [
  ['/tmp', 0o1777], ['/var/tmp', 0o1777], ['/root', 0o700], ['/run', 0o755], ['/dev', 0o755], ['/proc', 0o555], ['/sys', 0o555], ['/etc', 0o755],
];

function common(inputs: ImageInputs, withLauncher: boolean): { files: PlacedFile[]; symlinks: [string, string][] } {
  const files: PlacedFile[] = [
    { dest: '/usr/bin/node', src: inputs.node, mode: 0o755 },
    { dest: QVIRT_BINARY, content: qvirtScript(withLauncher), mode: 0o755 },
    { dest: `${QVIRT_LIB_DIR}/package.json`, content: `${JSON.stringify({ name: 'qvirt', version: inputs.version, type: 'module' })}\n`, mode: 0o644 },
    { dest: '/etc/passwd', content: passwd, mode: 0o644 },
    { dest: '/etc/group', content: group, mode: 0o644 },
    { dest: '/etc/nsswitch.conf', content: 'passwd: files\ngroup: files\nhosts: files dns\n', mode: 0o644 },
  ];
  for (const f of readdirSync(inputs.cliBundleDir).sort()) files.push({ dest: `${CLI_DIR}/${f}`, src: join(inputs.cliBundleDir, f), mode: 0o644 });
  return { files, symlinks: [['/usr/bin/sh', 'dash'], ['/var/run', '../run']] };
}

/** The x86_64 QEMU data files a q35/pc guest can load (BIOS, option ROMs, keymaps, firmware descriptors). */
export const QEMU_HOST_PATHS: readonly string[] = [
  '/usr/bin/qemu-system-x86_64',
  '/usr/bin/qemu-img',
  '/usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so',
  '/usr/lib/x86_64-linux-gnu/qemu/hw-display-virtio-gpu.so',
  '/usr/lib/x86_64-linux-gnu/qemu/hw-display-virtio-gpu-pci.so',
  '/usr/lib/x86_64-linux-gnu/qemu/hw-display-virtio-vga.so',
  ...['kvmvapic.bin', 'linuxboot.bin', 'linuxboot_dma.bin', 'multiboot.bin', 'multiboot_dma.bin', 'pvh.bin', 'qboot.rom', 'bios-microvm.bin', 'sgabios.bin', 'keymaps', 'firmware'].map((f) => `/usr/share/qemu/${f}`),
  '/usr/share/seabios',
  '/usr/lib/ipxe/qemu',
  ...['OVMF_CODE_4M.fd', 'OVMF_VARS_4M.fd', 'OVMF_CODE_4M.secboot.fd', 'OVMF_VARS_4M.ms.fd'].map((f) => `/usr/share/OVMF/${f}`),
];

/**
 * What the launcher runs QEMU through (src/process/parent-death.ts): util-linux's setpriv sets
 * QEMU's parent-death signal, and dash (already in the image) checks the launcher is still its parent,
 * so no QEMU outlives a killed launcher.
 */
export const LAUNCHER_PARENT_DEATH_TOOLS: readonly string[] = ['/usr/bin/setpriv'];

/** The emulated TPM's process (launcher/tpm/swtpm.ts; its libtpms through ldd). */
export const LAUNCHER_TPM_TOOLS: readonly string[] = ['/usr/bin/swtpm'];

/** What virt-handler runs to plumb pod networks inside launcher pods (src/net/command.ts, handler/network/plan.ts). */
export const HANDLER_NETWORK_TOOLS: readonly string[] = ['/usr/bin/nsenter', '/usr/sbin/ip', '/usr/sbin/bridge', '/usr/sbin/nft', '/usr/sbin/sysctl'];

/**
 * What virt-handler runs to relay live migrations (handler/migration/socat-relay.ts; without socat the
 * slower Node relay; setpriv gives each socat a parent-death signal, so none outlives a killed handler).
 */
export const HANDLER_MIGRATION_TOOLS: readonly string[] = ['/usr/bin/socat', '/usr/bin/setpriv'];

/**
 * What virt-handler runs to bind-mount container disks and hotplugged claims into launcher pods
 * (handler/bind-mounts.ts; an empty hotplugged claim's disk.img made and owned): mount, umount and
 * coreutils' stat, truncate and chown.
 */
export const HANDLER_MOUNT_TOOLS: readonly string[] = ['/usr/bin/mount', '/usr/bin/umount', '/usr/bin/stat', '/usr/bin/truncate', '/usr/bin/chown'];

export interface ImageSpec {
  readonly name: ImageName;
  readonly rootfs: RootfsSpec;
  readonly config: OciImageConfig;
}

/** The runtime part of an OCI image config. */
export interface OciImageConfig {
  readonly Env: string[];
  readonly Entrypoint: string[];
  readonly WorkingDir: string;
  readonly Labels: Record<string, string>;
}

const ENV = ['PATH=/usr/local/bin:/usr/bin:/usr/sbin', 'NODE_OPTIONS=--no-deprecation'];

export function launcherImageSpec(inputs: ImageInputs): ImageSpec {
  const c = common(inputs, true);
  const files = [...c.files, { dest: CONTAINER_DISK_BINARY_SOURCE, src: inputs.containerDisk, mode: 0o755 }];
  // passt built from Debian's newer source (Debian 12's breaks TCP through the passt binding; see
  // scripts/passt/build.sh). /usr/bin/passt execs passt.avx2 beside it on AVX2 machines.
  for (const f of readdirSync(inputs.passtDir).filter((f) => /^passt(\.avx2)?$/.test(f)).sort()) files.push({ dest: `/usr/bin/${f}`, src: join(inputs.passtDir, f), mode: 0o755 });
  for (const f of readdirSync(inputs.launcherBundleDir).sort()) files.push({ dest: `${LAUNCHER_DIR}/${f}`, src: join(inputs.launcherBundleDir, f), mode: 0o644 });
  return {
    name: ImageNames.Launcher,
    rootfs: {
      hostPaths: ['/usr/bin/dash', '/usr/bin/cp', '/usr/bin/tail', ...LAUNCHER_PARENT_DEATH_TOOLS, ...QEMU_HOST_PATHS, ...LAUNCHER_TPM_TOOLS],
      files,
      symlinks: c.symlinks,
      dirs: [...COMMON_DIRS, ['/var/lib/qemu', 0o755], ['/var/run/kubevirt', 0o755], ['/var/run/kubevirt-private', 0o755]],
    },
    config: { Env: ENV, Entrypoint: [QVIRT_BINARY, 'launcher'], WorkingDir: '/', Labels: { 'org.opencontainers.image.title': 'qvirt launcher', 'org.opencontainers.image.version': inputs.version } },
  };
}

export function virtImageSpec(inputs: ImageInputs): ImageSpec {
  const c = common(inputs, false);
  return {
    name: ImageNames.Virt,
    rootfs: { hostPaths: ['/usr/bin/dash', ...HANDLER_NETWORK_TOOLS, ...HANDLER_MIGRATION_TOOLS, ...HANDLER_MOUNT_TOOLS], files: c.files, symlinks: c.symlinks, dirs: [...COMMON_DIRS, ['/var/run/kubevirt-private', 0o700]] },
    config: { Env: ENV, Entrypoint: [QVIRT_BINARY], WorkingDir: '/', Labels: { 'org.opencontainers.image.title': 'qvirt controller and handler', 'org.opencontainers.image.version': inputs.version } },
  };
}

// Building qvirt's images without a container engine: bundles (esbuild), a stripped node, the static
// container-disk helper (gcc), root filesystems from the installed Debian packages' files
// (rootfs.ts), then reproducible OCI archives (oci.ts). Work files live under .cache/images.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import yaml from 'js-yaml';
import { buildLauncherBundle, bundleEntry } from '../build.ts';
import { RootfsBuilder, listTree, treeBytes } from './rootfs.ts';
import { launcherImageSpec, virtImageSpec, type ImageInputs, type ImageSpec } from './spec.ts';
import { writeLayer, writeOciArchive } from './oci.ts';
import { IMAGES_INDEX_FILE, IMAGES_OUT_DIR, ImageNames, imageRefsFrom, type BuiltImage, type ImageName } from '../../src/deploy/images.ts';
import { manifests, Names } from '../../src/deploy/manifests.ts';

export const repoRoot = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
export const WORK_DIR = join(repoRoot, '.cache/images');

/** Debian packages whose files the images take, and the build tools. */
export const HOST_PACKAGES: Readonly<Record<string, string>> = {
  '/usr/bin/qemu-system-x86_64': 'qemu-system-x86',
  '/usr/bin/qemu-img': 'qemu-utils',
  '/usr/share/OVMF/OVMF_CODE_4M.fd': 'ovmf',
  '/usr/share/seabios/bios-256k.bin': 'seabios',
  '/usr/lib/ipxe/qemu/efi-virtio.rom': 'ipxe-qemu',
  '/usr/bin/dash': 'dash',
  '/usr/bin/gcc': 'gcc',
  '/usr/include/stdio.h': 'libc6-dev',
  '/usr/bin/tar': 'tar',
  // scripts/passt/build.sh (passt from Debian's source package).
  '/usr/bin/make': 'make',
  '/usr/bin/patch': 'patch',
  '/usr/bin/curl': 'curl',
  '/usr/bin/xz': 'xz-utils',
  '/usr/bin/nsenter': 'util-linux',
  '/usr/sbin/ip': 'iproute2',
  '/usr/sbin/nft': 'nftables',
  '/usr/sbin/sysctl': 'procps',
  '/usr/bin/socat': 'socat',
  '/usr/bin/swtpm': 'swtpm',
  '/usr/bin/setpriv': 'util-linux',
  '/usr/bin/mount': 'mount',
  '/usr/bin/umount': 'mount',
  '/usr/bin/stat': 'coreutils',
  '/usr/bin/truncate': 'coreutils',
  '/usr/bin/chown': 'coreutils',
};

/** Installs missing Debian packages (as root), else says which are missing. */
export function ensureHostPackages(log: (s: string) => void): void {
  const missing = [...new Set(Object.entries(HOST_PACKAGES).filter(([p]) => !existsSync(p)).map(([, pkg]) => pkg))];
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`missing Debian packages: ${missing.join(' ')} (run as root, or: sudo apt-get install ${missing.join(' ')})`);
  log(`installing ${missing.join(' ')}`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

/** The whole CLI in one file (every subcommand), with the .proto files beside it. */
export async function buildCliBundle(outDir: string): Promise<void> {
  await bundleEntry('src/cli/main.ts', outDir, 'qvirt.mjs');
}

/** Everything the root filesystems are assembled from, built into WORK_DIR. */
export async function buildInputs(log: (s: string) => void, workDir = WORK_DIR): Promise<ImageInputs> {
  mkdirSync(workDir, { recursive: true });
  log('building the launcher and CLI bundles');
  const launcherBundleDir = await buildLauncherBundle(join(workDir, 'launcher'));
  const cliBundleDir = join(workDir, 'cli');
  await buildCliBundle(cliBundleDir);
  // A stripped copy of the node binary npm installed (node_modules/node): 18 MiB of symbols less.
  const node = join(workDir, 'node');
  copyFileSync(join(repoRoot, 'node_modules/node/bin/node'), node);
  execFileSync('strip', ['--strip-all', node]);
  const containerDisk = join(workDir, 'container-disk');
  execFileSync('gcc', ['-static', '-Os', '-s', '-Wall', '-Werror', '-o', containerDisk, join(repoRoot, 'deploy/images/container-disk.c')]);
  log('building passt (scripts/passt/build.sh; cached)');
  const passtDir = execFileSync(join(repoRoot, 'scripts/passt/build.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  return { node, cliBundleDir, launcherBundleDir, containerDisk, passtDir, version };
}

export function imageSpecs(inputs: ImageInputs): ImageSpec[] {
  return [launcherImageSpec(inputs), virtImageSpec(inputs)];
}

/** Paths in a root filesystem that belong to libvirt (there must be none). */
export function libvirtPaths(tree: readonly string[]): string[] {
  return tree.filter((p) => /libvirt/i.test(p) || /(^|\/)virt[a-z]*d$/.test(p));
}

/** Assembles one image's root filesystem under WORK_DIR/rootfs/<name>; returns its path. */
export function buildRootfs(spec: ImageSpec, workDir = WORK_DIR): string {
  const root = join(workDir, 'rootfs', spec.name.replace(/\//g, '-'));
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  new RootfsBuilder(root).build(spec.rootfs);
  const bad = libvirtPaths(listTree(root));
  if (bad.length > 0) throw new Error(`${spec.name}: libvirt files in the image: ${bad.slice(0, 5).join(', ')}`);
  return root;
}

export interface BuildOptions {
  readonly only?: readonly ImageName[];
  readonly outDir?: string;
  readonly log?: (s: string) => void;
  /** Scratch space (default .cache/images). */
  readonly workDir?: string;
}

/** Builds the images' OCI archives and writes images.json; returns what was built. */
export async function buildImages(opts: BuildOptions = {}): Promise<BuiltImage[]> {
  const log = opts.log ?? ((s: string) => process.stderr.write(`images: ${s}\n`));
  ensureHostPackages(log);
  const workDir = opts.workDir ?? WORK_DIR;
  const inputs = await buildInputs(log, workDir);
  const outDir = opts.outDir ?? join(repoRoot, IMAGES_OUT_DIR);
  const built: BuiltImage[] = [];
  for (const spec of imageSpecs(inputs)) {
    if (opts.only && !opts.only.includes(spec.name)) continue;
    log(`${spec.name}: assembling the root filesystem`);
    const root = buildRootfs(spec, workDir);
    const uncompressedBytes = treeBytes(root);
    log(`${spec.name}: ${(uncompressedBytes / 2 ** 20).toFixed(1)} MiB of files; writing the layer`);
    const layer = await writeLayer(root, join(workDir, 'blobs'));
    const a = await writeOciArchive({ name: spec.name, config: spec.config, layer, outDir, workDir });
    rmSync(layer.path, { force: true });
    log(`${a.ref}: ${a.archive} (${(a.compressedBytes / 2 ** 20).toFixed(1)} MiB)`);
    built.push({ name: spec.name, ref: a.ref, archive: a.archive, compressedBytes: a.compressedBytes, uncompressedBytes, manifestDigest: a.manifestDigest });
  }
  // Keep entries of images not rebuilt this time.
  const indexPath = join(outDir, IMAGES_INDEX_FILE);
  let previous: BuiltImage[] = [];
  try { previous = JSON.parse(readFileSync(indexPath, 'utf8')) as BuiltImage[]; } catch { /* first build */ }
  const all = [...previous.filter((p) => !built.some((b) => b.name === p.name)), ...built].sort((a, b) => a.name.localeCompare(b.name));
  writeFileSync(indexPath, `${JSON.stringify(all, null, 2)}\n`);
  writeFileSync(join(outDir, 'kustomization.yaml'), overlayKustomization(all, relative(outDir, join(repoRoot, 'deploy'))));
  return all;
}

/**
 * dist/images/kustomization.yaml: deploy/ with the built tags (`kubectl apply -k dist/images`).
 * kustomize's `images` rewrites container images; the controller's --launcher-image argument is
 * patched to the launcher's tag as well.
 */
export function overlayKustomization(built: readonly BuiltImage[], deployDir: string): string {
  const refs = imageRefsFrom(built);
  const deployment = manifests().find((o) => o.kind === 'Deployment') as { spec: { template: { spec: { containers: { args: string[] }[] } } } } | undefined;
  const argIndex = (deployment?.spec.template.spec.containers[0]?.args.indexOf('--launcher-image') ?? -1) + 1;
  if (argIndex <= 0) throw new Error('the virt-controller Deployment has no --launcher-image argument to pin');
  const doc = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [deployDir],
    images: Object.values(ImageNames).map((name) => ({ name, newTag: refs[name].slice(name.length + 1) })),
    patches: [{
      target: { group: 'apps', version: 'v1', kind: 'Deployment', name: Names.ControllerDeployment },
      patch: JSON.stringify([{ op: 'replace', path: `/spec/template/spec/containers/0/args/${argIndex}`, value: refs[ImageNames.Launcher] }]),
    }],
  };
  return `# Generated by npm run images: deploy/ with the images just built.\n${yaml.dump(doc, { lineWidth: 200 })}`;
}

export const ALL_IMAGES: readonly ImageName[] = [ImageNames.Launcher, ImageNames.Virt];

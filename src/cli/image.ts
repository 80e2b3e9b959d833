// `qvirt image import NAME PATH` / `qvirt image list` / `qvirt image rm NAME`: the local image store
// that stands in for a container runtime's on machines without one. PATH is what users have: an
// OCI archive (`skopeo copy ... oci-archive:x.tar`, `podman save --format oci-archive`), an OCI
// layout directory, a `docker save` archive, or a bare qcow2/raw disk, which becomes a containerDisk
// image (`spec.volumes[].containerDisk.image: NAME`, the disk under /disk/). Archives keep their whole
// root filesystem: container disks under /disk/, kernel-boot images' kernel and initrd where their
// kernelPath/initrdPath say. `qvirt image pull REF` brings an image from its registry the way the
// local mode's pod runner does (skopeo's credentials, `skopeo login`'s).
import { stat } from 'node:fs/promises';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { ImageStore, ImageStoreError } from '../local/image-store.ts';
import { importImage } from '../local/image-import.ts';
import { pullImage } from '../local/image-pull.ts';
import type { PullProgress } from '../local/pull-progress.ts';
import { initialProgress, mib, renderProgress } from './progress.ts';

const specs = {
  'image-store': { type: 'string', value: 'DIR', help: 'the local image store (default: QVIRT_IMAGE_STORE, /var/lib/qvirt/images as root)' },
  'registry-certs-dir': { type: 'string', value: 'DIR', help: 'pull: CA certificates in DIR/HOST[:PORT]/ca.crt (/etc/containers/certs.d and the system CAs are used too)' },
  'insecure-registry': { type: 'strings', value: 'HOST[:PORT]', help: 'pull: do not verify this registry\'s TLS certificate (or use plain HTTP); repeatable' },
} as const;

function progressBar(total: number): (done: number) => void {
  const tty = process.stderr.isTTY === true;
  let state = initialProgress;
  return (done) => {
    const r = renderProgress(state, done, total, tty);
    state = r.state;
    if (r.text) process.stderr.write(r.text);
  };
}

/** A pull's progress on stderr: a bar redrawn on a terminal, a line at each quarter otherwise (bytes only while the total is unknown). */
function pullProgress(): PullProgress {
  const tty = process.stderr.isTTY === true;
  let state = initialProgress;
  return (done, total) => {
    if (total === undefined) { if (tty) process.stderr.write(`\r${mib(done)} downloaded`); return; }
    const r = renderProgress(state, done, total, tty);
    state = r.state;
    if (r.text) process.stderr.write(r.text);
  };
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  const [verb, ...rest] = args;
  if (help || !verb) {
    process.stdout.write(usage('qvirt image import NAME PATH | pull REF | list | rm NAME',
      'Manage the local image store (container disks and kernel-boot images for machines without a container runtime).\n' +
      'PATH: an OCI archive, an OCI layout directory, a docker save archive, or a bare qcow2/raw disk.\n' +
      'Images missing from the store are pulled from their registry when a VMI needs them (qvirt local up, qvirt run).', specs));
    return help ? 0 : 2;
  }
  const store = new ImageStore(flags['image-store']);
  switch (verb) {
    case 'import': {
      const [name, file] = rest;
      if (!name || !file || rest.length !== 2) throw new UsageError('usage: qvirt image import NAME PATH');
      const st = await stat(file).catch(() => undefined);
      if (!st || (!st.isFile() && !st.isDirectory())) { process.stderr.write(`error: ${file} is not a readable file\n`); return 1; }
      try {
        await store.removeStale();
        const { info, source } = await importImage(store, name, file, progressBar(st.size));
        const what = source.kind === 'disk' ? `${source.format} disk` : source.kind;
        process.stdout.write(`imported ${info.ref} (${mib(info.sizeBytes)}, ${what}, sha256:${info.digest}) into ${store.root}\n`);
      } catch (err) {
        if (!(err instanceof ImageStoreError)) throw err;
        process.stderr.write(`error: ${err.message}\n`);
        return 1;
      }
      return 0;
    }
    case 'pull': {
      const [ref] = rest;
      if (!ref || rest.length !== 1) throw new UsageError('usage: qvirt image pull REF');
      try {
        await store.removeStale();
        const t0 = Date.now();
        const info = await pullImage(store, ref, { registries: { ...(flags['registry-certs-dir'] ? { certsDir: flags['registry-certs-dir'] } : {}), insecure: flags['insecure-registry'] }, current: await store.get(ref), onProgress: pullProgress() });
        process.stdout.write(`pulled ${info.ref} (${mib(info.sizeBytes)}, sha256:${info.digest}) in ${((Date.now() - t0) / 1000).toFixed(1)}s into ${store.root}\n`);
      } catch (err) {
        if (!(err instanceof ImageStoreError)) throw err;
        process.stderr.write(`error: ${err.message}\n`);
        return 1;
      }
      return 0;
    }
    case 'list': {
      const images = await store.list();
      process.stdout.write(`${'IMAGE'.padEnd(60)} ${'SIZE'.padStart(12)}  ${'DIGEST'.padEnd(19)}  IMPORTED\n`);
      for (const i of images) process.stdout.write(`${i.ref.padEnd(60)} ${mib(i.sizeBytes).padStart(12)}  sha256:${i.digest.slice(0, 12)}  ${i.importedAt}\n`);
      return 0;
    }
    case 'rm': {
      const [name] = rest;
      if (!name) throw new UsageError('usage: qvirt image rm NAME');
      if (!(await store.remove(name))) { process.stderr.write(`error: no image ${name} in ${store.root}\n`); return 1; }
      process.stdout.write(`removed ${name}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown verb "${verb}": import, pull, list or rm`);
  }
}

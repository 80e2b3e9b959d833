// An OCI image archive from a root filesystem, byte-for-byte reproducible: the layer is a GNU tar
// with sorted names, mtime 0, uid/gid 0 and no atime/ctime, gzipped by zlib with no timestamp; the
// config has no creation date. Its content hash is therefore a function of the files alone, and
// the tag is taken from it. The archive is an OCI image layout in a tar (`oci-layout`, `index.json`,
// `blobs/sha256/…`), which `ctr images import`, `k3s ctr images import`, `podman load` and
// `skopeo copy oci-archive:` accept; index.json names the image in both the OCI annotation and
// containerd's.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import type { OciImageConfig } from './spec.ts';

export const MediaTypes = {
  Index: 'application/vnd.oci.image.index.v1+json',
  Manifest: 'application/vnd.oci.image.manifest.v1+json',
  Config: 'application/vnd.oci.image.config.v1+json',
  LayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** GNU tar flags that make an archive depend on file contents, names and modes only. */
export const REPRODUCIBLE_TAR_FLAGS = ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '--format=posix', '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime'] as const;

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Runs GNU tar over `dir` and returns its output stream (the caller consumes it). */
function tarStream(dir: string, entries: readonly string[]) {
  const child = spawn('tar', [...REPRODUCIBLE_TAR_FLAGS, '-C', dir, '-cf', '-', ...entries], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar -C ${dir} failed (exit ${code}): ${stderr.trim()}`))));
  });
  return { stream: child.stdout, done };
}

export interface Layer {
  /** sha256 of the uncompressed tar (the config's diff_id). */
  readonly diffId: string;
  /** sha256 of the gzipped blob. */
  readonly digest: string;
  readonly size: number;
  /** Where the gzipped blob is. */
  readonly path: string;
}

/** Tars and gzips a root filesystem into `blobDir/<digest>`, hashing both forms on the way. */
export async function writeLayer(rootfs: string, blobDir: string): Promise<Layer> {
  mkdirSync(blobDir, { recursive: true });
  const tmp = join(blobDir, `.layer-${process.pid}-${Date.now()}`);
  const { stream, done } = tarStream(rootfs, ['.']);
  const diff = createHash('sha256');
  const gz = createGzip({ level: 6 });
  const comp = createHash('sha256');
  let size = 0;
  const out = createWriteStream(tmp);
  stream.on('data', (c: Buffer) => diff.update(c));
  gz.on('data', (c: Buffer) => { comp.update(c); size += c.length; });
  const written = new Promise<void>((resolve, reject) => { out.on('finish', resolve); out.on('error', reject); gz.on('error', reject); });
  stream.pipe(gz).pipe(out);
  await done;
  await written;
  const diffId = diff.digest('hex');
  const digest = comp.digest('hex');
  const path = join(blobDir, digest);
  renameSync(tmp, path);
  return { diffId, digest, size, path };
}

export interface OciArchive {
  readonly ref: string;
  readonly tag: string;
  readonly manifestDigest: string;
  readonly configDigest: string;
  readonly archive: string;
  readonly compressedBytes: number;
}

/** The content tag: the first 12 hex digits of the config digest (which names the layer's diff_id). */
export const contentTag = (configDigest: string): string => configDigest.slice(0, 12);

/** The image config JSON (no `created`: reproducible). */
export function imageConfigJson(config: OciImageConfig, diffId: string): string {
  return JSON.stringify({
    architecture: 'amd64',
    os: 'linux',
    config: { Env: config.Env, Entrypoint: config.Entrypoint, WorkingDir: config.WorkingDir, Labels: config.Labels },
    rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] },
  });
}

/** Writes `<outDir>/<name-with-dashes>.oci.tar` for one image with one layer. */
export async function writeOciArchive(opts: { name: string; config: OciImageConfig; layer: Layer; outDir: string; workDir: string }): Promise<OciArchive> {
  const { name, config, layer } = opts;
  const configJson = imageConfigJson(config, layer.diffId);
  const configDigest = sha256(configJson);
  const tag = contentTag(configDigest);
  const ref = `${name}:${tag}`;
  const manifestJson = JSON.stringify({
    schemaVersion: 2,
    mediaType: MediaTypes.Manifest,
    config: { mediaType: MediaTypes.Config, digest: `sha256:${configDigest}`, size: Buffer.byteLength(configJson) },
    layers: [{ mediaType: MediaTypes.LayerGzip, digest: `sha256:${layer.digest}`, size: layer.size }],
  });
  const manifestDigest = sha256(manifestJson);
  const index = JSON.stringify({
    schemaVersion: 2,
    mediaType: MediaTypes.Index,
    manifests: [{
      mediaType: MediaTypes.Manifest,
      digest: `sha256:${manifestDigest}`,
      size: Buffer.byteLength(manifestJson),
      annotations: { 'org.opencontainers.image.ref.name': `docker.io/${ref}`, 'io.containerd.image.name': `docker.io/${ref}` },
    }],
  });
  const layout = join(opts.workDir, `${name.replace(/\//g, '-')}.layout`);
  rmSync(layout, { recursive: true, force: true });
  const blobs = join(layout, 'blobs/sha256');
  mkdirSync(blobs, { recursive: true });
  writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(join(layout, 'index.json'), index);
  writeFileSync(join(blobs, configDigest), configJson);
  writeFileSync(join(blobs, manifestDigest), manifestJson);
  // A hard link would do, but the cache and dist/ may sit on different filesystems.
  const { copyFileSync } = await import('node:fs');
  copyFileSync(layer.path, join(blobs, layer.digest));
  mkdirSync(opts.outDir, { recursive: true });
  const archive = join(opts.outDir, `${name.replace(/\//g, '-')}.oci.tar`);
  const { stream, done } = tarStream(layout, ['oci-layout', 'index.json', 'blobs']);
  const out = createWriteStream(archive);
  const written = new Promise<void>((resolve, reject) => { out.on('finish', resolve); out.on('error', reject); });
  stream.pipe(out);
  await done;
  await written;
  rmSync(layout, { recursive: true, force: true });
  if (!existsSync(archive)) throw new Error(`${archive} was not written`);
  return { ref, tag, manifestDigest: `sha256:${manifestDigest}`, configDigest: `sha256:${configDigest}`, archive, compressedBytes: statSync(archive).size };
}

// Builds OCI image layouts for tests and benchmarks, as `buildah`/`docker build` would leave them:
// each layer a gzip'd tar (level 1: the test guest's kernel is 64 MiB) of the files given, whiteouts
// as `.wh.` entries, the config with the layers' diff_ids, one manifest, an index naming it. skopeo
// turns the layout into archives (`oci-archive:`, `docker-archive:`) and pushes it to a registry.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { create } from 'tar';

export type LayerEntry =
  | { readonly path: string; readonly src: string }
  | { readonly path: string; readonly data: string | Buffer }
  /** `.wh.<name>` (remove a lower layer's path) or, with `opaque`, `<path>/.wh..wh..opq`. */
  | { readonly path: string; readonly whiteout: true; readonly opaque?: boolean };

function hasher(h: ReturnType<typeof createHash>, count: { n: number }): Transform {
  return new Transform({ transform(chunk: Buffer, _e, cb) { h.update(chunk); count.n += chunk.length; cb(null, chunk); } });
}

/** Writes an OCI layout at `dir` holding one image (tagged `tag`) made of `layers`. */
export async function buildOciLayout(dir: string, layers: ReadonlyArray<ReadonlyArray<LayerEntry>>, tag = 'latest'): Promise<{ manifestDigest: string }> {
  const blobs = join(dir, 'blobs/sha256');
  mkdirSync(blobs, { recursive: true });
  const putBlob = (data: string): { digest: string; size: number } => {
    const hex = createHash('sha256').update(data).digest('hex');
    writeFileSync(join(blobs, hex), data);
    return { digest: `sha256:${hex}`, size: Buffer.byteLength(data) };
  };
  const layerDescs: Array<{ mediaType: string; digest: string; size: number }> = [];
  const diffIds: string[] = [];
  for (const [i, entries] of layers.entries()) {
    const stage = join(dir, `.stage-${i}`);
    mkdirSync(stage, { recursive: true });
    const top = new Set<string>();
    for (const e of entries) {
      const rel = e.path.replace(/^\/+/, '');
      const target = 'whiteout' in e ? (e.opaque ? join(stage, rel, '.wh..wh..opq') : join(stage, dirname(rel), `.wh.${rel.split('/').pop()}`)) : join(stage, rel);
      mkdirSync(dirname(target), { recursive: true });
      if ('src' in e) symlinkSync(e.src, target);
      else if ('data' in e) writeFileSync(target, e.data);
      else writeFileSync(target, '');
      top.add(target.slice(stage.length + 1).split('/')[0]!);
    }
    const diff = createHash('sha256');
    const blob = createHash('sha256');
    const size = { n: 0 };
    const tmp = join(blobs, `.layer-${i}`);
    await pipeline(create({ cwd: stage, follow: true, portable: true, noMtime: true }, [...top].sort()), hasher(diff, { n: 0 }), createGzip({ level: 1 }), hasher(blob, size), createWriteStream(tmp));
    const hex = blob.digest('hex');
    renameSync(tmp, join(blobs, hex));
    rmSync(stage, { recursive: true, force: true });
    layerDescs.push({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: `sha256:${hex}`, size: size.n });
    diffIds.push(`sha256:${diff.digest('hex')}`);
  }
  const config = putBlob(JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: diffIds } }));
  const manifest = JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config }, layers: layerDescs });
  const m = putBlob(manifest);
  writeFileSync(join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', ...m, annotations: { 'org.opencontainers.image.ref.name': tag } }] }));
  writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  return { manifestDigest: m.digest };
}

// Registry pulls into the local image store: what kubelet's image service does for a container
// runtime, for the local mode's pod runner and `qvirt run`. skopeo speaks the registry protocol
// (image-import.ts copies through it into a scratch `dir:` layout and unpacks the layers); this
// file picks the credentials and TLS settings for the image's registry:
// - credentials: the pod's imagePullSecrets that match the registry (registry-auth.ts), tried in
//   turn as kubelet tries them, each written to a private containers-auth.json for that one copy;
// - TLS: `<certsDir>/<host[:port]>/` (docker's and containerd's certs.d layout: `ca.crt`, or any
//   `*.crt`, plus `client.cert`/`client.key`) when it exists, else skopeo's own defaults
//   (/etc/containers/certs.d, /etc/docker/certs.d, the system CAs);
// - `insecure`: only for the registries the user listed (no TLS verification, plain HTTP allowed).
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { normalizeImageRef, type ImageInfo, type ImageStore } from './image-store.ts';
import { copyImageIntoStore, ImageSourceError, streamHintOf } from './image-import.ts';
import { createHash } from 'node:crypto';
import { skopeoInspectRaw, SkopeoError } from './skopeo.ts';
import { authFileFor, imageRegistry, type RegistryCredential } from './registry-auth.ts';
import { manifestTotal, type PullProgress } from './pull-progress.ts';

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/** The container's pull policy, defaulted as the API server defaults it (`:latest` or no tag → Always). */
export function pullPolicyOf(c: { readonly image?: string | undefined; readonly imagePullPolicy?: string | undefined }): PullPolicy {
  const p = c.imagePullPolicy;
  if (p === 'Always' || p === 'IfNotPresent' || p === 'Never') return p;
  const image = c.image ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** How an image is in the store: pulled from its registry, or imported by hand (`qvirt image import`). */
export type Presence = 'absent' | 'pulled' | 'imported';

export const presenceOf = (info: { readonly source?: string | undefined } | undefined): Presence =>
  !info ? 'absent' : info.source?.startsWith('docker://') ? 'pulled' : 'imported';

/**
 * kubelet's decision for a container about to start (pure). One difference, on purpose: `Always`
 * re-pulls an image that came from a registry, but uses an image imported by hand as it is — it
 * has no registry to ask for a newer one (`qvirt image import NAME` with no tag is `NAME:latest`,
 * whose default policy is Always).
 */
export function pullDecision(policy: PullPolicy, present: Presence): 'use' | 'pull' | 'neverPull' {
  if (present === 'absent') return policy === 'Never' ? 'neverPull' : 'pull';
  if (policy === 'Always' && present === 'pulled') return 'pull';
  return 'use';
}

export interface RegistryOptions {
  /** certs.d-style directory: `<certsDir>/<host[:port]>/ca.crt` (default: none, skopeo's own). */
  readonly certsDir?: string | undefined;
  /** Registries (`host[:port]`) reached without TLS verification, as the user said. */
  readonly insecure?: readonly string[] | undefined;
}

export interface PullOptions {
  /** Candidate credentials, tried in order (none: anonymous). */
  readonly credentials?: readonly RegistryCredential[];
  readonly registries?: RegistryOptions;
  readonly signal?: AbortSignal;
  /** The store's copy (a pulled image): when the registry's manifest digest is still this one, it is kept as it is. */
  readonly current?: ImageInfo | undefined;
  /** The bytes downloaded so far and the manifest's total, a few times a second while blobs arrive, and the total at the end. */
  readonly onProgress?: PullProgress | undefined;
}

/** The skopeo TLS options for an image's registry (pure but for the certs directory's existence). */
export function tlsOptionsFor(ref: string, r: RegistryOptions = {}, exists: (p: string) => boolean = existsSync): { certDir?: string; tlsVerify?: boolean } {
  const { host } = imageRegistry(ref);
  const insecure = (r.insecure ?? []).some((h) => h.replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '').toLowerCase() === host.toLowerCase());
  const certDir = r.certsDir ? join(r.certsDir, host) : undefined;
  return { ...(certDir && exists(certDir) ? { certDir } : {}), ...(insecure ? { tlsVerify: false } : {}) };
}

/** Pulls `ref` from its registry into the store (replacing what the store had under that name). */
export async function pullImage(store: ImageStore, ref: string, o: PullOptions = {}): Promise<ImageInfo> {
  const norm = normalizeImageRef(ref);
  const tls = tlsOptionsFor(norm, o.registries);
  const creds: Array<RegistryCredential | undefined> = o.credentials?.length ? [...o.credentials] : [undefined];
  let last: unknown;
  for (const c of creds) {
    const scratch = c ? await store.scratchDir('auth') : undefined;
    try {
      let authFile: string | undefined;
      if (c && scratch) {
        authFile = join(scratch, 'auth.json');
        await writeFile(authFile, authFileFor(norm, c), { mode: 0o600 });
      }
      // The manifest (one small request) tells whether the image is a single layer, which is then
      // unpacked as it arrives. With Always and the image present it comes first: kubelet resolves the
      // tag and downloads only what changed. Otherwise it is asked for beside the copy, once the copy
      // has started (spawning a process takes the event loop tens of milliseconds on a loaded machine).
      let manifest: Promise<Buffer> | undefined;
      const inspect = () => (manifest ??= skopeoInspectRaw(`docker://${norm}`, { authFile, ...tls, signal: o.signal }));
      if (o.current) {
        const raw = await inspect().catch((err: unknown) => {
          if (err instanceof SkopeoError) throw new ImageSourceError(`image "${norm}": ${err.message}`, { unauthorized: err.unauthorized, notFound: err.notFound, detail: err.message });
          throw err;
        });
        if (createHash('sha256').update(raw).digest('hex') === o.current.digest) return o.current;
      }
      let total: number | undefined;
      const stream = () => {
        const m = inspect();
        void m.then((raw) => { total = manifestTotal(raw); }, () => undefined);
        return m.then(streamHintOf, () => undefined);
      };
      const progress = o.onProgress;
      let downloaded = 0;
      const info = await copyImageIntoStore(store, norm, `docker://${norm}`, { authFile, ...tls, signal: o.signal, what: `image "${norm}"`, stream, onBytes: progress && ((done) => { downloaded = done; progress(done, total); }) });
      if (progress) { const t = total ?? (await inspect().then(manifestTotal, () => undefined)) ?? downloaded; progress(t, t); }
      return info;
    } catch (err) {
      last = err;
      if (err instanceof ImageSourceError && err.notFound) throw new ImageSourceError(`image "${norm}": not found in its registry: ${err.detail}`, { notFound: true, detail: err.detail });
      // kubelet tries the next matching credential only when this one was refused.
      if (!(err instanceof ImageSourceError && err.unauthorized)) throw err;
    } finally {
      if (scratch) await rm(scratch, { recursive: true, force: true });
    }
  }
  if (last instanceof ImageSourceError && last.unauthorized) {
    const { host } = imageRegistry(norm);
    const who = o.credentials?.length ? `the credentials of imagePullSecret${o.credentials.length > 1 ? 's' : ''} ${[...new Set(o.credentials.map((c) => `"${c.secret}"`))].join(', ')} for ${host}` : `anonymous access (no imagePullSecret has credentials for ${host})`;
    throw new ImageSourceError(`image "${norm}": 401 Unauthorized: the registry refused ${who}: ${last.detail}`, { unauthorized: true, detail: last.detail });
  }
  throw last;
}

/** The images a VMI's node side needs: its containerDisks and its kernel-boot container, by field. */
export interface VmiImageSpec {
  readonly volumes?: ReadonlyArray<{ readonly name: string; readonly containerDisk?: { readonly image: string; readonly imagePullPolicy?: string | undefined } }>;
  readonly domain?: { readonly firmware?: { readonly kernelBoot?: { readonly container?: { readonly image: string; readonly imagePullPolicy?: string | undefined } } } };
}

export function vmiImages(spec: VmiImageSpec): Array<{ field: string; image: string; imagePullPolicy?: string | undefined }> {
  const out: Array<{ field: string; image: string; imagePullPolicy?: string | undefined }> = [];
  (spec.volumes ?? []).forEach((v, i) => { if (v.containerDisk) out.push({ field: `spec.volumes[${i}].containerDisk.image`, image: v.containerDisk.image, imagePullPolicy: v.containerDisk.imagePullPolicy }); });
  const kb = spec.domain?.firmware?.kernelBoot?.container;
  if (kb) out.push({ field: 'spec.domain.firmware.kernelBoot.container.image', image: kb.image, imagePullPolicy: kb.imagePullPolicy });
  return out;
}

/**
 * `qvirt run`'s image step (no kubelet, no Secrets: skopeo's own credentials, `skopeo login`'s):
 * each image of the VMI pulled as its pull policy says, with kubelet's event reasons.
 */
export async function pullVmiImages(spec: VmiImageSpec, store: ImageStore, o: { registries?: RegistryOptions | undefined; event?: (type: 'Normal' | 'Warning', reason: string, message: string) => void } = {}): Promise<void> {
  const done = new Set<string>();
  for (const img of vmiImages(spec)) {
    const norm = normalizeImageRef(img.image);
    if (done.has(norm)) continue;
    done.add(norm);
    const decision = pullDecision(pullPolicyOf(img), presenceOf(await store.get(norm)));
    if (decision === 'use') continue;
    if (decision === 'neverPull') throw new ImageSourceError(`${img.field}: Container image "${img.image}" is not present with pull policy of Never`);
    o.event?.('Normal', 'Pulling', `Pulling image "${img.image}"`);
    const t0 = Date.now();
    try {
      const info = await pullImage(store, norm, { ...(o.registries ? { registries: o.registries } : {}), current: await store.get(norm) });
      const s = ((Date.now() - t0) / 1000).toFixed(3);
      o.event?.('Normal', 'Pulled', `Successfully pulled image "${img.image}" in ${s}s (${s}s including waiting). Image size: ${info.sizeBytes} bytes.`);
    } catch (err) {
      o.event?.('Warning', 'Failed', `Failed to pull image "${img.image}": ${(err as Error).message}`);
      throw new ImageSourceError(`${img.field}: ${(err as Error).message}`);
    }
  }
}

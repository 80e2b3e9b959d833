// kubelet's image manager for the local pod runner: before a containerDisk container starts, its
// image must be in the local image store, pulled from its registry as kubelet pulls it —
// `imagePullPolicy` (Always: pull at every container start; IfNotPresent; Never; unset: Always for
// `:latest` or no tag, else IfNotPresent), the pod's `imagePullSecrets`, kubelet's events (`Pulling`,
// `Pulled` "Successfully pulled image ... in Xs", `Failed` with the error then `Error: ErrImagePull`,
// `BackOff` and `Error: ImagePullBackOff`, `ErrImageNeverPull`) and container waiting reasons
// (ContainerCreating while pulling, ErrImagePull, then ImagePullBackOff until the back-off —
// 10 s doubling to 5 min, kubelet's — has passed). Pulls run in the background (one per image at a
// time, shared by the containers waiting for it); the pod is synced again when one ends, and every
// few seconds while it runs, its ContainerCreating state saying how many bytes have arrived of the
// image's total. A pull no pod waits for any more (its pods deleted) is cancelled: skopeo killed,
// its partial blobs and the half-unpacked tree removed; so are all pulls when the runner stops.
import type { Logger } from '../../log/logger.ts';
import type { KubeClient, KubeObject } from '../../kube/client.ts';
import { isNotFound } from '../../kube/client.ts';
import { Resources } from '../../kube/resource.ts';
import { normalizeImageRef, type ImageInfo, type ImageStore } from '../image-store.ts';
import { presenceOf, pullDecision, pullImage, pullPolicyOf, type RegistryOptions } from '../image-pull.ts';
import { pullProgressMessage } from '../pull-progress.ts';
import { credentialsFor, type PullSecretData, type RegistryCredential } from '../registry-auth.ts';
import { EventReasons, PodReasons } from './constants.ts';
import type { Container, Pod } from './pod.ts';
import type { RuntimeState } from './status.ts';

/** kubelet's image pull back-off: 10 s, doubling, at most 300 s. */
export const pullBackoffMs = (failures: number): number => Math.min(300_000, 10_000 * 2 ** Math.max(0, failures - 1));

const secs = (ms: number) => `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;

interface Track {
  image: string;
  /** A pull of this container's image is running (the shared promise of the image's pull). */
  pulling?: Promise<ImageInfo>;
  startedAt?: number;
  /** The last pull succeeded for this start of the container. */
  pulled?: { info: ImageInfo; ms: number; reported: boolean };
  failure?: { message: string; at: number; reported: boolean; backOffReported: boolean };
  /** ErrImageNeverPull was reported (once; the image may be imported meanwhile). */
  neverReported?: boolean;
  failures: number;
  presentReported?: boolean;
}

export type EnsureResult = { readonly ok: true; readonly info: ImageInfo } | { readonly ok: false; readonly state: RuntimeState; readonly retryMs?: number };

export interface ImageManagerOptions {
  readonly client: KubeClient;
  readonly store: ImageStore;
  readonly log: Logger;
  readonly registries?: RegistryOptions | undefined;
  readonly event: (pod: Pod, type: 'Normal' | 'Warning', reason: string, message: string) => void;
  /** A pull ended: sync the pod again. */
  readonly wake: (podUid: string) => void;
}

interface SecretObject extends KubeObject { type?: string; data?: Record<string, string> }

/** One image's pull, shared by the containers waiting for it. */
interface Inflight {
  readonly promise: Promise<ImageInfo>;
  readonly abort: AbortController;
  /** The containers (`podUid/container`) waiting for it. */
  readonly waiters: Set<string>;
  progress?: { done: number; total: number | undefined };
}

/** How often the pods waiting on a pull are synced to show its progress. */
export const PULL_PROGRESS_SYNC_MS = 2000;


export class ImageManager {
  private readonly tracks = new Map<string, Track>();
  private readonly inflight = new Map<string, Inflight>();
  /** Pulls cancelled because no pod waits for them, until they have cleaned up (stop() waits for them too). */
  private readonly cancelled = new Set<Promise<unknown>>();
  private stopped = false;
  private readonly o: ImageManagerOptions;

  constructor(o: ImageManagerOptions) {
    this.o = o;
  }

  /** Forget a pod's containers (the pod is gone); a pull nobody waits for any more is cancelled. */
  forget(podUid: string): void {
    for (const k of [...this.tracks.keys()]) if (k.startsWith(`${podUid}/`)) this.tracks.delete(k);
    for (const [image, f] of this.inflight) {
      for (const w of [...f.waiters]) if (w.startsWith(`${podUid}/`)) f.waiters.delete(w);
      if (f.waiters.size === 0) {
        // A pod that comes for the image later starts a pull of its own.
        this.inflight.delete(image);
        this.o.log.info({ image }, 'image pull cancelled: no pod waits for it');
        f.abort.abort();
        const settled = f.promise.then(() => undefined, () => undefined);
        this.cancelled.add(settled);
        void settled.then(() => this.cancelled.delete(settled));
      }
    }
  }

  /** The runner stops: every pull is cancelled, and waited for (no skopeo outlives the runner). */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.inflight.entries()];
    this.inflight.clear();
    for (const [image, f] of all) {
      this.o.log.info({ image }, 'image pull cancelled: the pod runner stops');
      f.abort.abort();
    }
    // Those a pod's end cancelled too: a pull cleans its scratch up after its skopeo has gone.
    await Promise.allSettled([...all.map(([, f]) => f.promise), ...this.cancelled]);
  }

  /** The container started (or is done with its image): its next start decides anew. */
  started(podUid: string, container: string): void {
    const t = this.tracks.get(`${podUid}/${container}`);
    if (t) { t.pulled = undefined; t.presentReported = false; }
  }

  private async credentials(pod: Pod, image: string): Promise<RegistryCredential[]> {
    const ns = pod.metadata?.namespace ?? 'default';
    const secrets: PullSecretData[] = [];
    for (const ref of pod.spec.imagePullSecrets ?? []) {
      if (!ref.name) continue;
      try {
        const s = await this.o.client.get<SecretObject>(Resources.secrets, ns, ref.name);
        secrets.push({ name: ref.name, ...(s.type ? { type: s.type } : {}), ...(s.data ? { data: s.data } : {}) });
      } catch (err) {
        // kubelet goes on without a pull secret it cannot read (and says so).
        if (!isNotFound(err)) throw err;
        this.o.log.warn({ pod: pod.metadata?.name, secret: ref.name }, 'imagePullSecret not found: pulling without it');
      }
    }
    const usable = secrets.filter((s) => {
      try { credentialsFor(image, [s]); return true; } catch (err) { this.o.log.warn({ pod: pod.metadata?.name, err: (err as Error).message }, 'unusable imagePullSecret'); return false; }
    });
    return credentialsFor(image, usable);
  }

  /** Whether the container's image is ready to use; otherwise the waiting state to report. */
  async ensure(pod: Pod, c: Container, image: string): Promise<EnsureResult> {
    const uid = pod.metadata?.uid ?? '';
    const key = `${uid}/${c.name}`;
    const norm = normalizeImageRef(image);
    let t = this.tracks.get(key);
    if (!t || t.image !== norm) { t = { image: norm, failures: 0 }; this.tracks.set(key, t); }
    const { event } = this.o;
    if (t.pulling) return { ok: false, state: { kind: 'waiting', reason: PodReasons.ContainerCreating, message: pullProgressMessage(image, this.inflight.get(norm)?.progress) } };
    if (t.pulled) {
      if (!t.pulled.reported) {
        t.pulled.reported = true;
        event(pod, 'Normal', EventReasons.Pulled, `Successfully pulled image "${image}" in ${secs(t.pulled.ms)} (${secs(t.pulled.ms)} including waiting). Image size: ${t.pulled.info.sizeBytes} bytes.`);
      }
      return { ok: true, info: t.pulled.info };
    }
    if (t.failure) {
      const wait = t.failure.at + pullBackoffMs(t.failures) - Date.now();
      if (!t.failure.reported) {
        t.failure.reported = true;
        event(pod, 'Warning', EventReasons.Failed, `Failed to pull image "${image}": ${t.failure.message}`);
        event(pod, 'Warning', EventReasons.Failed, `Error: ${PodReasons.ErrImagePull}`);
        return { ok: false, state: { kind: 'waiting', reason: PodReasons.ErrImagePull, message: t.failure.message }, retryMs: Math.max(1000, wait) };
      }
      if (wait > 0) {
        if (!t.failure.backOffReported) {
          t.failure.backOffReported = true;
          event(pod, 'Normal', EventReasons.BackOff, `Back-off pulling image "${image}"`);
          event(pod, 'Warning', EventReasons.Failed, `Error: ${PodReasons.ImagePullBackOff}`);
        }
        return { ok: false, state: { kind: 'waiting', reason: PodReasons.ImagePullBackOff, message: `Back-off pulling image "${image}": ${PodReasons.ErrImagePull}: ${t.failure.message}` }, retryMs: wait };
      }
    }
    const present = await this.o.store.get(norm);
    const policy = pullPolicyOf(c);
    const decision = pullDecision(policy, presenceOf(present));
    if (decision === 'use') {
      if (!t.presentReported) { t.presentReported = true; event(pod, 'Normal', EventReasons.Pulled, `Container image "${image}" already present on machine`); }
      return { ok: true, info: present! };
    }
    if (decision === 'neverPull') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      if (!t.neverReported) { t.neverReported = true; event(pod, 'Warning', PodReasons.ErrImageNeverPull, message); }
      return { ok: false, state: { kind: 'waiting', reason: PodReasons.ErrImageNeverPull, message }, retryMs: 5000 };
    }
    // Pull (joining a pull of the same image already running).
    let credentials: RegistryCredential[];
    try { credentials = await this.credentials(pod, norm); } catch (err) {
      return { ok: false, state: { kind: 'waiting', reason: PodReasons.ContainerCreating, message: `reading imagePullSecrets: ${(err as Error).message}` }, retryMs: 2000 };
    }
    // A sync that was under way when the runner stopped starts no pull (nothing would wait for it).
    if (this.stopped) return { ok: false, state: { kind: 'waiting', reason: PodReasons.ContainerCreating, message: 'the pod runner is stopping' } };
    event(pod, 'Normal', EventReasons.Pulling, `Pulling image "${image}"`);
    let f = this.inflight.get(norm);
    if (!f) {
      const abort = new AbortController();
      const waiters = new Set<string>();
      let lastWake = Date.now();
      const onProgress = (done: number, total: number | undefined) => {
        entry.progress = { done, total };
        if (Date.now() - lastWake < PULL_PROGRESS_SYNC_MS) return;
        lastWake = Date.now();
        for (const w of waiters) this.o.wake(w.slice(0, w.indexOf('/')));
      };
      const entry: Inflight = { promise: pullImage(this.o.store, norm, { credentials, current: present, signal: abort.signal, onProgress, ...(this.o.registries ? { registries: this.o.registries } : {}) }), abort, waiters };
      f = entry;
      this.inflight.set(norm, entry);
      const forget = () => { if (this.inflight.get(norm) === entry) this.inflight.delete(norm); };
      entry.promise.then(forget, forget);
    }
    f.waiters.add(key);
    const pulled = f;
    const p = f.promise;
    const track = t;
    track.pulling = p;
    track.startedAt = Date.now();
    track.failure = undefined;
    this.o.log.info({ pod: pod.metadata?.name, container: c.name, image: norm, policy }, 'pulling image');
    p.then((info) => {
      track.pulled = { info, ms: Date.now() - (track.startedAt ?? Date.now()), reported: false };
      track.failures = 0;
      this.o.log.info({ pod: pod.metadata?.name, image: norm, digest: info.digest, bytes: info.sizeBytes }, 'image pulled');
    }, (err: unknown) => {
      // Cancelled: no pod waits for it (and the log said so).
      if (pulled.abort.signal.aborted) return;
      track.failures++;
      track.failure = { message: (err as Error).message, at: Date.now(), reported: false, backOffReported: false };
      this.o.log.warn({ pod: pod.metadata?.name, image: norm, err: (err as Error).message }, 'image pull failed');
    }).finally(() => { track.pulling = undefined; this.o.wake(uid); });
    return { ok: false, state: { kind: 'waiting', reason: PodReasons.ContainerCreating, message: pullProgressMessage(image, f.progress) } };
  }
}

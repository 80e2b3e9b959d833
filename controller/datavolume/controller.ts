// The local mode's DataVolume controller: CDI's datavolume, import, clone and upload controllers
// and its importer, for local-path claims on this machine. One DV key in: its claim (same name,
// owned by the DV) created, and once the local-path provisioner has bound it, the claim's
// `disk.img` populated by an import worker (importer.ts) — http, blank, pvc clone or upload —
// with the DV's status (decisions.ts) written as it goes. A bare claim with CDI's upload target
// annotation and no DataVolume (`virtctl image-upload pvc`) is served as CDI's upload controller
// serves it: an upload worker, its state in the claim's pod phase/ready annotations only. Failed transfers are retried with
// backoff (status.restartCount, as the importer pod's restarts); what cannot work fails at once.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from '../../src/log/logger.ts';
import { forObject } from '../../src/log/logger.ts';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient, type KubeObject } from '../../src/kube/client.ts';
import { Informer, keyOf } from '../../src/kube/informer.ts';
import { Resources } from '../../src/kube/resource.ts';
import { runWorkers, type WorkQueue } from '../../src/kube/workqueue.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { LOCAL_PATH_ANNOTATION } from '../../src/kube/local-path.ts';
import { CdiAnnotations, DEFAULT_FILESYSTEM_OVERHEAD, DataVolumePhase, type DataVolume } from '../../src/api/cdi/types.ts';
import { claimBytes, claimForDataVolume, dataVolumeStatus, formatProgress, IMPORT_RETRY_BASE_MS, isBareUploadClaim, MAX_IMPORT_RESTARTS, retryDecision, sourceKind, statusChanged, targetImageSize, type ImportState } from './decisions.ts';
import { cloneDisk, createBlank, DISK_IMAGE, download, ImportError, importTempDir, installImage, receive, sniffImage } from './importer.ts';
import type { RegistryDataSource } from './registry-data-source.ts';
import { errorText, type Controller } from '../shell.ts';
import { controllerFor, type Reconciler } from '../builder.ts';

interface Claim extends KubeObject {
  spec?: { volumeMode?: string; resources?: { requests?: Record<string, string> } };
  status?: { phase?: string; capacity?: Record<string, string> };
}
interface ConfigMap extends KubeObject { data?: Record<string, string> }
interface Secret extends KubeObject { data?: Record<string, string> }

export interface DataVolumeControllerOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  /** CDI's global filesystem overhead (default 6 %). */
  readonly filesystemOverhead?: number;
  readonly maxRestarts?: number;
  readonly retryBaseMs?: number;
  readonly workers?: number;
  /** Where `registry` sources' disks come from (the local mode pulls them into its image store). */
  readonly registry?: RegistryDataSource | undefined;
}

interface Worker {
  /** The DV it works for (a DV deleted and made again gets a new worker). */
  readonly uid: string | undefined;
  state: ImportState;
  readonly abort: AbortController;
  /** The worker's loop: settled once it stopped (an aborted attempt has removed its temporary directory). */
  done?: Promise<void>;
  /** An upload DV: set when a client is sending its data. */
  uploading?: boolean;
  /** Resolves the upload's wait: the upload endpoint hands the body over here. */
  deliver?: (body: Readable, length: number | undefined) => Promise<void>;
  /** A bare upload claim: the end already told in an event. */
  reported?: 'succeeded' | 'failed';
}

/** Where a claim's disk lives: its directory (Filesystem) or the directory of its disk file (Block). */
function claimDirOf(claim: Claim): string | undefined {
  const p = claim.metadata?.annotations?.[LOCAL_PATH_ANNOTATION];
  if (!p) return undefined;
  return claim.spec?.volumeMode === 'Block' ? dirname(p) : p;
}

export class DataVolumeController implements Reconciler {
  private readonly controller: Controller;
  private readonly o: DataVolumeControllerOptions;
  private readonly dvs: Informer<DataVolume & KubeObject>;
  private readonly claims: Informer<Claim>;
  private readonly workers = new Map<string, Worker>();
  private readonly recorder: EventRecorder;
  private done?: Promise<void>;
  private readonly lastProgressKick = new Map<string, number>();

  constructor(o: DataVolumeControllerOptions) {
    this.o = o;
    this.dvs = new Informer<DataVolume & KubeObject>(o.client, Resources.dataVolumes, { log: o.log, resyncMs: 30_000 });
    this.claims = new Informer<Claim>(o.client, Resources.persistentVolumeClaims, { log: o.log });
    this.recorder = new EventRecorder(o.client, 'datavolume-controller', { log: o.log });
    this.controller = controllerFor('datavolume', { queue: { qps: 1000, burst: 10_000 }, workers: o.workers ?? 4 })
      .watches(this.dvs)
      // A DV's claim has the DV's name.
      .watchesMapped(this.claims, (c) => keyOf(c))
      .complete(this);
  }

  private get queue(): WorkQueue<string> { return this.controller.queue; }

  async start(): Promise<void> {
    await Promise.all([this.dvs.start(), this.claims.start()]);
    const c = this.controller;
    this.done = runWorkers(c.queue, c.workers, (k) => c.sync(k), (key, err, _retries, terminal) => this.o.log.warn({ key, err: errorText(err), ...(terminal ? { terminal } : {}) }, 'DataVolume sync failed'));
  }

  async stop(): Promise<void> {
    for (const w of this.workers.values()) w.abort.abort();
    this.queue.shutDown();
    this.dvs.stop();
    this.claims.stop();
    // A drain leaves no half-done import behind: each aborted attempt removes its temporary directory.
    await Promise.all([this.done, ...[...this.workers.values()].map((w) => w.done)]);
  }

  private get overhead(): number { return this.o.filesystemOverhead ?? DEFAULT_FILESYSTEM_OVERHEAD; }

  async sync(key: string): Promise<void> {
    const dv = this.dvs.get(key);
    if (!dv && this.claims.get(key) && isBareUploadClaim(this.claims.get(key)!)) return this.syncUploadClaim(key);
    const w = this.workers.get(key);
    if (!dv || dv.metadata?.deletionTimestamp || (w && w.uid !== dv.metadata?.uid)) {
      if (w) { w.abort.abort(); this.workers.delete(key); }
      if (!dv || dv.metadata?.deletionTimestamp) return;
      return this.sync(key);
    }
    const log = forObject(this.o.log, { kind: 'DataVolume', namespace: dv.metadata?.namespace, name: dv.metadata?.name, uid: dv.metadata?.uid });
    const phase = dv.status?.phase;
    if (!w && (phase === DataVolumePhase.Succeeded || phase === DataVolumePhase.Failed)) return;
    if (w && (w.state.state === 'succeeded' || w.state.state === 'failed') && phase === (w.state.state === 'succeeded' ? DataVolumePhase.Succeeded : DataVolumePhase.Failed)) return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const kind = sourceKind(dv);
    let specError: string | undefined;
    if (kind === 'unsupported') specError = `DataVolume source ${JSON.stringify(Object.keys(dv.spec.source ?? dv.spec.sourceRef ?? {}))} is not supported by the local mode's importer (http, registry, blank, pvc and upload are)`;
    let claim = this.claims.get(key);
    if (!specError && !claim) {
      const made = claimForDataVolume(dv, this.overhead);
      if ('error' in made) specError = made.error;
      else {
        try {
          claim = await this.o.client.create<Claim>(Resources.persistentVolumeClaims, made.claim as never);
          log.info({ claim: made.claim.metadata.name, size: made.claim.spec.resources?.requests?.storage }, 'created the DataVolume\'s claim');
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      }
    }
    let state: ImportState = w?.state ?? { state: 'waiting' };
    if (!specError && claim?.status?.phase === 'Bound' && !w) {
      const dir = claimDirOf(claim);
      if (dir && existsSync(join(dir, DISK_IMAGE)) && claim.spec?.volumeMode !== 'Block') {
        // Populated already (an import that finished before a restart of the local mode).
        state = { state: 'succeeded', restarts: dv.status?.restartCount ?? 0 };
      } else if (dir) {
        state = this.startWorker(key, dv.metadata?.uid, dv.status?.restartCount ?? 0, claim, dir, log, (tmp, target, w) => this.populate(key, dv, dir, tmp, target, w, log)).state;
      }
    }
    if (claim && !specError) await this.annotateClaim(claim, state, kind === 'upload' && this.workers.get(key)?.deliver !== undefined);
    const status = dataVolumeStatus(dv, claim ? { name: claim.metadata!.name!, phase: claim.status?.phase } : undefined, state, now, specError);
    if (statusChanged(dv.status, status)) {
      try {
        await this.o.client.updateStatus(Resources.dataVolumes, { ...dv, status } as never);
      } catch (err) {
        if (isNotFound(err)) return;
        if (isConflict(err)) { this.queue.addAfter(key, 50); return; }
        throw err;
      }
      if (status.phase !== phase) {
        log.info({ phase: status.phase, progress: status.progress }, 'DataVolume phase');
        if (status.phase === DataVolumePhase.Succeeded) void this.recorder.normal(dv, kind === 'upload' ? 'UploadSucceeded' : kind === 'pvc' ? 'CloneSucceeded' : 'ImportSucceeded', `Successfully ${kind === 'upload' ? 'uploaded' : kind === 'pvc' ? 'cloned' : 'imported'} into PVC ${key.split('/')[1]}`);
        if (status.phase === DataVolumePhase.Failed) void this.recorder.warning(dv, 'Error', status.conditions?.find((c) => c.type === 'Running')?.message ?? 'import failed');
      }
    }
    // A finished worker stays (its terminal state) until the DV goes: the informer may still show the
    // old phase, and a sync then must not import again.
  }

  /**
   * CDI's upload controller for a bare upload claim (no DataVolume): once the claim is bound, an
   * upload worker waits for the upload proxy to hand it the data; the claim's annotations say where
   * it stands (pod phase Running and ready, then Succeeded — what virtctl waits on) and an
   * UploadSucceeded event says it is done. A claim whose pod phase is Succeeded already is left alone.
   */
  private async syncUploadClaim(key: string): Promise<void> {
    const claim = this.claims.get(key)!;
    let w = this.workers.get(key);
    if (claim.metadata?.deletionTimestamp || (w && w.uid !== claim.metadata?.uid)) {
      if (w) { w.abort.abort(); this.workers.delete(key); }
      if (claim.metadata?.deletionTimestamp) return;
      w = undefined;
    }
    const annotations = claim.metadata?.annotations ?? {};
    if (!w && annotations[CdiAnnotations.podPhase] === 'Succeeded') return;
    const log = forObject(this.o.log, { kind: 'PersistentVolumeClaim', namespace: claim.metadata?.namespace, name: claim.metadata?.name, uid: claim.metadata?.uid });
    const dir = claimDirOf(claim);
    if (!w && claim.status?.phase === 'Bound' && dir) {
      const contentType = annotations[CdiAnnotations.contentType];
      w = this.startWorker(key, claim.metadata?.uid, Number(annotations[CdiAnnotations.podRestarts] ?? 0) || 0, claim, dir, log, async (_tmp, target, w) => {
        if (contentType === 'archive') throw new ImportError(`PVC ${key}: content type archive is not supported by the local mode's upload server (kubevirt is)`, true);
        await this.awaitUpload(key, dir, target, w, log);
      });
    }
    if (!w) return;
    await this.annotateClaim(claim, w.state, w.deliver !== undefined);
    const end = w.state.state === 'succeeded' || w.state.state === 'failed' ? w.state.state : undefined;
    if (end && w.reported !== end) {
      w.reported = end;
      const obj = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claim };
      if (w.state.state === 'succeeded') void this.recorder.normal(obj, 'UploadSucceeded', 'Upload Successful');
      if (w.state.state === 'failed') void this.recorder.warning(obj, 'Error', w.state.message);
    }
  }

  /**
   * CDI's importer/upload pod annotations on the claim, which virtctl image-upload waits on:
   * storage.pod.phase (Running, Succeeded, Failed) and, for an upload ready to receive,
   * storage.pod.ready "true"; the restarts too.
   */
  private async annotateClaim(claim: Claim, state: ImportState, uploadReady: boolean): Promise<void> {
    const want: Record<string, string> = {};
    if (state.state === 'running') want[CdiAnnotations.podPhase] = 'Running';
    if (state.state === 'succeeded') want[CdiAnnotations.podPhase] = 'Succeeded';
    if (state.state === 'failed') want[CdiAnnotations.podPhase] = 'Failed';
    if (state.state !== 'waiting') want[CdiAnnotations.podRestarts] = String(state.restarts);
    if (state.state === 'running' || state.state === 'succeeded') want[CdiAnnotations.podReady] = String(uploadReady && state.state === 'running');
    const cur = claim.metadata?.annotations ?? {};
    const patch = Object.fromEntries(Object.entries(want).filter(([k, v]) => cur[k] !== v));
    if (Object.keys(patch).length === 0) return;
    try {
      await this.o.client.patch(Resources.persistentVolumeClaims, claim.metadata?.namespace, claim.metadata!.name!, { metadata: { annotations: patch } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private kick(key: string, throttleMs = 0): void {
    if (throttleMs) {
      const last = this.lastProgressKick.get(key) ?? 0;
      if (Date.now() - last < throttleMs) return;
      this.lastProgressKick.set(key, Date.now());
    }
    this.queue.add(key);
  }

  /** One import worker for `key` (a DV's or a bare upload claim's): `populate` retried with backoff into the claim's directory. */
  private startWorker(key: string, uid: string | undefined, restarts: number, claim: Claim, dir: string, log: Logger, populate: (tmp: string, target: number, w: Worker) => Promise<void>): Worker {
    const w: Worker = { uid, state: { state: 'running', progress: 'N/A', restarts }, abort: new AbortController() };
    this.workers.set(key, w);
    const size = claimBytes(claim.status?.capacity?.storage ?? claim.spec?.resources?.requests?.storage);
    const target = targetImageSize(size, this.overhead, claim.spec?.volumeMode);
    const attempt = () => this.importOnce(dir, target, w, populate);
    w.done = (async () => {
      for (;;) {
        try {
          await attempt();
          w.state = { state: 'succeeded', restarts: w.state.state === 'running' ? w.state.restarts : 0 };
          log.info({ target }, 'DataVolume populated');
          break;
        } catch (err) {
          if (w.abort.signal.aborted) return;
          const restarts = w.state.state === 'running' ? w.state.restarts : 0;
          const message = errorText(err);
          const permanent = err instanceof ImportError ? err.permanent : false;
          const d = retryDecision(restarts, permanent, this.o.maxRestarts ?? MAX_IMPORT_RESTARTS, this.o.retryBaseMs ?? IMPORT_RETRY_BASE_MS);
          log.warn({ err: message, restarts, retry: d.retry }, 'DataVolume import attempt failed');
          if (!d.retry) { w.state = { state: 'failed', restarts, reason: 'Error', message }; break; }
          w.state = { state: 'running', progress: 'N/A', restarts: restarts + 1, lastError: message };
          this.kick(key);
          await new Promise<void>((r) => {
            const t = setTimeout(done, d.afterMs);
            function done() { clearTimeout(t); w.abort.signal.removeEventListener('abort', done); r(); }
            w.abort.signal.addEventListener('abort', done, { once: true });
          });
          if (w.abort.signal.aborted) return;
          w.state = { state: 'running', progress: 'N/A', restarts: restarts + 1 };
        }
      }
      this.kick(key);
    })();
    return w;
  }

  private progress(key: string, w: Worker): (done: number, total: number | undefined) => void {
    return (done, total) => {
      if (w.state.state !== 'running') return;
      w.state = { ...w.state, progress: formatProgress(done, total) };
      this.kick(key, 500);
    };
  }

  private async importOnce(dir: string, target: number, w: Worker, populate: (tmp: string, target: number, w: Worker) => Promise<void>): Promise<void> {
    const tmp = await importTempDir(dir);
    try {
      await populate(tmp, target, w);
    } catch (err) {
      await rm(tmp);
      throw err;
    }
    // Done: the temp dir (the downloaded source) goes in the background, not before the DV is reported.
    void rm(tmp);
  }

  private async populate(key: string, dv: DataVolume, dir: string, tmp: string, target: number, w: Worker, log: Logger): Promise<void> {
    const ns = dv.metadata?.namespace;
    const src = dv.spec.source;
    {
      switch (sourceKind(dv)) {
        case 'blank':
          await createBlank(tmp, dir, target);
          return;
        case 'http': {
          const http = src!.http!;
          const ca = http.certConfigMap ? await this.caFrom(ns, http.certConfigMap) : undefined;
          const auth = http.secretRef ? await this.authFrom(ns, http.secretRef) : undefined;
          const file = await download({ url: http.url, ca, auth, insecureSkipVerify: http.insecureSkipVerify, extraHeaders: http.extraHeaders }, tmp, this.progress(key, w), w.abort.signal);
          await installImage(file, http.url, tmp, dir, target, w.abort.signal);
          return;
        }
        case 'registry': {
          const r = src!.registry!;
          const url = r.url ?? '';
          if (!url.startsWith('docker://')) throw new ImportError(`registry source ${JSON.stringify(url || r.imageStream || '')}: the local mode pulls docker:// URLs only`, true);
          const registry = this.o.registry;
          if (!registry) throw new ImportError('registry sources need the local image store', true);
          // certConfigMap: the CA to trust for the registry; secretRef: its credentials.
          const ca = r.certConfigMap ? await this.caFrom(ns, r.certConfigMap) : undefined;
          const auth = r.secretRef ? await this.authFrom(ns, r.secretRef) : undefined;
          const disk = await registry.pullDisk(url, { ca, auth: auth && { secret: r.secretRef!, ...auth }, scratch: tmp, signal: w.abort.signal, onProgress: this.progress(key, w) });
          const info = await sniffImage(disk);
          // The store keeps its copy: a qcow2 is converted from it, a raw disk copied.
          if (info.format === 'raw') await cloneDisk(disk, tmp, dir, target, w.abort.signal);
          else await installImage(disk, url, tmp, dir, target, w.abort.signal);
          return;
        }
        case 'pvc': {
          const s = src!.pvc!;
          let source: Claim;
          try { source = await this.o.client.get<Claim>(Resources.persistentVolumeClaims, s.namespace || ns, s.name); } catch (err) {
            if (isNotFound(err)) throw new ImportError(`Source PVC ${s.namespace || ns}/${s.name} not found`, false);
            throw err;
          }
          const sdir = claimDirOf(source);
          if (!sdir) throw new ImportError(`Source PVC ${s.namespace || ns}/${s.name} is not a local-path claim of this machine`, true);
          w.state = { ...(w.state as Extract<ImportState, { state: 'running' }>), progress: '0.00%' };
          await cloneDisk(join(sdir, DISK_IMAGE), tmp, dir, target, w.abort.signal);
          return;
        }
        case 'upload':
          await this.awaitUpload(key, dir, target, w, log);
          return;
        default:
          throw new ImportError('unsupported source', true);
      }
    }
  }

  /** An upload: ready to receive (w.deliver) until one upload has put its image into `dir`. */
  private async awaitUpload(key: string, dir: string, target: number, w: Worker, log: Logger): Promise<void> {
    log.info('waiting for an upload');
    setImmediate(() => this.kick(key));
    await new Promise<void>((resolve, reject) => {
      w.deliver = async (body, length) => {
        w.uploading = true;
        const utmp = await importTempDir(dir);
        try {
          const file = await receive(body, length, utmp, 'the upload', this.progress(key, w), w.abort.signal);
          await installImage(file, 'the upload', utmp, dir, target, w.abort.signal);
          resolve();
        } catch (err) {
          // A broken upload leaves the claim ready for another try (the client sees the error).
          w.uploading = false;
          if (w.state.state === 'running') w.state = { ...w.state, progress: 'N/A' };
          throw err;
        } finally {
          await rm(utmp);
        }
      };
      w.abort.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
  }

  /**
   * The upload endpoint's entry: sends `body` into the DV's claim. Refused (with CDI's words) unless
   * the DV is an upload DV that is UploadReady and not receiving another upload.
   */
  async upload(namespace: string, name: string, body: Readable, length: number | undefined): Promise<void> {
    const key = `${namespace}/${name}`;
    const w = this.workers.get(key);
    const what = this.dvs.get(key) ? `DataVolume ${name}` : `PVC ${name}`;
    if (!w?.deliver || w.state.state !== 'running') throw new UploadNotReadyError(`${what} is not ready for upload (${this.dvs.get(key) ? `phase ${this.dvs.get(key)?.status?.phase ?? 'unknown'}` : `pod phase ${this.claims.get(key)?.metadata?.annotations?.[CdiAnnotations.podPhase] ?? 'unknown'}`})`);
    if (w.uploading) throw new UploadNotReadyError(`${what} is already receiving an upload`);
    await w.deliver(body, length);
  }

  /** The phase of a DV, from the cache. */
  phaseOf(namespace: string, name: string): string | undefined {
    return this.dvs.get(`${namespace}/${name}`)?.status?.phase;
  }

  private async caFrom(ns: string | undefined, name: string): Promise<string> {
    try {
      const cm = await this.o.client.get<ConfigMap>(Resources.configMaps, ns, name);
      const pem = Object.values(cm.data ?? {}).join('\n');
      if (!pem.includes('BEGIN CERTIFICATE')) throw new ImportError(`certConfigMap ${name} holds no PEM certificate`, true);
      return pem;
    } catch (err) {
      if (isNotFound(err)) throw new ImportError(`certConfigMap ${ns}/${name} not found`, false);
      throw err;
    }
  }

  private async authFrom(ns: string | undefined, name: string): Promise<{ user: string; password: string }> {
    try {
      const s = await this.o.client.get<Secret>(Resources.secrets, ns, name);
      const dec = (k: string) => (s.data?.[k] !== undefined ? Buffer.from(s.data[k]!, 'base64').toString() : undefined);
      const user = dec('accessKeyId');
      const password = dec('secretKey');
      if (user === undefined || password === undefined) throw new ImportError(`secretRef ${name}: needs keys accessKeyId and secretKey`, true);
      return { user, password };
    } catch (err) {
      if (isNotFound(err)) throw new ImportError(`secretRef ${ns}/${name} not found`, false);
      throw err;
    }
  }
}

export class UploadNotReadyError extends Error {}

async function rm(dir: string): Promise<void> {
  const fs = await import('node:fs/promises');
  await fs.rm(dir, { recursive: true, force: true });
}

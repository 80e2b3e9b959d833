// `qvirt image-upload dv|pvc NAME --image-path FILE [--size SIZE]`: virtctl's image-upload
// (pkg/virtctl/imageupload) against CDI's upload path — the DataVolume with an upload source made
// (unless --no-create), waited for until UploadReady, a token from cdi-apiserver's
// UploadTokenRequest, the file POSTed to the upload proxy's /v1beta1/upload with a progress bar on
// stderr, then the processing waited for. `pvc`: a bare claim with CDI's upload target and content
// type annotations instead, waited on through its upload pod annotations (storage.pod.ready, then
// storage.pod.phase Succeeded) as virtctl does. The local mode serves all of it; on a cluster CDI does.
// The upload proxy URL is --uploadproxy-url, else CDIConfig config's status.uploadProxyURL.
import { createReadStream } from 'node:fs';
import { statSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { KubeObject } from '../kube/client.ts';
import { isNotFound, KubeApiError } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { CDI_API_VERSION, CdiAnnotations, CdiConfigResource, LABEL_APPLY_STORAGE_PROFILE, UPLOAD_GROUP, UPLOAD_VERSION, UploadProxyPaths, type DataVolume, type UploadTokenRequest } from '../api/cdi/types.ts';
import { isQuantity } from '../api/quantity.ts';
import { UsageError } from '../flags/flags.ts';
import { kubeError, statusMessage } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { parseVerb } from './verb.ts';
import { initialProgress, renderProgress } from './progress.ts';

const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];

/** The DataVolume virtctl creates for an upload (createDataVolume). Pure. */
export function uploadDataVolume(o: { name: string; namespace: string; size: string; storageClass?: string | undefined; accessMode?: string | undefined; volumeMode?: string | undefined; forceBind?: boolean | undefined }): DataVolume {
  return {
    apiVersion: CDI_API_VERSION,
    kind: 'DataVolume',
    metadata: { name: o.name, namespace: o.namespace, ...(o.forceBind ? { annotations: { [CdiAnnotations.bindImmediateRequested]: '' } } : {}) },
    spec: {
      source: { upload: {} },
      storage: {
        resources: { requests: { storage: o.size } },
        ...(o.storageClass ? { storageClassName: o.storageClass } : {}),
        ...(o.accessMode ? { accessModes: [o.accessMode as never] } : {}),
        ...(o.volumeMode ? { volumeMode: o.volumeMode as never } : {}),
      },
    },
  };
}

interface Claim extends KubeObject {
  spec?: { storageClassName?: string; accessModes?: string[]; volumeMode?: string; resources?: { requests?: Record<string, string> } };
}

/**
 * The claim virtctl creates for `image-upload pvc` (createUploadPVC: RenderPVC, then CDI's upload
 * target and content type annotations and the storage-profile label). Pure.
 */
export function uploadClaim(o: { name: string; namespace: string; size: string; storageClass?: string | undefined; accessMode?: string | undefined; volumeMode?: string | undefined; forceBind?: boolean | undefined }): Claim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels: { [LABEL_APPLY_STORAGE_PROFILE]: 'true' },
      annotations: { [CdiAnnotations.uploadRequest]: '', [CdiAnnotations.contentType]: 'kubevirt', ...(o.forceBind ? { [CdiAnnotations.bindImmediateRequested]: '' } : {}) },
    },
    spec: {
      resources: { requests: { storage: o.size } },
      accessModes: [o.accessMode ?? 'ReadWriteOnce'],
      ...(o.storageClass ? { storageClassName: o.storageClass } : {}),
      ...(o.volumeMode ? { volumeMode: o.volumeMode } : {}),
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function main(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt image-upload dv|pvc NAME --image-path FILE [--size SIZE] [flags]',
    summary: 'Upload a VM image to a DataVolume or a PVC (virtctl image-upload): the DataVolume (or the claim with CDI\'s upload annotations) is created unless --no-create, the image sent to CDI\'s upload proxy with a progress bar.',
    flags: {
      'image-path': { type: 'string', value: 'FILE', help: 'Path to the local VM image.' },
      size: { type: 'string', value: 'SIZE', help: 'The size of the DataVolume to create (ex. 10Gi, 500Mi).' },
      'storage-class': { type: 'string', value: 'CLASS', help: 'The storage class for the PVC.' },
      'access-mode': { type: 'string', value: 'MODE', help: 'The access mode for the PVC.' },
      'volume-mode': { type: 'string', value: 'MODE', help: 'Specify the VolumeMode (block/filesystem) used to create the PVC.' },
      'uploadproxy-url': { type: 'string', value: 'URL', help: 'The URL of the cdi-upload proxy service (default: CDIConfig config\'s status.uploadProxyURL).' },
      insecure: { type: 'boolean', help: 'Allow insecure server connections when using HTTPS.' },
      'no-create': { type: 'boolean', help: 'Don\'t attempt to create a new DataVolume/PVC.' },
      'force-bind': { type: 'boolean', help: 'Force bind the PVC, ignoring the WaitForFirstConsumer logic.' },
      'wait-secs': { type: 'number', value: 'N', help: 'Seconds to wait for upload pod to start.', default: 300 },
    },
    args: ['KIND', 'NAME'],
    examples: '  # Upload a local disk image to a newly created DataVolume:\n  qvirt image-upload dv fedora-dv --size=10Gi --image-path=/images/fedora30.qcow2\n  # Upload to an existing DataVolume:\n  qvirt image-upload dv fedora-dv --no-create --image-path=/images/fedora30.qcow2\n  # Upload to a new PVC (no DataVolume):\n  qvirt image-upload pvc fedora-pvc --size=10Gi --image-path=/images/fedora30.qcow2',
  }, argv);
  if (!v) return 0;
  const [kind, name] = [v.args[0]!, v.args[1]!];
  const f = v.flags;
  if (kind !== 'dv' && kind !== 'pvc') throw new UsageError(`invalid kind ${JSON.stringify(kind)}: dv or pvc`);
  const imagePath = f['image-path'];
  if (!imagePath) throw new UsageError('--image-path must be specified');
  let size: number;
  try { size = statSync(imagePath).size; } catch (err) { throw new UserError(`${imagePath}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`); }
  if (!f['no-create'] && !f.size) throw new UsageError('when creating a resource, the size must be specified');
  if (f.size && !isQuantity(f.size)) throw new UsageError(`validation failed for size=${f.size}: must be a quantity (ex. 10Gi, 500Mi)`);
  if (f['access-mode'] && !ACCESS_MODES.includes(f['access-mode'])) throw new UsageError(`invalid access mode ${f['access-mode']}: ${ACCESS_MODES.join(', ')}`);
  const volumeMode = f['volume-mode'] === undefined ? undefined : f['volume-mode'] === 'block' ? 'Block' : f['volume-mode'] === 'filesystem' ? 'Filesystem' : (() => { throw new UsageError(`Invalid volume mode '${f['volume-mode']}'. Valid values are 'block' and 'filesystem'.`); })();
  const out = (s: string) => { process.stdout.write(s); };

  return withCluster(f, async (ctx) => {
    const ns = ctx.namespace;
    const waitMs = (f['wait-secs'] ?? 300) * 1000;
    const upload = async (processed: () => Promise<void>) => {
      const token = await uploadToken(ctx, name);
      const base = (f['uploadproxy-url'] ?? await uploadProxyUrl(ctx)).replace(/\/+$/, '');
      const url = new URL(base + UploadProxyPaths.sync);
      out(`Uploading data to ${url.origin}\n\n`);
      await send(url, token, imagePath, size, f.insecure ? undefined : await clusterCa(ctx), f.insecure === true);
      out('\nUploading data completed successfully, waiting for processing to complete, you can hit ctrl-c without interrupting the progress\n');
      await processed();
      out('Processing completed successfully\n');
      out(`Uploading ${imagePath} completed successfully\n`);
      return 0;
    };
    if (kind === 'pvc') {
      let claim: Claim | undefined;
      try { claim = await ctx.client.get<Claim>(Resources.persistentVolumeClaims, ns, name); } catch (err) {
        if (!isNotFound(err)) throw kubeError(err, { kind: 'PersistentVolumeClaim', name, namespace: ns }, ctx.server);
      }
      if (!claim) {
        out(`PVC ${ns}/${name} not found \n`);
        if (f['no-create']) throw new UserError(`No PVC exists with name ${name} in namespace ${ns}`);
        try { claim = await ctx.client.create<Claim>(Resources.persistentVolumeClaims, uploadClaim({ name, namespace: ns, size: f.size!, storageClass: f['storage-class'], accessMode: f['access-mode'], volumeMode, forceBind: f['force-bind'] }) as never); } catch (err) {
          throw kubeError(err, { kind: 'PersistentVolumeClaim', name, namespace: ns }, ctx.server);
        }
        out(`PersistentVolumeClaim ${ns}/${name} created\n`);
      } else {
        const a = claim.metadata?.annotations ?? {};
        if (a[CdiAnnotations.podPhase] === 'Succeeded') throw new UserError(`PVC ${name} already successfully imported/cloned/updated`);
        if (!f['no-create'] && !(CdiAnnotations.uploadRequest in a)) throw new UserError(`PVC ${name} not available for upload`);
        if (!(CdiAnnotations.uploadRequest in a)) {
          // virtctl's ensurePVCSupportsUpload: an existing claim named with --no-create gets the annotation.
          try { await ctx.client.patch(Resources.persistentVolumeClaims, ns, name, { metadata: { annotations: { [CdiAnnotations.uploadRequest]: '' } } }); } catch (err) {
            throw kubeError(err, { kind: 'PersistentVolumeClaim', name, namespace: ns }, ctx.server);
          }
        }
        out(`Using existing PVC ${ns}/${name}\n`);
      }
      out(`Waiting for PVC ${name} upload pod to be ready...\n`);
      await waitForClaim(ctx, name, (a) => a[CdiAnnotations.podReady] === 'true', waitMs, 'upload pod to be ready');
      out('Pod now ready\n');
      return upload(() => waitForClaim(ctx, name, (a) => a[CdiAnnotations.podPhase] === 'Succeeded', 10 * 60_000, 'upload to be processed'));
    }
    let dv: (DataVolume & KubeObject) | undefined;
    try { dv = await ctx.client.get<DataVolume & KubeObject>(Resources.dataVolumes, ns, name); } catch (err) {
      if (!isNotFound(err)) throw kubeError(err, { kind: 'DataVolume', name, namespace: ns }, ctx.server);
    }
    if (!dv) {
      if (f['no-create']) throw new UserError(`No DataVolume exists with name ${name} in namespace ${ns}`);
      out(`PVC ${ns}/${name} not found \n`);
      try { dv = await ctx.client.create<DataVolume & KubeObject>(Resources.dataVolumes, uploadDataVolume({ name, namespace: ns, size: f.size!, storageClass: f['storage-class'], accessMode: f['access-mode'], volumeMode, forceBind: f['force-bind'] }) as never); } catch (err) {
        throw kubeError(err, { kind: 'DataVolume', name, namespace: ns }, ctx.server);
      }
      out(`DataVolume ${ns}/${name} created\n`);
    } else {
      if (!dv.spec.source?.upload) throw new UserError(`DataVolume ${ns}/${name} is not an upload DataVolume (its source is ${Object.keys(dv.spec.source ?? {}).join(', ') || 'none'})`);
      if (dv.status?.phase === 'Succeeded') throw new UserError(`DataVolume ${ns}/${name} already successfully imported/cloned/updated`);
      out(`Using existing PVC ${ns}/${name}\n`);
    }
    out(`Waiting for PVC ${name} upload pod to be ready...\n`);
    await waitForPhase(ctx, name, (p) => p === 'UploadReady', waitMs, 'to be ready for upload');
    out('Pod now ready\n');
    return upload(() => waitForPhase(ctx, name, (p) => p === 'Succeeded', 10 * 60_000, 'to be processed'));
  });
}

/** virtctl's waitUploadServerReady / waitUploadProcessingComplete: polls the claim's CDI annotations; a Failed upload pod ends it. */
async function waitForClaim(ctx: ClusterContext, name: string, ok: (annotations: Record<string, string>) => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    let claim: Claim | undefined;
    try { claim = await ctx.client.get<Claim>(Resources.persistentVolumeClaims, ctx.namespace, name); } catch (err) {
      if (!isNotFound(err)) throw kubeError(err, { kind: 'PersistentVolumeClaim', name, namespace: ctx.namespace }, ctx.server);
    }
    const a = claim?.metadata?.annotations ?? {};
    if (claim && ok(a)) return;
    if (a[CdiAnnotations.podPhase] === 'Failed') throw new UserError(`PVC ${ctx.namespace}/${name}: the upload failed (upload pod phase Failed)`);
    if (Date.now() > end) throw new UserError(`timed out waiting for PVC ${ctx.namespace}/${name} ${what}`);
    await sleep(250);
  }
}

async function waitForPhase(ctx: ClusterContext, name: string, ok: (phase: string | undefined) => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const dv = await ctx.client.get<DataVolume & KubeObject>(Resources.dataVolumes, ctx.namespace, name).catch((err: unknown) => { throw kubeError(err, { kind: 'DataVolume', name, namespace: ctx.namespace }, ctx.server); });
    if (ok(dv.status?.phase)) return;
    if (dv.status?.phase === 'Failed') {
      const msg = dv.status.conditions?.find((c) => c.type === 'Running')?.message;
      throw new UserError(`DataVolume ${ctx.namespace}/${name} failed${msg ? `: ${msg}` : ''}`);
    }
    if (Date.now() > end) throw new UserError(`timed out waiting for DataVolume ${ctx.namespace}/${name} ${what} (phase ${dv.status?.phase || 'unset'})`);
    await sleep(250);
  }
}

async function uploadToken(ctx: ClusterContext, name: string): Promise<string> {
  const body: UploadTokenRequest = { apiVersion: `${UPLOAD_GROUP}/${UPLOAD_VERSION}`, kind: 'UploadTokenRequest', metadata: { name: 'token-for-virtctl', namespace: ctx.namespace }, spec: { pvcName: name } };
  try {
    const r = await ctx.client.request<UploadTokenRequest>('POST', `/apis/${UPLOAD_GROUP}/${UPLOAD_VERSION}/namespaces/${encodeURIComponent(ctx.namespace)}/uploadtokenrequests`, { body });
    if (!r.status?.token) throw new UserError('the UploadTokenRequest came back without a token');
    return r.status.token;
  } catch (err) {
    if (err instanceof KubeApiError) throw new UserError(`error getting upload token: ${statusMessage(err)}`);
    throw err;
  }
}

async function uploadProxyUrl(ctx: ClusterContext): Promise<string> {
  try {
    const c = await ctx.client.get<KubeObject & { status?: { uploadProxyURL?: string } }>(Resources.cdiConfigs, undefined, CdiConfigResource.name);
    if (c.status?.uploadProxyURL) return c.status.uploadProxyURL.includes('://') ? c.status.uploadProxyURL : `https://${c.status.uploadProxyURL}`;
  } catch (err) {
    if (!isNotFound(err)) throw kubeError(err, { kind: 'CDIConfig', name: CdiConfigResource.name }, ctx.server);
  }
  throw new UserError('uploadproxy URL not found: give --uploadproxy-url (CDIConfig config has no status.uploadProxyURL)');
}

/** The kubeconfig's cluster CA (as the client applies it): the local mode's upload proxy has the API server's certificate. */
async function clusterCa(ctx: ClusterContext): Promise<string | undefined> {
  const o: RequestOptions = {};
  await ctx.client.kc.applyToHTTPSOptions(o);
  const ca = Array.isArray(o.ca) ? o.ca : o.ca === undefined ? [] : [o.ca];
  return ca.length ? ca.map((c) => c.toString()).join('\n') : undefined;
}

async function send(url: URL, token: string, path: string, size: number, ca: string | undefined, insecure: boolean): Promise<void> {
  const tty = process.stderr.isTTY === true;
  let state = initialProgress;
  let done = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _e, cb) {
      done += chunk.length;
      const r = renderProgress(state, done, size, tty);
      state = r.state;
      if (r.text) process.stderr.write(r.text);
      cb(null, chunk);
    },
  });
  await new Promise<void>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': String(size) }, ...(ca ? { ca } : {}), rejectUnauthorized: !insecure }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); });
      res.on('end', () => {
        if (res.statusCode === 200) resolve();
        else reject(new UserError(`unexpected return value ${res.statusCode}, ${text.trim()}`));
      });
    });
    req.on('error', (err) => reject(new UserError(`upload to ${url.origin} failed: ${err.message}`)));
    pipeline(createReadStream(path, { highWaterMark: 1 << 20 }), counter, req).catch(reject);
  });
}

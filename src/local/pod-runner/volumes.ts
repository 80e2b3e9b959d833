// Volumes and container roots, laid out the way kubelet lays out a pod's directory:
//   <podDir>/volumes/kubernetes.io~empty-dir/<name>/      emptyDir
//   <podDir>/volumes/kubernetes.io~secret/<name>/<key>     secret (also configmap, downward-api, projected)
// hostPath volumes and PersistentVolumeClaims (the local-path provisioner's directory) are used in
// place. Without mount namespaces, a container's view is a directory (its "root") in which every
// volumeMount's mountPath is a symlink to the volume's directory (plus subPath): a qvirt process run
// with QVIRT_CONTAINER_ROOT=<root> resolves KubeVirt's absolute paths under it. A mountPath nested
// in another mount (/var/run/kubevirt/sockets inside /var/run/kubevirt) becomes a link inside the
// outer volume's directory, which is allowed only when that directory belongs to the pod.
// Secret, configMap and projected volumes are refreshed while the pod runs, as kubelet does, when
// the objects they project change (refreshVolume): each changed file is replaced by a rename, files
// of keys that went are removed.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, rmdirSync, statSync, symlinkSync, unlinkSync, type Stats } from 'node:fs';
import { dirname, join, posix, sep } from 'node:path';
import { isNotFound, type KubeClient, type KubeObject } from '../../kube/client.ts';
import { Resources } from '../../kube/resource.ts';
import { LOCAL_PATH_ANNOTATION } from '../../kube/local-path.ts';
import { VolumePluginDirs } from '../../kube/kubelet-volume-dirs.ts';
import { SERVICE_ACCOUNT_MOUNT } from './constants.ts';
import type { Container, DownwardFile, KeyToPath, Pod, Volume, VolumeMount } from './pod.ts';

export class VolumeSetupError extends Error {
  override name = 'VolumeSetupError';
}

/** A volume ready to be linked into container roots. */
export interface PreparedVolume {
  readonly path: string;
  /** The pod owns the directory (emptyDir, projected files): nested mounts may add links inside it. */
  readonly podOwned: boolean;
  /** A block-mode claim: `path` is a file, exposed through volumeDevices. */
  readonly block: boolean;
}

/** A file of a downward API volume or a `valueFrom.fieldRef` env var: the value of the field. */
export function fieldRefValue(pod: Pod, fieldPath: string, ip: string): string | undefined {
  const m = pod.metadata ?? {};
  const kv = (o: Record<string, string> | undefined) => Object.keys(o ?? {}).sort().map((k) => `${k}=${JSON.stringify(o![k])}`).join('\n');
  const sub = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (sub) return (sub[1] === 'labels' ? m.labels : m.annotations)?.[sub[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name': return m.name ?? '';
    case 'metadata.namespace': return m.namespace ?? '';
    case 'metadata.uid': return m.uid ?? '';
    case 'metadata.labels': return kv(m.labels);
    case 'metadata.annotations': return kv(m.annotations);
    case 'spec.nodeName': return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName': return pod.spec.serviceAccountName ?? 'default';
    case 'status.hostIP': case 'status.podIP': return ip;
    case 'status.hostIPs': case 'status.podIPs': return ip;
    default: return undefined;
  }
}

/** kubelet's hostPath `type` check; returns what is wrong, or undefined. `st` is undefined when the path is missing. */
export function hostPathProblem(path: string, type: string | undefined, st: Pick<Stats, 'isDirectory' | 'isFile' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'> | undefined): string | undefined {
  switch (type ?? '') {
    case '': case 'DirectoryOrCreate': case 'FileOrCreate': return undefined;
    case 'Directory': return st?.isDirectory() ? undefined : `hostPath type check failed: ${path} is not a directory`;
    case 'File': return st?.isFile() ? undefined : `hostPath type check failed: ${path} is not a file`;
    case 'Socket': return st?.isSocket() ? undefined : `hostPath type check failed: ${path} is not a socket file`;
    case 'CharDevice': return st?.isCharacterDevice() ? undefined : `hostPath type check failed: ${path} is not a character device`;
    case 'BlockDevice': return st?.isBlockDevice() ? undefined : `hostPath type check failed: ${path} is not a block device`;
    default: return `hostPath type ${type} is not supported`;
  }
}

/** A relative file path inside a volume, refusing absolute paths and `..` (as the API server validates). */
function safeRel(p: string, what: string): string {
  const n = posix.normalize(p);
  if (posix.isAbsolute(n) || n === '..' || n.startsWith('../')) throw new VolumeSetupError(`${what}: path ${JSON.stringify(p)} must be relative and may not contain '..'`);
  return n;
}

/**
 * Volumes that carry a Secret's content (secret, projected, the service-account token): their
 * directory is the owner's alone. kubelet's pod directories are closed to other users
 * (/var/lib/kubelet/pods is 0750 root); the runner's pod directories stay traversable (passt, run
 * as nobody by a root launcher, reaches its socket in the pod), so the secret volume itself is closed.
 */
export const SECRET_VOLUME_DIR_MODE = 0o700;

async function writeFiles(dir: string, files: ReadonlyArray<{ path: string; data: Buffer; mode: number }>, dirMode?: number): Promise<void> {
  await mkdir(dir, { recursive: true, ...(dirMode !== undefined ? { mode: dirMode } : {}) });
  // Also a directory an older runner made readable to all.
  if (dirMode !== undefined) await chmod(dir, dirMode);
  for (const f of files) {
    const p = join(dir, f.path);
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, f.data, { mode: f.mode });
  }
}

type DataSource = { kind: 'Secret' | 'ConfigMap'; name: string; items?: KeyToPath[]; optional?: boolean };

async function keyFiles(client: KubeClient, ns: string, src: DataSource, defaultMode: number, volume: string): Promise<Array<{ path: string; data: Buffer; mode: number }>> {
  let obj: KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> };
  try {
    obj = await client.get(src.kind === 'Secret' ? Resources.secrets : Resources.configMaps, ns, src.name);
  } catch (err) {
    if (isNotFound(err)) {
      if (src.optional) return [];
      throw new VolumeSetupError(`MountVolume.SetUp failed for volume "${volume}" : ${src.kind === 'Secret' ? 'secret' : 'configmap'} "${src.name}" not found`);
    }
    throw err;
  }
  const data = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(obj.data ?? {})) data.set(k, src.kind === 'Secret' ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(obj.binaryData ?? {})) data.set(k, Buffer.from(v, 'base64'));
  if (!src.items?.length) return [...data].map(([k, d]) => ({ path: safeRel(k, volume), data: d, mode: defaultMode }));
  const out = [];
  for (const it of src.items) {
    const d = data.get(it.key);
    if (!d) {
      if (src.optional) continue;
      throw new VolumeSetupError(`MountVolume.SetUp failed for volume "${volume}" : configmap references non-existent config key: ${it.key}`);
    }
    out.push({ path: safeRel(it.path, volume), data: d, mode: it.mode ?? defaultMode });
  }
  return out;
}

function downwardFiles(pod: Pod, items: readonly DownwardFile[], defaultMode: number, ip: string, volume: string): Array<{ path: string; data: Buffer; mode: number }> {
  return items.map((it) => {
    const v = it.fieldRef ? fieldRefValue(pod, it.fieldRef.fieldPath, ip) : undefined;
    if (v === undefined) throw new VolumeSetupError(`volume "${volume}": downwardAPI item ${it.path}: only fieldRef of metadata/spec.nodeName/status IPs is supported`);
    return { path: safeRel(it.path, volume), data: Buffer.from(v), mode: it.mode ?? defaultMode };
  });
}

export interface VolumeContext {
  readonly client: KubeClient;
  readonly pod: Pod;
  readonly podDir: string;
  readonly ip: string;
  /** The token written into automounted service-account volumes. */
  readonly serviceAccountToken?: string;
  readonly caCert?: string;
}

/** The implicit service-account volume of a pod that automounts its token, if any. */
export const SERVICE_ACCOUNT_VOLUME = 'kube-api-access';

export function automountsToken(pod: Pod): boolean {
  if (pod.spec.automountServiceAccountToken === false) return false;
  return !(pod.spec.containers.some((c) => c.volumeMounts?.some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT)));
}

/** Sets up every volume of the pod (idempotent: a second call refreshes projected files). */
export async function prepareVolumes(ctx: VolumeContext): Promise<Map<string, PreparedVolume>> {
  const { pod, podDir, client } = ctx;
  const ns = pod.metadata?.namespace ?? 'default';
  const vols = new Map<string, PreparedVolume>();
  const volDir = (plugin: string, name: string) => join(podDir, 'volumes', plugin, name);
  for (const v of pod.spec.volumes ?? []) vols.set(v.name, await prepareVolume(ctx, v, ns, volDir));
  if (automountsToken(pod)) {
    const dir = volDir(VolumePluginDirs.projected, SERVICE_ACCOUNT_VOLUME);
    await writeFiles(dir, [
      { path: 'token', data: Buffer.from(ctx.serviceAccountToken ?? ''), mode: 0o644 },
      { path: 'namespace', data: Buffer.from(ns), mode: 0o644 },
      { path: 'ca.crt', data: Buffer.from(ctx.caCert ?? ''), mode: 0o644 },
    ], SECRET_VOLUME_DIR_MODE);
    vols.set(SERVICE_ACCOUNT_VOLUME, { path: dir, podOwned: true, block: false });
  }
  void client;
  return vols;
}

async function prepareVolume(ctx: VolumeContext, v: Volume, ns: string, volDir: (plugin: string, name: string) => string): Promise<PreparedVolume> {
  const { client, pod } = ctx;
  if (v.emptyDir) {
    const dir = volDir(VolumePluginDirs.emptyDir, v.name);
    mkdirSync(dir, { recursive: true, mode: 0o777 });
    return { path: dir, podOwned: true, block: false };
  }
  if (v.hostPath) {
    const p = v.hostPath.path;
    let st = await stat(p).catch(() => undefined);
    if (!st && v.hostPath.type === 'DirectoryOrCreate') { await mkdir(p, { recursive: true, mode: 0o755 }); st = await stat(p); }
    if (!st && v.hostPath.type === 'FileOrCreate') {
      if (!(await stat(dirname(p)).catch(() => undefined))?.isDirectory()) throw new VolumeSetupError(`MountVolume.SetUp failed for volume "${v.name}" : hostPath FileOrCreate: parent directory of ${p} does not exist`);
      await writeFile(p, '', { flag: 'a', mode: 0o644 });
      st = await stat(p);
    }
    const problem = hostPathProblem(p, v.hostPath.type, st);
    if (problem) throw new VolumeSetupError(`MountVolume.SetUp failed for volume "${v.name}" : ${problem}`);
    return { path: p, podOwned: false, block: false };
  }
  if (v.persistentVolumeClaim) {
    const claim = v.persistentVolumeClaim.claimName;
    let pvc: KubeObject & { spec?: { volumeMode?: string }; status?: { phase?: string } };
    try {
      pvc = await client.get(Resources.persistentVolumeClaims, ns, claim);
    } catch (err) {
      if (isNotFound(err)) throw new VolumeSetupError(`persistentvolumeclaim "${claim}" not found`);
      throw err;
    }
    const path = pvc.metadata?.annotations?.[LOCAL_PATH_ANNOTATION];
    if (pvc.status?.phase !== 'Bound' || !path) throw new VolumeSetupError(`pod has unbound immediate PersistentVolumeClaims (claim "${claim}" is ${pvc.status?.phase ?? 'Pending'})`);
    const block = pvc.spec?.volumeMode === 'Block';
    const st = await stat(path).catch(() => undefined);
    if (!st || (block ? !st.isFile() : !st.isDirectory())) throw new VolumeSetupError(`MountVolume.SetUp failed for volume "${v.name}" : the local path ${path} of claim "${claim}" is missing`);
    return { path, podOwned: false, block };
  }
  if (v.secret || v.configMap) {
    const isSecret = !!v.secret;
    const src = isSecret ? v.secret! : v.configMap!;
    const name = isSecret ? v.secret!.secretName ?? '' : v.configMap!.name ?? '';
    const mode = src.defaultMode ?? 0o644;
    const dir = volDir(isSecret ? VolumePluginDirs.secret : VolumePluginDirs.configMap, v.name);
    await writeFiles(dir, await keyFiles(client, ns, { kind: isSecret ? 'Secret' : 'ConfigMap', name, ...(src.items ? { items: src.items } : {}), ...(src.optional !== undefined ? { optional: src.optional } : {}) }, mode, v.name), isSecret ? SECRET_VOLUME_DIR_MODE : undefined);
    return { path: dir, podOwned: true, block: false };
  }
  if (v.downwardAPI) {
    const dir = volDir(VolumePluginDirs.downwardAPI, v.name);
    await writeFiles(dir, downwardFiles(pod, v.downwardAPI.items ?? [], v.downwardAPI.defaultMode ?? 0o644, ctx.ip, v.name));
    return { path: dir, podOwned: true, block: false };
  }
  if (v.projected) {
    const dir = volDir(VolumePluginDirs.projected, v.name);
    const mode = v.projected.defaultMode ?? 0o644;
    const files = [];
    for (const s of v.projected.sources ?? []) {
      if (s.secret) files.push(...await keyFiles(client, ns, { kind: 'Secret', name: s.secret.name ?? '', ...(s.secret.items ? { items: s.secret.items } : {}), ...(s.secret.optional !== undefined ? { optional: s.secret.optional } : {}) }, mode, v.name));
      if (s.configMap) files.push(...await keyFiles(client, ns, { kind: 'ConfigMap', name: s.configMap.name ?? '', ...(s.configMap.items ? { items: s.configMap.items } : {}), ...(s.configMap.optional !== undefined ? { optional: s.configMap.optional } : {}) }, mode, v.name));
      if (s.downwardAPI) files.push(...downwardFiles(pod, s.downwardAPI.items ?? [], mode, ctx.ip, v.name));
      if (s.serviceAccountToken) files.push({ path: safeRel(s.serviceAccountToken.path, v.name), data: Buffer.from(ctx.serviceAccountToken ?? ''), mode });
    }
    // A projection may hold a Secret or a token: closed like a secret volume.
    await writeFiles(dir, files, SECRET_VOLUME_DIR_MODE);
    return { path: dir, podOwned: true, block: false };
  }
  throw new VolumeSetupError(`volume "${v.name}": this volume type is not supported by the local pod runner (supported: emptyDir, hostPath, persistentVolumeClaim, secret, configMap, downwardAPI, projected)`);
}

/** The Secrets (`kind` Secret) or ConfigMaps a volume projects: what refreshVolume follows. */
export function projectedObjects(v: Volume, kind: 'Secret' | 'ConfigMap'): string[] {
  if (kind === 'Secret' && v.secret) return [v.secret.secretName ?? ''];
  if (kind === 'ConfigMap' && v.configMap) return [v.configMap.name ?? ''];
  return (v.projected?.sources ?? []).flatMap((s) => (kind === 'Secret' ? (s.secret ? [s.secret.name ?? ''] : []) : (s.configMap ? [s.configMap.name ?? ''] : [])));
}

/** Regular files under `dir`, relative, leaving out kubelet-style `..` entries (and our temp files). */
async function filesIn(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true }).catch(() => [])) {
    if (e.name.startsWith('..')) continue;
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...await filesIn(dir, r));
    else out.push(r);
  }
  return out;
}

/**
 * kubelet's periodic update of a secret, configMap or projected volume of a running pod: the
 * volume's files as its objects now hold them. A changed file is written beside it (a `..`-prefixed
 * name readers skip) and renamed over it, so a reader sees the old or the new content, never a
 * partial one; files of keys that went are removed; unchanged files are not touched. Returns the
 * files that changed. A volume of another type, or an object that is gone (kubelet keeps the last
 * content), changes nothing.
 */
export async function refreshVolume(ctx: VolumeContext, v: Volume, dir: string): Promise<string[]> {
  const ns = ctx.pod.metadata?.namespace ?? 'default';
  let files: Array<{ path: string; data: Buffer; mode: number }>;
  try {
    if (v.secret || v.configMap) {
      const isSecret = !!v.secret;
      const src = isSecret ? v.secret! : v.configMap!;
      const name = isSecret ? v.secret!.secretName ?? '' : v.configMap!.name ?? '';
      files = await keyFiles(ctx.client, ns, { kind: isSecret ? 'Secret' : 'ConfigMap', name, ...(src.items ? { items: src.items } : {}), ...(src.optional !== undefined ? { optional: src.optional } : {}) }, src.defaultMode ?? 0o644, v.name);
    } else if (v.projected) {
      const mode = v.projected.defaultMode ?? 0o644;
      files = [];
      for (const s of v.projected.sources ?? []) {
        if (s.secret) files.push(...await keyFiles(ctx.client, ns, { kind: 'Secret', name: s.secret.name ?? '', ...(s.secret.items ? { items: s.secret.items } : {}), ...(s.secret.optional !== undefined ? { optional: s.secret.optional } : {}) }, mode, v.name));
        if (s.configMap) files.push(...await keyFiles(ctx.client, ns, { kind: 'ConfigMap', name: s.configMap.name ?? '', ...(s.configMap.items ? { items: s.configMap.items } : {}), ...(s.configMap.optional !== undefined ? { optional: s.configMap.optional } : {}) }, mode, v.name));
        if (s.downwardAPI) files.push(...downwardFiles(ctx.pod, s.downwardAPI.items ?? [], mode, ctx.ip, v.name));
        if (s.serviceAccountToken) files.push({ path: safeRel(s.serviceAccountToken.path, v.name), data: Buffer.from(ctx.serviceAccountToken ?? ''), mode });
      }
    } else {
      return [];
    }
  } catch (err) {
    if (err instanceof VolumeSetupError && / not found$/.test(err.message)) return [];
    throw err;
  }
  const changed: string[] = [];
  const keep = new Set(files.map((f) => f.path));
  for (const f of files) {
    const p = join(dir, f.path);
    const cur = await readFile(p).catch(() => undefined);
    if (cur?.equals(f.data)) continue;
    await mkdir(dirname(p), { recursive: true });
    const tmp = join(dirname(p), `..${f.path.split('/').pop()}.${randomBytes(4).toString('hex')}.tmp`);
    await writeFile(tmp, f.data, { mode: f.mode });
    await rename(tmp, p);
    changed.push(f.path);
  }
  for (const old of await filesIn(dir)) {
    if (keep.has(old)) continue;
    await rm(join(dir, old), { force: true });
    changed.push(old);
  }
  return changed;
}

// A container root is a handful of directories and symlinks: made with synchronous calls, as a
// kubelet's pod worker does, instead of one thread-pool round trip and event-loop turn per call —
// with twenty pods starting at once those turns made a pod's start take seconds (density bench).
function placeLink(target: string, link: string, allowedParents: readonly string[], what: string): void {
  mkdirSync(dirname(link), { recursive: true });
  const parent = realpathSync(dirname(link));
  if (!allowedParents.some((a) => parent === a || parent.startsWith(a + sep))) {
    throw new VolumeSetupError(`${what}: cannot place ${link} inside ${parent}: it is nested in a volume the pod does not own (hostPath or claim)`);
  }
  const st = lstatSync(link, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) {
    if (readlinkSync(link) === target) return;
    unlinkSync(link);
  } else if (st?.isDirectory()) {
    if (readdirSync(link).length > 0) throw new VolumeSetupError(`${what}: ${link} already holds files`);
    rmdirSync(link);
  } else if (st) {
    throw new VolumeSetupError(`${what}: ${link} exists and is not a directory`);
  }
  symlinkSync(target, link);
}

/** The volume mounts of a container, including the implicit service-account mount. */
export function mountsOf(pod: Pod, c: Container, vols: ReadonlyMap<string, PreparedVolume>): VolumeMount[] {
  const ms = [...(c.volumeMounts ?? [])];
  if (vols.has(SERVICE_ACCOUNT_VOLUME) && automountsToken(pod)) ms.push({ name: SERVICE_ACCOUNT_VOLUME, mountPath: SERVICE_ACCOUNT_MOUNT, readOnly: true });
  return ms;
}

/**
 * Builds a container's root: each mountPath a symlink to its volume (+ subPath), each devicePath a
 * symlink to its block file; parents first so nested mounts land inside pod-owned volumes.
 */
export async function buildContainerRoot(root: string, pod: Pod, c: Container, vols: ReadonlyMap<string, PreparedVolume>, podDir: string): Promise<void> {
  mkdirSync(root, { recursive: true });
  const allowed = [realpathSync(root), realpathSync(podDir)];
  for (const v of vols.values()) if (v.podOwned) allowed.push(realpathSync(v.path));
  const mounts = mountsOf(pod, c, vols).sort((a, b) => posix.normalize(a.mountPath).split('/').length - posix.normalize(b.mountPath).split('/').length);
  for (const m of mounts) {
    const what = `container "${c.name}" volumeMount "${m.name}" at ${m.mountPath}`;
    const v = vols.get(m.name);
    if (!v) throw new VolumeSetupError(`${what}: no volume named "${m.name}" in spec.volumes`);
    if (v.block) throw new VolumeSetupError(`${what}: claim is volumeMode Block; use volumeDevices`);
    let target = v.path;
    if (m.subPath) {
      target = join(v.path, safeRel(m.subPath, what));
      if (v.podOwned && !statSync(target, { throwIfNoEntry: false })) mkdirSync(target, { recursive: true });
    }
    placeLink(target, join(root, posix.normalize(`/${m.mountPath}`)), allowed, what);
  }
  for (const d of c.volumeDevices ?? []) {
    const what = `container "${c.name}" volumeDevice "${d.name}" at ${d.devicePath}`;
    const v = vols.get(d.name);
    if (!v?.block) throw new VolumeSetupError(`${what}: no block-mode claim volume named "${d.name}"`);
    placeLink(v.path, join(root, posix.normalize(`/${d.devicePath}`)), allowed, what);
  }
}

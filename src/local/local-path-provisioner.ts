// The local mode's storage: binds Pending PersistentVolumeClaims of storage class `local-path` (or
// none) to a directory `<dataDir>/pv/<namespace>_<claim>` — a sparse `disk.img` of the requested size
// for volumeMode Block — and records the path in the claim's `local.qvirt.io/path` annotation,
// where the pod runner (and the node agent, for hotplug: no attachment pod needed) reads it. No
// PersistentVolume objects are created: the claim carries Bound, capacity and access modes itself. Data lives under
// dataDir and survives pods and runner restarts; it is removed when its claim is deleted. A claim of
// any other storage class stays Pending, as on a cluster without that class, with the Warning
// ProvisioningFailed event kube-controller-manager's persistentvolume-controller records for it.
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log/logger.ts';
import { isConflict, isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';
import { Informer } from '../kube/informer.ts';
import { Resources } from '../kube/resource.ts';
import { EventRecorder } from '../kube/events.ts';
import { LOCAL_PATH_ANNOTATION, LOCAL_PATH_STORAGE_CLASS } from '../kube/local-path.ts';
import { parseQuantity } from './pod-runner/status.ts';

export interface PersistentVolumeClaim extends KubeObject {
  spec?: { storageClassName?: string | null; volumeName?: string; volumeMode?: string; accessModes?: string[]; resources?: { requests?: Record<string, string> } };
  status?: { phase?: string; capacity?: Record<string, string>; accessModes?: string[] };
}

/** Whether the claim's storage class is the provisioner's: local-path or none. */
function localPathClass(pvc: PersistentVolumeClaim): boolean {
  const cls = pvc.spec?.storageClassName;
  return cls === undefined || cls === null || cls === '' || cls === LOCAL_PATH_STORAGE_CLASS;
}

/** Whether the provisioner owns the claim: class local-path or none, and not bound yet. */
export function provisions(pvc: PersistentVolumeClaim): boolean {
  return localPathClass(pvc) && pvc.status?.phase !== 'Bound' && !pvc.metadata?.deletionTimestamp;
}

/**
 * Why no one here will provision the claim, in persistentvolume-controller's words: it names a storage
 * class this node does not have (the local mode has only local-path). Undefined for a claim the
 * provisioner owns, one already bound or going, and one naming its volume (pre-bound: no provisioning).
 */
export function provisioningFailure(pvc: PersistentVolumeClaim): string | undefined {
  if (localPathClass(pvc) || pvc.status?.phase === 'Bound' || pvc.metadata?.deletionTimestamp || pvc.spec?.volumeName) return undefined;
  return `storageclass.storage.k8s.io "${pvc.spec?.storageClassName}" not found`;
}

export const claimDir = (dataDir: string, ns: string, name: string): string => join(dataDir, 'pv', `${ns}_${name}`);

export async function startLocalPathProvisioner(opts: { client: KubeClient; dataDir: string; log: Logger }): Promise<{ stop(): void }> {
  const { client, dataDir, log } = opts;
  const inf = new Informer<PersistentVolumeClaim>(client, Resources.persistentVolumeClaims, { log, resyncMs: 10_000 });
  const recorder = new EventRecorder(client, 'persistentvolume-controller', { log });
  /** Claims told about their missing class (by uid): once each, not at every resync. */
  const told = new Set<string>();
  const bind = async (pvc: PersistentVolumeClaim) => {
    const failure = provisioningFailure(pvc);
    const uid = pvc.metadata?.uid ?? '';
    if (failure && !told.has(uid)) {
      told.add(uid);
      void recorder.warning(pvc, 'ProvisioningFailed', failure);
    }
    if (!provisions(pvc)) return;
    const ns = pvc.metadata?.namespace ?? 'default';
    const name = pvc.metadata?.name ?? '';
    const dir = claimDir(dataDir, ns, name);
    const block = pvc.spec?.volumeMode === 'Block';
    const size = pvc.spec?.resources?.requests?.storage ?? '1Gi';
    await mkdir(dir, { recursive: true });
    let path = dir;
    if (block) {
      path = join(dir, 'disk.img');
      const bytes = Math.floor(parseQuantity(size) ?? 2 ** 30);
      const fh = await open(path, 'a');
      try { if ((await fh.stat()).size < bytes) await fh.truncate(bytes); } finally { await fh.close(); }
    }
    try {
      const annotated = await client.patch<PersistentVolumeClaim>(Resources.persistentVolumeClaims, ns, name, { metadata: { annotations: { [LOCAL_PATH_ANNOTATION]: path, 'pv.kubernetes.io/bind-completed': 'yes', 'volume.kubernetes.io/storage-provisioner': 'local.qvirt.io/local-path' } } });
      await client.updateStatus(Resources.persistentVolumeClaims, { ...annotated, status: { phase: 'Bound', capacity: { storage: size }, accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'] } });
      log.info({ namespace: ns, claim: name, path }, 'bound claim to a local path');
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) log.warn({ err: (err as Error).message, claim: name }, 'binding claim failed');
    }
  };
  inf.on('add', (p) => void bind(p)).on('update', (_o, p) => void bind(p)).on('delete', (p) => {
    told.delete(p.metadata?.uid ?? '');
    const path = p.metadata?.annotations?.[LOCAL_PATH_ANNOTATION];
    if (path) void rm(claimDir(dataDir, p.metadata?.namespace ?? 'default', p.metadata?.name ?? ''), { recursive: true, force: true });
  });
  await inf.start();
  return { stop: () => inf.stop() };
}

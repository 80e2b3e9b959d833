// The claims a VMI's volumes name (persistentVolumeClaim, ephemeral, dataVolume — a DataVolume's PVC has its
// name), read from the API as KubeVirt's VMI controller reads its PVC informer: the launcher pod
// renders their volume mode and access modes, and status.volumeStatus[].persistentVolumeClaimInfo
// tells the launcher their capacity (a Filesystem claim's disk.img is sized from it). A missing
// claim is left out: rendering then fails with PvcNotFoundError (FailedPvcNotFound) and the VMI
// is looked at again shortly. Hotplug reads two facts more: whether the claim is bound (only then
// does an attachment pod mount it) and whether it is one of the local mode's local-path claims,
// which live in a directory of this machine and need no attachment pod.
import { isNotFound, type KubeClient, type KubeObject } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { PersistentVolumeAccessMode, PersistentVolumeClaimInfo, PersistentVolumeMode, ResourceList, VirtualMachineInstance, VolumeStatus } from '../../src/api/types.ts';
import type { PVCInfo } from './volumes.ts';
import { LOCAL_PATH_ANNOTATION } from '../../src/kube/local-path.ts';

/** The claim names a VMI's volumes use (pure). */
export function claimNames(vmi: VirtualMachineInstance): string[] {
  const out = new Set<string>();
  for (const v of vmi.spec.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName) out.add(v.persistentVolumeClaim.claimName);
    if (v.ephemeral?.persistentVolumeClaim?.claimName) out.add(v.ephemeral.persistentVolumeClaim.claimName);
    if (v.dataVolume?.name) out.add(v.dataVolume.name);
  }
  return [...out];
}

interface Claim extends KubeObject { spec?: { volumeMode?: PersistentVolumeMode; accessModes?: PersistentVolumeAccessMode[]; resources?: { requests?: ResourceList } }; status?: { phase?: string; capacity?: ResourceList } }

export interface ClaimFacts extends PVCInfo {
  readonly info: PersistentVolumeClaimInfo;
  readonly uid?: string | undefined;
  /** status.phase: Pending, Bound, Lost. */
  readonly phase?: string | undefined;
  /** Provisioned by the local mode's local-path provisioner: a directory of this machine. */
  readonly nodeLocal?: boolean | undefined;
}

export async function lookupClaims(client: KubeClient, vmi: VirtualMachineInstance): Promise<Map<string, ClaimFacts>> {
  const out = new Map<string, ClaimFacts>();
  for (const name of claimNames(vmi)) {
    try {
      const c = await client.get<Claim>(Resources.persistentVolumeClaims, vmi.metadata?.namespace, name);
      const info: PersistentVolumeClaimInfo = {
        claimName: name,
        ...(c.spec?.accessModes ? { accessModes: c.spec.accessModes } : {}),
        volumeMode: c.spec?.volumeMode ?? 'Filesystem',
        ...(c.status?.capacity ? { capacity: c.status.capacity } : {}),
        ...(c.spec?.resources?.requests ? { requests: c.spec.resources.requests } : {}),
      };
      out.set(name, { volumeMode: c.spec?.volumeMode, accessModes: c.spec?.accessModes, info, uid: c.metadata?.uid, phase: c.status?.phase, nodeLocal: c.metadata?.annotations?.[LOCAL_PATH_ANNOTATION] !== undefined });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return out;
}

/**
 * status.volumeStatus with each claim-backed volume's persistentVolumeClaimInfo (pure). Entries
 * keep what others wrote (target, hotplug phase); volumes without a claim are left as they are.
 */
export function withClaimInfo(vmi: VirtualMachineInstance, claims: ReadonlyMap<string, ClaimFacts>): VolumeStatus[] | undefined {
  const current = vmi.status?.volumeStatus ?? [];
  const out = [...current];
  let changed = false;
  for (const v of vmi.spec.volumes ?? []) {
    const claim = v.persistentVolumeClaim?.claimName ?? v.ephemeral?.persistentVolumeClaim?.claimName ?? v.dataVolume?.name;
    const facts = claim ? claims.get(claim) : undefined;
    if (!facts) continue;
    const i = out.findIndex((s) => s.name === v.name);
    const prev = i >= 0 ? out[i]! : { name: v.name, target: '' };
    if (JSON.stringify(prev.persistentVolumeClaimInfo) === JSON.stringify(facts.info)) continue;
    const next = { ...prev, persistentVolumeClaimInfo: facts.info };
    if (i >= 0) out[i] = next; else out.push(next);
    changed = true;
  }
  return changed ? out : undefined;
}

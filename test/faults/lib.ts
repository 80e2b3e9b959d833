// What the fault-injection tests read off a running local mode: the launcher pod of a VMI and the
// pid of its compute container (the local pod runner's containerID is `local://<pid>`), the QEMU
// processes of one VM (its `-name guest=<namespace>_<name>,` argument), whether a pid is gone, what is
// being deleted, and what a local-path claim's image holds.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_PATH_ANNOTATION } from '../../src/kube/local-path.ts';
import { Resources, type ResourceType } from '../../src/kube/resource.ts';
import type { KubeClient, KubeObject } from '../../src/kube/client.ts';

/** The parts of a pod these tests read. */
export interface PodView extends KubeObject {
  status?: { phase?: string; containerStatuses?: Array<{ name: string; containerID?: string; state?: Record<string, unknown> }> };
}

/** The launcher pod (`virt-launcher-<vmi>-...`) the VMI with this UID controls, if any. */
export async function launcherPodOf(client: KubeClient, namespace: string, vmiUid: string): Promise<PodView | undefined> {
  const pods = await client.list<PodView>(Resources.pods, { namespace });
  return pods.items.find((p) => p.metadata?.ownerReferences?.some((r) => r.controller === true && r.uid === vmiUid));
}

/** The pid of the compute container's main process (the launcher), from its `local://<pid>` containerID. */
export function computePid(pod: PodView | undefined): number | undefined {
  const id = pod?.status?.containerStatuses?.find((s) => s.name === 'compute')?.containerID ?? '';
  const m = /^local:\/\/(\d+)$/.exec(id);
  return m ? Number(m[1]) : undefined;
}

/** The QEMU processes running the domain `<namespace>_<name>`. */
export function qemuOf(namespace: string, name: string): number[] {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-f', `^(/usr/bin/)?qemu-system.* -name guest=${namespace}_${name},`], { encoding: 'utf8' });
  } catch {
    return [];
  }
  return out.split('\n').filter(Boolean).map(Number);
}

/** The process is gone (or a zombie nobody reaped yet). */
export function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Objects of these kinds in `namespace` being deleted (pods only while not finished), as `Kind name (finalizers [...])`. */
export async function terminatingObjects(client: KubeClient, namespace: string, kinds: readonly ResourceType[]): Promise<string[]> {
  const all: KubeObject[] = [];
  for (const kind of kinds) {
    const items = (await client.list<PodView>(kind, { namespace })).items;
    all.push(...(kind === Resources.pods ? items.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed') : items));
  }
  return all.filter((o) => o.metadata?.deletionTimestamp).map((o) => `${o.kind ?? ''} ${o.metadata!.name} (finalizers ${JSON.stringify(o.metadata!.finalizers ?? [])})`);
}

/** The host directory of a local-path claim (the directory its annotation names). */
export async function claimDirOf(client: KubeClient, namespace: string, claim: string): Promise<string> {
  const pvc = await client.get<KubeObject>(Resources.persistentVolumeClaims, namespace, claim);
  return pvc.metadata!.annotations![LOCAL_PATH_ANNOTATION]!;
}

/** The first `length` bytes of the image in a local-path claim's directory (its disk.img), as text: readable with the API server down. */
export function claimImageHead(claimDir: string, length: number): string {
  return readFileSync(join(claimDir, 'disk.img')).subarray(0, length).toString();
}

// What the fault-injection tests read off a running local mode: the launcher pod of a VMI and the
// pid of its compute container (the local pod runner's containerID is `local://<pid>`), the QEMU
// processes of one VM (its `-name guest=<namespace>_<name>,` argument), and whether a pid is gone.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Resources } from '../../src/kube/resource.ts';
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

// The processes of a pod on this node, found as KubeVirt's isolation detector finds a launcher: the
// kubelet places every container of a pod in cgroups named for the pod's UID, and virt-handler runs
// in the host's PID namespace. Used where the local pod runner's records do not exist (a real node).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether a /proc/<pid>/cgroup text places the process in pod `podUid` (cgroupfs `pod<uid>`, systemd `pod<uid_with_underscores>`). */
export function cgroupOfPod(cgroup: string, podUid: string): boolean {
  if (!podUid) return false;
  return cgroup.includes(`pod${podUid}`) || cgroup.includes(`pod${podUid.replace(/-/g, '_')}`);
}

/** The pids of pod `podUid`'s processes, lowest (oldest, the sandbox's) first, with their command lines. */
export async function podProcesses(podUid: string, proc = '/proc'): Promise<Array<{ pid: number; cmdline: string }>> {
  const pids = (await readdir(proc).catch(() => [] as string[])).filter((p) => /^\d+$/.test(p)).map(Number).sort((a, b) => a - b);
  const out: Array<{ pid: number; cmdline: string }> = [];
  for (const pid of pids) {
    const cgroup = await readFile(join(proc, String(pid), 'cgroup'), 'utf8').catch(() => '');
    if (!cgroupOfPod(cgroup, podUid)) continue;
    const cmdline = (await readFile(join(proc, String(pid), 'cmdline'), 'utf8').catch(() => '')).replace(/\0/g, ' ').trim();
    out.push({ pid, cmdline });
  }
  return out;
}

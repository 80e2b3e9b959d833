// Where `qvirt run` leaves a note per running VM so other qvirt commands (`qvirt qmp`) can find its
// launcher without Kubernetes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface RunRecord {
  namespace: string;
  name: string;
  uid: string;
  launcherSocket: string;
  pid: number;
}

export function runRegistryDir(): string {
  return process.env.QVIRT_RUN_DIR ?? (process.getuid?.() === 0 ? '/run/qvirt/vms' : join(process.env.XDG_RUNTIME_DIR ?? '/tmp', 'qvirt-vms'));
}

/** The record of a running `qvirt run` VM, by `name` or `namespace/name`. */
export async function findRun(ref: string): Promise<RunRecord | undefined> {
  const [ns, name] = ref.includes('/') ? ref.split('/', 2) as [string, string] : ['default', ref];
  try {
    const rec = JSON.parse(await readFile(join(runRegistryDir(), `${ns}_${name}.json`), 'utf8')) as RunRecord;
    try { process.kill(rec.pid, 0); } catch { return undefined; }
    return rec;
  } catch {
    return undefined;
  }
}

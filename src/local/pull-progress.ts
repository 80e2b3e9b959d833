// A pull's byte progress. skopeo prints no byte counts when its output is not a terminal, but its
// `dir:` destination shows them: each blob grows in the layout directory as a `dir-put-blob*`
// temporary file and is renamed to its digest's hex when complete. The bytes there, against the
// total the registry's manifest announces (its config's and layers' sizes), are the progress.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes downloaded so far and the image's total (undefined: unknown, e.g. a multi-arch index). */
export type PullProgress = (done: number, total: number | undefined) => void;

/** The bytes an image manifest's blobs add up to (config and layers); undefined for an index or what cannot be read. Pure. */
export function manifestTotal(raw: Buffer): number | undefined {
  try {
    const m = JSON.parse(raw.toString('utf8')) as { schemaVersion?: number; config?: { size?: unknown }; layers?: Array<{ size?: unknown }> };
    if (m.schemaVersion !== 2 || !Array.isArray(m.layers) || typeof m.config?.size !== 'number') return undefined;
    let total = m.config.size;
    for (const l of m.layers) {
      if (typeof l.size !== 'number' || l.size < 0) return undefined;
      total += l.size;
    }
    return total;
  } catch {
    return undefined;
  }
}

const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;

/** What a pod waiting on a pull says (its ContainerCreating message): the bytes so far of the total. Pure. */
export function pullProgressMessage(image: string, p: { done: number; total: number | undefined } | undefined): string {
  if (!p) return `Pulling image "${image}"`;
  if (p.total === undefined) return `Pulling image "${image}": ${mib(p.done)} downloaded`;
  return `Pulling image "${image}": ${mib(p.done)} of ${mib(p.total)} (${Math.min(100, Math.floor((p.done / Math.max(1, p.total)) * 100))}%)`;
}

/** Whether a name in a `dir:` layout is a blob, finished (its digest's hex) or being written. */
export const isBlobName = (name: string): boolean => /^[0-9a-f]{64}$/.test(name) || name.startsWith('dir-put-blob');

/** The bytes of the blobs in a `dir:` layout now (0 while it does not exist). */
export async function layoutBytes(dir: string): Promise<number> {
  const names = await readdir(dir).catch(() => [] as string[]);
  let n = 0;
  for (const name of names) {
    if (!isBlobName(name)) continue;
    const st = await stat(join(dir, name)).catch(() => undefined);
    if (st?.isFile()) n += st.size;
  }
  return n;
}

/**
 * Reports the bytes in `dir` every `intervalMs` while a copy writes it, never going back (a blob
 * renamed between the listing and its stat is missed once). The returned function stops it.
 */
export function watchLayout(dir: string, onBytes: (done: number) => void, intervalMs = 250): () => void {
  let last = -1;
  let busy = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void layoutBytes(dir).then((n) => { if (!stopped && n > last) { last = n; onBytes(n); } }).finally(() => { busy = false; });
  }, intervalMs);
  timer.unref();
  return () => { stopped = true; clearInterval(timer); };
}

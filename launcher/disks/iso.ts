// Makes the ISO images of seed and config disks: with xorrisofs, called exactly as KubeVirt calls
// it, when it is installed; otherwise with the built-in writer (iso9660.ts). Both write to
// `<iso>.staging` and rename into place, so QEMU never sees a half-written image.
import { readdir, readFile, rename, rm, stat, truncate, writeFile } from '../fs/async.ts';
import { join } from 'node:path';
import { FILE_NAMES, xorrisofsCloudInitArgs, xorrisofsConfigArgs } from './constants.ts';
import { writeIso9660, type IsoEntry } from './iso9660.ts';
import { findExecutable, xorrisofs } from './tools.ts';

/** Which ISO writer to use: `auto` = xorrisofs when installed, else the built-in one. */
export type IsoWriterChoice = 'auto' | 'xorrisofs' | 'builtin';
export type IsoWriter = 'xorrisofs' | 'builtin';

export function resolveIsoWriter(choice: IsoWriterChoice = 'auto'): IsoWriter {
  if (choice !== 'auto') return choice;
  return findExecutable('xorrisofs') ? 'xorrisofs' : 'builtin';
}

/**
 * How KubeVirt lays the files out:
 *  - `dir`: the directory itself is the ISO root (cloud-init: `xorrisofs ... <dir>`);
 *  - `graft`: every entry of the directory is grafted at the root, following symlinks
 *    (config volumes: `-follow-links -graft-points name=path ...`).
 */
export type IsoLayout = 'dir' | 'graft';

export interface MakeIsoRequest {
  readonly output: string;
  readonly volumeId: string;
  readonly sourceDir: string;
  readonly layout: IsoLayout;
  readonly timeoutMs: number;
  readonly writer?: IsoWriterChoice;
}

const MAX_DEPTH = 32;

/** Reads a directory into ISO entries, following symlinks (kubelet's `..data` links) like `-follow-links`. */
export async function readTree(dir: string, depth = 0): Promise<IsoEntry[]> {
  if (depth > MAX_DEPTH) throw new Error(`${dir}: directories nested deeper than ${MAX_DEPTH} levels (symlink loop?)`);
  const names = (await readdir(dir)).sort();
  const out: IsoEntry[] = [];
  for (const name of names) {
    const p = join(dir, name);
    const st = await stat(p);
    if (st.isDirectory()) out.push({ kind: 'dir', name, children: await readTree(p, depth + 1), mode: st.mode & 0o7777 });
    else if (st.isFile()) out.push({ kind: 'file', name, data: await readFile(p), mode: st.mode & 0o7777 });
    // sockets, fifos and devices have no place on a seed disk
  }
  return out;
}

/** The `name=path` graft points of pkg/config getFilesLayout: every entry of `dir`, in readdir order. */
export async function graftPoints(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).sort();
  return names.map((n) => `${n}=${join(dir, n)}`);
}

/** Writes the ISO and returns the writer that made it. */
export async function makeIso(req: MakeIsoRequest): Promise<IsoWriter> {
  const writer = resolveIsoWriter(req.writer);
  const staging = `${req.output}${FILE_NAMES.stagingSuffix}`;
  await rm(staging, { force: true });
  try {
    if (writer === 'xorrisofs') {
      const args = req.layout === 'dir'
        ? xorrisofsCloudInitArgs(staging, req.volumeId, req.sourceDir)
        : xorrisofsConfigArgs(staging, req.volumeId, await graftPoints(req.sourceDir));
      await xorrisofs(args, req.timeoutMs);
    } else {
      const entries = await readTree(req.sourceDir);
      await writeFile(staging, writeIso9660(entries, { volumeId: req.volumeId }));
    }
    await rename(staging, req.output);
  } catch (err) {
    await rm(staging, { force: true });
    throw err;
  }
  return writer;
}

/** A zero-filled placeholder of a given size (KubeVirt's empty ISOs on migration targets). */
export async function makeEmptyIso(output: string, size: number): Promise<void> {
  const staging = `${output}${FILE_NAMES.stagingSuffix}`;
  await rm(staging, { force: true });
  await writeFile(staging, new Uint8Array(0));
  await truncate(staging, size);
  await rename(staging, output);
}

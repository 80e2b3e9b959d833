// A directory tree walked while processes change it (pods start and end, pulls unpack): a directory
// removed meanwhile holds nothing. readdirSync's own recursive walk throws ENOENT in that case.
import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';

/** Every entry under `root` (not following symlinks), with its path; [] if `root` is not there. */
export function entriesUnder(root: string): Array<{ readonly path: string; readonly entry: Dirent }> {
  const out: Array<{ path: string; entry: Dirent }> = [];
  const walk = (dir: string) => {
    let entries: Dirent[];
    try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      out.push({ path, entry });
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(root);
  return out;
}

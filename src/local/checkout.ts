// The qvirt checkout this code runs from: the directory of its package.json, found upward from this
// module — the same answer from the sources (src/local/) and from the CLI bundle built from them
// (dist/cli/), where paths relative to each module's own location would differ. What the local mode
// runs from the checkout (the CLI, the launcher bundle, passt, the guest's build script) is found here.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The first directory from `start` upward whose package.json is named `name`, or undefined. Pure but for `read`. */
export function findCheckout(start: string, name = 'qvirt', read: (path: string) => string | undefined = readIfThere): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const text = read(join(dir, 'package.json'));
    if (text !== undefined) {
      try { if ((JSON.parse(text) as { name?: unknown }).name === name) return dir; } catch { /* not this one */ }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function readIfThere(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

let root: string | undefined;

/**
 * A path in the checkout (`checkoutPath('dist/launcher')`). Outside a checkout (an image's bundle, which
 * runs no local mode) the root is `/`, so such a path names nothing rather than something unrelated.
 */
export function checkoutPath(...parts: string[]): string {
  root ??= findCheckout(dirname(fileURLToPath(import.meta.url))) ?? '/';
  return join(root, ...parts);
}

// Programs qvirt's images ship that this machine's packages do not provide as the images need them.
// The launcher image's /usr/bin/passt is passt built from Debian's newer source package
// (scripts/passt/build.sh: Debian 12's own passt breaks TCP through the passt binding); the local pod
// runner gives qvirt's containers that same binary by putting its directory first on their PATH,
// as it runs their /usr/bin/qvirt from this checkout.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { checkoutPath } from '../checkout.ts';


/** Where scripts/passt/build.sh leaves the passt it built (a symlink to the pinned version's directory). */
export const BUILT_PASST_DIR = checkoutPath('.cache/passt/current');

/** PATH for a container: the built passt's directory first when it is there (pure but for `exists`). */
export function containerPath(hostPath: string, passtDir: string = BUILT_PASST_DIR, exists: (p: string) => boolean = existsSync): string {
  if (!exists(join(passtDir, 'passt'))) return hostPath;
  const rest = hostPath.split(':').filter((d) => d !== '' && d !== passtDir);
  return [passtDir, ...rest].join(':');
}

// GetScreenshot (KubeVirt's `vnc/screenshot`, virDomainScreenshot of the primary display): QEMU's
// `screendump` in PNG (QEMU 7.1+ with libpng, as Debian builds it) into a file of its own in the
// launcher's private directory beside the VNC socket, read back and removed. The display is the one
// VNC shows; a VMI with `autoattachGraphicsDevice: false` has none, and says so.
import { join } from 'node:path';
import { readFile, rm } from '../fs/async.ts';
import type { QmpConnection } from './qmp-connection.ts';

export const SCREENSHOT_MIME = 'image/png';

/** How long QEMU may take to write the PNG (a large framebuffer compressed under a loaded TCG). */
const SCREENDUMP_TIMEOUT_MS = 30_000;

export interface Screenshot {
  readonly mime: string;
  readonly data: Buffer;
}

/** Calls at once get files of their own (the launcher loads no node:crypto for a random name). */
let serial = 0;

/** The guest's primary display as a PNG, through a file in `dir` that does not outlive the call. */
export async function takeScreenshot(qmp: QmpConnection, dir: string): Promise<Screenshot> {
  const file = join(dir, `screenshot-${++serial}.png`);
  try {
    await qmp.execute('screendump', { filename: file, format: 'png' }, { timeout: SCREENDUMP_TIMEOUT_MS });
    return { mime: SCREENSHOT_MIME, data: await readFile(file) };
  } finally {
    await rm(file, { force: true });
  }
}

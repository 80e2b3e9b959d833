// Temporary directories for tests. Unix socket paths are limited to 107 bytes, so test
// directories live directly under /tmp with short names.
import { mkdtempSync, rmSync } from 'node:fs';

/** A fresh directory under /tmp; remove it with the returned `cleanup`. */
export function tempDir(prefix = 'qv'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(`/tmp/${prefix}-`);
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

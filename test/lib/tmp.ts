// Temporary directories for tests. Unix socket paths are limited to 107 bytes, so test
// directories live directly under /tmp with short names.
import { mkdtempSync, rmSync } from 'node:fs';

/** A fresh directory under /tmp; remove it with the returned `cleanup`. */
export function tempDir(prefix = 'qv'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(`/tmp/${prefix}-`);
  // QVIRT_TEST_KEEP=1 keeps them (logs, pod directories) for a post-mortem; whatever runs in them is still stopped.
  if (process.env.QVIRT_TEST_KEEP === '1') return { path, cleanup: () => { console.error(`kept ${path} (QVIRT_TEST_KEEP)`); } };
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

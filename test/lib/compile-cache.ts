// Preloaded into every test file's process by test/run.ts (`node --import`): V8's compile cache
// for that process, in <repo>/.cache/node-compile-cache, so the hundreds of modules a local-mode
// test loads compile once per version of the sources rather than once per file (importing the
// local mode: 1.4 → 0.7 s of CPU). Only this process: children get what they enable themselves.
import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

try { enableCompileCache(fileURLToPath(new URL('../../.cache/node-compile-cache', import.meta.url))); } catch { /* compile as before */ }

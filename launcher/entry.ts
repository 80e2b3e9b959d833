// The launcher's own entry point: what the launcher bundle (`npm run build`, dist/launcher/) starts
// from, so a launcher pod loads one pre-built file instead of resolving and type-stripping hundreds of
// modules. `qvirt launcher` (src/cli/main.ts) runs the same main(). No top-level await: the bundle is
// CommonJS (scripts/build.ts says why).
import { UsageError } from '../src/flags/flags.ts';
import { main } from './main.ts';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`qvirt launcher: ${err instanceof UsageError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);

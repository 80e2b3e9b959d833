// `qvirt tail`'s own entry point: what the virt-tail bundle (scripts/build.ts, dist/launcher/qvirt-tail.mjs)
// starts from, so a launcher pod's guest-console-log container loads one small pre-built file instead of
// the CLI's sources through Node's TypeScript stripper (≈110 ms of CPU per VM start → ≈30 ms).
// `qvirt tail` (src/cli/main.ts) runs the same main().
import { UsageError } from '../flags/flags.ts';
import { main } from './tail.ts';

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`qvirt tail: ${err instanceof UsageError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}

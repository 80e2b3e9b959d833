// Runs every bench/*.bench.ts (or those whose name contains one of the arguments), each in its own
// Node process, one after another (benchmarks must not compete for the CPU).
//   node bench/run.ts [substring ...]
// Exit code 1 if a benchmark failed or missed a target.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = import.meta.dirname;
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error(`no bench/*.bench.ts matches ${filters.join(' ')}`);
  process.exit(1);
}
let failed = 0;
for (const f of files) {
  console.log(`== ${f}`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [join(dir, f)], { stdio: 'inherit' });
    child.on('exit', (c) => resolve(c));
  });
  if (code !== 0) {
    failed++;
    console.log(`== ${f}: exit ${code}${code === 2 ? ' (target missed)' : ''}`);
  }
}
console.log(`${files.length - failed} of ${files.length} benchmarks ran and met their targets`);
process.exitCode = failed ? 1 : 0;

// `qvirt version`: qvirt's own version, the Node it runs on and the QEMU it would launch.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

export async function main(_argv: string[]): Promise<number> {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  let qemu = 'not found';
  try {
    const { stdout } = await promisify(execFile)(process.env.QVIRT_QEMU ?? 'qemu-system-x86_64', ['--version']);
    qemu = stdout.split('\n')[0] ?? qemu;
  } catch { /* reported as not found */ }
  process.stdout.write(`qvirt ${pkg.version}\nnode ${process.version}\nqemu ${qemu}\n`);
  return 0;
}

// A launcher started on its own from a built bundle (scripts/build.ts), as the bundle's tests run it: no
// node agent (`--notify-socket none`), its container root and caches in the test's directory, with the
// launcher's Node flags. Up once its command socket is there; `stop` kills it and waits for its exit.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LAUNCHER_LOADER, LAUNCHER_NODE_FLAGS } from '../../src/local/launcher-command.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface BundledLauncher {
  /** What it wrote so far (stdout only when asked to capture it). */
  readonly stdout: () => string;
  readonly stderr: () => string;
  stop(): Promise<void>;
}

export async function startBundledLauncher(o: {
  /** The directory buildLauncherBundle returned. */
  readonly bundleDir: string;
  /** The test's directory: the launcher's root and KVM/QEMU facts cache go below it. */
  readonly work: string;
  readonly name: string;
  readonly uid: string;
  readonly env: Readonly<Record<string, string>>;
  readonly captureStdout?: boolean;
  /** More Node options, before the loader. */
  readonly nodeArgs?: readonly string[];
}): Promise<BundledLauncher> {
  const root = join(o.work, 'root');
  const child = spawn(process.execPath, [...LAUNCHER_NODE_FLAGS, ...(o.nodeArgs ?? []), join(o.bundleDir, LAUNCHER_LOADER),
    '--name', o.name, '--uid', o.uid, '--namespace', 'default', '--root', root,
    '--allow-emulation', '--notify-socket', 'none', '--cache-dir', join(o.work, 'cache')],
  { stdio: ['ignore', o.captureStdout ? 'pipe' : 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', ...o.env } });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => { child.kill('SIGKILL'); await exited; };
  const sock = join(root, 'var/run/kubevirt/sockets/launcher-sock');
  for (let i = 0; i < 300 && !existsSync(sock) && child.exitCode === null; i++) await sleep(50);
  if (!existsSync(sock)) {
    await stop();
    throw new Error(`launcher did not come up: ${stderr}`);
  }
  return { stdout: () => stdout, stderr: () => stderr, stop };
}

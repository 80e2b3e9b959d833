// The emulated TPM's process (libvirt's qemuTPMEmulatorStart, which KubeVirt relies on): Debian's
// swtpm as a TPM 2.0 behind a unix control socket QEMU's `-tpmdev emulator` connects to
// (launcher/convert/tpm.ts). It dies with the launcher (parent-death signal, as QEMU does) and ends
// by itself once QEMU closes the control channel (`--terminate`), so neither a killed launcher nor
// a QEMU that exited leaves one behind. Its state is a directory of the launcher's private
// directory: the TPM's life is the pod's, as KubeVirt's TPM without `persistent`.
//
// Unlike libvirt, qvirt does not run swtpm_setup: the TPM starts unprovisioned (no EK certificate),
// and the guest takes ownership and creates its keys itself, as on a blank physical TPM.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm, stat } from '../fs/async.ts';
import { withParentDeathSignal } from '../../src/process/parent-death.ts';
import { findExecutable } from '../disks/tools.ts';
import type { TpmPlan } from '../convert/plan.ts';
import type { Logger } from '../../src/log/logger.ts';

export const SWTPM_BINARY = 'swtpm';

/** How long swtpm may take to create its control socket. */
const SOCKET_WAIT_MS = 10_000;

/** swtpm's arguments for `plan` (pure). */
export function swtpmArgs(plan: TpmPlan): string[] {
  for (const p of [plan.socket, plan.stateDir]) {
    // swtpm splits its options at ',' and '=' (no quoting): a path with either would be read as another option.
    if (/[,=]/.test(p)) throw new Error(`swtpm: path ${JSON.stringify(p)} has a ',' or '=', which swtpm's options cannot carry`);
  }
  return [
    'socket', '--tpm2',
    '--tpmstate', `dir=${plan.stateDir},mode=0600`,
    '--ctrl', `type=unixio,path=${plan.socket},mode=0600`,
    '--terminate',
    '--log', 'level=1',
  ];
}

export interface SwtpmProcess {
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/** Starts swtpm and waits for its control socket (QEMU connects to it at start). Throws naming `field`. */
export async function startSwtpm(plan: TpmPlan, field: string, log: Logger, binary = SWTPM_BINARY): Promise<SwtpmProcess> {
  const path = findExecutable(binary);
  if (!path) throw new Error(`${field}: the emulated TPM needs swtpm, which is not installed (Debian's swtpm package)`);
  await mkdir(plan.stateDir, { recursive: true, mode: 0o700 });
  await rm(plan.socket, { force: true });
  const cmd = withParentDeathSignal({ setpriv: findExecutable('setpriv'), shell: findExecutable('sh') }, process.pid, path, swtpmArgs(plan));
  const child: ChildProcess = spawn(cmd.file, cmd.args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const gone = new Promise<void>((resolve) => child.once('exit', (code, signal) => {
    exited = { code, signal };
    log.info({ code, signal, stderr: stderr.trim() || undefined }, 'swtpm exited');
    resolve();
  }));
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const deadline = Date.now() + SOCKET_WAIT_MS;
  for (;;) {
    if (await stat(plan.socket).then((s) => s.isSocket(), () => false)) break;
    const err = await Promise.race([spawnError, new Promise<undefined>((r) => { setTimeout(() => r(undefined), 20); })]);
    if (err) throw new Error(`${field}: cannot start swtpm: ${err.message}`);
    if (exited) throw new Error(`${field}: swtpm exited (${exited.signal ?? `code ${exited.code}`}) before listening: ${stderr.trim() || 'no output'}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await gone;
      throw new Error(`${field}: swtpm did not create ${plan.socket} within ${SOCKET_WAIT_MS / 1000} s${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
    }
  }
  log.info({ pid: child.pid, socket: plan.socket }, 'swtpm started');
  return {
    pid: child.pid,
    stop: async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 2000);
        await gone;
        clearTimeout(t);
      }
      await rm(plan.socket, { force: true }).catch(() => undefined);
    },
  };
}

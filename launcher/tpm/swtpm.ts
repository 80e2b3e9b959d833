// The emulated TPM's process (libvirt's qemuTPMEmulatorStart, which KubeVirt relies on): Debian's
// swtpm as a TPM 2.0 behind a unix control socket QEMU's `-tpmdev emulator` connects to
// (launcher/convert/tpm.ts). It dies with the launcher (parent-death signal, as QEMU does) and ends
// by itself once QEMU closes the control channel (`--terminate`), so neither a killed launcher nor
// a QEMU that exited leaves one behind. Its state is a directory of the launcher's private
// directory: the TPM's life is the pod's, as KubeVirt's TPM without `persistent`.
//
// Unlike libvirt, qvirt does not run swtpm_setup: the TPM starts unprovisioned (no EK certificate),
// and the guest takes ownership and creates its keys itself, as on a blank physical TPM.
import { mkdir } from '../fs/async.ts';
import { findExecutable } from '../disks/tools.ts';
import { startSocketHelper, type SocketHelper } from '../process/socket-helper.ts';
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

export type SwtpmProcess = SocketHelper;

/** Starts swtpm and waits for its control socket (QEMU connects to it at start). Throws naming `field`. */
export async function startSwtpm(plan: TpmPlan, field: string, log: Logger, binary = SWTPM_BINARY): Promise<SwtpmProcess> {
  const path = findExecutable(binary);
  if (!path) throw new Error(`${field}: the emulated TPM needs swtpm, which is not installed (Debian's swtpm package)`);
  await mkdir(plan.stateDir, { recursive: true, mode: 0o700 });
  return startSocketHelper({ binary: path, args: swtpmArgs(plan), socket: plan.socket, field, waitMs: SOCKET_WAIT_MS, parentDeath: true, log });
}

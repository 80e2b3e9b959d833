// `qvirt tail --logfile FILE`: KubeVirt's virt-tail, which follows a guest console log. It is a shell
// script (launcher/virt-tail.sh): the launcher image's /usr/bin/qvirt and the local pod runner run it
// directly in every launcher pod's guest-console-log container, with no Node process. From a checkout
// `qvirt tail` runs the same script, passing SIGTERM and SIGINT on to it.
import { spawn } from 'node:child_process';
import { VIRT_TAIL_SCRIPT } from '../local/launcher-command.ts';

export function main(argv: string[]): Promise<number> {
  const child = spawn('/bin/sh', [VIRT_TAIL_SCRIPT, ...argv], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => { child.kill(signal); };
  process.on('SIGTERM', forward).on('SIGINT', forward);
  return new Promise((resolve) => {
    child.once('error', (err) => { process.stderr.write(`qvirt tail: ${err.message}\n`); resolve(1); });
    child.once('close', (code) => {
      process.off('SIGTERM', forward).off('SIGINT', forward);
      resolve(code ?? 0);
    });
  });
}

// `qvirt vnc screenshot VMI -f FILE|-`: virtctl's `vnc screenshot`. The VMI's display as a PNG,
// taken by its launcher (QEMU's screendump) and fetched from the node agent of the VMI's node with
// the user's own credentials, after the checks virt-api makes (a running VMI with a display).
// `--move-cursor` is accepted as virtctl accepts it; KubeVirt's node agent does not act on it, nor does qvirt's.
import { writeFileSync } from 'node:fs';
import { UsageError } from '../flags/flags.ts';
import { UserError } from '../kube/user-error.ts';
import { HandlerEndpoint, getVmi } from '../kube/handler-endpoint.ts';
import { checkVmiSubresource } from '../virt-api/vmi-preconditions.ts';
import { withCluster } from './kube-context.ts';
import { parseVerb } from './verb.ts';

export async function main(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt vnc screenshot (VMI) -f FILE [flags]',
    summary: 'Create a VNC screenshot of a virtual machine instance (a PNG).',
    flags: {
      file: { type: 'string', short: 'f', value: 'FILE', help: 'where to store the VNC screenshot in PNG format; - for stdout' },
      'move-cursor': { type: 'boolean', short: 'm', help: 'move the cursor to wake up the screen in case of screensavers (accepted as virtctl accepts it; the node agent does not act on it, as KubeVirt\'s does not)' },
    },
    args: ['VMI'],
    examples: '  # Take a VNC screenshot of \'testvmi\' in png format:\n  qvirt vnc screenshot testvmi -f screenshot.png\n  # Show it right away:\n  qvirt vnc screenshot testvmi -f - | display',
  }, argv);
  if (!v) return 0;
  const file = v.flags.file;
  if (!file) throw new UsageError('--file (-f) is required: where to store the PNG, or - for stdout');
  const name = v.args[0]!;
  return withCluster(v.flags, async (ctx) => {
    const vmi = await getVmi(ctx, name);
    const refusal = checkVmiSubresource('vnc/screenshot', vmi);
    if (refusal) throw new UserError(`Can't access VMI ${name}: ${refusal.message}`);
    const ep = await HandlerEndpoint.forVmi(ctx, vmi);
    const { data } = await ep.getBinary('vnc/screenshot');
    if (file === '-') {
      process.stdout.write(data);
    } else {
      try {
        writeFileSync(file, data, { mode: 0o644 });
      } catch (err) {
        throw new UserError(`Can't write image to a file: ${(err as Error).message}`);
      }
    }
    return 0;
  });
}

// `qvirt tail --logfile FILE`: KubeVirt's virt-tail. The launcher pod's `guest-console-log` container
// runs it so `kubectl logs <pod> -c guest-console-log` shows the guest's serial console. It waits for
// the file to appear, follows it across truncation, and exits on SIGTERM.
import { open, stat } from 'node:fs/promises';
import { parseFlags, usage } from '../flags/flags.ts';

const specs = {
  logfile: { type: 'string', value: 'FILE', help: 'the console log to follow (virt-serial0-log)' },
  'poll-interval': { type: 'duration', value: 'DURATION', default: '200ms', help: 'how often to look for new bytes' },
} as const;

export async function main(argv: string[]): Promise<number> {
  const { flags, help } = parseFlags(specs, argv);
  if (help) { process.stdout.write(usage('qvirt tail --logfile FILE', 'Follow a guest console log.', specs)); return 0; }
  if (!flags.logfile) { process.stderr.write('qvirt tail: --logfile is required\n'); return 2; }
  const file = flags.logfile;
  const interval = (flags['poll-interval'] ?? 0.2) * 1000;
  let stopped = false;
  const stop = () => { stopped = true; };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  let offset = 0;
  const buf = Buffer.alloc(64 * 1024);
  while (!stopped) {
    try {
      const st = await stat(file);
      if (st.size < offset) offset = 0; // truncated or replaced: start over
      if (st.size > offset) {
        const fh = await open(file, 'r');
        try {
          for (;;) {
            const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
            if (bytesRead === 0) break;
            offset += bytesRead;
            if (!process.stdout.write(buf.subarray(0, bytesRead))) await new Promise((r) => process.stdout.once('drain', r));
          }
        } finally {
          await fh.close();
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    await new Promise((r) => setTimeout(r, interval));
  }
  return 0;
}

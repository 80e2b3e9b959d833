// `qvirt qmp VMI [--unsafe] [COMMAND [ARGS-JSON]]`: QMP passthrough for debugging. Read-only
// `query-*` commands by default; anything else only with --unsafe. Every call is logged by the
// launcher. Without COMMAND it opens an interactive QMP shell (one command a line:
// `query-status` or `query-block {"flat": true}`).
import { createInterface } from 'node:readline';
import { parseFlags, usage, UsageError } from './flags.ts';
import { QmpPassthroughClient } from '../proto/qmp.ts';
import { findRun } from '../local/run-registry.ts';
import { userInfo } from 'node:os';

const specs = {
  unsafe: { type: 'boolean', help: 'allow commands that change the VM (not just read-only queries)' },
  socket: { type: 'string', value: 'PATH', help: 'the launcher\'s command socket (default: found from `qvirt run`)' },
  timeout: { type: 'duration', value: 'DURATION', default: '30s', help: 'how long one command may take' },
} as const;

function parseArgs(text: string | undefined, what: string): Record<string, unknown> | undefined {
  if (!text) return undefined;
  let v: unknown;
  try { v = JSON.parse(text); } catch (err) { throw new UsageError(`${what}: not JSON: ${(err as Error).message}`); }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`${what}: must be a JSON object, e.g. '{"flat": true}'`);
  return v as Record<string, unknown>;
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  if (help) {
    process.stdout.write(usage('qvirt qmp VMI [--unsafe] [COMMAND [ARGS-JSON]]', 'Send QMP commands to a VM\'s QEMU through its launcher (read-only unless --unsafe).', specs, 'Examples:\n  qvirt qmp testvm query-status\n  qvirt qmp testvm query-block \'{"flat":true}\'\n  qvirt qmp testvm --unsafe system_reset'));
    return 0;
  }
  const [vmiRef, command, argsJson, ...extra] = args;
  if (!vmiRef) throw new UsageError('name the VMI: qvirt qmp VMI [COMMAND [ARGS-JSON]]');
  if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  let socket = flags.socket;
  if (!socket) {
    const rec = await findRun(vmiRef);
    if (!rec) { process.stderr.write(`error: no running VM "${vmiRef}" started with 'qvirt run' on this machine (give --socket PATH for another launcher)\n`); return 1; }
    socket = rec.launcherSocket;
  }
  const client = new QmpPassthroughClient(socket, { timeoutMs: (flags.timeout ?? 30) * 1000 + 5000 });
  const caller = `qvirt-cli:${userInfo().username}`;
  const run = async (cmd: string, a: Record<string, unknown> | undefined): Promise<boolean> => {
    const r = await client.execute(cmd, a, { unsafe: flags.unsafe, caller, timeoutSeconds: flags.timeout ?? 30 });
    if (r.refused) { process.stderr.write(`refused: ${r.message}\n`); return false; }
    if (!r.success) { process.stderr.write(`error${r.errorClass ? ` (${r.errorClass})` : ''}: ${r.message}\n`); return false; }
    process.stdout.write(`${JSON.stringify(JSON.parse(r.returnJson || 'null'), null, 2)}\n`);
    return true;
  };
  try {
    if (command) return (await run(command, parseArgs(argsJson, 'ARGS-JSON'))) ? 0 : 1;
    const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: `(QEMU ${vmiRef}${flags.unsafe ? ', unsafe' : ''}) ` });
    rl.prompt();
    for await (const line of rl) {
      const t = line.trim();
      if (t === 'quit' || t === 'exit') break;
      if (t) {
        const sp = t.search(/\s/);
        try {
          await run(sp < 0 ? t : t.slice(0, sp), sp < 0 ? undefined : parseArgs(t.slice(sp + 1), t.slice(0, sp)));
        } catch (err) {
          process.stderr.write(`${(err as Error).message}\n`);
        }
      }
      rl.prompt();
    }
    return 0;
  } finally {
    client.close();
  }
}

// `qvirt qmp VMI [--unsafe] [COMMAND [ARGS-JSON]]`: QMP passthrough for debugging. Read-only
// `query-*` commands by default; anything else only with --unsafe. Without COMMAND it opens an
// interactive QMP shell (one command a line: `query-status` or `query-block {"flat": true}`).
// The way to the VM's QEMU: --socket (a launcher's command socket), else a VM started here with
// `qvirt run`, else the cluster: the node agent of the VMI's node, which audits every call in its log.
import { createInterface } from 'node:readline';
import { userInfo } from 'node:os';
import { parseFlags, usage, UsageError } from './flags.ts';
import { QmpPassthroughClient } from '../proto/qmp.ts';
import { findRun } from '../local/run-registry.ts';
import { clusterFlags } from './kube-context.ts';
import { CliError } from './cli-error.ts';

const specs = {
  unsafe: { type: 'boolean', help: 'allow commands that change the VM (not just read-only queries)' },
  socket: { type: 'string', value: 'PATH', help: 'the launcher\'s command socket (default: a `qvirt run` VM of that name, else the cluster)' },
  timeout: { type: 'duration', value: 'DURATION', default: '30s', help: 'how long one command may take' },
  ...clusterFlags,
} as const;

function parseArgs(text: string | undefined, what: string): Record<string, unknown> | undefined {
  if (!text) return undefined;
  let v: unknown;
  try { v = JSON.parse(text); } catch (err) { throw new UsageError(`${what}: not JSON: ${(err as Error).message}`); }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`${what}: must be a JSON object, e.g. '{"flat": true}'`);
  return v as Record<string, unknown>;
}

/** One QMP command's outcome: QEMU's return value, or why there is none. */
type QmpOutcome = { ok: true; value: unknown } | { ok: false; message: string };

interface QmpTarget {
  execute(cmd: string, args: Record<string, unknown> | undefined): Promise<QmpOutcome>;
  close(): Promise<void>;
}

function launcherTarget(socket: string, unsafe: boolean, timeout: number): QmpTarget {
  const client = new QmpPassthroughClient(socket, { timeoutMs: timeout * 1000 + 5000 });
  const caller = `qvirt-cli:${userInfo().username}`;
  return {
    async execute(cmd, a) {
      const r = await client.execute(cmd, a, { unsafe, caller, timeoutSeconds: timeout });
      if (r.refused) return { ok: false, message: `refused: ${r.message}` };
      if (!r.success) return { ok: false, message: `error${r.errorClass ? ` (${r.errorClass})` : ''}: ${r.message}` };
      return { ok: true, value: JSON.parse(r.returnJson || 'null') as unknown };
    },
    async close() { client.close(); },
  };
}

async function clusterTarget(vmiName: string, flags: { kubeconfig?: string | undefined; namespace?: string | undefined }, unsafe: boolean): Promise<QmpTarget> {
  const { connect } = await import('./kube-context.ts');
  const { getVmi } = await import('./handler-endpoint.ts');
  const { callVmi } = await import('./vmi-ops.ts');
  const ctx = connect(flags);
  try {
    const vmi = await getVmi(ctx, vmiName);
    return {
      async execute(cmd, a) {
        const r = await callVmi<{ return?: unknown; error?: { class?: string; desc?: string } }>(ctx, vmi, 'qmp', 'POST', { execute: cmd, ...(a ? { arguments: a } : {}), unsafe });
        if (r.error) return { ok: false, message: `error${r.error.class ? ` (${r.error.class})` : ''}: ${r.error.desc ?? JSON.stringify(r.error)}` };
        return { ok: true, value: r.return ?? null };
      },
      close: () => ctx.client.close(),
    };
  } catch (err) {
    await ctx.client.close();
    throw err;
  }
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  if (help) {
    process.stdout.write(usage('qvirt qmp VMI [--unsafe] [COMMAND [ARGS-JSON]]', 'Send QMP commands to a VM\'s QEMU through its launcher (read-only unless --unsafe).', specs, 'Examples:\n  qvirt qmp testvm query-status\n  qvirt qmp testvm query-block \'{"flat":true}\'\n  qvirt qmp testvm --unsafe system_reset\n  qvirt qmp testvm            # an interactive QMP shell'));
    return 0;
  }
  const [vmiRef, command, argsJson, ...extra] = args;
  if (!vmiRef) throw new UsageError('name the VMI: qvirt qmp VMI [COMMAND [ARGS-JSON]]');
  if (extra.length) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  const timeout = flags.timeout ?? 30;
  let socket = flags.socket;
  const clusterAsked = Boolean(flags.kubeconfig || flags.namespace);
  if (!socket && !clusterAsked) socket = (await findRun(vmiRef))?.launcherSocket;
  let target: QmpTarget;
  if (socket) target = launcherTarget(socket, flags.unsafe, timeout);
  else {
    try {
      target = await clusterTarget(vmiRef, flags, flags.unsafe);
    } catch (err) {
      if (clusterAsked || !(err instanceof CliError)) throw err;
      throw new CliError(`no running VM "${vmiRef}" started with 'qvirt run' on this machine (give --socket PATH for another launcher), and in the cluster: ${err.message}`);
    }
  }
  const run = async (cmd: string, a: Record<string, unknown> | undefined): Promise<boolean> => {
    const r = await target.execute(cmd, a);
    if (!r.ok) { process.stderr.write(`${r.message}\n`); return false; }
    process.stdout.write(`${JSON.stringify(r.value, null, 2)}\n`);
    return true;
  };
  try {
    if (command) return (await run(command, parseArgs(argsJson, 'ARGS-JSON'))) ? 0 : 1;
    const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: `(QEMU ${vmiRef}${flags.unsafe ? ', unsafe' : ''}) ` });
    // Piped input ends the reader while commands are still running: no prompt after that.
    let inputClosed = false;
    rl.once('close', () => { inputClosed = true; });
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
      if (!inputClosed) rl.prompt();
    }
    return 0;
  } finally {
    await target.close();
  }
}

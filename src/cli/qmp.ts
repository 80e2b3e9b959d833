// `qvirt qmp VMI [--unsafe] [-H] [COMMAND...]`: QMP passthrough for debugging. Read-only `query-*`
// commands (and HMP `info ...`) by default; anything else only with --unsafe. Without COMMAND it
// opens an interactive shell that reads what QEMU users type (qmp-shell-syntax.ts): QMP JSON objects
// from QEMU's docs, qmp-shell's `query-named-block-nodes flat=true`, or `COMMAND {json}`; with -H,
// HMP lines (`info status`) as human-monitor-command, as qmp-shell -H does. On a terminal it
// completes command names (qmp-shell-completion.ts) and keeps a history (qmp-shell-history.ts).
// No asynchronous QMP events: the passthrough is one request, one answer (QmpPassthrough.Execute;
// the node agent's `qmp` endpoint likewise), so there are none to show.
// The way to the VM's QEMU: --socket (a launcher's command socket), else a VM started here with
// `qvirt run`, else the cluster: the node agent of the VMI's node, which audits every call in its log.
import { createInterface } from 'node:readline';
import { homedir, userInfo } from 'node:os';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { QmpPassthroughClient } from '../proto/launcher-client.ts';
import { findRun } from '../local/run-registry.ts';
import { clusterFlags } from './kube-context.ts';
import { UserError } from '../kube/user-error.ts';
import { parseHmpShellLine, parseQmpShellArgv, parseQmpShellLine, type QmpCall, type ShellLine } from './qmp-shell-syntax.ts';
import { hmpHelpNames, hmpInfoNames, qmpCommandNames, shellCompleter } from './qmp-shell-completion.ts';
import { readShellHistory, shellHistoryPath, writeShellHistory, SHELL_HISTORY_SIZE } from './qmp-shell-history.ts';

const specs = {
  unsafe: { type: 'boolean', help: 'allow commands that change the VM (not just read-only queries and HMP `info`)' },
  hmp: { type: 'boolean', short: 'H', help: 'HMP commands (`info status`), sent as human-monitor-command; `info ...` only, unless --unsafe' },
  socket: { type: 'string', value: 'PATH', help: 'the launcher\'s command socket (default: a `qvirt run` VM of that name, else the cluster)' },
  timeout: { type: 'duration', value: 'DURATION', default: '30s', help: 'how long one command may take' },
  ...clusterFlags,
} as const;

const HELP_EXTRA = `A command is written as in QEMU's docs or its qmp-shell:
  query-status                                 a command without arguments
  query-named-block-nodes flat=true            qmp-shell's key=value: a.b=1 nests; integers, true/false,
                                               {...} and [...] are JSON, anything else a string
  human-monitor-command command-line="info status"   a quoted value may hold blanks
  query-named-block-nodes {"flat": true}       the arguments as one JSON object
  {"execute": "query-named-block-nodes", "arguments": {"flat": true}}   a QMP JSON object ("id" is ignored)
With -H every line is an HMP command (info status, info registers; cpu N picks the CPU of later lines).
Without COMMAND an interactive shell reads one command a line (quit or exit leaves it). On a terminal
Tab completes command names (from query-commands; with -H the info commands) and the history is kept
in $XDG_STATE_HOME/qvirt/qmp-history (hmp-history with -H; $XDG_STATE_HOME defaults to ~/.local/state).
The passthrough answers commands; it does not carry QMP's asynchronous events.

Examples:
  qvirt qmp testvm query-status
  qvirt qmp testvm query-named-block-nodes flat=true
  qvirt qmp testvm '{"execute": "query-named-block-nodes", "arguments": {"flat": true}}'
  qvirt qmp testvm -H info status
  qvirt qmp testvm -H -- info registers -a     # after --, words starting with - are the command's
  qvirt qmp testvm --unsafe system_reset
  qvirt qmp testvm                 # an interactive QMP shell
  qvirt qmp testvm -H              # an interactive HMP shell`;

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
  const { getVmi } = await import('../kube/handler-endpoint.ts');
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

/** What one line or the command line asks for; a UsageError says what is wrong with it. */
function callOf(parsed: ShellLine): QmpCall | 'cpu' | undefined {
  if (parsed.kind === 'error') throw new UsageError(parsed.message);
  if (parsed.kind === 'empty') return undefined;
  return parsed.kind === 'cpu' ? 'cpu' : parsed.call;
}

/** HMP's answer as HMP prints it (its lines end in CRLF). */
function hmpText(v: unknown): string {
  const text = typeof v === 'string' ? v.replace(/\r\n/g, '\n') : `${JSON.stringify(v, null, 2)}\n`;
  return !text || text.endsWith('\n') ? text : `${text}\n`;
}

/** The shell's completion names: best effort (none when QEMU does not answer). */
async function completionNames(target: QmpTarget, hmp: boolean, unsafe: boolean): Promise<string[]> {
  const hmpLine = async (line: string) => {
    const r = await target.execute('human-monitor-command', { 'command-line': line });
    return r.ok && typeof r.value === 'string' ? r.value : '';
  };
  try {
    if (!hmp) {
      const r = await target.execute('query-commands', undefined);
      return r.ok ? qmpCommandNames(r.value) : [];
    }
    return [...hmpInfoNames(await hmpLine('info')), ...(unsafe ? hmpHelpNames(await hmpLine('help')) : [])].sort();
  } catch {
    return [];
  }
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  if (help) {
    process.stdout.write(usage('qvirt qmp VMI [--unsafe] [-H] [COMMAND [KEY=VALUE... | ARGS-JSON] | QMP-JSON | HMP-COMMAND...]', 'Send QMP (or, with -H, HMP) commands to a VM\'s QEMU through its launcher (read-only unless --unsafe).', specs, HELP_EXTRA));
    return 0;
  }
  const [vmiRef, ...words] = args;
  if (!vmiRef) throw new UsageError('name the VMI: qvirt qmp VMI [COMMAND [KEY=VALUE... | ARGS-JSON]]');
  const hmp = flags.hmp;
  // The one-shot command is checked before anything connects.
  let oneShot: QmpCall | undefined;
  if (words.length) {
    const c = callOf(hmp ? parseHmpShellLine(words.join(' ')) : parseQmpShellArgv(words));
    if (c === 'cpu') throw new UsageError('cpu N only makes sense in the interactive HMP shell (qvirt qmp VMI -H)');
    if (!c) throw new UsageError('the command is empty');
    oneShot = c;
  }
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
      if (clusterAsked || !(err instanceof UserError)) throw err;
      throw new UserError(`no running VM "${vmiRef}" started with 'qvirt run' on this machine (give --socket PATH for another launcher), and in the cluster: ${err.message}`);
    }
  }
  let cpuIndex: number | undefined;
  const run = async (call: QmpCall): Promise<boolean> => {
    const a = hmp && cpuIndex !== undefined ? { ...call.arguments, 'cpu-index': cpuIndex } : call.arguments;
    const r = await target.execute(call.execute, a);
    if (!r.ok) { process.stderr.write(`${r.message}\n`); return false; }
    process.stdout.write(hmp ? hmpText(r.value) : `${JSON.stringify(r.value, null, 2)}\n`);
    return true;
  };
  try {
    if (oneShot) return (await run(oneShot)) ? 0 : 1;
    const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
    const historyPath = shellHistoryPath(process.env, homedir(), hmp);
    let history: string[] = [];
    let names: string[] = [];
    if (terminal) {
      try {
        history = readShellHistory(historyPath);
      } catch (err) {
        process.stderr.write(`cannot read the history ${historyPath}: ${(err as Error).message}\n`);
      }
      names = await completionNames(target, hmp, flags.unsafe);
    }
    const rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      prompt: `(${hmp ? 'HMP' : 'QEMU'} ${vmiRef}${flags.unsafe ? ', unsafe' : ''}) `,
      ...(terminal ? { completer: shellCompleter(names), history, historySize: SHELL_HISTORY_SIZE } : {}),
    });
    let historyWarned = false;
    rl.on('history', (h: string[]) => {
      try {
        writeShellHistory(historyPath, h);
      } catch (err) {
        if (!historyWarned) process.stderr.write(`cannot save the history ${historyPath}: ${(err as Error).message}\n`);
        historyWarned = true;
      }
    });
    // Piped input ends the reader while commands are still running: no prompt after that.
    let inputClosed = false;
    rl.once('close', () => { inputClosed = true; });
    // Ctrl-C on a terminal leaves the shell, as it leaves qmp-shell (Ctrl-D too: the input ends).
    rl.on('SIGINT', () => { process.stdout.write('\n'); rl.close(); });
    rl.prompt();
    try {
      for await (const line of rl) {
        const t = line.trim();
        if (t === 'quit' || t === 'exit') break;
        try {
          const parsed = hmp ? parseHmpShellLine(t) : parseQmpShellLine(t);
          if (parsed.kind === 'cpu') {
            // As qmp-shell: a CPU index that answers `info version` is the one later lines run for.
            const probe = await target.execute('human-monitor-command', { 'command-line': 'info version', 'cpu-index': parsed.index });
            if (probe.ok) cpuIndex = parsed.index;
            else process.stderr.write(`bad CPU index ${parsed.index}: ${probe.message}\n`);
          } else {
            const call = callOf(parsed);
            if (call && call !== 'cpu') await run(call);
          }
        } catch (err) {
          process.stderr.write(`${(err as Error).message}\n`);
        }
        if (!inputClosed) rl.prompt();
      }
    } finally {
      rl.close(); // a terminal's reader holds the process open until closed (quit breaks out of the loop)
    }
    return 0;
  } finally {
    await target.close();
  }
}

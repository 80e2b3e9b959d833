// Which `human-monitor-command` calls the QMP passthrough runs without `unsafe`: exactly one HMP
// `info` command (`info status`, `info registers`, `info qtree`, ...) — HMP's show-only family —
// or a bare `info` (the list of them). Everything else an HMP command line can say (stop, quit,
// savevm, `i` — an I/O port read, ...) stays behind `unsafe`. Pure.
//
// What HMP does with a command line (QEMU 7.2, measured through human-monitor-command): it runs
// ONE command — a `;` or a newline is not a separator there (`info status; stop` is the unknown
// info command `status;`; `info status\nstop` is "extraneous characters") — and it skips leading
// and repeated blanks. The rule still refuses `;` and every control character (newline, CR, tab,
// NUL, ...) rather than rely on that: a line that carries them is not a plain `info` line, and a
// future HMP that splits on them must not turn an allowed line into two commands. Commands match
// by their full name (`info` has no short alias), so the first word must be exactly `info`.

export type HmpReadOnly = { readOnly: true } | { readOnly: false; reason: string };

/** `human-monitor-command`'s own arguments (qapi/misc.json): the line, and the CPU it runs for. */
const HUMAN_MONITOR_COMMAND_ARGS: ReadonlySet<string> = new Set(['command-line', 'cpu-index']);

/** Whether one HMP command line is a single read-only `info` command. Pure. */
export function hmpCommandLineReadOnly(commandLine: string): HmpReadOnly {
  const control = /[\u0000-\u001f\u007f]/.exec(commandLine);
  if (control) return { readOnly: false, reason: `the HMP command line contains a control character (U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}): only a single \`info ...\` line is read-only` };
  if (commandLine.includes(';')) return { readOnly: false, reason: 'the HMP command line contains ";": only a single `info ...` line is read-only' };
  const first = commandLine.trimStart().split(' ', 1)[0] ?? '';
  if (first !== 'info') return { readOnly: false, reason: `HMP '${first || commandLine}' is not an \`info\` command: only \`info ...\` lines (e.g. "info status") are read-only` };
  return { readOnly: true };
}

/** Whether a `human-monitor-command` call's arguments make it read-only (a single `info` line). Pure. */
export function humanMonitorCommandReadOnly(args: Readonly<Record<string, unknown>> | undefined): HmpReadOnly {
  const line = args?.['command-line'];
  if (typeof line !== 'string') return { readOnly: false, reason: 'human-monitor-command needs "command-line": a string, e.g. {"command-line": "info status"}' };
  const other = Object.keys(args ?? {}).find((k) => !HUMAN_MONITOR_COMMAND_ARGS.has(k));
  if (other !== undefined) return { readOnly: false, reason: `human-monitor-command takes "command-line" and "cpu-index", not "${other}"` };
  const cpu = args?.['cpu-index'];
  if (cpu !== undefined && !(typeof cpu === 'number' && Number.isSafeInteger(cpu) && cpu >= 0)) return { readOnly: false, reason: '"cpu-index" must be a CPU number (0, 1, ...)' };
  return hmpCommandLineReadOnly(line);
}

// What a failed test file's output says went wrong, short enough to repeat at the end of a run:
// uvu prints each failed test as a `FAIL  "name"` block (the message, then a stack), amid whatever
// the file logged. A CI that keeps only the head and tail of a long run's output still shows these.

const MAX_MESSAGE_LINES = 8;
const MAX_LINE = 400;

const clip = (s: string) => (s.length > MAX_LINE ? `${s.slice(0, MAX_LINE)}…` : s);

/** uvu's output without its colours (FORCE_COLOR=0 still leaves some). */
export const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;]*m/g, '');

/**
 * One entry per uvu `FAIL` block in `output`: its title line, the message (at most
 * MAX_MESSAGE_LINES lines, JSON log lines left out), and the first stack frame outside
 * node_modules (where in the test file it failed).
 */
export function uvuFailures(output: string): string[] {
  const lines = stripAnsi(output).split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const title = /^\s*FAIL\s+(.*"\S.*)$/.exec(lines[i]!);
    if (!title) continue;
    const message: string[] = [];
    let frame: string | undefined;
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j]!;
      if (/^\s*FAIL\s+.*"/.test(line) || /^\s*Total:\s+\d+/.test(line)) break;
      const at = /^\s+at\s+(.*)$/.exec(line);
      if (at) {
        if (frame === undefined && !at[1]!.includes('node_modules') && !at[1]!.includes('node:internal')) frame = at[1]!;
        continue;
      }
      if (frame !== undefined || line.trim() === '' || line.trimStart().startsWith('{"level"')) continue;
      if (message.length < MAX_MESSAGE_LINES) message.push(clip(line.trim()));
    }
    out.push([`FAIL ${title[1]!.trim()}`, ...message.map((m) => `  ${m}`), ...(frame ? [`  at ${frame}`] : [])].join('\n'));
    i = j - 1;
  }
  return out;
}

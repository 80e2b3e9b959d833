// The history of `qvirt qmp`'s interactive shell, kept across sessions as QEMU's qmp-shell keeps
// ~/.qmp-shell_history: $XDG_STATE_HOME/qvirt/qmp-history (the HMP shell, -H: hmp-history), where
// $XDG_STATE_HOME defaults to ~/.local/state. One line per entry, oldest first, the last 1024; the
// file is private (0600: a line can carry a password, e.g. set_password), its directory 0700.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

export const SHELL_HISTORY_SIZE = 1024;

/** Where the shell's history lives. Pure. A relative $XDG_STATE_HOME is ignored, as the XDG spec says. */
export function shellHistoryPath(env: Readonly<Record<string, string | undefined>>, home: string, hmp: boolean): string {
  const state = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(home, '.local', 'state');
  return join(state, 'qvirt', hmp ? 'hmp-history' : 'qmp-history');
}

/** The saved history, newest first (node:readline's order); none when there is no file yet. */
export function readShellHistory(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return text.split('\n').filter(Boolean).slice(-SHELL_HISTORY_SIZE).reverse();
}

/** Saves node:readline's history (newest first) to `path`, oldest first. */
export function writeShellHistory(path: string, newestFirst: readonly string[]): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const lines = newestFirst.slice(0, SHELL_HISTORY_SIZE).filter((l) => !l.includes('\n')).reverse();
  writeFileSync(path, lines.length ? `${lines.join('\n')}\n` : '', { mode: 0o600 });
  chmodSync(path, 0o600);
}

// Tab completion for `qvirt qmp`'s shell, as QEMU's qmp-shell does it: the QMP shell completes the
// command names `query-commands` lists; the HMP shell (-H) completes `info X` from a bare `info`
// (HMP's list of info commands) and, where HMP's `help` may run (--unsafe), the command names and
// `help NAME` from it. A completion matches the whole line typed so far (qmp-shell clears
// readline's word delimiters for names like `query-`). Pure.

/** The names in `query-commands`' answer ([{"name": "query-status"}, ...]), sorted. */
export function qmpCommandNames(queryCommands: unknown): string[] {
  if (!Array.isArray(queryCommands)) return [];
  const names = queryCommands.flatMap((c: unknown) => (typeof c === 'object' && c !== null && typeof (c as { name?: unknown }).name === 'string' ? [(c as { name: string }).name] : []));
  return [...new Set(names)].sort();
}

/** `info X` for each line of HMP's bare `info` ("info status  -- show the current VM status"). */
export function hmpInfoNames(infoText: string): string[] {
  const names = infoText.split(/\r?\n/).flatMap((line) => {
    const [info, name] = line.trim().split(/\s+/);
    return info === 'info' && name ? [`info ${name}`] : [];
  });
  return [...new Set(names)].sort();
}

/**
 * HMP's command names from `help` ("balloon target -- request ..."; continuation lines start with a
 * tab; `q|quit` spelled both ways takes the long one), each also as `help NAME`; `info` itself is
 * left to hmpInfoNames.
 */
export function hmpHelpNames(helpText: string): string[] {
  const names = helpText.split(/\r?\n/).flatMap((line) => {
    if (!line || line.startsWith('[') || line.startsWith('\t')) return [];
    let name = line.split(/\s+/)[0] ?? '';
    if (!name || name === 'info') return [];
    if (name.includes('|')) {
      const [a = '', b = ''] = name.split('|');
      name = a.length === 1 ? b : a;
    }
    return name ? [name, `help ${name}`] : [];
  });
  return [...new Set([...names, 'help info'])].sort();
}

/** node:readline's completer over `names`: the ones the line so far begins. */
export function shellCompleter(names: readonly string[]): (line: string) => [string[], string] {
  return (line) => [names.filter((n) => n.startsWith(line)), line];
}

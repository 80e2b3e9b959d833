// A small, strict command-line flag parser shared by every qvirt command.
// Flags are declared once (name, type, default, help) so `--help` and parsing can never disagree,
// and an unknown or malformed flag is an error that names it — KubeVirt's Go binaries behave the same.

export type FlagType = 'string' | 'number' | 'boolean' | 'duration' | 'strings';

export interface FlagSpec {
  readonly type: FlagType;
  readonly help: string;
  readonly default?: string | number | boolean | readonly string[];
  /** A placeholder for the value in --help, e.g. FILE. */
  readonly value?: string;
  readonly short?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

type ValueOf<S extends FlagSpec> = S['type'] extends 'string'
  ? string | undefined
  : S['type'] extends 'number' | 'duration'
    ? number | undefined
    : S['type'] extends 'boolean'
      ? boolean
      : string[];

export type ParsedFlags<S extends FlagSpecs> = { -readonly [K in keyof S]: ValueOf<S[K]> };

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Parses a Go-style duration (`240s`, `3m`, `1h30m`, `500ms`) or a bare number of seconds, into seconds. */
export function parseDuration(text: string, flag: string): number {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    const unit = m[2];
    total += unit === 'ms' ? n / 1000 : unit === 's' ? n : unit === 'm' ? n * 60 : n * 3600;
    consumed += m[0].length;
  }
  if (consumed !== text.length || consumed === 0) throw new UsageError(`--${flag}: "${text}" is not a duration (examples: 30s, 3m, 1h)`);
  return total;
}

/** How a command's flags read on the command line, and the errors it words its own way. */
export interface ArgvGrammar {
  /** The long name (and an inline `=value`) a short flag such as `-n` or `-n=x` stands for; undefined: unknown. */
  shortFlag(arg: string): { readonly name: string; readonly inline?: string | undefined } | undefined;
  /** Whether `name` is a flag, and whether it is a boolean (its value only ever inline); undefined: unknown. */
  flagKind(name: string): 'boolean' | 'value' | undefined;
  unknownShortFlag(arg: string): Error;
  unknownFlag(name: string): Error;
  missingValue(name: string): Error;
}

/**
 * Walks argv: `--flag value`, `--flag=value`, `-s value`, and a boolean `--flag` or `--flag=false`,
 * handing each flag's name and value (a boolean's inline value, or undefined) to `set` in order;
 * everything that is not a flag comes back in `args` in order, `--` ends flags, `--help`/`-h` set `help`.
 */
export function scanArgv(argv: readonly string[], grammar: ArgvGrammar, set: (name: string, value: string | undefined) => void): { args: string[]; help: boolean } {
  const args: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') { args.push(...argv.slice(i + 1)); break; }
    if (a === '--help' || a === '-h') { help = true; continue; }
    if (!a.startsWith('-') || a === '-') { args.push(a); continue; }
    let name: string;
    let inline: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
      inline = eq >= 0 ? a.slice(eq + 1) : undefined;
    } else {
      const s = grammar.shortFlag(a);
      if (!s) throw grammar.unknownShortFlag(a);
      name = s.name;
      inline = s.inline;
    }
    const kind = grammar.flagKind(name);
    if (!kind) throw grammar.unknownFlag(name);
    if (kind === 'boolean') { set(name, inline); continue; }
    const value = inline ?? argv[++i];
    if (value === undefined) throw grammar.missingValue(name);
    set(name, value);
  }
  return { args, help };
}

/**
 * Parses argv against the specs. Accepts `--flag value`, `--flag=value`, `-s value`, boolean `--flag`
 * and `--flag=false`; everything that is not a flag is returned in `args` in order. `--` ends flags.
 */
export function parseFlags<S extends FlagSpecs>(specs: S, argv: readonly string[]): { flags: ParsedFlags<S>; args: string[]; help: boolean } {
  const flags: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.type === 'boolean') flags[name] = spec.default ?? false;
    else if (spec.type === 'strings') flags[name] = [...((spec.default as readonly string[] | undefined) ?? [])];
    else if (spec.type === 'duration' && typeof spec.default === 'string') flags[name] = parseDuration(spec.default, name);
    else flags[name] = spec.default;
  }
  const byShort = new Map(Object.entries(specs).filter(([, s]) => s.short).map(([n, s]) => [s.short!, n]));
  const grammar: ArgvGrammar = {
    shortFlag: (a) => { const name = byShort.get(a.slice(1)); return name === undefined ? undefined : { name }; },
    flagKind: (name) => { const spec = specs[name]; return spec === undefined ? undefined : spec.type === 'boolean' ? 'boolean' : 'value'; },
    unknownShortFlag: (a) => new UsageError(`unknown flag ${a}`),
    unknownFlag: (name) => new UsageError(`unknown flag --${name}`),
    missingValue: (name) => { const spec = specs[name]!; return new UsageError(`--${name} needs a value${spec.value ? ` (${spec.value})` : ''}`); },
  };
  const { args, help } = scanArgv(argv, grammar, (name, value) => {
    const spec = specs[name]!;
    switch (spec.type) {
      case 'boolean':
        if (value === undefined) flags[name] = true;
        else if (value === 'true' || value === 'false') flags[name] = value === 'true';
        else throw new UsageError(`--${name}: expected true or false, got "${value}"`);
        break;
      case 'string': flags[name] = value; break;
      case 'strings': (flags[name] as string[]).push(value!); break;
      case 'number': {
        const n = Number(value);
        if (!Number.isFinite(n)) throw new UsageError(`--${name}: "${value}" is not a number`);
        flags[name] = n;
        break;
      }
      case 'duration': flags[name] = parseDuration(value!, name); break;
    }
  });
  return { flags: flags as ParsedFlags<S>, args, help };
}

/** Renders `--help` text from the same specs the parser uses. */
export function usage(command: string, summary: string, specs: FlagSpecs, extra = ''): string {
  const rows = Object.entries(specs).map(([name, s]) => {
    const left = `${s.short ? `-${s.short}, ` : '    '}--${name}${s.type === 'boolean' ? '' : ` ${s.value ?? s.type.toUpperCase()}`}`;
    const def = s.default === undefined || s.default === false || (Array.isArray(s.default) && s.default.length === 0) ? '' : ` (default ${Array.isArray(s.default) ? s.default.join(',') : String(s.default)})`;
    return `  ${left.padEnd(38)} ${s.help}${def}`;
  });
  return `Usage: ${command}\n\n${summary}\n\nFlags:\n${rows.join('\n')}\n      --help                             show this help\n${extra ? `\n${extra}\n` : ''}`;
}

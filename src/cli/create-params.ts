// What virtctl's `create` verbs share (KubeVirt's pkg/virtctl/create/params): the `key:value,key:value`
// parameters of flags like --volume-containerdisk, `prefix/name` splitting, the error shape
// `failed to parse "--FLAG" flag: ...`, random name suffixes, and a cobra-like flag parser that records
// which flags were set (virtctl decides much by `Flags().Changed`). Pure, apart from Math.random.
import { canonicalQuantity, QuantityError } from '../api/quantity.ts';
import { scanArgv, type ArgvGrammar } from '../flags/flags.ts';
import { UserError } from '../kube/user-error.ts';

/** A failure virtctl's create verbs report; the message is virtctl's. Exit code 1, as virtctl. */
export class CreateError extends UserError {
  override name = 'CreateError';
}

export function flagErr(flag: string, message: string): CreateError {
  return new CreateError(`failed to parse "--${flag}" flag: ${message}`);
}

/** resource.ParseQuantity's error text. */
export const QUANTITY_FORMAT_ERR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** The canonical form Kubernetes serializes a quantity in, or QuantityFormatError with resource.ParseQuantity's text. */
export function quantity(text: string): string {
  try {
    return canonicalQuantity(text);
  } catch (err) {
    if (err instanceof QuantityError) throw new QuantityFormatError(QUANTITY_FORMAT_ERR);
    throw err;
  }
}

export class QuantityFormatError extends Error {
  override name = 'QuantityFormatError';
}

/** k8s.io/apimachinery/pkg/util/rand.String: 5 characters of its alphabet (no vowels, no 0/1/3). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
export function randString(n: number, random: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHANUMS[Math.floor(random() * ALPHANUMS.length)]!;
  return s;
}
export const RAND_SUFFIX_RE = /^[bcdfghjklmnpqrstvwxz2456789]{5}$/;

/** params.split: `k:v,k:v` into a map (later keys win); errors as virtctl's. */
export function splitParams(text: string): Map<string, string> {
  if (text === '') throw new Error('params may not be empty');
  const out = new Map<string, string>();
  for (const param of text.split(',')) {
    const i = param.indexOf(':');
    if (i < 0) throw new Error(`params need to have at least one colon: ${param}`);
    out.set(param.slice(0, i), param.slice(i + 1));
  }
  return out;
}

export type ParamType = 'string' | 'uint' | 'quantity' | 'strings';
export type ParamSchema = Readonly<Record<string, ParamType>>;
export type ParamValue = string | number | string[];

/**
 * params.Map: the parameters of one flag value against a schema (its keys in virtctl's struct order).
 * Quantities come back canonical, uints as numbers, string lists split on ';'. Unknown keys are an error.
 */
export function mapParams(flag: string, text: string, schema: ParamSchema): Record<string, ParamValue | undefined> {
  let params: Map<string, string>;
  try {
    params = splitParams(text);
  } catch (err) {
    throw flagErr(flag, (err as Error).message);
  }
  const out: Record<string, ParamValue | undefined> = {};
  for (const [key, type] of Object.entries(schema)) {
    const v = params.get(key);
    if (v === undefined) continue;
    switch (type) {
      case 'string': out[key] = v; break;
      case 'strings': out[key] = v.split(';'); break;
      case 'uint': out[key] = parseUint(v, 32, (m) => flagErr(flag, `failed to parse param "${key}": ${m}`)); break;
      case 'quantity':
        try {
          out[key] = quantity(v);
        } catch (err) {
          throw flagErr(flag, `failed to parse param "${key}": ${(err as Error).message}`);
        }
        break;
    }
    params.delete(key);
  }
  if (params.size > 0) throw flagErr(flag, `unknown param(s): ${[...params].map(([k, v]) => `${k}:${v}`).join(',')}`);
  return out;
}

/** strconv.ParseUint(text, 10, bits) with Go's error text handed to `fail`. */
export function parseUint(text: string, bits: number, fail: (message: string) => Error): number {
  if (!/^\d+$/.test(text)) throw fail(`strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = BigInt(text);
  if (n >= 1n << BigInt(bits)) throw fail(`strconv.ParseUint: parsing ${JSON.stringify(text)}: value out of range`);
  return Number(n);
}

/** strconv.ParseInt(text, 0, 64) as pflag's Int64 uses it. */
export function parseInt64(text: string, fail: (message: string) => Error): number {
  if (!/^[+-]?\d+$/.test(text)) throw fail(`strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = BigInt(text);
  if (n >= 1n << 63n || n < -(1n << 63n)) throw fail(`strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`);
  return Number(n);
}

/** params.GetParamByName: the raw value of one key, or a NotFound error (`NAME must be specified`). */
export function getParamByName(name: string, text: string): { value: string } | { error: string; notFound: boolean } {
  let params: Map<string, string>;
  try {
    params = splitParams(text);
  } catch (err) {
    return { error: (err as Error).message, notFound: false };
  }
  const value = params.get(name);
  return value === undefined ? { error: `${name} must be specified`, notFound: true } : { value };
}

/** params.SplitPrefixedName: `name` or `prefix/name`. */
export function splitPrefixedName(text: string): { prefix: string; name: string } {
  const s = text.split('/');
  let prefix = '';
  let name: string;
  if (s.length === 1) name = s[0]!;
  else if (s.length === 2) { prefix = s[0]!; name = s[1]!; }
  else throw new Error(`invalid count ${s.length - 1} of slashes in prefix/name`);
  if (name === '') throw new Error('name cannot be empty');
  return { prefix, name };
}

// ---- a cobra-like flag parser that remembers what was set ----

export type CreateFlagType = 'string' | 'bool' | 'stringArray' | 'stringSlice' | 'int64' | 'uint32';
export interface CreateFlag {
  readonly type: CreateFlagType;
  readonly help: string;
  readonly default?: string | boolean | number;
}
export type CreateFlags = Readonly<Record<string, CreateFlag>>;

export interface ParsedCreateFlags {
  readonly values: Map<string, string | boolean | number | string[]>;
  /** cobra's `Flags().Changed`: set on the command line (mutable: virtctl sets some itself). */
  readonly changed: Set<string>;
  readonly help: boolean;
  readonly args: string[];
}

/** The global flags virtctl's create verbs accept: -n only matters (it makes the object namespaced). */
export const GLOBAL_CREATE_FLAGS: CreateFlags = {
  namespace: { type: 'string', help: 'the namespace of the object (virtctl: -n); makes instance types and preferences namespaced' },
  kubeconfig: { type: 'string', help: 'accepted and ignored: create only prints a manifest' },
};

function invalidArg(value: string, flag: string, message: string): CreateError {
  return new CreateError(`invalid argument ${JSON.stringify(value)} for "--${flag}" flag: ${message}`);
}

/** pflag's parsing for the types create uses, on the shared argv scan; errors as pflag's. */
export function parseCreateFlags(specs: CreateFlags, argv: readonly string[]): ParsedCreateFlags {
  const all: CreateFlags = { ...specs, ...GLOBAL_CREATE_FLAGS };
  const values = new Map<string, string | boolean | number | string[]>();
  for (const [name, s] of Object.entries(all)) {
    if (s.type === 'stringArray' || s.type === 'stringSlice') values.set(name, []);
    else if (s.default !== undefined) values.set(name, s.default);
    else values.set(name, s.type === 'bool' ? false : s.type === 'string' ? '' : 0);
  }
  const changed = new Set<string>();
  const grammar: ArgvGrammar = {
    shortFlag: (a) => (a === '-n' || a.startsWith('-n=') ? { name: 'namespace', inline: a.startsWith('-n=') ? a.slice(3) : undefined } : undefined),
    flagKind: (name) => { const spec = all[name]; return spec === undefined ? undefined : spec.type === 'bool' ? 'boolean' : 'value'; },
    unknownShortFlag: (a) => new CreateError(`unknown shorthand flag: '${a.slice(1, 2)}' in ${a}`),
    unknownFlag: (name) => new CreateError(`unknown flag: --${name}`),
    missingValue: (name) => new CreateError(`flag needs an argument: --${name}`),
  };
  const { args, help } = scanArgv(argv, grammar, (name, inline) => {
    const spec = all[name]!;
    if (spec.type === 'bool') {
      const v = inline ?? 'true';
      if (!['true', 'false', '1', '0', 't', 'f', 'TRUE', 'FALSE', 'True', 'False', 'T', 'F'].includes(v)) {
        throw invalidArg(v, name, `strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
      }
      values.set(name, ['true', '1', 't', 'TRUE', 'True', 'T'].includes(v));
      changed.add(name);
      return;
    }
    const value = inline!;
    switch (spec.type) {
      case 'string': values.set(name, value); break;
      case 'stringArray': (values.get(name) as string[]).push(value); break;
      case 'stringSlice': (values.get(name) as string[]).push(...(value === '' ? [] : value.split(','))); break;
      case 'int64': values.set(name, parseInt64(value, (m) => invalidArg(value, name, m))); break;
      case 'uint32': values.set(name, parseUint(value, 32, (m) => invalidArg(value, name, m))); break;
    }
    changed.add(name);
  });
  return { values, changed, help, args };
}

/** cobra's MarkFlagsMutuallyExclusive check, groups checked in sorted order as cobra does. */
export function checkExclusiveGroups(groups: readonly (readonly string[])[], changed: ReadonlySet<string>): void {
  const sorted = [...groups].sort((a, b) => a.join(' ').localeCompare(b.join(' ')));
  for (const group of sorted) {
    const set = group.filter((f) => changed.has(f)).sort();
    if (set.length > 1) {
      throw new CreateError(`if any flags in the group [${group.join(' ')}] are set none of the others can be; [${set.join(' ')}] were all set`);
    }
  }
}

/** cobra's MarkFlagRequired check. */
export function checkRequired(required: readonly string[], changed: ReadonlySet<string>): void {
  const missing = required.filter((f) => !changed.has(f)).sort();
  if (missing.length > 0) throw new CreateError(`required flag(s) ${missing.map((m) => `"${m}"`).join(', ')} not set`);
}

export function usageText(use: string, long: string, specs: CreateFlags, examples: string): string {
  const rows = Object.entries(specs).map(([name, s]) => {
    const left = `      --${name}${s.type === 'bool' ? '' : ` ${s.type}`}`;
    const def = s.default === undefined || s.default === '' || s.default === false ? '' : ` (default ${typeof s.default === 'string' ? JSON.stringify(s.default) : String(s.default)})`;
    return `${left.padEnd(42)} ${s.help.replaceAll('\n', `\n${' '.repeat(43)}`)}${def}`;
  });
  return `${long}\n\nUsage:\n  ${use} [flags]\n\nExamples:\n${examples}\n\nFlags:\n${rows.join('\n')}\n  -h, --help${' '.repeat(32)}help\n  -n, --namespace string${' '.repeat(20)}the namespace of the object\n`;
}

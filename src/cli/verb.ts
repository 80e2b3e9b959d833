// The common shape of a cluster verb (virtctl's commands): its flags plus --kubeconfig and
// --namespace, `--help` rendered from the same specs, an exact number of positional arguments.
import { parseFlags, usage, UsageError, type FlagSpecs, type ParsedFlags } from '../flags/flags.ts';
import { clusterFlags } from './kube-context.ts';

export interface VerbSpec<S extends FlagSpecs> {
  /** e.g. `qvirt start (VM) [flags]` */
  readonly use: string;
  readonly summary: string;
  readonly flags: S;
  /** Names of the positional arguments, e.g. ['VM']. */
  readonly args: readonly string[];
  readonly examples?: string;
}

export type VerbFlags<S extends FlagSpecs> = ParsedFlags<S & typeof clusterFlags>;

/** Parses a verb's argv; undefined when --help was asked for (and printed). */
export function parseVerb<S extends FlagSpecs>(spec: VerbSpec<S>, argv: readonly string[]): { flags: VerbFlags<S>; args: string[] } | undefined {
  const specs = { ...spec.flags, ...clusterFlags } as S & typeof clusterFlags;
  const { flags, args, help } = parseFlags(specs, argv);
  if (help) {
    process.stdout.write(usage(spec.use, spec.summary, specs, spec.examples ? `Examples:\n${spec.examples}` : ''));
    return undefined;
  }
  if (args.length !== spec.args.length) {
    const want = spec.args.join(' ');
    throw new UsageError(args.length < spec.args.length
      ? `missing ${spec.args.slice(args.length).join(' ')}: usage: ${spec.use} (see --help)`
      : `expected ${spec.args.length} argument${spec.args.length === 1 ? '' : 's'} (${want}), got ${args.length}: ${args.join(' ')}`);
  }
  return { flags, args };
}

// `qvirt create vm|instancetype|preference`: virtctl's create verbs. They print a manifest as YAML
// and never talk to a cluster (`qvirt create vm ... | kubectl create -f -`).
import yaml from 'js-yaml';
import { createInstancetype, createPreference, INSTANCETYPE_EXAMPLES, INSTANCETYPE_FLAGS, PREFERENCE_EXAMPLES, PREFERENCE_FLAGS } from './create-instancetype.ts';
import { CreateError, parseCreateFlags, usageText, type CreateFlags, type ParsedCreateFlags } from './create-params.ts';
import { createVM, VM_EXAMPLES, VM_FLAGS, VM_LONG } from './create-vm.ts';

interface Kind {
  readonly long: string;
  readonly flags: CreateFlags;
  readonly examples: string;
  readonly build: (f: ParsedCreateFlags) => { object: Record<string, unknown>; warnings: string[] };
}

const KINDS: Record<string, Kind> = {
  vm: {
    long: VM_LONG, flags: VM_FLAGS, examples: VM_EXAMPLES,
    build: (f) => { const r = createVM(f); return { object: r.vm, warnings: r.warnings }; },
  },
  instancetype: {
    long: 'Create VirtualMachineInstancetype or VirtualMachineClusterInstancetype manifest.', flags: INSTANCETYPE_FLAGS, examples: INSTANCETYPE_EXAMPLES,
    build: (f) => ({ object: createInstancetype(f), warnings: [] }),
  },
  preference: {
    long: 'Create a VirtualMachinePreference or VirtualMachineClusterPreference manifest.', flags: PREFERENCE_FLAGS, examples: PREFERENCE_EXAMPLES,
    build: (f) => ({ object: createPreference(f), warnings: [] }),
  },
};

const HELP = `Create a manifest for the specified Kind.

Usage:
  qvirt create [command]

Available Commands:
  instancetype Create VirtualMachineInstancetype or VirtualMachineClusterInstancetype manifest.
  preference   Create a VirtualMachinePreference or VirtualMachineClusterPreference manifest.
  vm           Create a VirtualMachine manifest.
`;

const WITH_VALUE = new Set(['-n', '--namespace', '--kubeconfig']);

/** The YAML of a manifest: keys sorted as sigs.k8s.io/yaml writes them, nothing undefined. */
export function toYAML(object: unknown): string {
  return yaml.dump(JSON.parse(JSON.stringify(object)), { sortKeys: true, lineWidth: -1, noRefs: true });
}

export async function main(argv: string[]): Promise<number> {
  // The kind is the first argument that is no flag (global flags may come before it).
  let at = -1;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (WITH_VALUE.has(a)) { i++; continue; }
    if (!a.startsWith('-')) { at = i; break; }
  }
  const kindName = at >= 0 ? argv[at]! : undefined;
  if (kindName === undefined) {
    process.stdout.write(HELP);
    return 0;
  }
  const kind = KINDS[kindName];
  if (!kind) throw new CreateError(`unknown command "${kindName}" for "qvirt create"`);
  const rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
  const f = parseCreateFlags(kind.flags, rest);
  if (f.help) {
    process.stdout.write(usageText(`qvirt create ${kindName}`, kind.long, kind.flags, kind.examples));
    return 0;
  }
  if (f.args.length > 0) throw new CreateError(`unknown command "${f.args[0]}" for "qvirt create ${kindName}"`);
  const { object, warnings } = kind.build(f);
  for (const w of warnings) process.stderr.write(`${w}\n`);
  process.stdout.write(toYAML(object));
  return 0;
}

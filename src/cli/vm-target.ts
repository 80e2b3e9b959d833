// The `TYPE/NAME[/NAMESPACE]` target of virtctl's port-forward, ssh and scp (pkg/virtctl/portforward
// ParseTarget), and ssh's `[USER@]TYPE/NAME[/NAMESPACE]` (pkg/virtctl/ssh ParseTarget). Pure.
// virtctl ≥ 1.7 no longer reads the old `TYPE/NAME.NAMESPACE` form (its --help still mentions it): a
// dot is part of the name, as there; a name with a dot that is not found gets a hint (dottedHint).
import { UsageError } from '../flags/flags.ts';

export type TargetKind = 'vm' | 'vmi';

export interface VmTarget {
  readonly kind: TargetKind;
  readonly name: string;
  /** Absent: the --namespace flag's, else the kubeconfig context's. */
  readonly namespace?: string;
}

/** virtctl's normalizeKind: vm/vmi in singular, plural and long forms, case-insensitive. */
export function normalizeKind(kind: string): TargetKind {
  switch (kind.toLowerCase()) {
    case 'vm': case 'vms': case 'virtualmachine': case 'virtualmachines': return 'vm';
    case 'vmi': case 'vmis': case 'virtualmachineinstance': case 'virtualmachineinstances': return 'vmi';
  }
  throw new UsageError(`unsupported resource type '${kind}': use vm or vmi (virtualmachine, virtualmachineinstance; singular or plural)`);
}

/** `type/name[/namespace]`, with virtctl's checks and messages. */
export function parseTarget(target: string): VmTarget {
  if (target === '') throw new UsageError('target cannot be empty: give TYPE/NAME[/NAMESPACE], e.g. vmi/myvm');
  const parts = target.split('/');
  if (parts.length === 1) {
    let example = `vmi/${target}`;
    try { normalizeKind(target); example = `${target}/NAME`; } catch { /* a name: vmi/NAME */ }
    throw new UsageError(`target must contain type and name separated by '/': "${target}" (e.g. ${example})`);
  }
  if (parts.length > 3) throw new UsageError(`target is not valid with more than two '/': "${target}" (TYPE/NAME[/NAMESPACE])`);
  const [kindText, name, namespace] = parts as [string, string, string | undefined];
  if (namespace !== undefined && namespace === '') throw new UsageError(`namespace cannot be empty: "${target}"`);
  const kind = normalizeKind(kindText);
  if (name === '') throw new UsageError(`name cannot be empty: "${target}"`);
  return namespace === undefined ? { kind, name } : { kind, name, namespace };
}

/** `[username@]type/name[/namespace]` (ssh, and scp's remote side before its ':'). */
export function parseSshTarget(arg: string): { target: VmTarget; username?: string } {
  const at = arg.split('@');
  let rest = arg;
  let username: string | undefined;
  if (at.length > 1) {
    username = at[0]!;
    if (username === '') throw new UsageError(`expected username before '@': "${arg}"`);
    rest = at[1]!;
  }
  if (rest === '') throw new UsageError(`expected target after '@': "${arg}"`);
  const target = parseTarget(rest);
  return username === undefined ? { target } : { target, username };
}

/** The API resource of a target kind. */
export function resourceOf(kind: TargetKind): 'virtualmachines' | 'virtualmachineinstances' {
  return kind === 'vm' ? 'virtualmachines' : 'virtualmachineinstances';
}

/** The kind's name in messages (VirtualMachine, VirtualMachineInstance). */
export function kindName(kind: TargetKind): 'VirtualMachine' | 'VirtualMachineInstance' {
  return kind === 'vm' ? 'VirtualMachine' : 'VirtualMachineInstance';
}

/**
 * For a target given without a namespace whose name has a dot: what the old `type/name.namespace`
 * form would have meant, as a hint for a not-found error (`; did you mean vmi/name/namespace?`).
 */
export function dottedHint(target: VmTarget): string {
  if (target.namespace !== undefined) return '';
  const dot = target.name.indexOf('.');
  if (dot <= 0 || dot === target.name.length - 1) return '';
  return `; the old TYPE/NAME.NAMESPACE form is gone (a dot is part of the name): did you mean ${target.kind}/${target.name.slice(0, dot)}/${target.name.slice(dot + 1)}?`;
}

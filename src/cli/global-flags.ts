// virtctl's global flags may come before the verb (`virtctl -n ns console vm`, and as the kubectl
// plugin `kubectl virt --kubeconfig FILE start vm`: kubectl hands everything after `virt` to the
// plugin). qvirt's verbs read --kubeconfig and --namespace/-n themselves, so the ones before the
// verb are moved right after it. Kept free of imports: main.ts loads it for every command. Pure.

const WITH_VALUE = new Set(['--kubeconfig', '--namespace', '-n']);

/** `[--kubeconfig F] [-n NS] VERB ARGS...` → `VERB --kubeconfig F -n NS ARGS...` (before any `--`); anything else unchanged. */
export function hoistGlobalFlags(argv: readonly string[]): string[] {
  const moved: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    if (WITH_VALUE.has(a) && i + 1 < argv.length) { moved.push(a, argv[i + 1]!); i += 2; continue; }
    if (/^--(kubeconfig|namespace)=/.test(a)) { moved.push(a); i += 1; continue; }
    break;
  }
  if (moved.length === 0 || i >= argv.length || argv[i]!.startsWith('-')) return [...argv];
  return [argv[i]!, ...moved, ...argv.slice(i + 1)];
}

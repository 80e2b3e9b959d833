// The house's rooms (docs/architecture.md): the components, the rooms of src/ that are components or
// assemble them, and the shared modules every room may use. A file belongs to the longest of these
// its path starts with.

/** The components at the top level. */
export const COMPONENTS = ['qmp', 'launcher', 'handler', 'controller'] as const;

/** What every room may share: the contracts and plumbing, no component's room. */
export const SHARED = ['src/api', 'src/kube', 'src/proto', 'src/log', 'src/net', 'src/pki', 'src/metrics', 'src/flags', 'src/version', 'src/process'] as const;

/** Components of their own under src/: the embedded API server, virt-api and its admission. */
export const SRC_COMPONENTS = ['src/apiserver', 'src/virt-api', 'src/admission'] as const;

/** The rooms that assemble the others: the local node and mode, the CLI, the install manifests. */
export const ASSEMBLERS = ['src/local', 'src/cli', 'src/deploy'] as const;

/** Every room of src/ that is not shared. */
export const SRC_ROOMS: readonly string[] = [...SRC_COMPONENTS, ...ASSEMBLERS];

const ALL: readonly string[] = [...COMPONENTS, ...SHARED, ...SRC_ROOMS, 'scripts', 'test', 'bench'];

export const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** The room a repo path belongs to (undefined: none, e.g. package.json). */
export function roomOf(path: string): string | undefined {
  let best: string | undefined;
  for (const r of ALL) if (under(path, r) && (!best || r.length > best.length)) best = r;
  return best;
}

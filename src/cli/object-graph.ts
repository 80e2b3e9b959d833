// `qvirt objectgraph NAME [--vmi]`: what a VM or VMI depends on (virtctl objectgraph), built by the
// same pure function virt-api's objectgraph route serves (src/api/object-graph.ts) from the objects
// the user can read: the VM or VMI and the namespace's launcher pods. Like qvirt's other verbs it
// needs no aggregation layer, and so no ObjectGraph feature gate either: that gate guards virt-api's
// route, and this reads nothing the user could not read with kubectl.
import { dump } from 'js-yaml';
import type { VirtualMachine } from '../api/types.ts';
import { LAUNCHER_POD_SELECTOR } from '../api/constants.ts';
import { launcherPodOf, virtualMachineInstanceObjectGraph, virtualMachineObjectGraph, OBJECT_GRAPH_DEPENDENCY_LABEL, type ObjectGraphOptions } from '../api/object-graph.ts';
import type { KubeObject } from '../kube/client.ts';
import { kubeError } from '../kube/kube-error.ts';
import { getVmi } from '../kube/handler-endpoint.ts';
import { Resources } from '../kube/resource.ts';
import { UsageError } from '../flags/flags.ts';
import { withCluster } from './kube-context.ts';
import { parseVerb } from './verb.ts';

/** `--selector k=v` (repeatable, or `k=v,k2=v2` as virtctl's StringToString flag takes it) → matchLabels. */
export function selectorFlag(values: readonly string[]): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  for (const pair of values.flatMap((v) => v.split(','))) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--selector: ${JSON.stringify(pair)} must be KEY=VALUE (e.g. ${OBJECT_GRAPH_DEPENDENCY_LABEL}=storage)`);
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return Object.keys(labels).length ? labels : undefined;
}

export async function main(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt objectgraph (VM|VMI) [flags]',
    summary: 'Returns the graph of the objects a VM (or with --vmi, a VMI) depends on (virtctl objectgraph).',
    flags: {
      vmi: { type: 'boolean', help: 'the graph of the VMI instead of the VM' },
      'exclude-optional': { type: 'boolean', help: 'leave out optional nodes (instance types, preferences, network attachment definitions)' },
      selector: { type: 'strings', value: 'KEY=VALUE', help: `keep the nodes whose labels match (e.g. ${OBJECT_GRAPH_DEPENDENCY_LABEL}=storage); repeatable` },
      output: { type: 'string', short: 'o', default: 'json', value: 'FORMAT', help: 'json or yaml' },
    },
    args: ['NAME'],
    examples: `  # what my-vm depends on, as JSON:\n  qvirt objectgraph my-vm\n  # only its storage:\n  qvirt objectgraph my-vm --selector ${OBJECT_GRAPH_DEPENDENCY_LABEL}=storage -o yaml`,
  }, argv);
  if (!v) return 0;
  const output = v.flags.output ?? 'json';
  if (output !== 'json' && output !== 'yaml') throw new UsageError(`--output: unsupported output format: ${output} (must be 'json' or 'yaml')`);
  const matchLabels = selectorFlag(v.flags.selector ?? []);
  const options: ObjectGraphOptions = { includeOptionalNodes: !v.flags['exclude-optional'], ...(matchLabels ? { labelSelector: { matchLabels } } : {}) };
  const name = v.args[0]!;
  return withCluster(v.flags, async (ctx) => {
    const launcherPod = async () => {
      const pods = await ctx.client.list<KubeObject>(Resources.pods, { namespace: ctx.namespace, labelSelector: LAUNCHER_POD_SELECTOR })
        .catch((err: unknown) => { throw kubeError(err, undefined, ctx.server); });
      return launcherPodOf(pods.items, name);
    };
    let graph;
    if (v.flags.vmi) {
      graph = virtualMachineInstanceObjectGraph(await getVmi(ctx, name), await launcherPod(), options);
    } else {
      const vm = await ctx.client.get<VirtualMachine & KubeObject>(Resources.virtualMachines, ctx.namespace, name)
        .catch((err: unknown) => { throw kubeError(err, { kind: 'VirtualMachine', name, namespace: ctx.namespace }, ctx.server); });
      graph = virtualMachineObjectGraph(vm, await launcherPod(), options);
    }
    process.stdout.write(output === 'json' ? `${JSON.stringify(graph, null, 2)}\n` : dump(graph, { lineWidth: -1 }));
    return 0;
  });
}

// `qvirt evacuate-cancel vm|vmi NAME [--dry-run]` (virtctl evacuate-cancel): takes back the
// evacuation an eviction asked for (the VMI's `status.evacuationNodeName`), so the evacuation
// controller migrates it no more. The same test-guarded JSON patch virt-api's evacuate/cancel sends
// (src/api/eviction.ts), here with the user's own credentials, as qvirt's verbs need no aggregation
// layer. A node that carries the drain taint evacuates every VMI on it whatever the mark says: that
// is refused as virt-api refuses it, where the user may read the node.
import type { VirtualMachineInstance } from '../api/types.ts';
import { defaultClusterConfig } from '../api/cluster-config.ts';
import { evacuateCancelPatch, evacuateCancelRefusal, evacuationNodeOf, type TaintedNode } from '../api/eviction.ts';
import { KubeApiError, isNotFound, type KubeObject } from '../kube/client.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { getVmi } from '../kube/handler-endpoint.ts';
import { Resources } from '../kube/resource.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { parseResourceType } from './vmi-ops.ts';
import { parseVerb } from './verb.ts';

/** KubeVirt's default `migrations.nodeDrainTaintKey`, for a user who may not read the KubeVirt CR. */
const DEFAULT_DRAIN_TAINT_KEY = defaultClusterConfig().migrations.nodeDrainTaintKey;

/** The node's drain taint refusal, if the user may read the node (a 403 skips the check: the patch is what matters). */
async function drainTaintRefusal(ctx: ClusterContext, vmi: VirtualMachineInstance, taintKey: string): Promise<string | undefined> {
  const nodeName = evacuationNodeOf(vmi);
  try {
    return evacuateCancelRefusal(nodeName, await ctx.client.get<KubeObject & TaintedNode>(Resources.nodes, undefined, nodeName), taintKey);
  } catch (err) {
    if ((err instanceof KubeApiError && err.code === 403) || isNotFound(err)) return undefined;
    throw kubeError(err, { kind: 'Node', name: nodeName }, ctx.server);
  }
}

export async function main(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt evacuate-cancel vm|vmi (NAME) [flags]',
    summary: 'Cancel the evacuation of a VM or VMI that an eviction (a node drain) marked for live migration away from its node.',
    flags: {
      'dry-run': { type: 'boolean', help: 'check and send the patch as a dry run, change nothing' },
      'drain-taint-key': { type: 'string', value: 'KEY', default: DEFAULT_DRAIN_TAINT_KEY, help: 'the cluster\'s migrations.nodeDrainTaintKey' },
    },
    args: ['TYPE', 'NAME'],
    examples: '  # Cancel evacuation for a virtual machine\n  qvirt evacuate-cancel vm my-vm',
  }, argv);
  if (!v) return 0;
  const type = parseResourceType(v.args[0]!);
  const name = v.args[1]!;
  const what = type === 'vm' ? 'VM' : 'VMI';
  return withCluster(v.flags, async (ctx) => {
    const vmi = await getVmi(ctx, name);
    const node = vmi.status?.nodeName;
    if (!node) throw new UserError(`${what} ${ctx.namespace}/${name} doesn't report Node name`);
    const refusal = await drainTaintRefusal(ctx, vmi, v.flags['drain-taint-key'] ?? DEFAULT_DRAIN_TAINT_KEY);
    if (refusal) throw new UserError(`cannot cancel the evacuation of ${what} ${ctx.namespace}/${name}: ${refusal}`);
    if (vmi.status?.evacuationNodeName) {
      try {
        await ctx.client.patch(Resources.virtualMachineInstances, ctx.namespace, name, evacuateCancelPatch(node), 'json', undefined, { dryRun: !!v.flags['dry-run'] });
      } catch (err) {
        throw kubeError(err, { kind: 'VirtualMachineInstance', name, namespace: ctx.namespace }, ctx.server);
      }
    }
    process.stdout.write(`${what} ${ctx.namespace}/${name} was canceled evacuation\n`);
    return 0;
  });
}

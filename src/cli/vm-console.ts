// `qvirt console VMI`: virtctl's serial console through the node agent of the VMI's node. Waits
// (up to --timeout minutes, as virtctl) for the VMI to run, then joins the terminal to the guest's
// serial port; Ctrl-] leaves. Input is forwarded whether or not stdin is a terminal (a script can
// pipe commands in); raw mode only on a terminal.
import type { VirtualMachineInstance } from '../api/types.ts';
import { VMIPhase } from '../api/constants.ts';
import { isNotFound, type KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { UsageError } from '../flags/flags.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { attachStream } from './console.ts';
import { HandlerEndpoint } from '../kube/handler-endpoint.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { checkVmiSubresource } from '../virt-api/vmi-preconditions.ts';
import { parseVerb } from './verb.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the VMI runs (or the wait is pointless: it failed, or the console is disabled). */
export async function waitForRunningVmi(ctx: ClusterContext, name: string, timeoutMs: number, sub: 'console' | 'vnc'): Promise<VirtualMachineInstance> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not found';
  for (;;) {
    let vmi: VirtualMachineInstance | undefined;
    try {
      vmi = await ctx.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, ctx.namespace, name);
    } catch (err) {
      if (!isNotFound(err)) throw kubeError(err, { kind: 'VirtualMachineInstance', name, namespace: ctx.namespace }, ctx.server);
    }
    if (vmi) {
      const refusal = checkVmiSubresource(sub, vmi);
      if (!refusal) return vmi;
      // Only "not running yet" is worth waiting for.
      if (refusal.code !== 400 || vmi.status?.phase === VMIPhase.Failed || !/not running/.test(refusal.message)) {
        throw new UserError(`cannot open the ${sub} of VirtualMachineInstance "${name}" in namespace "${ctx.namespace}": ${refusal.message}`);
      }
      last = `phase ${vmi.status?.phase || 'Pending'}`;
    }
    if (Date.now() >= deadline) {
      throw new UserError(vmi || last !== 'not found'
        ? `VirtualMachineInstance "${name}" in namespace "${ctx.namespace}" is not running (${last}) after ${Math.round(timeoutMs / 1000)}s; check 'kubectl describe vmi ${name}'`
        : `VirtualMachineInstance "${name}" not found in namespace "${ctx.namespace}"`);
    }
    await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
  }
}

export async function main(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt console (VMI) [--timeout MINUTES] [flags]',
    summary: 'Connect to the serial console of a virtual machine instance. Ctrl-] leaves.',
    flags: { timeout: { type: 'number', value: 'MINUTES', default: 5, help: 'how long to wait for the VMI to run, in minutes' } },
    args: ['VMI'],
    examples: '  # Connect to the console of a virtual machine instance called \'myvm\':\n  qvirt console myvm',
  }, argv);
  if (!v) return 0;
  const timeout = v.flags.timeout ?? 5;
  if (!(timeout >= 0)) throw new UsageError(`--timeout: must be a number of minutes >= 0, got ${timeout}`);
  const name = v.args[0]!;
  return withCluster(v.flags, async (ctx) => {
    const vmi = await waitForRunningVmi(ctx, name, timeout * 60_000, 'console');
    const ep = await HandlerEndpoint.forVmi(ctx, vmi);
    const stream = await ep.stream('console');
    process.stderr.write(`Successfully connected to ${name} console. Press Ctrl+] to exit console.\n`);
    const session = attachStream(stream, { input: process.stdin, output: process.stdout, interactive: true });
    const why = await session.closed;
    // A paused stdin pipe still holds the event loop open: the command is over, let it go.
    process.stdin.destroy();
    if (why === 'closed') process.stderr.write('\nThe console connection was closed (the VMI stopped, another user connected to its console, or the network failed).\n');
    else process.stderr.write('\n');
    return 0;
  });
}

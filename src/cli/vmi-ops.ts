// virtctl's VMI verbs that virt-api forwards to the node agent: pause/unpause (vm|vmi NAME),
// soft-reboot, reset, guestosinfo, userlist, fslist, plus freeze/unfreeze (API-only in KubeVirt).
// qvirt serves virt-api's routes for virtctl (src/virt-api); its own CLI checks what virt-api checks
// (vmi-preconditions.ts) and calls the node agent of the VMI's node itself (handler-endpoint.ts) with
// the user's own credentials.
import type { VirtualMachine, VirtualMachineInstance } from '../api/types.ts';
import { isNotFound, type KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { effectiveRunStrategy } from '../api/run-strategy.ts';
import { RunStrategy } from '../api/constants.ts';
import { UsageError, type FlagSpecs } from '../flags/flags.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { HandlerEndpoint, getVmi } from '../kube/handler-endpoint.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { checkVmiSubresource, type VmiSubresource } from '../virt-api/vmi-preconditions.ts';
import { parseVerb } from './verb.ts';

/** Checks the VMI as virt-api would, then makes the call on its node agent. */
export async function callVmi<T>(ctx: ClusterContext, vmi: VirtualMachineInstance, sub: VmiSubresource, method: 'GET' | 'PUT' | 'POST', body?: unknown): Promise<T> {
  const name = vmi.metadata?.name ?? '';
  const refusal = checkVmiSubresource(sub, vmi);
  if (refusal) throw new UserError(`cannot ${sub} VirtualMachineInstance "${name}" in namespace "${ctx.namespace}": ${refusal.message}`);
  const ep = await HandlerEndpoint.forVmi(ctx, vmi);
  return ep.call<T>(method, sub, body);
}

/** `vm`/`vmi` and their long and plural forms, case-insensitive, as virtctl accepts them. */
export function parseResourceType(text: string): 'vm' | 'vmi' {
  const t = text.toLowerCase();
  if (['vm', 'vms', 'virtualmachine', 'virtualmachines'].includes(t)) return 'vm';
  if (['vmi', 'vmis', 'virtualmachineinstance', 'virtualmachineinstances'].includes(t)) return 'vmi';
  throw new UsageError(`unsupported resource type "${text}": use vm (virtualmachine) or vmi (virtualmachineinstance)`);
}

/** `pause vm NAME`: the VM must exist; a missing VMI is explained by the VM's run strategy (virtctl's handleNotFoundError). */
async function vmiOfVm(ctx: ClusterContext, name: string, verb: string): Promise<VirtualMachineInstance> {
  let vm: VirtualMachine;
  try {
    vm = await ctx.client.get<VirtualMachine & KubeObject>(Resources.virtualMachines, ctx.namespace, name);
  } catch (err) {
    throw kubeError(err, { kind: 'VirtualMachine', name, namespace: ctx.namespace }, ctx.server);
  }
  try {
    return await ctx.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, ctx.namespace, name);
  } catch (err) {
    if (!isNotFound(err)) throw kubeError(err, { kind: 'VirtualMachineInstance', name, namespace: ctx.namespace }, ctx.server);
    let halted = false;
    try { halted = effectiveRunStrategy(vm) === RunStrategy.Halted; } catch { /* reported elsewhere */ }
    throw new UserError(halted
      ? `cannot ${verb} VirtualMachine "${name}" in namespace "${ctx.namespace}": it is not set to run (runStrategy Halted); start it with 'qvirt start ${name}'`
      : `cannot ${verb} VirtualMachine "${name}" in namespace "${ctx.namespace}": its VirtualMachineInstance was not found`);
  }
}

function pauseLike(sub: 'pause' | 'unpause') {
  return async (argv: string[]): Promise<number> => {
    const v = parseVerb({
      use: `qvirt ${sub} vm|vmi (VM)|(VMI) [flags]`,
      summary: sub === 'pause'
        ? 'Pause a virtual machine: its vCPUs stop, its state stays in memory. The first argument is the resource type, vm or vmi (virtualmachine, virtualmachineinstance; singular or plural).'
        : 'Unpause a paused virtual machine. The first argument is the resource type, vm or vmi.',
      flags: { 'dry-run': { type: 'boolean', help: 'check that the call would be allowed and change nothing' } },
      args: ['TYPE', 'NAME'],
      examples: `  # ${sub === 'pause' ? 'Pause' : 'Unpause'} a virtual machine called 'myvm':\n  qvirt ${sub} vm myvm`,
    }, argv);
    if (!v) return 0;
    const type = parseResourceType(v.args[0]!);
    const name = v.args[1]!;
    return withCluster(v.flags, async (ctx) => {
      const vmi = type === 'vm' ? await vmiOfVm(ctx, name, sub) : await getVmi(ctx, name);
      if (v.flags['dry-run']) {
        process.stdout.write('Dry Run execution\n');
        const refusal = checkVmiSubresource(sub, vmi);
        if (refusal) throw new UserError(`cannot ${sub} VirtualMachineInstance "${name}" in namespace "${ctx.namespace}": ${refusal.message}`);
        await HandlerEndpoint.forVmi(ctx, vmi);
        return 0;
      }
      await callVmi(ctx, vmi, sub, 'PUT', {});
      process.stdout.write(`VMI ${name} was scheduled to ${sub}\n`);
      return 0;
    });
  };
}

export const pause = pauseLike('pause');
export const unpause = pauseLike('unpause');

function putVerb(verb: string, sub: VmiSubresource, summary: string, extraFlags: 'freeze' | undefined = undefined) {
  return async (argv: string[]): Promise<number> => {
    const flags: FlagSpecs = extraFlags === 'freeze'
      ? { 'unfreeze-timeout': { type: 'duration', value: 'DURATION', default: '5m', help: 'thaw the guest\'s filesystems after this long even without unfreeze' } }
      : {};
    const v = parseVerb({ use: `qvirt ${verb} (VMI) [flags]`, summary, flags, args: ['VMI'], examples: `  # ${summary.replace(/\.$/, '')} — a virtual machine instance called 'myvm':\n  qvirt ${verb} myvm` }, argv);
    if (!v) return 0;
    const name = v.args[0]!;
    return withCluster(v.flags, async (ctx) => {
      const vmi = await getVmi(ctx, name);
      const timeout = (v.flags as Record<string, unknown>)['unfreeze-timeout'];
      await callVmi(ctx, vmi, sub, 'PUT', typeof timeout === 'number' ? { unfreezeTimeout: `${timeout}s` } : {});
      process.stdout.write(`VMI ${name} was scheduled to ${verb}\n`);
      return 0;
    });
  };
}

export const softReboot = putVerb('soft-reboot', 'softreboot', 'Soft reboot a virtual machine instance (ACPI power button or the guest agent).');
export const reset = putVerb('reset', 'reset', 'Reset a virtual machine instance (hard reset, like the reset button).');
export const freeze = putVerb('freeze', 'freeze', 'Freeze the guest\'s filesystems through the guest agent.', 'freeze');
export const unfreeze = putVerb('unfreeze', 'unfreeze', 'Thaw the guest\'s filesystems through the guest agent.');

function getVerb(verb: string, sub: VmiSubresource, summary: string, what: string) {
  return async (argv: string[]): Promise<number> => {
    const v = parseVerb({ use: `qvirt ${verb} (VMI) [flags]`, summary, flags: {}, args: ['VMI'], examples: `  # ${what} of a virtual machine instance called 'myvm':\n  qvirt ${verb} myvm` }, argv);
    if (!v) return 0;
    const name = v.args[0]!;
    return withCluster(v.flags, async (ctx) => {
      const vmi = await getVmi(ctx, name);
      const data = await callVmi<unknown>(ctx, vmi, sub, 'GET');
      process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
      return 0;
    });
  };
}

export const guestosinfo = getVerb('guestosinfo', 'guestosinfo', 'Return guest agent info about operating system.', 'Guest OS info');
export const userlist = getVerb('userlist', 'userlist', 'Return full list of logged in users on the guest machine.', 'Logged-in users');
export const fslist = getVerb('fslist', 'filesystemlist', 'Return full list of filesystems available on the guest machine.', 'Filesystems');

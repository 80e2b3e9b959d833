// `qvirt start|stop|restart VM`: virtctl's VM lifecycle verbs. virtctl calls virt-api's
// subresources, which qvirt serves (src/virt-api); qvirt's CLI reads the VM and its VMI and sends
// the same patches (src/virt-api/lifecycle.ts) itself, with the user's own credentials. The VM controller
// then acts on the VM's run strategy and `status.stateChangeRequests` exactly as in KubeVirt.
import type { VirtualMachine, VirtualMachineInstance } from '../api/types.ts';
import { isNotFound, KubeApiError } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { UsageError } from '../flags/flags.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { parseVerb } from './verb.ts';
import { planRestart, planStart, planStop, type LifecyclePlan, type PatchStep } from '../virt-api/lifecycle.ts';

const dryRunFlag = { 'dry-run': { type: 'boolean', help: 'print the patches that would be sent and change nothing' } } as const;
const forceFlags = {
  force: { type: 'boolean', help: 'only with --grace-period: stop the VMI with that (shorter) grace period' },
  'grace-period': { type: 'number', value: 'SECONDS', help: 'the grace period for the VMI to shut down; only with --force (restart: only 0)' },
} as const;

/** Reads the VM (its absence is the error) and the VMI of the same name (its absence is fine). */
async function readVmAndVmi(ctx: ClusterContext, name: string): Promise<{ vm: VirtualMachine; vmi: VirtualMachineInstance | undefined }> {
  const ref = { kind: 'VirtualMachine', name, namespace: ctx.namespace };
  let vm: VirtualMachine;
  try {
    vm = await ctx.client.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, ctx.namespace, name);
  } catch (err) {
    throw kubeError(err, ref, ctx.server);
  }
  let vmi: VirtualMachineInstance | undefined;
  try {
    vmi = await ctx.client.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, ctx.namespace, name);
  } catch (err) {
    if (!isNotFound(err)) throw kubeError(err, { kind: 'VirtualMachineInstance', name, namespace: ctx.namespace }, ctx.server);
  }
  return { vm, vmi };
}

/** Sends the plan's patches in order; a failed `test` means the VM changed meanwhile (409, as virt-api). */
async function apply(ctx: ClusterContext, name: string, steps: readonly PatchStep[]): Promise<void> {
  for (const step of steps) {
    const r = step.target === 'vmi' ? Resources.virtualMachineInstances : Resources.virtualMachines;
    try {
      await ctx.client.patch(r, ctx.namespace, name, step.ops, 'json', step.target === 'vm-status' ? 'status' : undefined);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 422 && /test/.test(err.message)) {
        throw new UserError(`the ${r.kind} "${name}" changed while the request was being made (${step.target === 'vmi' ? 'its grace period' : 'its run strategy or state change requests'}); try again`);
      }
      throw kubeError(err, { kind: r.kind, name, namespace: ctx.namespace }, ctx.server);
    }
  }
}

const hints: Array<[RegExp, (verb: string, name: string) => string]> = [
  [/already running/, (_v, n) => `; use 'qvirt restart ${n}' to restart it`],
  [/^VM is not running/, (_v, n) => `; use 'qvirt start ${n}' to start it`],
  [/does not support manual start/, (_v, n) => `; the VM runs whenever its run strategy says so: 'qvirt restart ${n}' restarts it, 'qvirt stop ${n}' stops it`],
  [/stop\/start already underway/, () => '; wait for the pending request to be carried out (kubectl get vm shows status.stateChangeRequests)'],
  [/shorter graceperiod/, (_v, n) => `; the VM is already stopping; 'qvirt stop ${n} --force --grace-period 0' stops it at once`],
];

async function runPlan(verb: 'start' | 'stop' | 'restart', plan: (vm: VirtualMachine, vmi: VirtualMachineInstance | undefined) => LifecyclePlan, dryRun: boolean, ctx: ClusterContext, name: string): Promise<number> {
  const { vm, vmi } = await readVmAndVmi(ctx, name);
  const p = plan(vm, vmi);
  if (p.kind === 'refused') {
    const hint = hints.find(([re]) => re.test(p.message))?.[1](verb, name) ?? '';
    throw new UserError(`cannot ${verb} VirtualMachine "${name}" in namespace "${ctx.namespace}": ${p.message}${hint}`);
  }
  if (dryRun) {
    process.stdout.write('Dry Run execution\n');
    for (const s of p.steps) process.stdout.write(`PATCH ${s.target === 'vmi' ? 'virtualmachineinstance' : 'virtualmachine'}/${name}${s.target === 'vm-status' ? ' (status)' : ''}: ${JSON.stringify(s.ops)}\n`);
    return 0;
  }
  await apply(ctx, name, p.steps);
  process.stdout.write(`VM ${name} was scheduled to ${verb}\n`);
  return 0;
}

/** virtctl: "Must both use --force=true and set --grace-period." */
function forceGrace(flags: { force: boolean; 'grace-period': number | undefined }): number | undefined {
  const graceSet = flags['grace-period'] !== undefined;
  if (graceSet !== flags.force) throw new UsageError('--force and --grace-period go together: give both, e.g. --force --grace-period 0');
  if (graceSet && (!Number.isInteger(flags['grace-period']) || flags['grace-period']! < 0)) throw new UsageError(`--grace-period: must be a whole number of seconds >= 0, got ${flags['grace-period']}`);
  return flags['grace-period'];
}

export async function start(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt start (VM) [--paused] [flags]',
    summary: 'Start a virtual machine.',
    flags: { paused: { type: 'boolean', help: 'start the virtual machine paused (unpause it with `qvirt unpause vm NAME`)' }, ...dryRunFlag },
    args: ['VM'],
    examples: '  # Start a virtual machine called \'myvm\':\n  qvirt start myvm',
  }, argv);
  if (!v) return 0;
  return withCluster(v.flags, (ctx) => runPlan('start', (vm, vmi) => planStart(vm, vmi, { paused: v.flags.paused }), v.flags['dry-run'], ctx, v.args[0]!));
}

export async function stop(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt stop (VM) [--force --grace-period N] [flags]',
    summary: 'Stop a virtual machine.',
    flags: { ...forceFlags, ...dryRunFlag },
    args: ['VM'],
    examples: '  # Stop a virtual machine called \'myvm\':\n  qvirt stop myvm\n  # Stop it now, without waiting for the guest to shut down:\n  qvirt stop myvm --force --grace-period 0',
  }, argv);
  if (!v) return 0;
  const gracePeriod = forceGrace(v.flags);
  return withCluster(v.flags, (ctx) => runPlan('stop', (vm, vmi) => planStop(vm, vmi, { gracePeriod }), v.flags['dry-run'], ctx, v.args[0]!));
}

export async function restart(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt restart (VM) [--force --grace-period 0] [flags]',
    summary: 'Restart a virtual machine.',
    flags: { ...forceFlags, ...dryRunFlag },
    args: ['VM'],
    examples: '  # Restart a virtual machine called \'myvm\':\n  qvirt restart myvm',
  }, argv);
  if (!v) return 0;
  const gracePeriodSeconds = forceGrace(v.flags);
  return withCluster(v.flags, (ctx) => runPlan('restart', (vm, vmi) => planRestart(vm, vmi, { gracePeriodSeconds }), v.flags['dry-run'], ctx, v.args[0]!));
}

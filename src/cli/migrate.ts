// `qvirt migrate VM` and `qvirt migrate-cancel VM`: virtctl's live migration verbs. migrate creates a
// VirtualMachineInstanceMigration for the VM's VMI after virt-api's checks (with the user's own
// credentials, as virt-api's migrate route does for virtctl); `--watch` follows it to the end with the progress the source
// node agent reports. migrate-cancel deletes the VMI's unfinished migration, which aborts it.
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/types.ts';
import { Label, isFinalMigrationPhase } from '../api/constants.ts';
import { MIGRATION_PROGRESS_ANNOTATION, parseMigrationProgress } from '../api/migration.ts';
import { isNotFound } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { parseVerb } from './verb.ts';
import { cancellableMigration, planMigrate, progressLine } from './migrate-plan.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function getOrUndefined<T>(ctx: ClusterContext, r: typeof Resources.virtualMachines, name: string, kind: string): Promise<T | undefined> {
  try {
    return await ctx.client.get<T & { metadata?: object }>(r, ctx.namespace, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw kubeError(err, { kind, name, namespace: ctx.namespace }, ctx.server);
  }
}

/** Follows a migration to Succeeded/Failed, printing a progress line per change. Returns its final phase. */
export async function watchMigration(ctx: ClusterContext, migrationName: string, vmiName: string, out: NodeJS.WritableStream, intervalMs = 500): Promise<string> {
  let last = '';
  for (;;) {
    const m = await getOrUndefined<VirtualMachineInstanceMigration>(ctx, Resources.virtualMachineInstanceMigrations, migrationName, 'VirtualMachineInstanceMigration');
    if (!m) throw new UserError(`the migration ${migrationName} is gone (cancelled?)`);
    const phase = m.status?.phase ?? 'Pending';
    const vmi = await getOrUndefined<VirtualMachineInstance>(ctx, Resources.virtualMachineInstances, vmiName, 'VirtualMachineInstance');
    const p = parseMigrationProgress(vmi?.metadata?.annotations?.[MIGRATION_PROGRESS_ANNOTATION]);
    const line = progressLine(phase, p && p.migrationUid === m.metadata?.uid ? p : undefined);
    if (line !== last) {
      out.write(`${line}\n`);
      last = line;
    }
    if (isFinalMigrationPhase(phase)) {
      const ms = m.status?.migrationState ?? vmi?.status?.migrationState;
      if (phase === 'Succeeded') out.write(`VMI ${vmiName} migrated to node ${ms?.targetNode ?? vmi?.status?.nodeName ?? '?'}\n`);
      else out.write(`migration failed${ms?.failureReason ? `: ${ms.failureReason}` : ''}${ms?.abortStatus ? ` (abort ${ms.abortStatus})` : ''}\n`);
      return phase;
    }
    await sleep(intervalMs);
  }
}

export async function migrate(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt migrate (VM) [--watch] [flags]',
    summary: 'Migrate a virtual machine to another node (live migration).',
    flags: {
      watch: { type: 'boolean', help: 'follow the migration to its end: data sent, remaining, dirty rate' },
      'dry-run': { type: 'boolean', help: 'print the migration that would be created and change nothing' },
    },
    args: ['VM'],
    examples: '  # Migrate a virtual machine called \'myvm\' and follow it:\n  qvirt migrate myvm --watch',
  }, argv);
  if (!v) return 0;
  const name = v.args[0]!;
  return withCluster(v.flags, async (ctx) => {
    const vm = await getOrUndefined<VirtualMachine>(ctx, Resources.virtualMachines, name, 'VirtualMachine');
    const vmi = await getOrUndefined<VirtualMachineInstance>(ctx, Resources.virtualMachineInstances, name, 'VirtualMachineInstance');
    const plan = planMigrate(vm, vmi, ctx.namespace, name);
    if (plan.kind === 'refused') throw new UserError(`cannot migrate VirtualMachine "${name}" in namespace "${ctx.namespace}": ${plan.message}`);
    if (v.flags['dry-run']) {
      process.stdout.write(`Dry Run execution\nPOST virtualmachineinstancemigrations: ${JSON.stringify(plan.migration)}\n`);
      return 0;
    }
    let created: VirtualMachineInstanceMigration;
    try {
      created = await ctx.client.create<VirtualMachineInstanceMigration & { metadata?: object }>(Resources.virtualMachineInstanceMigrations, plan.migration);
    } catch (err) {
      throw kubeError(err, { kind: 'VirtualMachineInstanceMigration', name: 'kubevirt-migrate-vm-*', namespace: ctx.namespace }, ctx.server);
    }
    process.stdout.write(`VM ${name} was scheduled to migrate (${created.metadata?.name})\n`);
    if (!v.flags.watch) return 0;
    const phase = await watchMigration(ctx, created.metadata!.name!, name, process.stdout);
    return phase === 'Succeeded' ? 0 : 1;
  });
}

export async function migrateCancel(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt migrate-cancel (VM) [flags]',
    summary: 'Cancel the running live migration of a virtual machine.',
    flags: {},
    args: ['VM'],
    examples: '  qvirt migrate-cancel myvm',
  }, argv);
  if (!v) return 0;
  const name = v.args[0]!;
  return withCluster(v.flags, async (ctx) => {
    let list: VirtualMachineInstanceMigration[];
    try {
      list = (await ctx.client.list<VirtualMachineInstanceMigration & { metadata?: object }>(Resources.virtualMachineInstanceMigrations, { namespace: ctx.namespace, labelSelector: `${Label.MigrationSelector}=${name}` })).items;
    } catch (err) {
      throw kubeError(err, undefined, ctx.server);
    }
    const m = cancellableMigration(list, name);
    if (!m) throw new UserError(`Found no migration to cancel for ${name}`);
    try {
      await ctx.client.delete(Resources.virtualMachineInstanceMigrations, ctx.namespace, m.metadata!.name!);
    } catch (err) {
      throw kubeError(err, { kind: 'VirtualMachineInstanceMigration', name: m.metadata!.name!, namespace: ctx.namespace }, ctx.server);
    }
    process.stdout.write(`VM ${name} was scheduled to migrate-cancel (${m.metadata!.name})\n`);
    return 0;
  });
}

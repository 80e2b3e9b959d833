// `qvirt top vmi|vm [NAME]`: CPU, memory and disk I/O of running VMIs for a person at a terminal,
// as `kubectl top pod` shows pods. Each VMI's node agent is asked twice, --interval apart, for a
// reading of the figures its /metrics exports (the `usage` subresource, src/api/vmi-usage.ts) — through
// the same endpoint and with the same credentials as the other verbs (handler-endpoint.ts) — and the
// counters become rates over the agent's own clock.
import type { VirtualMachineInstance } from '../api/types.ts';
import { VMI_USAGE_SUBRESOURCE, parseVmiUsageSample, usageBetween, type VmiUsageSample } from '../api/vmi-usage.ts';
import type { KubeObject } from '../kube/client.ts';
import { isNotFound } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { HandlerEndpoint, resolveHandler, type HandlerTarget } from '../kube/handler-endpoint.ts';
import { clusterFlags, withCluster, type ClusterContext } from './kube-context.ts';
import { parseResourceType } from './vmi-ops.ts';
import { formatTop, type TopRow, type TopSort } from './top-table.ts';

const flags = {
  all: { type: 'boolean', help: 'every running VMI (or VM) of the namespace; the default without NAME' },
  'all-namespaces': { type: 'boolean', short: 'A', help: 'every running VMI (or VM) of every namespace' },
  interval: { type: 'duration', default: '1s', value: 'DURATION', help: 'how long the rates are measured over (two readings this far apart)' },
  'sort-by': { type: 'string', value: 'cpu|memory', help: 'sort by CPU or memory, the largest first' },
  network: { type: 'boolean', help: 'add the network\'s receive and transmit rates' },
  'no-headers': { type: 'boolean', help: 'no header line' },
  ...clusterFlags,
} as const;

const USE = 'qvirt top vmi|vm [NAME] [flags]';
const SUMMARY = 'Display CPU, memory and disk I/O of running virtual machine instances (or of the VMs\' instances), like kubectl top pod. '
  + 'CPU is the vCPUs\' and QEMU\'s own CPU time per second, in cores; MEMORY the memory the guest uses (its balloon driver\'s figures), '
  + 'else QEMU\'s resident set; READ/WRITE the disks\' bytes per second. The figures are those the node agent\'s /metrics exports.';
const EXAMPLES = `Examples:
  # every running VMI of the namespace
  qvirt top vmi
  # one VM, rates over 5 seconds
  qvirt top vm myvm --interval 5s
  # every namespace, the busiest first
  qvirt top vmi -A --sort-by cpu`;

interface Target { readonly namespace: string; readonly name: string; readonly vmi: VirtualMachineInstance }

const running = (v: VirtualMachineInstance | undefined) => v?.status?.phase === 'Running' && !!v.status.nodeName;

/** The VMIs asked for: one by name (or its VM's), or every running one of the namespace(s). */
async function targets(ctx: ClusterContext, kind: 'vm' | 'vmi', name: string | undefined, allNamespaces: boolean): Promise<Target[]> {
  const ns = allNamespaces ? undefined : ctx.namespace;
  if (name) {
    if (kind === 'vm') {
      try {
        await ctx.client.get<KubeObject>(Resources.virtualMachines, ctx.namespace, name);
      } catch (err) {
        throw kubeError(err, { kind: 'VirtualMachine', name, namespace: ctx.namespace }, ctx.server);
      }
    }
    let vmi: VirtualMachineInstance;
    try {
      vmi = await ctx.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, ctx.namespace, name);
    } catch (err) {
      if (kind === 'vm' && isNotFound(err)) throw new UserError(`VirtualMachine "${name}" in namespace "${ctx.namespace}" is not running: it has no VirtualMachineInstance`);
      throw kubeError(err, { kind: 'VirtualMachineInstance', name, namespace: ctx.namespace }, ctx.server);
    }
    if (!running(vmi)) throw new UserError(`${kind === 'vm' ? 'VirtualMachine' : 'VirtualMachineInstance'} "${name}" in namespace "${ctx.namespace}" is not running (phase ${vmi.status?.phase || 'Pending'}): no usage to show`);
    return [{ namespace: ctx.namespace, name, vmi }];
  }
  const vmis = (await ctx.client.list<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, ns ? { namespace: ns } : {})).items.filter(running);
  let chosen = vmis;
  if (kind === 'vm') {
    // A VM's VMI has its name and an owner reference to it.
    chosen = vmis.filter((v) => v.metadata?.ownerReferences?.some((o) => o.kind === 'VirtualMachine' && o.name === v.metadata?.name));
  }
  return chosen.map((vmi) => ({ namespace: vmi.metadata?.namespace ?? '', name: vmi.metadata?.name ?? '', vmi }))
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

/** Runs `fn` over `items`, at most `n` at once; results in order. */
async function pool<T, R>(items: readonly T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
  }));
  return out;
}

export async function main(argv: string[]): Promise<number> {
  const p = parseFlags(flags, argv);
  if (p.help) {
    process.stdout.write(usage(USE, SUMMARY, flags, EXAMPLES));
    return 0;
  }
  const [type, name, ...rest] = p.args;
  if (!type) throw new UsageError(`missing the resource type: usage: ${USE} (see --help)`);
  const kind = parseResourceType(type);
  if (rest.length > 0) throw new UsageError(`expected at most one NAME, got ${[name, ...rest].join(' ')}`);
  const f = p.flags;
  if (name && (f.all || f['all-namespaces'])) throw new UsageError(`NAME (${name}) and --all/--all-namespaces exclude each other`);
  const sortBy = (f['sort-by'] ?? '') as TopSort;
  if (!['', 'cpu', 'memory'].includes(sortBy)) throw new UsageError(`--sort-by: must be cpu or memory (got "${f['sort-by']}")`);
  const interval = f.interval ?? 1;
  if (!(interval > 0) || interval > 300) throw new UsageError(`--interval: must be more than 0 and at most 5m (got ${interval}s)`);
  const allNamespaces = f['all-namespaces'] === true;

  return withCluster(f, async (ctx) => {
    const list = await targets(ctx, kind, name, allNamespaces);
    if (list.length === 0) {
      process.stderr.write(allNamespaces ? 'No resources found\n' : `No resources found in ${ctx.namespace} namespace.\n`);
      return 0;
    }
    const nodes = new Map<string, Promise<HandlerTarget>>();
    const endpoint = async (t: Target) => {
      const node = t.vmi.status!.nodeName!;
      const tctx = { ...ctx, namespace: t.namespace };
      if (!nodes.has(node)) nodes.set(node, resolveHandler(tctx, t.vmi));
      return new HandlerEndpoint(tctx, await nodes.get(node)!, t.name);
    };
    const read = async (t: Target): Promise<VmiUsageSample | Error> => {
      try {
        return parseVmiUsageSample(await (await endpoint(t)).call('GET', VMI_USAGE_SUBRESOURCE));
      } catch (err) {
        return err as Error;
      }
    };
    const first = await pool(list, 16, read);
    await new Promise((r) => setTimeout(r, interval * 1000));
    const second = await pool(list, 16, (t) => (first[list.indexOf(t)] instanceof Error ? Promise.resolve(first[list.indexOf(t)]!) : read(t)));
    const rows: TopRow[] = [];
    let failed = 0;
    list.forEach((t, i) => {
      const a = first[i]!, b = second[i]!;
      if (a instanceof Error || b instanceof Error) {
        failed++;
        // One VMI: its error is the answer; among many, a warning and the others' rows.
        if (list.length === 1) throw a instanceof Error ? a : b;
        process.stderr.write(`warning: no usage for VirtualMachineInstance "${t.name}" in namespace "${t.namespace}": ${(a instanceof Error ? a : b as Error).message}\n`);
        rows.push({ namespace: t.namespace, name: t.name, usage: undefined });
        return;
      }
      rows.push({ namespace: t.namespace, name: t.name, usage: usageBetween(a, b) });
    });
    process.stdout.write(formatTop(rows, { allNamespaces, noHeaders: f['no-headers'], sortBy, network: f.network }));
    return failed === list.length ? 1 : 0;
  });
}

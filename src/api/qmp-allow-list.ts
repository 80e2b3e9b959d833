// The QMP passthrough's allow-list, shared by the launcher (which enforces it on its command socket)
// and the handler's `qmp` endpoint (which decides from it whether a call needs the `qmp-unsafe`
// permission). Pure.
import { humanMonitorCommandReadOnly } from './hmp-read-only.ts';

/**
 * Read-only QMP queries (QEMU 7.2) that are safe to run any time: no side effects, bounded output.
 * Left out on purpose: `query-qmp-schema` (hundreds of KiB), `query-cpu-model-expansion` /
 * `-baseline` / `-comparison` (probe CPU models; expensive), `query-command-line-options` (large),
 * and every non-query command, even read-only ones like `qom-get` (arbitrary object access).
 * `human-monitor-command` is read-only only for a single HMP `info` line: see passthroughDecision.
 */
export const READ_ONLY_QMP_COMMANDS: ReadonlySet<string> = new Set([
  'query-status', 'query-version', 'query-name', 'query-uuid', 'query-kvm', 'query-target',
  'query-current-machine', 'query-machines', 'query-commands',
  'query-cpus-fast', 'query-hotpluggable-cpus', 'query-cpu-definitions', 'query-iothreads',
  'query-memdev', 'query-memory-devices', 'query-memory-size-summary', 'query-balloon',
  'query-block', 'query-blockstats', 'query-named-block-nodes', 'query-block-jobs', 'query-jobs',
  'query-block-exports', 'query-pr-managers', 'query-fdsets',
  'query-pci', 'query-acpi-ospm-status', 'query-tpm', 'query-tpm-models', 'query-tpm-types',
  'query-chardev', 'query-chardev-backends', 'query-mice', 'query-vnc', 'query-vnc-servers',
  'query-spice', 'query-display-options', 'query-rx-filter',
  'query-migrate', 'query-migrate-capabilities', 'query-migrate-parameters', 'query-dirty-rate',
  'query-vcpu-dirty-limit', 'query-colo-status', 'query-replay', 'query-yank',
  'query-dump', 'query-dump-guest-memory-capability', 'query-sev', 'query-sev-capabilities',
  'query-sgx', 'query-sgx-capabilities', 'query-stats', 'query-stats-schemas',
]);

export type PassthroughDecision = { allowed: true; reason: 'read-only' | 'unsafe' } | { allowed: false; reason: string };

/** What a QMP command name looks like (`query-status`, `block_resize`, `x-query-ramblock`). */
export const QMP_COMMAND_NAME = /^[a-z][a-z0-9_-]*$/i;

/**
 * Whether a passthrough request may run. `args` are the call's arguments: they decide only for
 * `human-monitor-command`, read-only when it runs a single HMP `info` command (hmp-read-only.ts). Pure.
 */
export function passthroughDecision(command: string, unsafe: boolean, args?: Readonly<Record<string, unknown>>): PassthroughDecision {
  if (!QMP_COMMAND_NAME.test(command)) return { allowed: false, reason: `'${command.length > 64 ? `${command.slice(0, 64)}...` : command}' is not a QMP command name` };
  const argsProblem = qmpArgumentsProblem(args);
  if (argsProblem) return { allowed: false, reason: argsProblem };
  if (READ_ONLY_QMP_COMMANDS.has(command)) return { allowed: true, reason: 'read-only' };
  if (command === 'qmp_capabilities') return { allowed: false, reason: 'qmp_capabilities belongs to the launcher\'s own connection' };
  if (command === 'human-monitor-command') {
    const hmp = humanMonitorCommandReadOnly(args);
    if (hmp.readOnly) return { allowed: true, reason: 'read-only' };
    if (unsafe) return { allowed: true, reason: 'unsafe' };
    return { allowed: false, reason: `${hmp.reason}; set unsafe to run it` };
  }
  if (unsafe) return { allowed: true, reason: 'unsafe' };
  return { allowed: false, reason: `'${command}' is not a read-only query on the passthrough allow-list; set unsafe to run it` };
}

/**
 * How deep a passthrough call's arguments may nest. QEMU's JSON parser gives up past 1024 levels
 * with an error that carries no id, which its client can only take for a lost stream (the launcher's
 * one QMP connection closed): no QMP command takes arguments anywhere near this deep.
 */
export const MAX_QMP_ARGUMENTS_DEPTH = 32;

/** What is wrong with a passthrough call's arguments before QEMU sees them, if anything. Pure. */
export function qmpArgumentsProblem(args: unknown): string | undefined {
  const depth = (v: unknown, d: number): number => {
    if (d > MAX_QMP_ARGUMENTS_DEPTH || v === null || typeof v !== 'object') return d;
    let max = d;
    for (const x of Object.values(v)) { max = Math.max(max, depth(x, d + 1)); if (max > MAX_QMP_ARGUMENTS_DEPTH) break; }
    return max;
  };
  if (depth(args, 0) > MAX_QMP_ARGUMENTS_DEPTH) return `arguments: nested deeper than ${MAX_QMP_ARGUMENTS_DEPTH} levels`;
  return undefined;
}

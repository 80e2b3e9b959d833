// qvirt.qmp.v1.QmpPassthrough: one QMP command against the VM's QEMU, for debugging and tooling.
// By default only read-only `query-*` commands from an explicit allow-list run; anything else
// (stop, system_reset, device_del, human-monitor-command, ...) only when the request says
// `unsafe: true`. Every call is logged with the command, its arguments, the caller, the decision and
// the VMI (the logger carries namespace/name/uid).
import type { Logger } from '../../src/log/logger.ts';
import type { QmpPassthroughHandlers, QmpExecuteRequest, QmpExecuteResponse } from '../../src/proto/qmp.ts';
import { errorMessage, qmpErrorClass, type QmpConnection } from '../supervise/qmp-connection.ts';
import { passthroughDecision } from '../../src/api/qmp-allow-list.ts';

export { READ_ONLY_QMP_COMMANDS, passthroughDecision, type PassthroughDecision } from '../../src/api/qmp-allow-list.ts';

export interface QmpPassthroughOptions {
  /** The VM's QMP connection, if QEMU runs. */
  qmp: () => QmpConnection | undefined;
  /** Per-VMI logger (namespace/name/uid). */
  log: Logger;
  defaultTimeoutMs?: number;
}

function parseArgs(json: string): Record<string, unknown> | undefined {
  if (!json.trim()) return undefined;
  const v: unknown = JSON.parse(json);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('argumentsJson must be a JSON object');
  return v as Record<string, unknown>;
}

const respond = (r: Partial<QmpExecuteResponse>): QmpExecuteResponse => ({ success: false, message: '', returnJson: '', errorClass: '', refused: false, ...r });

export function qmpPassthroughHandlers(opts: QmpPassthroughOptions): QmpPassthroughHandlers {
  return {
    Execute: async (req: QmpExecuteRequest, ctx) => {
      const caller = req.caller || 'unknown';
      const logFields = { command: req.command, caller, peer: ctx.peer || undefined, unsafe: req.unsafe };
      let args: Record<string, unknown> | undefined;
      try {
        args = parseArgs(req.argumentsJson);
      } catch (err) {
        opts.log.warn({ ...logFields, decision: 'refused', why: errorMessage(err) }, 'QMP passthrough refused');
        return respond({ refused: true, message: `invalid argumentsJson: ${errorMessage(err)}` });
      }
      const decision = passthroughDecision(req.command, req.unsafe, args);
      if (!decision.allowed) {
        opts.log.warn({ ...logFields, args, decision: 'refused', why: decision.reason }, 'QMP passthrough refused');
        return respond({ refused: true, message: decision.reason });
      }
      const level = decision.reason === 'unsafe' ? 'warn' : 'info';
      opts.log[level]({ ...logFields, args, decision: decision.reason === 'unsafe' ? 'allowed-unsafe' : 'allowed' }, 'QMP passthrough');
      const qmp = opts.qmp();
      if (!qmp) return respond({ message: `QEMU is not running: cannot run ${req.command}` });
      try {
        const ret = await qmp.execute(req.command, args, { timeout: req.timeoutSeconds > 0 ? req.timeoutSeconds * 1000 : (opts.defaultTimeoutMs ?? 10_000) });
        return respond({ success: true, returnJson: JSON.stringify(ret ?? {}) });
      } catch (err) {
        return respond({ message: `${req.command} failed: ${errorMessage(err)}`, errorClass: qmpErrorClass(err) ?? '' });
      }
    },
  };
}

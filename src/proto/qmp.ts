// qvirt.qmp.v1.QmpPassthrough: one QMP command against a VM's QEMU through its launcher's command
// socket (debugging and tooling; the launcher enforces a read-only allow-list unless `unsafe`).
import { loadService, type UnaryHandlers } from './service.ts';

export interface QmpExecuteRequest {
  command: string;
  argumentsJson: string;
  unsafe: boolean;
  caller: string;
  timeoutSeconds: number;
}
export interface QmpExecuteResponse {
  success: boolean;
  message: string;
  returnJson: string;
  errorClass: string;
  refused: boolean;
}
export type QmpPassthroughMethods = { Execute: [QmpExecuteRequest, QmpExecuteResponse] };
export type QmpPassthroughHandlers = UnaryHandlers<QmpPassthroughMethods>;

export const QMP_PASSTHROUGH_SERVICE_NAME = 'qvirt.qmp.v1.QmpPassthrough';
export function qmpPassthroughService() { return loadService('qmp.proto', QMP_PASSTHROUGH_SERVICE_NAME); }

// Protocol version negotiation: kubevirt.cmd.info.CmdInfo (served by the launcher next to Cmd) and
// kubevirt.notify.info.NotifyInfo (served by the handler next to Notify). Both sides speak v1.
import { loadService, type UnaryHandlers, type CallOptions } from './service.ts';
import { GrpcClient } from './h2/grpc-client.ts';

export type CmdInfoMethods = { Info: [Record<string, never>, { supportedCmdVersions: number[] }] };
export type NotifyInfoMethods = { Info: [Record<string, never>, { supportedNotifyVersions: number[] }] };
export type CmdInfoHandlers = UnaryHandlers<CmdInfoMethods>;
export type NotifyInfoHandlers = UnaryHandlers<NotifyInfoMethods>;

/** The command protocol versions a qvirt launcher serves, and the notify versions it speaks. */
export const SUPPORTED_CMD_VERSIONS: readonly number[] = [1];
export const SUPPORTED_NOTIFY_VERSIONS: readonly number[] = [1];

export const CMD_INFO_SERVICE_NAME = 'kubevirt.cmd.info.CmdInfo';
export const NOTIFY_INFO_SERVICE_NAME = 'kubevirt.notify.info.NotifyInfo';
export function cmdInfoService() { return loadService('cmd-info.proto', CMD_INFO_SERVICE_NAME); }
export function notifyInfoService() { return loadService('notify-info.proto', NOTIFY_INFO_SERVICE_NAME); }

/** Serves CmdInfo: `[1]`. */
export const cmdInfoHandlers: CmdInfoHandlers = { Info: async () => ({ supportedCmdVersions: [...SUPPORTED_CMD_VERSIONS] }) };
/** Serves NotifyInfo: `[1]`. */
export const notifyInfoHandlers: NotifyInfoHandlers = { Info: async () => ({ supportedNotifyVersions: [...SUPPORTED_NOTIFY_VERSIONS] }) };

/** The highest version both sides support (KubeVirt's GetHighestCompatibleVersion). */
export function highestCompatibleVersion(server: readonly number[], client: readonly number[]): number {
  const common = server.filter((v) => client.includes(v));
  if (common.length === 0) {
    throw new Error(`no compatible protocol version: server supports [${server.join(',')}], client supports [${client.join(',')}]`);
  }
  return Math.max(...common);
}

/** Asks a notify server which notify versions it serves and picks ours. */
export async function negotiateNotifyVersion(socketPath: string, opts: CallOptions = {}): Promise<number> {
  const client = new GrpcClient<NotifyInfoMethods>(notifyInfoService(), socketPath);
  try {
    const info = await client.call('Info', {}, { timeoutMs: 5000, ...opts });
    return highestCompatibleVersion(info.supportedNotifyVersions, SUPPORTED_NOTIFY_VERSIONS);
  } finally {
    client.close();
  }
}

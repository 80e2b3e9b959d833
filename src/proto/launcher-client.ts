// The node agent's and the CLI's clients to a launcher, on grpc-js (src/proto/grpc.ts): kubevirt.cmd.v1.Cmd,
// the QMP passthrough and the command-version negotiation. The launcher serves them over src/proto/h2;
// it imports none of this (its bundle holds neither grpc-js nor node:http2).
import { UnaryClient } from './grpc.ts';
import type { CallOptions } from './service.ts';
import { cmdService, vmiMessage, type CmdMethodName, type CmdMethods, type Partialish, type Response, type VirtualMachineOptions } from './cmd.ts';
import { cmdInfoService, highestCompatibleVersion, SUPPORTED_CMD_VERSIONS, type CmdInfoMethods } from './info.ts';
import { qmpPassthroughService, type QmpPassthroughMethods } from './qmp.ts';

/**
 * The handler's client to one launcher: one method per RPC, promise-based. Transport failures
 * reject (gRPC ServiceError); command failures come back as `response.success === false`.
 */
export class CmdClient {
  readonly rpc: UnaryClient<CmdMethods>;

  constructor(socketPath: string, opts: { timeoutMs?: number } = {}) {
    this.rpc = new UnaryClient<CmdMethods>(cmdService(), socketPath, opts);
  }

  call<K extends CmdMethodName>(method: K, request: Partialish<CmdMethods[K][0]>, opts?: CallOptions): Promise<CmdMethods[K][1]> {
    return this.rpc.call(method, request as CmdMethods[K][0], opts);
  }

  private vmiCall(method: 'SyncVirtualMachine' | 'PauseVirtualMachine' | 'UnpauseVirtualMachine' | 'UnfreezeVirtualMachine' | 'ResetVirtualMachine' | 'SoftRebootVirtualMachine' | 'ShutdownVirtualMachine' | 'KillVirtualMachine' | 'DeleteVirtualMachine' | 'SyncMigrationTarget' | 'CancelVirtualMachineMigration' | 'SignalTargetPodCleanup' | 'FinalizeVirtualMachineMigration' | 'HotplugHostDevices' | 'SyncVirtualMachineCPUs' | 'SyncVirtualMachineMemory', vmi: unknown, options?: Partialish<VirtualMachineOptions>, opts?: CallOptions): Promise<Response> {
    return this.call(method, { vmi: vmiMessage(vmi), options: options ?? null }, opts);
  }

  syncVirtualMachine(vmi: unknown, options?: Partialish<VirtualMachineOptions>, opts?: CallOptions) { return this.vmiCall('SyncVirtualMachine', vmi, options, opts); }
  pauseVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('PauseVirtualMachine', vmi, undefined, opts); }
  unpauseVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('UnpauseVirtualMachine', vmi, undefined, opts); }
  freezeVirtualMachine(vmi: unknown, unfreezeTimeoutSeconds: number, opts?: CallOptions) {
    return this.call('FreezeVirtualMachine', { vmi: vmiMessage(vmi), unfreezeTimeoutSeconds }, opts);
  }
  virtualMachineMemoryDump(vmi: unknown, dumpPath: string, opts?: CallOptions) {
    return this.call('VirtualMachineMemoryDump', { vmi: vmiMessage(vmi), dumpPath }, opts);
  }
  unfreezeVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('UnfreezeVirtualMachine', vmi, undefined, opts); }
  resetVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('ResetVirtualMachine', vmi, undefined, opts); }
  softRebootVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('SoftRebootVirtualMachine', vmi, undefined, opts); }
  shutdownVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('ShutdownVirtualMachine', vmi, undefined, opts); }
  killVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('KillVirtualMachine', vmi, undefined, opts); }
  deleteVirtualMachine(vmi: unknown, opts?: CallOptions) { return this.vmiCall('DeleteVirtualMachine', vmi, undefined, opts); }
  getDomain(opts?: CallOptions) { return this.call('GetDomain', {}, opts); }
  getDomainStats(opts?: CallOptions) { return this.call('GetDomainStats', {}, opts); }
  getGuestInfo(opts?: CallOptions) { return this.call('GetGuestInfo', {}, opts); }
  getUsers(opts?: CallOptions) { return this.call('GetUsers', {}, opts); }
  getFilesystems(opts?: CallOptions) { return this.call('GetFilesystems', {}, opts); }
  getScreenshot(vmi: unknown, opts?: CallOptions) { return this.call('GetScreenshot', { vmi: vmiMessage(vmi), options: null }, opts); }
  getQemuVersion(opts?: CallOptions) { return this.call('GetQemuVersion', {}, opts); }
  ping(opts?: CallOptions) { return this.call('Ping', {}, opts); }
  guestPing(domainName: string, timeoutSeconds: number, opts?: CallOptions) { return this.call('GuestPing', { domainName, timeoutSeconds }, opts); }
  exec(domainName: string, command: string, args: string[], timeoutSeconds: number, opts?: CallOptions) {
    return this.call('Exec', { domainName, Command: command, Args: args, timeoutSeconds }, opts);
  }

  waitForReady(timeoutMs?: number) { return this.rpc.waitForReady(timeoutMs); }
  close() { this.rpc.close(); }
}

/** The QMP passthrough (one QMP command through a launcher's command socket). */
export class QmpPassthroughClient {
  readonly rpc: UnaryClient<QmpPassthroughMethods>;
  constructor(socketPath: string, opts: { timeoutMs?: number } = {}) {
    this.rpc = new UnaryClient<QmpPassthroughMethods>(qmpPassthroughService(), socketPath, opts);
  }
  execute(command: string, args?: Record<string, unknown>, o: { unsafe?: boolean; caller?: string; timeoutSeconds?: number } & CallOptions = {}) {
    return this.rpc.call('Execute', {
      command,
      argumentsJson: args ? JSON.stringify(args) : '',
      unsafe: o.unsafe ?? false,
      caller: o.caller ?? '',
      timeoutSeconds: o.timeoutSeconds ?? 0,
    }, o);
  }
  close() { this.rpc.close(); }
}

/** Asks a launcher which command versions it serves and picks ours. */
export async function negotiateCmdVersion(socketPath: string, opts: CallOptions = {}): Promise<number> {
  const client = new UnaryClient<CmdInfoMethods>(cmdInfoService(), socketPath);
  try {
    const info = await client.call('Info', {}, { timeoutMs: 5000, ...opts });
    return highestCompatibleVersion(info.supportedCmdVersions, SUPPORTED_CMD_VERSIONS);
  } finally {
    client.close();
  }
}

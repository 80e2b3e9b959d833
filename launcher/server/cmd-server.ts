// The launcher's command server: kubevirt.cmd.v1.Cmd (+ kubevirt.cmd.info.CmdInfo and qvirt's QMP
// passthrough) over gRPC on a unix socket in the share dir. It listens on
// `<share-dir>/sockets/launcher-init-sock` while the launcher starts and becomes visible to the
// handler when markReady() renames it to `launcher-sock` (KubeVirt's readiness signal). Command
// failures are answered as `Response{success:false, message}` saying what failed; Exec and
// GuestPing failures are gRPC errors, as KubeVirt's handler expects.
import { renameSync, rmSync, mkdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { GrpcServer } from '../../src/proto/h2/grpc-server.ts';
import { cmdService, type CmdHandlers, type Response, type VMI } from '../../src/proto/cmd.ts';
import { cmdInfoService, cmdInfoHandlers } from '../../src/proto/info.ts';
import { qmpPassthroughService, type QmpPassthroughMethods } from '../../src/proto/qmp.ts';
import type { DomainManager } from '../supervise/domain-manager.ts';
import type { DomainMigration } from '../migration/domain-migration.ts';
import { errorMessage } from '../supervise/qmp-connection.ts';
import { qmpPassthroughHandlers } from './qmp-passthrough.ts';
import { migrationHandlers } from '../migration/cmd-handlers.ts';

export const SOCKETS_DIR = 'sockets';
export const LAUNCHER_INIT_SOCKET = 'launcher-init-sock';
export const LAUNCHER_SOCKET = 'launcher-sock';

/** `<shareDir>/sockets/launcher-sock`, where a handler finds a ready launcher. */
export function launcherSocketPath(shareDir: string): string {
  return join(shareDir, SOCKETS_DIR, LAUNCHER_SOCKET);
}
export function launcherInitSocketPath(shareDir: string): string {
  return join(shareDir, SOCKETS_DIR, LAUNCHER_INIT_SOCKET);
}

/** KubeVirt's message for a request without a parsable VMI. */
export const INVALID_VMI_MESSAGE = 'No valid vmi object present in command server request';

/** RPCs qvirt does not implement yet: answered with success=false and this message. */
export function notSupported(rpc: string): Response {
  return { success: false, message: `${rpc} is not supported by qvirt yet` };
}

const OK: Response = { success: true, message: '' };
const fail = (err: unknown): Response => ({ success: false, message: errorMessage(err) });

/** Parses the request's VMI JSON; undefined when absent or not a VMI. */
export function parseVmi(msg: VMI | null | undefined): VirtualMachineInstance | undefined {
  if (!msg?.vmiJson || msg.vmiJson.length === 0) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(msg.vmiJson).toString('utf8'));
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const vmi = v as VirtualMachineInstance;
    if (typeof vmi.spec !== 'object' || vmi.spec === null) return undefined;
    return vmi;
  } catch {
    return undefined;
  }
}

/**
 * The Cmd service implementation over a DomainManager and its live migration. `podPath` turns a path of the launcher pod
 * (the memory dump's, as the handler names it) into this process's view of it (the local mode roots
 * a pod's paths in a directory).
 */
export function cmdHandlers(manager: DomainManager, migration: DomainMigration, log: Logger, shareDir = '', podPath: (p: string) => string = (p) => p): CmdHandlers {
  const withVmi = (rpc: string, fn: (vmi: VirtualMachineInstance) => Promise<void>) => async (req: { vmi: VMI | null }): Promise<Response> => {
    const vmi = parseVmi(req.vmi);
    if (!vmi) return { success: false, message: INVALID_VMI_MESSAGE };
    try {
      await fn(vmi);
      log.info({ rpc }, 'command done');
      return OK;
    } catch (err) {
      log.error({ rpc, err: errorMessage(err) }, 'command failed');
      return fail(err);
    }
  };
  const unsupported = (rpc: string) => async () => {
    log.info({ rpc }, 'unsupported command requested');
    return notSupported(rpc);
  };
  const json = async <K extends string>(key: K, rpc: string, fn: () => Promise<unknown>) => {
    try {
      return { response: OK, [key]: JSON.stringify(await fn()) } as { response: Response } & Record<K, string>;
    } catch (err) {
      log.error({ rpc, err: errorMessage(err) }, 'command failed');
      return { response: fail(err), [key]: '' } as { response: Response } & Record<K, string>;
    }
  };

  return {
    SyncVirtualMachine: withVmi('SyncVirtualMachine', (vmi) => manager.sync(vmi)),
    PauseVirtualMachine: withVmi('PauseVirtualMachine', () => manager.pause()),
    UnpauseVirtualMachine: withVmi('UnpauseVirtualMachine', () => manager.unpause()),
    FreezeVirtualMachine: async (req) => withVmi('FreezeVirtualMachine', () => manager.guestAgent.freeze(req.unfreezeTimeoutSeconds))(req),
    UnfreezeVirtualMachine: withVmi('UnfreezeVirtualMachine', () => manager.guestAgent.unfreeze()),
    ResetVirtualMachine: withVmi('ResetVirtualMachine', () => manager.reset()),
    SoftRebootVirtualMachine: withVmi('SoftRebootVirtualMachine', () => manager.softReboot()),
    ShutdownVirtualMachine: withVmi('ShutdownVirtualMachine', () => manager.signalShutdown()),
    KillVirtualMachine: withVmi('KillVirtualMachine', () => manager.kill()),
    DeleteVirtualMachine: withVmi('DeleteVirtualMachine', () => manager.delete()),
    // Not the migration target of anything: nothing to clean up (KubeVirt does the same).
    SignalTargetPodCleanup: withVmi('SignalTargetPodCleanup', async () => {}),
    ...migrationHandlers({ migration, uid: manager.vmiRef.uid, shareDir, withVmi }),
    HotplugHostDevices: unsupported('HotplugHostDevices'),
    SyncVirtualMachineCPUs: unsupported('SyncVirtualMachineCPUs'),
    SyncVirtualMachineMemory: unsupported('SyncVirtualMachineMemory'),
    VirtualMachineMemoryDump: async (req) => {
      if (!req.dumpPath || !isAbsolute(req.dumpPath)) return { success: false, message: `VirtualMachineMemoryDump: dumpPath ${JSON.stringify(req.dumpPath)} is not an absolute path` };
      return withVmi('VirtualMachineMemoryDump', () => manager.memoryDump(podPath(req.dumpPath)))(req);
    },
    InjectLaunchSecret: unsupported('InjectLaunchSecret'),
    BackupVirtualMachine: unsupported('BackupVirtualMachine'),
    GetSEVInfo: async () => ({ response: notSupported('GetSEVInfo'), sevInfo: Buffer.alloc(0) }),
    GetLaunchMeasurement: async () => ({ response: notSupported('GetLaunchMeasurement'), launchMeasurement: Buffer.alloc(0) }),
    GetDomainDirtyRateStats: async () => ({ response: notSupported('GetDomainDirtyRateStats'), dirtyRateMbs: 0 }),
    RedefineCheckpoint: async () => ({ response: notSupported('RedefineCheckpoint'), checkpointInvalid: false }),
    GetVMStats: async () => ({ response: notSupported('GetVMStats'), domainStats: null, dirtyRateStats: null }),

    GetDomain: async () => {
      const domain = manager.getDomain();
      return { response: OK, domain: domain ? JSON.stringify(domain) : '' };
    },
    GetDomainStats: () => json('domainStats', 'GetDomainStats', () => manager.stats()),
    GetGuestInfo: () => json('guestInfoResponse', 'GetGuestInfo', () => manager.guestAgent.guestInfo()),
    GetUsers: () => json('guestUserListResponse', 'GetUsers', () => manager.guestAgent.users()),
    GetFilesystems: () => json('guestFilesystemsResponse', 'GetFilesystems', () => manager.guestAgent.filesystems()),
    GetScreenshot: async () => {
      try {
        return { response: OK, ...(await manager.screenshot()) };
      } catch (err) {
        return { response: fail(err), mime: '', data: Buffer.alloc(0) };
      }
    },
    GetQemuVersion: async () => {
      try {
        return { response: OK, version: await manager.qemuVersion() };
      } catch (err) {
        return { response: fail(err), version: '' };
      }
    },
    Ping: async () => OK,
    GuestPing: async (req) => {
      // Failure is a gRPC error (KubeVirt's cmd-client treats only that as a failed probe).
      await manager.guestAgent.ping(req.timeoutSeconds);
      return { response: OK };
    },
    Exec: async (req) => {
      const r = await manager.guestAgent.exec(req.Command, req.Args, req.timeoutSeconds);
      return { response: OK, exitCode: r.exitCode, stdOut: r.stdout };
    },
  };
}

export interface CmdServerOptions {
  shareDir: string;
  manager: DomainManager;
  migration: DomainMigration;
  /** Per-VMI logger. */
  log: Logger;
  /** A launcher pod path as this process sees it (default: itself). */
  podPath?: ((p: string) => string) | undefined;
}

export class CmdServer {
  readonly initSocketPath: string;
  readonly socketPath: string;
  private readonly server: GrpcServer;
  private readonly log: Logger;
  private ready = false;
  private stopped = false;

  private constructor(server: GrpcServer, opts: CmdServerOptions) {
    this.server = server;
    this.log = opts.log;
    this.initSocketPath = launcherInitSocketPath(opts.shareDir);
    this.socketPath = launcherSocketPath(opts.shareDir);
  }

  /**
   * Listens on launcher-init-sock. KubeVirt's launcher then Pings its own server (up to 15 s) because its
   * gRPC server starts serving on a goroutine of its own; this one serves once listen has resolved, so
   * that check proved nothing here and cost every launcher start ~15–20 ms of CPU (a client channel and an
   * HTTP/2 session on both ends). The handler's own Ping on the published socket still checks it answers.
   */
  static async start(opts: CmdServerOptions): Promise<CmdServer> {
    mkdirSync(join(opts.shareDir, SOCKETS_DIR), { recursive: true });
    const server = new GrpcServer();
    server.addUnaryService(cmdService(), cmdHandlers(opts.manager, opts.migration, opts.log, opts.shareDir, opts.podPath));
    server.addUnaryService(cmdInfoService(), cmdInfoHandlers);
    server.addUnaryService<QmpPassthroughMethods>(qmpPassthroughService(), qmpPassthroughHandlers({ qmp: () => opts.manager.qemu?.qmp, log: opts.log }));
    const s = new CmdServer(server, opts);
    rmSync(s.socketPath, { force: true });
    await server.listen(s.initSocketPath);
    opts.log.info({ socket: s.initSocketPath }, 'command server listening');
    return s;
  }

  /** KubeVirt's markReady: rename launcher-init-sock → launcher-sock (atomic). */
  markReady(): void {
    if (this.ready || this.stopped) return;
    renameSync(this.initSocketPath, this.socketPath);
    this.ready = true;
    this.log.info({ socket: this.socketPath }, 'launcher ready: command socket published');
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** Stops serving and removes the socket file. */
  async stop(graceMs = 1000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.server.shutdown(graceMs);
    rmSync(this.initSocketPath, { force: true });
    rmSync(this.socketPath, { force: true });
    this.log.info('command server stopped');
  }
}

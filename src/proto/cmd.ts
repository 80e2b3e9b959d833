// kubevirt.cmd.v1.Cmd: the commands a node agent sends to a VM's launcher (KubeVirt's
// pkg/handler-launcher-com/cmd/v1). Typed messages and the
// handler types the launcher's server implements (the node agent's client: launcher-client.ts).
import { loadService, type UnaryHandlers } from './service.ts';

export interface Response { success: boolean; message: string }

export interface VMI { vmiJson: Buffer }

export interface SMBios { manufacturer: string; product: string; version: string; sku: string; family: string }
export interface TopologyMemory { amount: number; unit: string }
export interface Pages { count: number; unit: string; size: number }
export interface Sibling { id: number; value: number }
export interface TopologyCPU { id: number; siblings: number[] }
export interface Cell { id: number; memory: TopologyMemory | null; pages: Pages[]; distances: Sibling[]; cpus: TopologyCPU[] }
export interface Topology { numa_cells: Cell[] }
export interface DiskInfo { format: string; backingFile: string; actualSize: number; virtualSize: number }
export interface ClusterConfig {
  ExpandDisksEnabled: boolean;
  FreePageReportingDisabled: boolean;
  BochsDisplayForEFIGuests: boolean;
  SerialConsoleLogDisabled: boolean;
  PCINUMAAwareTopologyEnabled: boolean;
  VGPULiveMigrationEnabled: boolean;
  GraceIOVirtualizationEnabled: boolean;
}
export interface InterfaceBindingMigration { Method: string }

export interface VirtualMachineOptions {
  VirtualMachineSMBios: SMBios | null;
  MemBalloonStatsPeriod: number;
  PreallocatedVolumes: string[];
  topology: Topology | null;
  DisksInfo: Record<string, DiskInfo>;
  ExpandDisksEnabled: boolean;
  clusterConfig: ClusterConfig | null;
  interfaceDomainAttachment: Record<string, string>;
  interfaceMigration: Record<string, InterfaceBindingMigration>;
  pluginsJson: Buffer;
  GraceHostDeviceAliases: string[];
}

/** Requests may leave any field out; responses have every field (proto3 defaults). */
export type Partialish<T> = { [K in keyof T]?: T[K] extends Buffer ? Buffer | Uint8Array : T[K] extends object | null ? Partialish<NonNullable<T[K]>> | null : T[K] };

export interface VMIRequest { vmi: VMI | null; options: VirtualMachineOptions | null }
export interface MigrationRequest { vmi: VMI | null; options: Buffer }
export interface FreezeRequest { vmi: VMI | null; unfreezeTimeoutSeconds: number }
export interface MemoryDumpRequest { vmi: VMI | null; dumpPath: string }
export interface ExecRequest { domainName: string; Command: string; Args: string[]; timeoutSeconds: number }
export interface GuestPingRequest { domainName: string; timeoutSeconds: number }
export interface InjectLaunchSecretRequest { vmi: VMI | null; options: Buffer }
export interface BackupRequest { vmi: VMI | null; options: Buffer }
export interface RedefineCheckpointRequest { vmi: VMI | null; checkpoint: Buffer }
export type EmptyRequest = Record<string, never>;
export type VMStatsRequest = Record<string, Record<string, never> | null>;

export interface DomainResponse { response: Response | null; domain: string }
export interface DomainStatsResponse { response: Response | null; domainStats: string }
export interface GuestInfoResponse { response: Response | null; guestInfoResponse: string }
export interface GuestUserListResponse { response: Response | null; guestUserListResponse: string }
export interface GuestFilesystemsResponse { response: Response | null; guestFilesystemsResponse: string }
export interface ExecResponse { response: Response | null; exitCode: number; stdOut: string }
export interface GuestPingResponse { response: Response | null }
export interface QemuVersionResponse { response: Response | null; version: string }
export interface SEVInfoResponse { response: Response | null; sevInfo: Buffer }
export interface LaunchMeasurementResponse { response: Response | null; launchMeasurement: Buffer }
export interface DirtyRateStatsResponse { response: Response | null; dirtyRateMbs: number }
export interface ScreenshotResponse { response: Response | null; mime: string; data: Buffer }
export interface RedefineCheckpointResponse { response: Response | null; checkpointInvalid: boolean }
export interface VMStatsResponse {
  response: Response | null;
  domainStats: DomainStatsResponse | null;
  dirtyRateStats: DirtyRateStatsResponse | null;
  [agentGroup: string]: Response | DomainStatsResponse | DirtyRateStatsResponse | null;
}

/** Every method of kubevirt.cmd.v1.Cmd: [request, response]. */
export type CmdMethods = {
  SyncVirtualMachine: [VMIRequest, Response];
  PauseVirtualMachine: [VMIRequest, Response];
  UnpauseVirtualMachine: [VMIRequest, Response];
  FreezeVirtualMachine: [FreezeRequest, Response];
  UnfreezeVirtualMachine: [VMIRequest, Response];
  ResetVirtualMachine: [VMIRequest, Response];
  SoftRebootVirtualMachine: [VMIRequest, Response];
  ShutdownVirtualMachine: [VMIRequest, Response];
  KillVirtualMachine: [VMIRequest, Response];
  DeleteVirtualMachine: [VMIRequest, Response];
  MigrateVirtualMachine: [MigrationRequest, Response];
  SyncMigrationTarget: [VMIRequest, Response];
  CancelVirtualMachineMigration: [VMIRequest, Response];
  SignalTargetPodCleanup: [VMIRequest, Response];
  FinalizeVirtualMachineMigration: [VMIRequest, Response];
  HotplugHostDevices: [VMIRequest, Response];
  GetDomain: [EmptyRequest, DomainResponse];
  GetDomainStats: [EmptyRequest, DomainStatsResponse];
  GetGuestInfo: [EmptyRequest, GuestInfoResponse];
  GetUsers: [EmptyRequest, GuestUserListResponse];
  GetFilesystems: [EmptyRequest, GuestFilesystemsResponse];
  Ping: [EmptyRequest, Response];
  Exec: [ExecRequest, ExecResponse];
  GuestPing: [GuestPingRequest, GuestPingResponse];
  VirtualMachineMemoryDump: [MemoryDumpRequest, Response];
  GetQemuVersion: [EmptyRequest, QemuVersionResponse];
  SyncVirtualMachineCPUs: [VMIRequest, Response];
  SyncVirtualMachineMemory: [VMIRequest, Response];
  GetSEVInfo: [EmptyRequest, SEVInfoResponse];
  GetLaunchMeasurement: [VMIRequest, LaunchMeasurementResponse];
  InjectLaunchSecret: [InjectLaunchSecretRequest, Response];
  GetDomainDirtyRateStats: [EmptyRequest, DirtyRateStatsResponse];
  GetScreenshot: [VMIRequest, ScreenshotResponse];
  BackupVirtualMachine: [BackupRequest, Response];
  RedefineCheckpoint: [RedefineCheckpointRequest, RedefineCheckpointResponse];
  GetVMStats: [VMStatsRequest, VMStatsResponse];
};

export type CmdMethodName = keyof CmdMethods;

/** What the launcher implements. */
export type CmdHandlers = UnaryHandlers<CmdMethods>;

export const CMD_SERVICE_NAME = 'kubevirt.cmd.v1.Cmd';
export function cmdService() {
  return loadService('cmd.proto', CMD_SERVICE_NAME);
}

/** The VMI of a request as the wire's `VMI{vmiJson}`. */
export function vmiMessage(vmi: unknown): VMI {
  return { vmiJson: Buffer.from(JSON.stringify(vmi)) };
}

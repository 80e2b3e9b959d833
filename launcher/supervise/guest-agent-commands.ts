// The guest agent's side of the domain manager (KubeVirt's agent calls in LibvirtDomainManager and
// its agent poller): the agent channel's state (VSERPORT_CHANGE, from a QMP subscription of its
// own), the guest's OS info, filesystem freeze with its automatic thaw, guest information, users,
// filesystems, ping, exec, the clock after a migration, and the guest-shutdown request. One
// client per QEMU, attached at start and detached at exit.
import type { Logger } from '../../src/log/logger.ts';
import { FSFreezeStatus } from '../../src/api/domain/lifecycle.ts';
import type { GuestOSInfo } from '../../src/api/domain/domain.ts';
import { GuestAgentClient } from '../guest-agent/client.ts';
import { domainOSInfo, guestAgentInfo, guestFilesystems, guestUsers } from '../guest-agent/info.ts';
import { errorMessage, onQmpEvents, type QmpConnection, type QmpEventStream } from './qmp-connection.ts';

/** What the agent commands need of the domain manager. */
export interface GuestAgentHost {
  readonly log: Logger;
  /** Throws (DomainOperationError) unless the domain runs; `what` names the command. */
  requireQemu(what: string): void;
  /** Runs `fn` after the manager's other commands, failures wrapped as `<what> failed: ...`. */
  exclusive<T>(what: string, fn: () => Promise<T>): Promise<T>;
  /** A command error (DomainOperationError). */
  error(message: string): Error;
  /** What the handler sees changed (freeze status). */
  publish(): void;
  /** What the handler sees changed, if the domain is alive (OS info). */
  publishIfAlive(): void;
  /** What the handler sees changed, if the domain is defined (the channel's state). */
  publishIfDefined(): void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class GuestAgentCommands {
  private readonly host: GuestAgentHost;
  private client: GuestAgentClient | undefined;
  private open = false;
  private os: GuestOSInfo | undefined;
  private freezeStatus: string | undefined;
  private unfreezeTimer: NodeJS.Timeout | undefined;
  private channelEvents: QmpEventStream | undefined;

  constructor(host: GuestAgentHost) {
    this.host = host;
  }

  /**
   * A new QEMU: its agent channel socket (none: no agent), closed until VSERPORT_CHANGE for the
   * virtserialport `channelId` says open.
   */
  attach(qmp: QmpConnection, socketPath: string | undefined, channelId: string, timeoutMs: number | undefined): void {
    this.os = undefined;
    this.freezeStatus = undefined;
    this.open = false;
    if (socketPath) this.client = new GuestAgentClient(socketPath, { log: this.host.log, timeoutMs });
    this.channelEvents?.close();
    this.channelEvents = onQmpEvents(qmp, ['VSERPORT_CHANGE'], (ev) => {
      if (ev.data?.id === channelId && this.channelChanged(ev.data?.open === true)) this.host.publishIfDefined();
    }, this.host.log);
  }

  /** QEMU has exited: the channel is gone. */
  detach(): void {
    this.channelEvents?.close();
    this.client?.close();
    this.client = undefined;
    this.open = false;
    clearTimeout(this.unfreezeTimer);
  }

  close(): void {
    this.channelEvents?.close();
    this.client?.close();
    clearTimeout(this.unfreezeTimer);
  }

  get connected(): boolean {
    return this.open;
  }

  get osInfo(): GuestOSInfo | undefined {
    return this.os;
  }

  get fsFreezeStatus(): string | undefined {
    return this.freezeStatus;
  }

  /** The client while the channel is open (access credentials propagate through it). */
  available(): GuestAgentClient | undefined {
    return this.open ? this.client : undefined;
  }

  /** The agent channel opened or closed. Returns whether that is a change. */
  private channelChanged(open: boolean): boolean {
    if (open === this.open) return false;
    this.open = open;
    this.host.log.info({ connected: open }, 'guest agent channel changed');
    if (open) void this.refreshOSInfo();
    return true;
  }

  private async refreshOSInfo(): Promise<void> {
    const agent = this.client;
    if (!agent) return;
    try {
      this.os = domainOSInfo(await agent.execute('guest-get-osinfo'));
      this.host.publishIfAlive();
    } catch (err) {
      this.host.log.debug({ err: errorMessage(err) }, 'guest-get-osinfo failed');
    }
  }

  private require(what: string): GuestAgentClient {
    this.host.requireQemu(what);
    if (!this.client || !this.open) throw this.host.error(`${what}: the guest agent is not connected`);
    return this.client;
  }

  /** guest-shutdown (powerdown or reboot); answers nothing on success. Throws without a connected agent. */
  async shutdown(mode: 'powerdown' | 'reboot'): Promise<void> {
    const agent = this.available();
    if (!agent) throw this.host.error('guest-shutdown: the guest agent is not connected');
    await agent.execute('guest-shutdown', { mode }, { noReplyOnSuccess: true, timeoutMs: 2000 });
  }

  /** FreezeVirtualMachine: guest-fsfreeze-freeze; thawed again after `unfreezeTimeoutSeconds` (> 0). */
  freeze(unfreezeTimeoutSeconds: number): Promise<void> {
    return this.host.exclusive('FreezeVirtualMachine', async () => {
      const agent = this.require('FreezeVirtualMachine');
      const frozen = await agent.execute<number>('guest-fsfreeze-freeze', undefined, { timeoutMs: 30_000 });
      this.host.log.info({ filesystems: frozen }, 'guest filesystems frozen');
      this.freezeStatus = FSFreezeStatus.Frozen;
      this.host.publish();
      clearTimeout(this.unfreezeTimer);
      if (unfreezeTimeoutSeconds > 0) {
        this.unfreezeTimer = setTimeout(() => {
          this.host.log.warn({ unfreezeTimeoutSeconds }, 'unfreeze timeout reached: thawing guest filesystems');
          this.unfreeze().catch((err: unknown) => this.host.log.error({ err: errorMessage(err) }, 'automatic thaw failed'));
        }, unfreezeTimeoutSeconds * 1000);
        this.unfreezeTimer.unref();
      }
    });
  }

  /** UnfreezeVirtualMachine: guest-fsfreeze-thaw. */
  unfreeze(): Promise<void> {
    return this.host.exclusive('UnfreezeVirtualMachine', async () => {
      clearTimeout(this.unfreezeTimer);
      const agent = this.require('UnfreezeVirtualMachine');
      await agent.execute('guest-fsfreeze-thaw', undefined, { timeoutMs: 30_000 });
      this.freezeStatus = FSFreezeStatus.Thawed;
      this.host.publish();
    });
  }

  /** GetGuestInfo: v1.VirtualMachineInstanceGuestAgentInfo JSON (empty parts without an agent). */
  async guestInfo(): Promise<Record<string, unknown>> {
    const agent = this.available();
    if (!agent) return guestAgentInfo({ fsFreezeStatus: this.freezeStatus });
    const get = (cmd: string) => agent.execute(cmd).catch((err: unknown) => {
      this.host.log.debug({ command: cmd, err: errorMessage(err) }, 'guest agent query failed');
      return undefined;
    });
    const info = await get('guest-info');
    const osinfo = await get('guest-get-osinfo');
    const hostname = await get('guest-get-host-name');
    const timezone = await get('guest-get-timezone');
    const users = await get('guest-get-users');
    const fsinfo = await get('guest-get-fsinfo');
    const freeze = await get('guest-fsfreeze-status');
    if (osinfo !== undefined) this.os = domainOSInfo(osinfo);
    return guestAgentInfo({ info, osinfo, hostname, timezone, users, fsinfo, fsFreezeStatus: typeof freeze === 'string' ? freeze : this.freezeStatus });
  }

  /** GetUsers: VirtualMachineInstanceGuestOSUserList JSON. */
  async users(): Promise<Record<string, unknown>> {
    const agent = this.available();
    const items = agent ? guestUsers(await agent.execute('guest-get-users').catch(() => [])) : [];
    return { metadata: {}, items };
  }

  /** GetFilesystems: VirtualMachineInstanceFileSystemList JSON. */
  async filesystems(): Promise<Record<string, unknown>> {
    const agent = this.available();
    const items = agent ? guestFilesystems(await agent.execute('guest-get-fsinfo').catch(() => [])) : [];
    return { metadata: {}, items };
  }

  /** GuestPing: guest-ping within `timeoutSeconds`. */
  async ping(timeoutSeconds: number): Promise<void> {
    const agent = this.require('GuestPing');
    await agent.execute('guest-ping', undefined, { timeoutMs: Math.max(1, timeoutSeconds || 10) * 1000 });
  }

  /**
   * Exec: runs a command in the guest through the agent (guest-exec + guest-exec-status),
   * waiting up to `timeoutSeconds`. Resolves with the exit code and standard output.
   */
  async exec(command: string, args: string[], timeoutSeconds: number): Promise<{ exitCode: number; stdout: string }> {
    const agent = this.require('Exec');
    const started = await agent.execute<{ pid?: number }>('guest-exec', { path: command, arg: args, 'capture-output': true });
    const pid = started?.pid;
    if (typeof pid !== 'number') throw this.host.error(`Exec: guest-exec of ${command} returned no pid`);
    const deadline = Date.now() + Math.max(1, timeoutSeconds || 10) * 1000;
    for (;;) {
      const st = await agent.execute<{ exited?: boolean; exitcode?: number; signal?: number; 'out-data'?: string }>('guest-exec-status', { pid });
      if (st?.exited) {
        const stdout = st['out-data'] ? Buffer.from(st['out-data'], 'base64').toString('utf8') : '';
        return { exitCode: st.exitcode ?? (st.signal !== undefined ? 128 + st.signal : 0), stdout };
      }
      if (Date.now() > deadline) throw this.host.error(`Exec: ${command} did not finish within ${timeoutSeconds} s`);
      await sleep(100);
    }
  }

  /**
   * FinalizeVirtualMachineMigration (target): the guest runs here; bring its clock up to date
   * through the guest agent when there is one (KubeVirt's finalizeMigrationTarget sets the time).
   */
  async setTimeAfterMigration(): Promise<void> {
    this.host.requireQemu('FinalizeVirtualMachineMigration');
    const agent = this.available();
    if (agent) {
      await agent.execute('guest-set-time', undefined, { timeoutMs: 5000 }).catch((err: unknown) => this.host.log.warn({ err: errorMessage(err) }, 'guest-set-time after migration failed'));
    }
  }
}

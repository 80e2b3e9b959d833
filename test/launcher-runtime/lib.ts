// Helpers for the launcher runtime tests: a real Notify server (what the handler runs) that
// records every event, and a runtime in a fresh temp dir that is torn down completely.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { grpc, addUnaryService, listenUnix, shutdownServer } from '../../src/proto/grpc.ts';
import { notifyService, type NotifyHandlers } from '../../src/proto/notify.ts';
import { notifyInfoService, notifyInfoHandlers } from '../../src/proto/info.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { startLauncherRuntime, type LauncherRuntime, type LauncherRuntimeOptions } from '../../launcher/runtime.ts';
import type { Domain } from '../../src/api/domain/domain.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';
import { ensureGuest, kernelCmdline, type GuestArtifacts } from '../../src/local/guest/guest.ts';
import { entriesUnder } from '../lib/walk.ts';
export { markers } from '../../src/local/guest/guest.ts';

export interface RecordedDomainEvent { type: string; domain: Domain; at: number }
export interface RecordedK8sEvent { reason: string; type: string; message: string; involvedObject: { name: string; uid: string } }

export class NotifyRecorder {
  readonly domainEvents: RecordedDomainEvent[] = [];
  readonly k8sEvents: RecordedK8sEvent[] = [];
  readonly server = new grpc.Server();
  private waiters: (() => void)[] = [];

  static async listen(socketPath: string): Promise<NotifyRecorder> {
    const r = new NotifyRecorder();
    const handlers: NotifyHandlers = {
      HandleDomainEvent: async (req) => {
        r.domainEvents.push({ type: req.eventType, domain: JSON.parse(req.domainJSON.toString()) as Domain, at: Date.now() });
        r.wake();
        return { success: true, message: '' };
      },
      HandleK8sEvent: async (req) => {
        r.k8sEvents.push(JSON.parse(req.eventJSON.toString()) as RecordedK8sEvent);
        r.wake();
        return { success: true, message: '' };
      },
    };
    addUnaryService(r.server, notifyService(), handlers);
    addUnaryService(r.server, notifyInfoService(), notifyInfoHandlers);
    await listenUnix(r.server, socketPath);
    return r;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until some domain event satisfies `pred`; returns it. */
  async waitDomain(pred: (e: RecordedDomainEvent) => boolean, timeoutMs = 20_000, what = 'domain event'): Promise<RecordedDomainEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.domainEvents.find(pred);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; got: ${this.domainEvents.map((e) => `${e.type} ${e.domain.Status.Status}/${e.domain.Status.Reason}${e.domain.ObjectMeta.deletionTimestamp ? ' (deleted)' : ''}`).join(', ')}`);
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 200));
        this.waiters.push(() => { clearTimeout(t); r(); });
      });
    }
  }

  async stop(): Promise<void> {
    await shutdownServer(this.server, 0);
  }
}

export const hasState = (status: string, reason: string) => (e: RecordedDomainEvent) => e.domain.Status.Status === status && e.domain.Status.Reason === reason;

export function testVmi(name: string, uid: string, spec: Partial<VirtualMachineInstance['spec']> = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default', uid },
    spec: { domain: { devices: {} }, terminationGracePeriodSeconds: 30, ...spec } as VirtualMachineInstance['spec'],
    status: { phase: 'Scheduled' } as VirtualMachineInstance['status'],
  };
}

export interface Harness {
  dir: string;
  shareDir: string;
  runDir: string;
  notify: NotifyRecorder;
  runtime: LauncherRuntime;
  /** Everything gone: QEMU, server, notifier, sockets, temp dir. */
  cleanup(): Promise<void>;
}

export async function harness(opts: Omit<LauncherRuntimeOptions, 'shareDir' | 'runDir' | 'log' | 'vmiRef'> & { uid: string; name?: string }): Promise<Harness> {
  const tmp = tempDir('qvrt');
  const shareDir = join(tmp.path, 'share');
  const runDir = join(tmp.path, 'run');
  mkdirSync(shareDir, { recursive: true });
  mkdirSync(runDir, { recursive: true });
  const notify = await NotifyRecorder.listen(join(shareDir, 'domain-notify-pipe.sock'));
  const log = componentLogger('launcher');
  let runtime: LauncherRuntime;
  try {
    runtime = await startLauncherRuntime({
      ...opts,
      shareDir,
      runDir,
      log,
      vmiRef: { namespace: 'default', name: opts.name ?? 'testvm', uid: opts.uid },
    });
  } catch (err) {
    await notify.stop();
    tmp.cleanup();
    throw err;
  }
  return {
    dir: tmp.path,
    shareDir,
    runDir,
    notify,
    runtime,
    cleanup: async () => {
      await runtime.close();
      await notify.stop();
      tmp.cleanup();
    },
  };
}

/** Socket files left in a directory tree. */
export function socketsIn(dir: string): string[] {
  return entriesUnder(dir).filter((e) => e.entry.isSocket()).map((e) => e.path);
}

/** True when process `pid` is gone (or a zombie). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

/** The test guest's kernel and initramfs (src/local/guest, built once and cached). */
export function guestImages(): Promise<GuestArtifacts> {
  return ensureGuest();
}

/** A hand-written argv booting the test guest under TCG with a serial log and a guest agent channel. */
export function guestArgv(g: { kernel: string; initrd: string }, dir: string, opts: { agent?: boolean; append?: string } = {}): { argv: string[]; serialLog: string; agentSocket: string } {
  const serialLog = join(dir, 'serial.log');
  const agentSocket = join(dir, 'qga.sock');
  const append = [kernelCmdline, 'panic=-1', 'qvirt.shell=0', opts.agent === false ? 'qvirt.ga=0' : '', opts.append ?? ''].filter(Boolean).join(' ');
  const argv = [
    '-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-m', '256', '-smp', '1',
    '-nodefaults', '-no-user-config', '-display', 'none',
    '-kernel', g.kernel, '-initrd', g.initrd, '-append', append,
    '-chardev', `file,id=serial0,path=${serialLog}`, '-device', 'isa-serial,chardev=serial0',
    '-device', 'virtio-serial-pci,id=virtio-serial0',
    '-chardev', `socket,id=charchannel0,path=${agentSocket},server=on,wait=off`,
    '-device', 'virtserialport,bus=virtio-serial0.0,nr=1,chardev=charchannel0,id=channel0,name=org.qemu.guest_agent.0',
  ];
  return { argv, serialLog, agentSocket };
}

/**
 * Waits until the serial log contains `marker` (optionally its n-th occurrence). The default bound
 * is for a boot: the test guest boots in 6–27 s under TCG depending on the host's load.
 */
export async function waitSerial(path: string, marker: string, timeoutMs = 120_000, occurrence = 1): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let text = '';
    try { text = readFileSync(path, 'utf8'); } catch { /* not yet */ }
    if (text.split(marker).length - 1 >= occurrence) return text;
    if (Date.now() > deadline) throw new Error(`serial log ${path} has no ${marker} (x${occurrence}) after ${timeoutMs} ms; tail: ${text.slice(-600)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function waitFor(what: string, pred: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

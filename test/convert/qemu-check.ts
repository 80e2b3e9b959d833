// Runs a LaunchPlan for real: creates the fixture's disk files with qemu-img under a temp root,
// prepares the plan's files, spawns QEMU 7.2 with the plan's argv (it carries -S) and the QMP
// monitor on an inherited socketpair (fd 3), and reads back what QEMU realized.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Duplex } from 'node:stream';
import type { LaunchPlan } from '../../launcher/convert/index.ts';
import type { Fixture } from './fixtures.ts';

/** A bzImage header QEMU's x86 loader accepts (it is never executed: the VM stays in prelaunch). */
function fakeKernel(): Buffer {
  const b = Buffer.alloc(64 * 1024);
  b[0x1f1] = 1;
  b.writeUInt16LE(0xaa55, 0x1fe);
  b.write('HdrS', 0x202, 'latin1');
  b.writeUInt16LE(0x020f, 0x206);
  b[0x211] = 0x01;
  b.writeUInt32LE(0x7fffffff, 0x22c);
  b.writeUInt32LE(255, 0x238);
  return b;
}

/** Create every file the fixture's VMI needs below `root`, and the plan's files-to-prepare. */
export function prepareFiles(f: Fixture, root: string, plan: LaunchPlan): void {
  const img = (args: string[]): void => { execFileSync('qemu-img', args, { stdio: 'ignore' }); };
  for (const image of Object.values(f.images)) {
    mkdirSync(dirname(root + image.path), { recursive: true });
    if (image.backing) {
      mkdirSync(dirname(root + image.backing.path), { recursive: true });
      img(['create', '-f', image.backing.format, root + image.backing.path, image.backing.size]);
      img(['create', '-f', 'qcow2', '-F', image.backing.format, '-b', root + image.backing.path, root + image.path]);
    } else {
      img(['create', '-f', image.format, root + image.path, image.size ?? '1M']);
    }
  }
  if (f.kernelBoot) {
    const dir = `${root}/var/run/kubevirt/container-disks/kernel-boot`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/vmlinuz-virt`, fakeKernel());
    writeFileSync(`${dir}/initramfs-virt`, Buffer.alloc(4096));
  }
  for (const file of plan.files) {
    mkdirSync(dirname(file.destination), { recursive: true });
    if (!(file.onlyIfMissing && existsSync(file.destination))) copyFileSync(file.source, file.destination);
  }
  const priv = plan.pidFile.slice(0, plan.pidFile.lastIndexOf('/'));
  mkdirSync(priv, { recursive: true });
}

export interface QmpSession {
  child: ChildProcess;
  greeting: Record<string, unknown>;
  execute(cmd: string, args?: Record<string, unknown>): Promise<unknown>;
  stderr(): string;
  /** Events received so far. */
  events: Array<{ event: string; data?: Record<string, unknown> }>;
  /** Resolves with the first matching event, including ones already received. */
  waitEvent(name: string, pred: (data: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** `quit` and wait for exit; kills on timeout. Resolves to the exit code. */
  quit(): Promise<number | null>;
  kill(): void;
}

/** Spawn QEMU with the plan (fd 3 = QMP socketpair) and negotiate QMP capabilities. */
export async function startPlan(plan: LaunchPlan, timeoutMs = 15000): Promise<QmpSession> {
  const [bin, ...args] = plan.argv;
  if (!bin) throw new Error('empty argv');
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: { ...process.env, ...plan.env } });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => { err += d.toString(); });
  child.stdout?.resume();
  const sock = child.stdio[3] as Duplex;
  let buf = '';
  let id = 0;
  const pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let greetingResolve: (g: Record<string, unknown>) => void = () => {};
  const greetingP = new Promise<Record<string, unknown>>((r) => { greetingResolve = r; });
  const events: Array<{ event: string; data?: Record<string, unknown> }> = [];
  const waiters: Array<() => void> = [];
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  sock.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line) as Record<string, unknown>;
      if ('QMP' in msg) greetingResolve(msg);
      else if ('event' in msg) {
        events.push(msg as { event: string; data?: Record<string, unknown> });
        for (const w of waiters.splice(0)) w();
      }
      else if ('id' in msg) {
        const p = pending.get(String(msg['id']));
        pending.delete(String(msg['id']));
        if (!p) continue;
        if ('error' in msg) p.reject(new Error(JSON.stringify(msg['error'])));
        else p.resolve(msg['return']);
      }
    }
  });
  sock.on('error', () => {});
  const fail = (why: string): Error => new Error(`${why}\nstderr: ${err}`);
  const timer = (ms: number, what: string) => new Promise<never>((_, rej) => setTimeout(() => rej(fail(`timeout: ${what}`)), ms).unref());
  const session: QmpSession = {
    child,
    greeting: {},
    execute(cmd, a) {
      const key = `c${++id}`;
      const p = new Promise<unknown>((resolve, reject) => pending.set(key, { resolve, reject }));
      sock.write(JSON.stringify(a ? { execute: cmd, arguments: a, id: key } : { execute: cmd, id: key }));
      return Promise.race([p, timer(timeoutMs, cmd), exited.then((c) => { throw fail(`QEMU exited (${c}) during ${cmd}`); })]);
    },
    stderr: () => err,
    events,
    waitEvent(name, pred, ms = timeoutMs) {
      const find = () => events.find((e) => e.event === name && pred(e.data ?? {}));
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(fail(`timeout waiting for ${name}`)), ms);
        const check = (): void => {
          const e = find();
          if (e) { clearTimeout(t); resolve(e.data ?? {}); } else waiters.push(check);
        };
        check();
      });
    },
    async quit() {
      try { await session.execute('quit'); } catch { /* the reply may be lost when QEMU closes */ }
      return Promise.race([exited, timer(timeoutMs, 'exit after quit').catch(() => { child.kill('SIGKILL'); return exited; })]);
    },
    kill() { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); },
  };
  try {
    session.greeting = await Promise.race([greetingP, timer(timeoutMs, 'QMP greeting'), exited.then((c) => { throw fail(`QEMU exited (${c}) before the QMP greeting`); })]);
    await session.execute('qmp_capabilities');
  } catch (e) {
    session.kill();
    throw e;
  }
  return session;
}

interface PciDevice { qdev_id?: string; pci_bridge?: { devices?: PciDevice[] }; bus?: number; slot?: number }

/** qdev ids of every PCI device, walking through bridges. */
export function pciIds(queryPci: unknown): string[] {
  const out: string[] = [];
  const walk = (devs: PciDevice[] | undefined): void => {
    for (const d of devs ?? []) {
      if (d.qdev_id) out.push(d.qdev_id);
      walk(d.pci_bridge?.devices);
    }
  };
  for (const bus of queryPci as Array<{ devices: PciDevice[] }>) walk(bus.devices);
  return out;
}

/**
 * Device ids behind query-block entries: `/machine/peripheral/ua-x/virtio-backend` and
 * usb-storage's `/machine/peripheral/ua-x/ua-x.0/legacy[0]` → ua-x; scsi/ide devices are `ua-x`.
 */
export function blockIds(queryBlock: unknown): string[] {
  return (queryBlock as Array<{ qdev?: string }>).map((b) => b.qdev ?? '').filter(Boolean)
    .map((q) => q.replace(/^\/machine\/peripheral\//, '').split('/')[0] ?? '');
}

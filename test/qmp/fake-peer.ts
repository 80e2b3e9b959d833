// Test helper: a scripted QMP server on a unix socket, for what real QEMU cannot be made to do
// (garbage, unknown ids, mid-command disconnects, huge replies, precise event interleaving).
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '../lib/tmp.ts';

export interface ClientCommand {
  execute?: string;
  'exec-oob'?: string;
  arguments?: Record<string, unknown>;
  id?: unknown;
}

export const GREETING = { QMP: { version: { qemu: { major: 7, minor: 2, micro: 22 }, package: 'fake' }, capabilities: ['oob'] } };

/** One client connection as the server sees it. */
export class FakePeer {
  readonly socket: Socket;
  /** 0xFF bytes received so far (parser resets). */
  resets = 0;
  /** Every command received, in order. */
  readonly received: ClientCommand[] = [];
  private buf = '';
  private queue: ClientCommand[] = [];
  private waiting: ((c: ClientCommand) => void) | undefined;
  private onCommand: ((c: ClientCommand) => void) | undefined;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => {
      let s = '';
      for (const b of d) {
        if (b === 0xff) this.resets++;
      }
      s = d.toString('latin1').replace(/\xff/g, '');
      this.buf += s;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        if (line.trim() === '') continue;
        const cmd = JSON.parse(line) as ClientCommand;
        this.received.push(cmd);
        if (this.onCommand) this.onCommand(cmd);
        else if (this.waiting) { const w = this.waiting; this.waiting = undefined; w(cmd); }
        else this.queue.push(cmd);
      }
    });
  }

  /** Hand every command (including already queued ones) to `fn` as it arrives instead of next(). */
  handle(fn: (c: ClientCommand) => void): void {
    this.onCommand = fn;
    for (const c of this.queue.splice(0)) fn(c);
  }

  /** The next command from the client. */
  next(timeoutMs = 5000): Promise<ClientCommand> {
    const c = this.queue.shift();
    if (c) return Promise.resolve(c);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('fake peer: no command within timeout')), timeoutMs);
      this.waiting = (cmd) => { clearTimeout(t); resolve(cmd); };
    });
  }

  sendRaw(data: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(data);
  }

  send(msg: unknown): void {
    this.sendRaw(JSON.stringify(msg) + '\r\n');
  }

  reply(id: unknown, value: unknown = {}): void {
    this.send({ return: value, id });
  }

  error(id: unknown, cls: string, desc: string): void {
    this.send(id === undefined ? { error: { class: cls, desc } } : { id, error: { class: cls, desc } });
  }

  event(name: string, data?: Record<string, unknown>): void {
    const now = Date.now();
    this.send({ timestamp: { seconds: Math.floor(now / 1000), microseconds: (now % 1000) * 1000 }, event: name, ...(data ? { data } : {}) });
  }

  /** Greeting plus the reply to qmp_capabilities. */
  async negotiate(capabilities: string[] = ['oob']): Promise<ClientCommand> {
    this.send({ QMP: { ...GREETING.QMP, capabilities } });
    const caps = await this.next();
    if (caps.execute !== 'qmp_capabilities') throw new Error(`fake peer: expected qmp_capabilities, got ${JSON.stringify(caps)}`);
    this.reply(caps.id);
    return caps;
  }
}

export class FakeQmpServer {
  readonly path: string;
  readonly peers: FakePeer[] = [];
  private readonly server: Server;
  private readonly cleanupDir: () => void;
  private waiting: ((p: FakePeer) => void)[] = [];

  private constructor(server: Server, path: string, cleanup: () => void) {
    this.server = server;
    this.path = path;
    this.cleanupDir = cleanup;
    server.on('connection', (s) => {
      const p = new FakePeer(s);
      this.peers.push(p);
      const w = this.waiting.shift();
      if (w) w(p);
    });
  }

  static async start(): Promise<FakeQmpServer> {
    const dir = tempDir('qmpf');
    const path = join(dir.path, 'qmp.sock');
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    return new FakeQmpServer(server, path, dir.cleanup);
  }

  /** The next connection (or the one already accepted and not yet taken). */
  accept(index = this.peers.length): Promise<FakePeer> {
    const p = this.peers[index];
    if (p) return Promise.resolve(p);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async close(): Promise<void> {
    for (const p of this.peers) p.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.cleanupDir();
  }
}

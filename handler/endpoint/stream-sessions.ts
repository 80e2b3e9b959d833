// One console and one VNC session per VMI, as virt-handler keeps them (rest/console.go): a new
// connection closes the one before it, unless a VNC client asks to preserve an active session
// (`?preserveSession=true`), which is then refused. QEMU's serial chardev serves one client at a
// time anyway; this makes the newest client the one that gets it, at once.
import type { Duplex } from 'node:stream';

export class StreamSessions {
  private readonly active = new Map<string, Duplex>();

  /** `<vmi uid>/<console|vnc>` */
  static key(uid: string, subresource: string): string {
    return `${uid}/${subresource}`;
  }

  inUse(key: string): boolean {
    return this.active.has(key);
  }

  /** Makes `socket` the session of `key`, closing the previous one; the session ends when the socket closes. */
  take(key: string, socket: Duplex): void {
    const old = this.active.get(key);
    this.active.set(key, socket);
    if (old && old !== socket) old.destroy();
    socket.once('close', () => { if (this.active.get(key) === socket) this.active.delete(key); });
  }

  closeAll(): void {
    for (const s of this.active.values()) s.destroy();
    this.active.clear();
  }
}

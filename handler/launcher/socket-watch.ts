// Seeing a starting launcher's Cmd socket the moment it appears. The socket lives deep in the pod's
// directories (`<podsDir>/<podUID>/volumes/kubernetes.io~empty-dir/sockets/launcher-sock`), and
// when the VMI's status names its pod those directories often do not exist yet (kubelet, or the
// local pod runner, creates them a moment later). So the watch is on the deepest directory of that
// path that exists, never above `stopAt` (the pods dir): any change there may be the next directory
// or the socket, and `onChange` makes the controller look again — which watches one level deeper,
// until the socket itself is there. The controller's 1 s requeue stays as the safety net (a
// filesystem without inotify, a pods dir that does not exist yet).
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/** The deepest existing directory on the way to `path` that is at or below `stopAt`; undefined when even `stopAt` is missing. */
export function deepestExisting(path: string, stopAt: string, exists: (p: string) => boolean = existsSync): string | undefined {
  const limit = stopAt.replace(/\/+$/, '') || '/';
  if (path !== limit && !path.startsWith(`${limit}/`)) return undefined;
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (exists(dir)) return dir;
    if (dir === limit || dir === dirname(dir)) return undefined;
  }
}

export class LauncherSocketWatch {
  private readonly watches = new Map<string, { dir: string; watcher: FSWatcher }>();
  private readonly onChange: (key: string) => void;

  constructor(onChange: (key: string) => void) {
    this.onChange = onChange;
  }

  /**
   * Watches for `socket` on behalf of `key` (idempotent while the deepest existing directory stays
   * the same). Returns false when nothing could be watched and the caller must poll.
   */
  watch(key: string, socket: string, stopAt: string): boolean {
    const dir = deepestExisting(socket, stopAt);
    if (!dir) { this.unwatch(key); return false; }
    const current = this.watches.get(key);
    if (current?.dir === dir) return true;
    this.unwatch(key);
    const target = dir === dirname(socket) ? basename(socket) : undefined;
    try {
      const watcher = watch(dir, (_ev, file) => {
        if (target !== undefined && file !== target) return;
        this.unwatch(key);
        this.onChange(key);
      });
      watcher.on('error', () => { this.unwatch(key); this.onChange(key); });
      this.watches.set(key, { dir, watcher });
    } catch {
      return false;
    }
    // What appeared between the lookup and the watch would be missed: look once more.
    if (existsSync(socket) || deepestExisting(socket, stopAt) !== dir) { this.unwatch(key); this.onChange(key); }
    return true;
  }

  unwatch(key: string): void {
    this.watches.get(key)?.watcher.close();
    this.watches.delete(key);
  }

  closeAll(): void {
    for (const k of [...this.watches.keys()]) this.unwatch(k);
  }
}

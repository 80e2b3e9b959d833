// The local pod runner's spawner: a small process that starts the runner's container processes, as
// a CRI runtime's shim does for kubelet. The runner holds the local mode's whole control plane (a
// few hundred MiB): each spawn from it forked all of that — ~4 ms of its main thread's CPU per
// container, blocked until the child exec'd (7–8 ms), page tables copied and its heap write-protected.
// Run as `node spawner-process.ts` with an IPC channel (src/local/pod-runner/spawner.ts). When the
// channel goes (the runner stopped or gone) its containers run on, detached, and it stays to reap
// them — this machine's init may not — ending with the last.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { SpawnerReply, SpawnerRequest } from './spawner.ts';

const send = (m: SpawnerReply) => { if (process.connected) process.send?.(m); };

let running = 0;
const endIfDone = () => { if (!process.connected && running === 0) process.exit(0); };

process.on('message', (m: SpawnerRequest) => {
  const fds: number[] = [];
  try {
    fds.push(openSync(m.stdout, 'a'), openSync(m.stderr, 'a'));
    const child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: ['ignore', fds[0]!, fds[1]!] });
    const pid = child.pid;
    if (pid === undefined) {
      child.once('error', (err) => send({ id: m.id, error: err.message }));
      return;
    }
    child.on('error', () => undefined);
    running++;
    child.on('exit', (code, signal) => { running--; send({ exit: pid, code, signal }); endIfDone(); });
    send({ id: m.id, pid });
  } catch (err) {
    send({ id: m.id, error: (err as Error).message });
  } finally {
    for (const fd of fds) closeSync(fd);
  }
});
process.on('disconnect', endIfDone);

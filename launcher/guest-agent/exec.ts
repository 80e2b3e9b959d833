// KubeVirt's agent.GuestExec (pkg/virt-launcher/virtwrap/agent/exec.go): run a program in the
// guest through the guest agent — `guest-exec` with captured output, then `guest-exec-status`
// until it has exited, at most `timeoutSeconds` — and return its standard output. A non-zero exit
// is an error (GuestExecExitCode, KubeVirt's ExecExitCode and its message), as is a run that does
// not end in time. The program is looked up on the guest's PATH (qemu-ga spawns with
// G_SPAWN_SEARCH_PATH).

/** What GuestExec needs of a guest agent client (GuestAgentClient fits). */
export interface GuestExecAgent {
  execute<T = unknown>(command: string, args?: Record<string, unknown>, opts?: { timeoutMs?: number }): Promise<T>;
}

/** The program ran and exited non-zero. */
export class GuestExecExitCode extends Error {
  override readonly name = 'GuestExecExitCode';
  readonly exitCode: number;
  readonly stdout: string;
  constructor(exitCode: number, stdout: string) {
    super(`exited with error code:${exitCode}`);
    this.exitCode = exitCode;
    this.stdout = stdout;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function guestExec(agent: GuestExecAgent, command: string, args: readonly string[], timeoutSeconds = 10): Promise<string> {
  const started = await agent.execute<{ pid?: unknown }>('guest-exec', { path: command, arg: [...args], 'capture-output': true });
  const pid = typeof started?.pid === 'number' ? started.pid : 0;
  if (pid <= 0) throw new Error(`Invalid pid [${pid}] returned from qemu agent during access credential injection: ${JSON.stringify(started)}`);
  // KubeVirt polls every timeoutSeconds × 100 ms until timeoutSeconds have passed.
  const interval = timeoutSeconds * 100;
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const st = await agent.execute<{ exited?: unknown; exitcode?: unknown; 'out-data'?: unknown }>('guest-exec-status', { pid });
    if (st?.exited === true) {
      const stdout = typeof st['out-data'] === 'string' ? Buffer.from(st['out-data'], 'base64').toString('utf8') : '';
      const code = typeof st.exitcode === 'number' ? st.exitcode : 0;
      if (code !== 0) throw new GuestExecExitCode(code, stdout);
      return stdout;
    }
    if (Date.now() + interval > deadline) break;
    await sleep(interval);
  }
  throw new Error(`Timed out waiting for guest pid [${pid}] for command [${command}] to exit`);
}

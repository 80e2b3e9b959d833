// `qvirt ssh [USER@]TYPE/NAME[/NAMESPACE]` and `qvirt scp SOURCE DESTINATION`: virtctl ≥ 1.7's ssh
// and scp. Both run the local OpenSSH client with a ProxyCommand that is `qvirt port-forward
// --stdio=true` to the guest's port (ssh-command.ts builds the command lines), so authentication,
// keys, agents and known_hosts are ssh's own. The exit status is virtctl's: 0, or 1 when the client
// failed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../kube/user-error.ts';
import { UsageError } from '../flags/flags.ts';
import { parseVerb } from './verb.ts';
import { connect } from './kube-context.ts';
import { defaultUsername, parseScpLocations, scpArgs, sshArgs, type ProxyProgram, type SshOptions } from './ssh-command.ts';
import { parseSshTarget } from './vm-target.ts';

/** The program ssh's ProxyCommand runs: kubectl-virt when qvirt runs as that plugin ($QVIRT_PROGRAM), else bin/qvirt. */
export function selfProgram(env: NodeJS.ProcessEnv = process.env): string {
  if (env.QVIRT_PROGRAM) return env.QVIRT_PROGRAM;
  const bin = fileURLToPath(new URL('../../bin/qvirt', import.meta.url));
  return existsSync(bin) ? bin : 'qvirt';
}

function sshFlagSpecs() {
  const home = homedir();
  const user = defaultUsername(process.env);
  return {
    username: { type: 'string', short: 'l', value: 'USER', ...(user ? { default: user } : {}), help: 'the user to open the SSH connection as; taken from $USER, $USERNAME or $LOGNAME when not given, and with none of them ssh\'s own default applies' },
    'identity-file': { type: 'string', short: 'i', value: 'FILE', help: `the private key used for authenticating to the server, e.g. ${join(home, '.ssh', 'id_rsa')}; if not given, ssh tries the local ssh-agent at $SSH_AUTH_SOCK and its own default keys` },
    'known-hosts': { type: 'string', value: 'FILE', help: `the known_hosts file, e.g. ${join(home, '.ssh', 'kubevirt_known_hosts')} (passed to ssh as -o UserKnownHostsFile=FILE); if not given, ssh's own` },
    port: { type: 'number', short: 'p', value: 'PORT', default: 22, help: 'the port on the VM to send SSH traffic to' },
    'local-ssh-opts': { type: 'strings', short: 't', value: 'OPT', help: 'an additional option for the local ssh client, e.g. -t "-o StrictHostKeyChecking=no" (repeatable)' },
  } as const;
}

function sshOptions(f: { username: string | undefined; 'identity-file': string | undefined; 'known-hosts': string | undefined; port: number | undefined; 'local-ssh-opts': string[] }, targetUser: string | undefined): SshOptions {
  const port = f.port ?? 22;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port: must be 1..65535, got ${port}`);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(p));
  return {
    port,
    username: targetUser ?? f.username ?? '',
    identityFile: f['identity-file'] || undefined,
    knownHosts: f['known-hosts'] ? abs(f['known-hosts']) : undefined,
    localSshOpts: f['local-ssh-opts'],
  };
}

/** The namespace (target's, else --namespace, else the context's) and the ProxyCommand's program. */
async function resolveContext(flags: { kubeconfig?: string | undefined; namespace?: string | undefined }, targetNamespace: string | undefined): Promise<{ namespace: string; proxy: ProxyProgram }> {
  const ctx = connect(flags);
  await ctx.client.close();
  return {
    namespace: targetNamespace ?? ctx.namespace,
    proxy: { program: selfProgram(), ...(flags.kubeconfig ? { kubeconfig: resolve(flags.kubeconfig) } : {}) },
  };
}

/** Runs the local client with the terminal; resolves to virtctl's exit status. */
async function runClient(command: 'ssh' | 'scp', args: readonly string[]): Promise<number> {
  // Ctrl-C belongs to the client (the terminal sends it to both): qvirt waits for it to end.
  // SIGTERM and SIGHUP sent to qvirt alone are passed on, so no client outlives it.
  const ignore = () => undefined;
  let child: ReturnType<typeof spawn> | undefined;
  const pass = (sig: NodeJS.Signals) => { child?.kill(sig); };
  process.on('SIGINT', ignore);
  process.on('SIGTERM', pass);
  process.on('SIGHUP', pass);
  try {
    child = spawn(command, args, { stdio: 'inherit' });
    const c = child;
    const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | Error>((done) => {
      c.once('error', (err) => done(err));
      c.once('exit', (code, signal) => done({ code, signal }));
    });
    if (result instanceof Error) {
      const code = (result as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new UserError(`exec: "${command}": executable file not found in $PATH; install the OpenSSH client (e.g. apt-get install openssh-client)`);
      throw new UserError(`cannot run ${command}: ${result.message}`);
    }
    if (result.signal) throw new UserError(`${command} was killed by ${result.signal}`);
    if (result.code !== 0) throw new UserError(`${command} exited with status ${result.code}`);
    return 0;
  } finally {
    process.off('SIGINT', ignore);
    process.off('SIGTERM', pass);
    process.off('SIGHUP', pass);
  }
}

export async function ssh(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt ssh (VM|VMI) [flags]',
    summary: 'Open a SSH connection to a virtual machine instance: the local ssh client, its connection carried by \'qvirt port-forward --stdio\' through the API server. The target is [USER@]TYPE/NAME[/NAMESPACE], TYPE vm or vmi.',
    flags: { ...sshFlagSpecs(), command: { type: 'string', short: 'c', value: 'COMMAND', help: 'a command to execute in the VM, e.g. --command=\'ls /\'' } },
    args: ['TARGET'],
    examples: `  # Connect to 'testvmi':
  qvirt ssh jdoe@vmi/testvmi [--identity-file]

  # Connect to 'testvm' in 'mynamespace' namespace
  qvirt ssh jdoe@vm/testvm/mynamespace [--identity-file]

  # Specify a username and namespace:
  qvirt ssh --namespace=mynamespace --username=jdoe vmi/testvmi`,
  }, argv);
  if (!v) return 0;
  const { target, username } = parseSshTarget(v.args[0]!);
  const opts = sshOptions(v.flags, username);
  const { namespace, proxy } = await resolveContext(v.flags, target.namespace);
  return runClient('ssh', sshArgs(proxy, { kind: target.kind, name: target.name, namespace }, opts, v.flags.command || undefined));
}

export async function scp(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt scp SOURCE DESTINATION [flags]',
    summary: 'SCP files from/to a virtual machine instance: the local scp client, its connection carried by \'qvirt port-forward --stdio\' through the API server. One of SOURCE and DESTINATION is the VM\'s: [USER@]TYPE/NAME[/NAMESPACE]:PATH.',
    flags: {
      ...sshFlagSpecs(),
      recursive: { type: 'boolean', short: 'r', help: 'recursively copy entire directories' },
      preserve: { type: 'boolean', help: 'preserves modification times, access times, and modes from the original file' },
    },
    args: ['SOURCE', 'DESTINATION'],
    examples: `  # Copy a file to the remote home folder of user jdoe
  qvirt scp myfile.bin jdoe@vmi/testvmi:myfile.bin

  # Copy a directory to the remote home folder of user jdoe
  qvirt scp --recursive ~/mydir/ jdoe@vmi/testvmi:./mydir

  # Copy a file to the remote home folder of user jdoe without specifying a file name on the target
  qvirt scp myfile.bin jdoe@vmi/testvmi:.

  # Copy a file to 'testvm' in 'mynamespace' namespace
  qvirt scp myfile.bin jdoe@vmi/testvmi/mynamespace:myfile.bin

  # Copy a file from the remote location to a local folder
  qvirt scp jdoe@vmi/testvmi:myfile.bin ~/myfile.bin`,
  }, argv);
  if (!v) return 0;
  const loc = parseScpLocations(v.args[0]!, v.args[1]!);
  const opts = sshOptions(v.flags, loc.remote.username);
  const t = loc.remote.target;
  const { namespace, proxy } = await resolveContext(v.flags, t.namespace);
  return runClient('scp', scpArgs(proxy, { kind: t.kind, name: t.name, namespace }, opts, { local: loc.local, remotePath: loc.remote.path, toRemote: loc.toRemote }, { recursive: v.flags.recursive, preserve: v.flags.preserve }));
}

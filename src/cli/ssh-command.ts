// The local ssh/scp command lines of `qvirt ssh` and `qvirt scp`, built as virtctl ≥ 1.7 builds them
// (pkg/virtctl/ssh LocalClientCmd, BuildSSHTarget; pkg/virtctl/scp BuildSCPTarget, ParseTarget):
//   ssh -o 'ProxyCommand=<program> port-forward --stdio=true KIND/NAME/NAMESPACE PORT'
//       [--local-ssh-opts...] [-i IDENTITY] [USER@]KIND.NAME.NAMESPACE [COMMAND]
//   scp -o 'ProxyCommand=...' [--local-ssh-opts...] [-i IDENTITY] [-r] [-p] SOURCE DESTINATION
// The host name ssh sees, KIND.NAME.NAMESPACE, only names the VM for known_hosts; the ProxyCommand
// carries the connection through the API server. Where qvirt adds to virtctl's line, it is what
// virtctl drops: the --kubeconfig given to qvirt (virtctl's ProxyCommand runs without it and so
// talks to another cluster), `-o UserKnownHostsFile=FILE` when --known-hosts is given (virtctl
// accepts and ignores it), and words quoted for the shell ssh runs the ProxyCommand with (and '%'
// doubled, ssh's escape). Pure.
import { UsageError } from '../flags/flags.ts';
import { parseSshTarget, type VmTarget } from './vm-target.ts';

export interface SshOptions {
  /** The guest's port (--port, 22). */
  readonly port: number;
  /** '' for ssh's default user. */
  readonly username: string;
  /** Passed as -i only when the user gave --identity-file (virtctl's IdentityFilePathProvided). */
  readonly identityFile?: string | undefined;
  /** Passed as -o UserKnownHostsFile= only when the user gave --known-hosts. */
  readonly knownHosts?: string | undefined;
  /** --local-ssh-opts, each one argument, in order. */
  readonly localSshOpts: readonly string[];
}

/** The program and flags the ProxyCommand runs: qvirt's own entry (or kubectl-virt) and the --kubeconfig it was given. */
export interface ProxyProgram {
  readonly program: string;
  readonly kubeconfig?: string | undefined;
}

/** virtctl's DefaultUsername: $USER, $USERNAME, $LOGNAME, else ''. */
export function defaultUsername(env: Readonly<Record<string, string | undefined>>): string {
  for (const v of ['USER', 'USERNAME', 'LOGNAME']) if (env[v]) return env[v]!;
  return '';
}

/** One word for `sh -c` (ssh runs ProxyCommand with the user's shell): bare when safe, else single-quoted. */
export function shellWord(s: string): string {
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `ProxyCommand=<program> port-forward --stdio=true KIND/NAME/NAMESPACE PORT` ('%' doubled for ssh). */
export function proxyCommandOption(p: ProxyProgram, kind: string, namespace: string, name: string, port: number): string {
  const words = [p.program, 'port-forward', '--stdio=true', ...(p.kubeconfig ? [`--kubeconfig=${p.kubeconfig}`] : []), `${kind}/${name}/${namespace}`, String(port)];
  return `ProxyCommand=${words.map(shellWord).join(' ').replace(/%/g, '%%')}`;
}

/** `[USER@]KIND.NAME.NAMESPACE`: the host ssh sees. */
export function sshHost(username: string, t: { kind: string; name: string; namespace: string }): string {
  return `${username ? `${username}@` : ''}${t.kind}.${t.name}.${t.namespace}`;
}

/** The arguments of the local client (virtctl's LocalClientCmd), without the command's own name. */
export function localClientArgs(p: ProxyProgram, t: { kind: string; name: string; namespace: string }, o: SshOptions, clientArgs: readonly string[]): string[] {
  return [
    '-o', proxyCommandOption(p, t.kind, t.namespace, t.name, o.port),
    ...(o.knownHosts ? ['-o', `UserKnownHostsFile=${o.knownHosts}`] : []),
    ...o.localSshOpts,
    ...(o.identityFile ? ['-i', o.identityFile] : []),
    ...clientArgs,
  ];
}

/** `qvirt ssh`'s argv for ssh. */
export function sshArgs(p: ProxyProgram, t: { kind: string; name: string; namespace: string }, o: SshOptions, command: string | undefined): string[] {
  return localClientArgs(p, t, o, [sshHost(o.username, t), ...(command ? [command] : [])]);
}

export interface ScpLocations {
  /** The local path. */
  readonly local: string;
  readonly remote: { readonly target: VmTarget; readonly username?: string; readonly path: string };
  /** true: local → VM. */
  readonly toRemote: boolean;
}

/** virtctl scp's ParseTarget: exactly one of the two locations is remote (`[USER@]TYPE/NAME[/NS]:PATH`). */
export function parseScpLocations(source: string, destination: string): ScpLocations {
  const srcRemote = source.includes(':');
  const dstRemote = destination.includes(':');
  if (srcRemote && dstRemote) throw new UsageError(`copying from a remote location to another remote location is not supported: "${source}" to "${destination}"`);
  if (!srcRemote && !dstRemote) throw new UsageError(`none of the two provided locations seems to be a remote location: "${source}" to "${destination}"; name the VM's side as [USER@]TYPE/NAME[/NAMESPACE]:PATH, e.g. vmi/myvm:/tmp/file`);
  const toRemote = dstRemote;
  const remoteArg = toRemote ? destination : source;
  const local = toRemote ? source : destination;
  const colon = remoteArg.indexOf(':');
  const { target, username } = parseSshTarget(remoteArg.slice(0, colon));
  return { local, remote: { target, ...(username !== undefined ? { username } : {}), path: remoteArg.slice(colon + 1) }, toRemote };
}

/** `qvirt scp`'s argv for scp. */
export function scpArgs(p: ProxyProgram, t: { kind: string; name: string; namespace: string }, o: SshOptions, loc: { local: string; remotePath: string; toRemote: boolean }, flags: { recursive: boolean; preserve: boolean }): string[] {
  const remote = `${sshHost(o.username, t)}:${loc.remotePath}`;
  return localClientArgs(p, t, o, [
    ...(flags.recursive ? ['-r'] : []),
    ...(flags.preserve ? ['-p'] : []),
    ...(loc.toRemote ? [loc.local, remote] : [remote, loc.local]),
  ]);
}

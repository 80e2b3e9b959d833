// KubeVirt's access credentials as the launcher propagates them through the guest agent
// (pkg/virt-launcher/virtwrap/access-credentials): the pure decisions.
//  - which credentials the agent propagates: sshPublicKey with propagationMethod.qemuGuestAgent
//    (users), userPassword with qemuGuestAgent; each reads the Secret mounted at
//    `<secret-source-dir>/<secret>-access-cred` (noCloud/configDrive keys go through cloud-init
//    instead: launcher/disks/cloud-init.ts);
//  - what a Secret's files mean: every file (kubelet's `..`-prefixed entries skipped) holds
//    authorized_keys lines; for a password credential each file is named for a user and holds that
//    user's password (trimmed; empty ones skipped);
//  - what each user's authorized_keys becomes: the keys of every Secret naming the user, in spec and
//    file order — the whole file, so a key taken out of the Secret leaves the guest too;
//  - when to propagate again (every check interval: after a failure, when a Secret changed, on the
//    periodic resync) and what the domain then reports (api.AccessCredentialMetadata, which the
//    handler turns into the VMI condition AccessCredentialsSynchronized).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { AccessCredentialMetadata } from '../../src/api/domain/domain.ts';

/** KubeVirt's messages, verbatim. */
export const AccessCredentialMessage = {
  agentOffline: 'Guest agent is offline',
  readDir: (dir: string, err: string) => `error occurred while reading the list of secrets files from the base directory ${dir}: ${err}`,
  readFile: (path: string, err: string) => `error occurred while reading the access credential secret file [${path}]: ${err}`,
  writeKeys: (user: string, err: string) => `Error encountered writing ssh pub key access credentials for user [${user}]: ${err}`,
  setPassword: (user: string, err: string) => `Error encountered setting password for user [${user}]: ${err}`,
  setKeys: (agentErr: string, fileErr: string) => `failed to set SSH keys: error from guest-ssh-add-authorized-keys: ${agentErr}; error from using guest-file-write: ${fileErr}`,
  deprecatedFlow: 'Used deprecated method to set SSH keys. It will be removed in a future release. Update qemu guest agent to 5.2 or newer to keep SSH key injection working.',
} as const;

/** KubeVirt's timings: changes are looked for every 15 s, everything is applied again every 5 min. */
export const ACCESS_CREDENTIAL_CHECK_INTERVAL_MS = 15_000;
export const ACCESS_CREDENTIAL_RESYNC_INTERVAL_MS = 5 * 60_000;

export type AgentCredential =
  | { readonly kind: 'sshPublicKey'; readonly secretName: string; readonly users: readonly string[] }
  | { readonly kind: 'userPassword'; readonly secretName: string };

/** The credentials the guest agent propagates, in spec order (getSecretDirs / addAccessCredential). */
export function agentCredentials(vmi: VirtualMachineInstance): AgentCredential[] {
  const out: AgentCredential[] = [];
  for (const ac of vmi.spec.accessCredentials ?? []) {
    const ssh = ac.sshPublicKey;
    if (ssh?.propagationMethod?.qemuGuestAgent) {
      const secretName = ssh.source?.secret?.secretName;
      if (secretName) out.push({ kind: 'sshPublicKey', secretName, users: [...(ssh.propagationMethod.qemuGuestAgent.users ?? [])] });
      continue;
    }
    const pw = ac.userPassword;
    if (pw?.propagationMethod?.qemuGuestAgent) {
      const secretName = pw.source?.secret?.secretName;
      if (secretName) out.push({ kind: 'userPassword', secretName });
    }
  }
  return out;
}

/** A mounted Secret as read: its files in name order, or why its directory could not be read. */
export type SecretContent =
  | { readonly files: ReadonlyArray<{ readonly name: string; readonly content: string }> }
  | { readonly error: string };

/** kubelet's atomic writer keeps `..data` and `..<timestamp>` beside the keys: not keys. */
export const isSecretKeyFile = (name: string): boolean => !name.startsWith('..');

/** The authorized_keys lines of a file: each line trimmed, empty ones dropped. */
export function parseAuthorizedKeys(content: string): string[] {
  return content.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

export interface DesiredCredentials {
  /** user → the whole authorized_keys, in credential and file order, each key once. */
  readonly authorizedKeys: ReadonlyMap<string, readonly string[]>;
  /** user → password. */
  readonly passwords: ReadonlyMap<string, string>;
  /** Secrets that could not be read, in spec order (KubeVirt's messages). */
  readonly errors: readonly string[];
}

/**
 * What the guest should have. A user whose keys come from a Secret that could not be read is left
 * out (KubeVirt would write the other Secrets' keys alone — possibly none — and lock the user out
 * until the read succeeds); the read error is reported and the propagation retried.
 */
export function desiredCredentials(creds: readonly AgentCredential[], secrets: ReadonlyMap<string, SecretContent>): DesiredCredentials {
  const errors: string[] = [];
  const keysOf = new Map<string, string[]>();
  const unreadable = new Set<string>();
  const userSecrets = new Map<string, string[]>();
  const passwords = new Map<string, string>();
  for (const c of creds) {
    const s = secrets.get(c.secretName) ?? { error: 'not read' };
    if ('error' in s) errors.push(s.error);
    if (c.kind === 'sshPublicKey') {
      for (const u of c.users) userSecrets.set(u, [...(userSecrets.get(u) ?? []), c.secretName]);
      if ('error' in s) unreadable.add(c.secretName);
      else keysOf.set(c.secretName, s.files.flatMap((f) => parseAuthorizedKeys(f.content)));
      continue;
    }
    if ('error' in s) continue;
    for (const f of s.files) {
      const pw = f.content.trim();
      if (pw !== '') passwords.set(f.name, pw);
    }
  }
  const authorizedKeys = new Map<string, string[]>();
  for (const [user, names] of userSecrets) {
    if (names.some((n) => unreadable.has(n))) continue;
    authorizedKeys.set(user, [...new Set(names.flatMap((n) => keysOf.get(n) ?? []))]);
  }
  return { authorizedKeys, passwords, errors };
}

/** What identifies a desired state: a change of it is a Secret change to propagate. */
export function credentialsSignature(d: DesiredCredentials): string {
  return JSON.stringify([[...d.authorizedKeys].sort(), [...d.passwords].sort(), d.errors]);
}

/**
 * The report after a propagation: success with no message, or the last failure (KubeVirt stores
 * each failure as it happens, so the last one is what the domain keeps).
 */
export function propagationResult(errors: readonly string[]): AccessCredentialMetadata {
  const last = errors.at(-1);
  return last === undefined ? { Succeeded: true, Message: '' } : { Succeeded: false, Message: last };
}

export interface PropagationState {
  /** The next check propagates: nothing applied yet, or the last attempt failed. */
  readonly pending: boolean;
  /** The signature last applied successfully. */
  readonly applied?: string | undefined;
  /** When everything was last applied (ms). */
  readonly appliedAt?: number | undefined;
}

export const INITIAL_PROPAGATION_STATE: PropagationState = { pending: true };

export type ReloadReason = 'pending' | 'changed' | 'resync';

/** At a check: whether to propagate now, and why (undefined: nothing to do). */
export function reloadReason(s: PropagationState, signature: string, now: number, resyncMs = ACCESS_CREDENTIAL_RESYNC_INTERVAL_MS): ReloadReason | undefined {
  if (s.pending) return 'pending';
  if (s.applied !== signature) return 'changed';
  if (s.appliedAt === undefined || now - s.appliedAt >= resyncMs) return 'resync';
  return undefined;
}

/** The state after a propagation of `signature` at `now` that ended with `result`. */
export function afterPropagation(s: PropagationState, signature: string, result: AccessCredentialMetadata, now: number): PropagationState {
  return result.Succeeded ? { pending: false, applied: signature, appliedAt: now } : { ...s, pending: true };
}

/**
 * The deprecated-flow warning (AccessCredentialsSyncSuccess, Warning) goes out once per run of
 * successful propagations that used the file-writing flow; a failure or a propagation through
 * guest-ssh-add-authorized-keys arms it again.
 */
export function deprecatedFlowWarning(sent: boolean, result: AccessCredentialMetadata, usedDeprecatedFlow: boolean): { send: boolean; sent: boolean } {
  if (!result.Succeeded || !usedDeprecatedFlow) return { send: false, sent: false };
  return sent ? { send: false, sent: true } : { send: true, sent: true };
}

/** `getent passwd` output → home directory, uid and gid (agentGetUserInfo). */
export function passwdEntry(user: string, output: string): { home: string; uid: string; gid: string } {
  const entries = output.trim().split(':');
  if (entries.length < 6) throw new Error(`unable to detect home directory of user ${user}`);
  return { home: entries[5]!, uid: entries[2]!, gid: entries[3]! };
}

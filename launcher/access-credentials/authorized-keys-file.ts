// The authorized_keys file written through the guest agent's file and exec commands: KubeVirt's
// deprecated flow for agents older than 5.2, which lack guest-ssh-add-authorized-keys
// (agentWriteAuthorizedKeysFile). The user's home directory and ids come from `getent passwd`;
// `<home>/.ssh/authorized_keys` is read (guest-file-open/read/close) and, when it differs from the
// keys, `.ssh` is made (mkdir -p, chown uid:gid, chmod 700) and the file written (guest-file-
// open/write/close) with mode 600 and the user's ownership — set before writing an existing file,
// after creating a new one.
import { guestExec, type GuestExecAgent } from '../guest-agent/exec.ts';
import { passwdEntry } from './credentials.ts';

const EXEC_TIMEOUT_SECONDS = 10;

/** The file's content for these keys: one per line, as KubeVirt joins them (no final newline). */
export const authorizedKeysFileContent = (keys: readonly string[]): string => keys.join('\n');

async function userInfo(agent: GuestExecAgent, user: string): Promise<{ home: string; uid: string; gid: string }> {
  let out: string;
  try {
    out = await guestExec(agent, 'getent', ['passwd', user], EXEC_TIMEOUT_SECONDS);
  } catch (err) {
    throw new Error(`unable to detect home directory of user ${user}: ${(err as Error).message}`, { cause: err });
  }
  return passwdEntry(user, out);
}

/** The file's content, or undefined when it does not exist. */
async function readGuestFile(agent: GuestExecAgent, path: string): Promise<string | undefined> {
  let handle: number;
  try {
    handle = await agent.execute<number>('guest-file-open', { path, mode: 'r' });
  } catch (err) {
    if ((err as Error).message.includes('No such file or directory')) return undefined;
    throw err;
  }
  const chunks: Buffer[] = [];
  try {
    for (;;) {
      const r = await agent.execute<{ count?: number; 'buf-b64'?: string; eof?: boolean }>('guest-file-read', { handle });
      if ((r?.count ?? 0) > 0 && r?.['buf-b64']) chunks.push(Buffer.from(r['buf-b64'], 'base64'));
      if (r?.eof !== false || (r?.count ?? 0) === 0) break;
    }
  } finally {
    await agent.execute('guest-file-close', { handle });
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function setPermissions(agent: GuestExecAgent, path: string, mode: string, owner: string): Promise<void> {
  await guestExec(agent, 'chown', [owner, path], EXEC_TIMEOUT_SECONDS);
  await guestExec(agent, 'chmod', [mode, path], EXEC_TIMEOUT_SECONDS);
}

async function writeGuestFile(agent: GuestExecAgent, path: string, content: string, owner: string, exists: boolean): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf('/')) || '/';
  await guestExec(agent, 'mkdir', ['-p', dir], EXEC_TIMEOUT_SECONDS);
  await setPermissions(agent, dir, '700', owner);
  if (exists) await setPermissions(agent, path, '600', owner);
  const handle = await agent.execute<number>('guest-file-open', { path, mode: 'w' });
  try {
    await agent.execute('guest-file-write', { handle, 'buf-b64': Buffer.from(content, 'utf8').toString('base64') });
  } finally {
    await agent.execute('guest-file-close', { handle });
  }
  if (!exists) await setPermissions(agent, path, '600', owner);
}

/** Makes `user`'s authorized_keys hold exactly `keys`. Returns whether the file was written. */
export async function writeAuthorizedKeysFile(agent: GuestExecAgent, user: string, keys: readonly string[]): Promise<boolean> {
  const { home, uid, gid } = await userInfo(agent, user);
  const path = `${home}/.ssh/authorized_keys`;
  const current = await readGuestFile(agent, path);
  const desired = authorizedKeysFileContent(keys);
  // A missing file reads as empty: no keys and no file is no change.
  if ((current ?? '') === desired) return false;
  await writeGuestFile(agent, path, desired, `${uid}:${gid}`, current !== undefined);
  return true;
}

// KubeVirt's AccessCredentialManager (pkg/virt-launcher/virtwrap/access-credentials): propagates a
// VMI's qemuGuestAgent access credentials into the running guest and keeps them in step with their
// Secrets. Every check interval (KubeVirt: 15 s) it reads the mounted Secrets and propagates when
// the last attempt failed, when what they hold changed (kubelet — or the local mode's pod runner —
// rewrites a mounted Secret after the Secret changed), or on the periodic resync (5 min):
//  - the agent must answer guest-ping, else the report is "Guest agent is offline";
//  - each user's authorized_keys is set to the Secrets' keys with guest-ssh-add-authorized-keys
//    (reset: the whole file — libvirt's virDomainAuthorizedSSHKeysSet with flags 0); when that
//    fails (an agent older than 5.2), the file is written with the agent's file and exec commands
//    (authorized-keys-file.ts), and a Warning says the deprecated flow was used;
//  - each password is set with guest-set-user-password (libvirt's virDomainSetUserPassword:
//    base64, not crypted).
// The outcome (api.AccessCredentialMetadata) goes to `onResult`; the domain manager publishes it in
// the domain's metadata, from which the handler writes the VMI condition AccessCredentialsSynchronized.
import { readdir, readFile } from '../fs/async.ts';
import { join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { GuestExecAgent } from '../guest-agent/exec.ts';
import { writeAuthorizedKeysFile } from './authorized-keys-file.ts';
import {
  ACCESS_CREDENTIAL_CHECK_INTERVAL_MS, ACCESS_CREDENTIAL_RESYNC_INTERVAL_MS, AccessCredentialMessage, INITIAL_PROPAGATION_STATE,
  afterPropagation, agentCredentials, credentialsSignature, deprecatedFlowWarning, desiredCredentials, isSecretKeyFile, propagationResult, reloadReason,
  type AgentCredential, type DesiredCredentials, type PropagationState, type SecretContent,
} from './credentials.ts';
import type { AccessCredentialMetadata } from '../../src/api/domain/domain.ts';

export interface AccessCredentialManagerOptions {
  readonly vmi: VirtualMachineInstance;
  /** Where the Secret `secretName` is mounted (`<secret-source-dir>/<secretName>-access-cred`). */
  readonly secretDir: (secretName: string) => string;
  /** The guest agent when its channel is connected, else undefined. */
  readonly agent: () => GuestExecAgent | undefined;
  readonly log: Logger;
  /** Each propagation's outcome. */
  readonly onResult: (result: AccessCredentialMetadata) => void;
  /** A Kubernetes event for the VMI (the deprecated-flow warning). */
  readonly onEvent: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  readonly checkIntervalMs?: number | undefined;
  readonly resyncIntervalMs?: number | undefined;
  /** guest-ping deadline (default 10 s). */
  readonly pingTimeoutMs?: number | undefined;
}

const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Reads a mounted Secret (readKeysFromDirectory / readAndAddPasswordsFromDirectory). */
export async function readSecretDir(dir: string): Promise<SecretContent> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    return { error: AccessCredentialMessage.readDir(dir, errText(err)) };
  }
  const files: { name: string; content: string }[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.isDirectory() || !isSecretKeyFile(e.name)) continue;
    const path = join(dir, e.name);
    try {
      files.push({ name: e.name, content: await readFile(path, 'utf8') });
    } catch (err) {
      return { error: AccessCredentialMessage.readFile(path, errText(err)) };
    }
  }
  return { files };
}

export class AccessCredentialManager {
  private readonly o: AccessCredentialManagerOptions;
  private readonly creds: readonly AgentCredential[];
  private readonly checkMs: number;
  private readonly resyncMs: number;
  private state: PropagationState = INITIAL_PROPAGATION_STATE;
  private deprecatedWarningSent = false;
  private last: AccessCredentialMetadata | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(o: AccessCredentialManagerOptions) {
    this.o = o;
    this.creds = agentCredentials(o.vmi);
    this.checkMs = o.checkIntervalMs ?? ACCESS_CREDENTIAL_CHECK_INTERVAL_MS;
    this.resyncMs = o.resyncIntervalMs ?? ACCESS_CREDENTIAL_RESYNC_INTERVAL_MS;
  }

  /** Whether the VMI has credentials for the agent to propagate. */
  get hasWork(): boolean {
    return this.creds.length > 0;
  }

  /** Starts the checks (the first one after one interval, as KubeVirt's ticker). */
  start(): void {
    if (!this.hasWork || this.stopped || this.timer) return;
    this.o.log.info({ secrets: [...new Set(this.creds.map((c) => c.secretName))], checkIntervalMs: this.checkMs }, 'watching access credential secrets');
    this.schedule();
  }

  /** Stops the checks; resolves once a propagation under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.check().catch((err: unknown) => this.o.log.error({ err: errText(err) }, 'access credential check failed')).finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.checkMs);
    this.timer.unref();
  }

  /** One check: read the Secrets, propagate if due. */
  async check(now = Date.now()): Promise<void> {
    const desired = await this.readDesired();
    const signature = credentialsSignature(desired);
    const why = reloadReason(this.state, signature, now, this.resyncMs);
    if (!why || this.stopped) return;
    if (why !== 'pending') this.o.log.info({ reason: why }, why === 'changed' ? 'reloading access credentials because secret changed' : 'resyncing access credentials due to recurring resync period');
    const { result, usedDeprecatedFlow } = await this.propagate(desired);
    this.state = afterPropagation(this.state, signature, result, now);
    if (result.Succeeded !== this.last?.Succeeded || result.Message !== this.last.Message) {
      if (result.Succeeded) this.o.log.info('access credentials synchronized');
      else this.o.log.warn({ err: result.Message }, 'access credentials not synchronized: retrying at the next check');
    }
    this.last = result;
    this.o.onResult(result);
    const w = deprecatedFlowWarning(this.deprecatedWarningSent, result, usedDeprecatedFlow);
    this.deprecatedWarningSent = w.sent;
    if (w.send) this.o.onEvent('Warning', 'AccessCredentialsSyncSuccess', AccessCredentialMessage.deprecatedFlow);
  }

  private async readDesired(): Promise<DesiredCredentials> {
    const secrets = new Map<string, SecretContent>();
    for (const name of new Set(this.creds.map((c) => c.secretName))) secrets.set(name, await readSecretDir(this.o.secretDir(name)));
    return desiredCredentials(this.creds, secrets);
  }

  private async propagate(desired: DesiredCredentials): Promise<{ result: AccessCredentialMetadata; usedDeprecatedFlow: boolean }> {
    const agent = this.o.agent();
    const offline = { result: propagationResult([AccessCredentialMessage.agentOffline]), usedDeprecatedFlow: false };
    if (!agent) return offline;
    try {
      await agent.execute('guest-ping', undefined, { timeoutMs: this.o.pingTimeoutMs ?? 10_000 });
    } catch {
      return offline;
    }
    const errors = [...desired.errors];
    for (const e of desired.errors) this.o.log.error({ err: e }, 'reading access credentials failed');
    let usedDeprecatedFlow = false;
    for (const [user, keys] of desired.authorizedKeys) {
      try {
        if (await this.setAuthorizedKeys(agent, user, keys)) usedDeprecatedFlow = true;
        this.o.log.info({ user, keys: keys.length }, 'authorized_keys set through the guest agent');
      } catch (err) {
        this.o.log.error({ user, err: errText(err) }, 'writing access credentials using guest agent failed');
        errors.push(AccessCredentialMessage.writeKeys(user, errText(err)));
      }
    }
    for (const [user, password] of desired.passwords) {
      try {
        await agent.execute('guest-set-user-password', { username: user, password: Buffer.from(password, 'utf8').toString('base64'), crypted: false });
        this.o.log.info({ user }, 'password set through the guest agent');
      } catch (err) {
        this.o.log.error({ user, err: errText(err) }, 'setting a password through the guest agent failed');
        errors.push(AccessCredentialMessage.setPassword(user, errText(err)));
      }
    }
    return { result: propagationResult(errors), usedDeprecatedFlow };
  }

  /** agentSetAuthorizedKeys: true when the deprecated file-writing flow was used. */
  private async setAuthorizedKeys(agent: GuestExecAgent, user: string, keys: readonly string[]): Promise<boolean> {
    try {
      await agent.execute('guest-ssh-add-authorized-keys', { username: user, keys: [...keys], reset: true });
      return false;
    } catch (err) {
      this.o.log.debug({ user, err: errText(err) }, 'could not set SSH keys using guest-ssh-add-authorized-keys: writing the file');
      try {
        await writeAuthorizedKeysFile(agent, user, keys);
        return true;
      } catch (fileErr) {
        throw new Error(AccessCredentialMessage.setKeys(errText(err), errText(fileErr)), { cause: fileErr });
      }
    }
  }
}

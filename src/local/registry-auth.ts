// Registry credentials from a pod's imagePullSecrets, as kubelet's keyring reads them: Secrets of
// type kubernetes.io/dockerconfigjson (`.dockerconfigjson`: {"auths": {KEY: {...}}}) and the older
// kubernetes.io/dockercfg (`.dockercfg`: {KEY: {...}}), each entry with `auth` (base64 user:password),
// `username`/`password`, or an `identitytoken` (an OAuth2 refresh token for the registry's token
// server). KEY is a registry host[:port], optionally with a path prefix and a scheme
// (`https://index.docker.io/v1/`). Every entry whose key matches the image is a candidate, the most
// specific first; kubelet tries them in turn. Pure: the caller reads the Secrets.

export interface RegistryCredential {
  /** The key as written in the Secret. */
  readonly key: string;
  /** The Secret it came from. */
  readonly secret: string;
  readonly username?: string;
  readonly password?: string;
  readonly identityToken?: string;
}

export interface PullSecretData { readonly name: string; readonly type?: string; readonly data?: Readonly<Record<string, string>> }

/** The registry host and repository path of an image reference (docker.io's rules for a bare name). */
export function imageRegistry(ref: string): { host: string; path: string } {
  const noDigest = ref.split('@')[0]!;
  const slash = noDigest.indexOf('/');
  const first = slash < 0 ? '' : noDigest.slice(0, slash);
  const isHost = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = isHost ? first : 'docker.io';
  let path = isHost ? noDigest.slice(slash + 1) : noDigest;
  const colon = path.lastIndexOf(':');
  if (colon > path.lastIndexOf('/')) path = path.slice(0, colon);
  if (!isHost && !path.includes('/')) path = `library/${path}`;
  return { host, path };
}

/** A Secret key as host + path prefix (scheme and docker.io's legacy URLs normalized). */
function keyOf(key: string): { host: string; path: string } {
  let k = key.trim().replace(/^[a-z]+:\/\//i, '').replace(/\/+$/, '');
  if (/^(index\.)?docker\.io(\/v1)?$/.test(k) || k === 'registry-1.docker.io') k = 'docker.io';
  const slash = k.indexOf('/');
  return slash < 0 ? { host: k.toLowerCase(), path: '' } : { host: k.slice(0, slash).toLowerCase(), path: k.slice(slash + 1) };
}

/** Whether a Secret key applies to an image (host equal, key path a prefix of the repository path). */
export function keyMatches(key: string, ref: string): boolean {
  const k = keyOf(key);
  const img = imageRegistry(ref);
  if (k.host !== img.host.toLowerCase()) return false;
  return k.path === '' || img.path === k.path || img.path.startsWith(`${k.path}/`);
}

const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

type Entry = { auth?: string; username?: string; password?: string; identitytoken?: string; identityToken?: string };

/** The entries of one Secret (throws with the reason when its data is malformed). */
export function secretEntries(s: PullSecretData): Array<[string, Entry]> {
  const json = s.data?.['.dockerconfigjson'];
  const cfg = s.data?.['.dockercfg'];
  if (json === undefined && cfg === undefined) throw new Error(`imagePullSecret "${s.name}" has neither .dockerconfigjson nor .dockercfg (type ${s.type ?? 'Opaque'})`);
  let parsed: unknown;
  try { parsed = JSON.parse(b64((json ?? cfg)!)); } catch { throw new Error(`imagePullSecret "${s.name}": ${json !== undefined ? '.dockerconfigjson' : '.dockercfg'} is not JSON`); }
  const auths = (json !== undefined ? (parsed as { auths?: unknown }).auths : parsed) ?? {};
  if (typeof auths !== 'object' || Array.isArray(auths)) throw new Error(`imagePullSecret "${s.name}": "auths" is not an object`);
  return Object.entries(auths as Record<string, Entry>).filter(([, e]) => e && typeof e === 'object');
}

/** The credentials of the pod's pull secrets that apply to `ref`, most specific key first. */
export function credentialsFor(ref: string, secrets: readonly PullSecretData[]): RegistryCredential[] {
  const out: Array<RegistryCredential & { specificity: number; order: number }> = [];
  let order = 0;
  for (const s of secrets) {
    for (const [key, e] of secretEntries(s)) {
      if (!keyMatches(key, ref)) continue;
      let username = e.username;
      let password = e.password;
      if (e.auth) {
        const dec = b64(e.auth);
        const colon = dec.indexOf(':');
        if (colon > 0) { username = dec.slice(0, colon); password = dec.slice(colon + 1); }
      }
      const identityToken = e.identitytoken ?? e.identityToken;
      if (!identityToken && (username === undefined || password === undefined)) continue;
      out.push({ key, secret: s.name, ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}), ...(identityToken ? { identityToken } : {}), specificity: keyOf(key).path.length, order: order++ });
    }
  }
  return out.sort((a, b) => b.specificity - a.specificity || a.order - b.order).map(({ specificity: _s, order: _o, ...c }) => c);
}

/** A containers-auth.json (skopeo's `--authfile`) with one credential for the image's registry. */
export function authFileFor(ref: string, c: RegistryCredential): string {
  const { host } = imageRegistry(ref);
  const entry = c.identityToken
    ? { auth: Buffer.from(`${c.username ?? '<token>'}:`).toString('base64'), identitytoken: c.identityToken }
    : { auth: Buffer.from(`${c.username}:${c.password}`).toString('base64') };
  return `${JSON.stringify({ auths: { [host]: entry } })}\n`;
}

// KubeVirt's version.Info as `virtctl version` prints it (Go's %#v: `version.Info{GitVersion:"v1.9.0",
// GitCommit:"...", ...}`), and the server's answer at /apis/subresources.kubevirt.io/v1/version
// read into it with each field checked. Pure.
import type { VersionInfo } from '../version/server-version.ts';

const FIELDS = ['gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform'] as const;

/** Go's strconv.Quote for the printable strings a version holds (JSON's escapes agree on those). */
function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, '\\x$1');
}

/** `version.Info{GitVersion:"...", ...}`. */
export function formatVersionInfo(v: VersionInfo): string {
  return `version.Info{${FIELDS.map((f) => `${f[0]!.toUpperCase()}${f.slice(1)}:${goQuote(v[f])}`).join(', ')}}`;
}

/** Reads virt-api's version answer; a missing field is "" (as Go decodes it), a field of another type is an error. */
export function parseVersionInfo(body: unknown): VersionInfo {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error(`the server's version is not a JSON object: ${JSON.stringify(body)?.slice(0, 200)}`);
  const o = body as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const f of FIELDS) {
    const x = o[f];
    if (x !== undefined && typeof x !== 'string') throw new Error(`the server's version: field ${f} is not a string: ${JSON.stringify(x)}`);
    out[f] = x ?? '';
  }
  return out as unknown as VersionInfo;
}

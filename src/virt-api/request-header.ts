// How an aggregated API server learns who is calling (kube-apiserver's aggregation layer,
// "requestheader" authentication): kube-apiserver authenticates the user, then proxies the request
// over TLS with its front-proxy client certificate and the user in headers (X-Remote-User,
// X-Remote-Group, X-Remote-Extra-*). The headers are believed only from a connection whose client
// certificate chains to the requestheader CA and, when a list of allowed names is published, whose
// common name is on it. Both come from kube-system/extension-apiserver-authentication.
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestUser } from './subresource-api.ts';

export const REQUEST_HEADER_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;

export interface RequestHeaderConfig {
  /** PEM of the CA the front proxy's client certificate chains to (`requestheader-client-ca-file`). */
  readonly clientCa: string;
  /** Common names a front proxy may have (`requestheader-allowed-names`); empty: any the CA signed. */
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly uidHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

/** A JSON list of strings as kube-apiserver writes them into the ConfigMap ("[\"X-Remote-User\"]"). */
function jsonList(text: string | undefined, fallback: readonly string[], key: string): readonly string[] {
  if (text === undefined || text === '') return fallback;
  let v: unknown;
  try { v = JSON.parse(text); } catch { throw new Error(`${REQUEST_HEADER_CONFIGMAP.namespace}/${REQUEST_HEADER_CONFIGMAP.name} ${key}: not a JSON list: ${text}`); }
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`${REQUEST_HEADER_CONFIGMAP.namespace}/${REQUEST_HEADER_CONFIGMAP.name} ${key}: must be a JSON list of strings`);
  return v as string[];
}

/** The ConfigMap's data → the config; undefined when the cluster has no aggregation layer configured. Pure. */
export function requestHeaderConfig(data: Readonly<Record<string, string>> | undefined): RequestHeaderConfig | undefined {
  const clientCa = data?.['requestheader-client-ca-file'];
  if (!clientCa || !clientCa.includes('BEGIN CERTIFICATE')) return undefined;
  return {
    clientCa,
    allowedNames: jsonList(data['requestheader-allowed-names'], [], 'requestheader-allowed-names'),
    usernameHeaders: jsonList(data['requestheader-username-headers'], ['X-Remote-User'], 'requestheader-username-headers'),
    uidHeaders: jsonList(data['requestheader-uid-headers'], [], 'requestheader-uid-headers'),
    groupHeaders: jsonList(data['requestheader-group-headers'], ['X-Remote-Group'], 'requestheader-group-headers'),
    extraHeaderPrefixes: jsonList(data['requestheader-extra-headers-prefix'], ['X-Remote-Extra-'], 'requestheader-extra-headers-prefix'),
  };
}

/** What TLS established about the connection's client certificate. */
export interface PeerCertificate {
  /** The certificate verified against the requestheader CA. */
  readonly verified: boolean;
  readonly commonName?: string | undefined;
}

export type RequestHeaderResult = { ok: true; user: RequestUser } | { ok: false; reason: string };

const values = (headers: IncomingHttpHeaders, name: string): string[] => {
  const v = headers[name.toLowerCase()];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((x) => (name.toLowerCase().includes('group') ? x.split(',').map((s) => s.trim()) : [x])).filter((s) => s !== '');
};

/**
 * The user a proxied request names, or why it is not believed. Pure. Groups may come as repeated
 * headers or comma-joined (Node joins repeated headers with ", "); extra keys are percent-decoded
 * and lower-cased, as kube-apiserver encodes them.
 */
export function userFromRequestHeaders(headers: IncomingHttpHeaders, peer: PeerCertificate, cfg: RequestHeaderConfig): RequestHeaderResult {
  if (!peer.verified) return { ok: false, reason: 'the connection has no client certificate signed by the requestheader CA (only kube-apiserver\'s front proxy may call this API)' };
  if (cfg.allowedNames.length && !cfg.allowedNames.includes(peer.commonName ?? '')) {
    return { ok: false, reason: `client certificate common name "${peer.commonName ?? ''}" is not one of the requestheader allowed names (${cfg.allowedNames.join(', ')})` };
  }
  let name: string | undefined;
  for (const h of cfg.usernameHeaders) { name = values(headers, h)[0]; if (name) break; }
  if (!name) return { ok: false, reason: `the proxied request names no user (${cfg.usernameHeaders.join(', ')})` };
  let uid: string | undefined;
  for (const h of cfg.uidHeaders) { uid = values(headers, h)[0]; if (uid) break; }
  const groups = cfg.groupHeaders.flatMap((h) => values(headers, h));
  const extra: Record<string, string[]> = {};
  for (const prefix of cfg.extraHeaderPrefixes) {
    const p = prefix.toLowerCase();
    for (const [k, v] of Object.entries(headers)) {
      if (!k.startsWith(p) || v === undefined) continue;
      let key = k.slice(p.length);
      try { key = decodeURIComponent(key); } catch { /* kept as sent */ }
      (extra[key.toLowerCase()] ??= []).push(...(Array.isArray(v) ? v : [v]));
    }
  }
  return { ok: true, user: { name, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) } };
}

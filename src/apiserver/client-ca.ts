// Publishing the ConfigMap kube-system/extension-apiserver-authentication as kube-apiserver does:
// the CA its client certificates are signed with (`client-ca-file`), so that components serving
// their own endpoints (aggregated API servers, qvirt's handler) can accept the same client certificates.
import { CLIENT_CA_CONFIGMAP } from '../kube/extension-apiserver-authentication.ts';
import type { Registry } from './resources.ts';
import type { Rest } from './rest.ts';

/** Creates the ConfigMap, or brings its client-ca-file up to date. */
export function publishClientCa(rest: Rest, registry: Registry, caPem: string): void {
  const def = registry.get('', 'configmaps')!;
  const { namespace, name, key } = CLIENT_CA_CONFIGMAP;
  let existing: Record<string, unknown> | undefined;
  try {
    existing = rest.get(def, namespace, name) as Record<string, unknown>;
  } catch {
    existing = undefined;
  }
  if (!existing) {
    rest.create(def, 'v1', namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { [key]: caPem } });
    return;
  }
  const data = (existing.data ?? {}) as Record<string, string>;
  if (data[key] !== caPem) rest.update(def, 'v1', namespace, name, { ...existing, data: { ...data, [key]: caPem } }, 'main');
}

// The ConfigMap kube-system/extension-apiserver-authentication that kube-apiserver publishes: the
// CA its client certificates are signed with (`client-ca-file`), so that components serving their
// own endpoints (aggregated API servers, qvirt's handler) can accept the same client certificates.
import type { Registry } from './resources.ts';
import type { Rest } from './rest.ts';

export const CLIENT_CA_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication', key: 'client-ca-file' } as const;

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

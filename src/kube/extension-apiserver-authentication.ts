// The ConfigMap kube-system/extension-apiserver-authentication that kube-apiserver publishes: the
// CA its client certificates are signed with (`client-ca-file`), so that components serving their
// own endpoints (aggregated API servers, qvirt's handler) can accept the same client certificates.
export const CLIENT_CA_CONFIGMAP = { namespace: 'kube-system', name: 'extension-apiserver-authentication', key: 'client-ca-file' } as const;

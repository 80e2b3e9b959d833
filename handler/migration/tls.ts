// TLS between node agents for the migration stream (KubeVirt's migration proxy over the handlers'
// shared CA): one CA, one certificate per handler usable as server and client, mutual
// authentication — a peer is trusted when its chain leads to the CA and its common name is
// KubeVirt's handler identity (`kubevirt.io:system:node:virt-handler`, as KubeVirt checks it).
import type { ConnectionOptions, TlsOptions } from 'node:tls';
import { ensureCaFiles, ensureCertFiles } from '../../src/pki/cert-files.ts';

/** The common name KubeVirt's handler certificates carry and its migration proxy checks. */
export const HANDLER_CERT_CN = 'kubevirt.io:system:node:virt-handler';

export interface MigrationTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  /**
   * The CA's key: with it this node agent issues the credentials of a direct migration
   * (direct-credentials.ts); it never leaves the node agent. Absent: no direct migration with TLS.
   */
  readonly caKey?: string | undefined;
}

/** `dir/ca.*` and `dir/virt-handler.*`, created on first use. */
export function ensureMigrationTls(dir: string): MigrationTls {
  const ca = ensureCaFiles(dir, 'qvirt-handler-ca');
  const own = ensureCertFiles(dir, 'virt-handler', { commonName: HANDLER_CERT_CN }, { usages: ['serverAuth', 'clientAuth'] });
  return { ca: ca.certPem, cert: own.certPem, key: own.keyPem, caKey: ca.keyPem };
}

export function serverTlsOptions(t: MigrationTls): TlsOptions {
  return { ca: t.ca, cert: t.cert, key: t.key, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' };
}

/**
 * The client side's options, structured-cloneable for the relay worker: the peer's identity (the CA
 * plus the handler CN — handlers are addressed by IP) is checked in the worker (relay-worker.ts).
 */
export function clientTlsOptions(t: MigrationTls): ConnectionOptions {
  return { ca: t.ca, cert: t.cert, key: t.key, rejectUnauthorized: true, minVersion: 'TLSv1.2' };
}

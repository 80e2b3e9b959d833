// TLS between node agents for the migration stream (KubeVirt's migration proxy over the handlers'
// shared CA): one CA, one certificate per handler usable as server and client, mutual
// authentication — a peer is trusted when its chain leads to the CA and its common name is
// KubeVirt's handler identity (`kubevirt.io:system:node:virt-handler`, as KubeVirt checks it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConnectionOptions, TlsOptions } from 'node:tls';
import { ensureCa, ensureSignedCert } from '../../src/apiserver/auth.ts';

/** The common name KubeVirt's handler certificates carry and its migration proxy checks. */
export const HANDLER_CERT_CN = 'kubevirt.io:system:node:virt-handler';

export interface MigrationTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** `dir/ca.*` and `dir/virt-handler.*`, created on first use. */
export async function ensureMigrationTls(dir: string): Promise<MigrationTls> {
  await ensureCa(dir, 'qvirt-handler-ca');
  await ensureSignedCert(dir, 'virt-handler', `/CN=${HANDLER_CERT_CN}`, 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n');
  const read = (n: string) => readFileSync(join(dir, n), 'utf8');
  return { ca: read('ca.crt'), cert: read('virt-handler.crt'), key: read('virt-handler.key') };
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

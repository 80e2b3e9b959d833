// The handler endpoint's own PKI, in `<stateDir>/endpoint-pki`: a CA made on first start and kept
// across restarts (clients pin it from the Node's `qvirt.io/handler-ca` annotation), and a serving
// certificate it signs whose SANs are the advertised host plus loopback. A serving certificate that
// does not name the advertised host (the node's address changed) is signed anew by the same CA.
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ensureCa, ensureSignedCert, subjectAltNames } from '../src/apiserver/auth.ts';

export interface EndpointPki {
  readonly dir: string;
  readonly caCert: string;
  readonly cert: string;
  readonly key: string;
}

/** Whether a certificate names `host` in its SANs. */
export function certificateNames(cert: X509Certificate, host: string): boolean {
  return isIP(host) ? cert.checkIP(host) !== undefined : cert.checkHost(host) !== undefined;
}

export async function ensureEndpointPki(dir: string, advertisedHost: string): Promise<EndpointPki> {
  await ensureCa(dir, 'qvirt-handler-ca');
  const hosts = [advertisedHost, '127.0.0.1', '::1', 'localhost'];
  const certFile = join(dir, 'handler.crt');
  const stale = existsSync(certFile) && !hosts.every((h) => certificateNames(new X509Certificate(readFileSync(certFile)), h));
  await ensureSignedCert(dir, 'handler', '/CN=qvirt-handler', `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${subjectAltNames(hosts)}\n`, stale);
  const read = (n: string) => readFileSync(join(dir, n), 'utf8');
  return { dir, caCert: read('ca.crt'), cert: read('handler.crt'), key: read('handler.key') };
}

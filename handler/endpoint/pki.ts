// The handler endpoint's own PKI, in `<stateDir>/endpoint-pki`: a CA made on first start and kept
// across restarts (clients pin it from the Node's `qvirt.io/handler-ca` annotation), and a serving
// certificate it signs whose SANs are the advertised host plus loopback. A serving certificate that
// does not name the advertised host (the node's address changed) is signed anew by the same CA.
// Made in JavaScript (src/pki): the handler image has no openssl.
import { ensureCaFiles, ensureCertFiles } from '../../src/pki/cert-files.ts';

export interface EndpointPki {
  readonly dir: string;
  readonly caCert: string;
  readonly cert: string;
  readonly key: string;
}

export function ensureEndpointPki(dir: string, advertisedHost: string): EndpointPki {
  const ca = ensureCaFiles(dir, 'qvirt-handler-ca');
  const serving = ensureCertFiles(dir, 'handler', { commonName: 'qvirt-handler' }, { usages: ['serverAuth'], hosts: [advertisedHost, '127.0.0.1', '::1', 'localhost'] });
  return { dir, caCert: ca.certPem, cert: serving.certPem, key: serving.keyPem };
}

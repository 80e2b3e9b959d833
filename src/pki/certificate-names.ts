// Which hosts a certificate is valid for, as a TLS client checks them: an IP address against its
// iPAddress names, anything else against its DNS names.
import type { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

/** Whether `cert` names `host` in its subjectAltName. */
export function certificateNames(cert: X509Certificate, host: string): boolean {
  return (isIP(host) ? cert.checkIP(host) : cert.checkHost(host)) !== undefined;
}

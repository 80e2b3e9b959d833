// The user an X.509 client certificate names, as Kubernetes reads it (k8s.io/apiserver's x509
// authenticator, CommonNameUserConversion): the subject's CN is the user's name, each O one of
// its groups, and every authenticated user is in system:authenticated. The embedded API server
// and the handler's endpoint authenticate client certificates with it.
import type { X509Certificate } from 'node:crypto';
import type { UserInfo } from '../kube/user-info.ts';


/** The user of an X.509 client certificate, as Kubernetes reads it: CN is the name, each O a group. Pure. */
export function userOfCertificate(cert: X509Certificate): UserInfo {
  const fields = cert.subject.split('\n').map((l) => { const i = l.indexOf('='); return [l.slice(0, i), l.slice(i + 1)] as const; });
  const cn = fields.find(([k]) => k === 'CN')?.[1] ?? 'unknown';
  return { name: cn, groups: [...fields.filter(([k]) => k === 'O').map(([, v]) => v), 'system:authenticated'] };
}

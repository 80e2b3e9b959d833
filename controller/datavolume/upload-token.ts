// The upload proxy's tokens (CDI's cdi-apiserver signs a token naming the claim, the upload proxy
// checks it): here an HMAC-SHA256 over {namespace, pvc, expiry} with the local mode's secret, valid
// for CDI's five minutes. Pure but for the clock passed in.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** CDI's upload token lifetime (`apiserver.uploadTokenLifetime`). */
export const UPLOAD_TOKEN_LIFETIME_MS = 5 * 60 * 1000;

export interface UploadTokenClaims { readonly namespace: string; readonly pvc: string; readonly exp: number }

const b64u = (b: Buffer) => b.toString('base64url');

export function signUploadToken(secret: Buffer, namespace: string, pvc: string, nowMs: number): string {
  const payload = b64u(Buffer.from(JSON.stringify({ namespace, pvc, exp: nowMs + UPLOAD_TOKEN_LIFETIME_MS })));
  return `${payload}.${b64u(createHmac('sha256', secret).update(payload).digest())}`;
}

/** The claims of a valid, unexpired token, or why it is refused. */
export function verifyUploadToken(secret: Buffer, token: string, nowMs: number): UploadTokenClaims | { error: string } {
  const [payload, sig] = token.split('.');
  if (!payload || !sig) return { error: 'malformed token' };
  const want = createHmac('sha256', secret).update(payload).digest();
  const got = Buffer.from(sig, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return { error: 'invalid token signature' };
  let c: UploadTokenClaims;
  try { c = JSON.parse(Buffer.from(payload, 'base64url').toString()) as UploadTokenClaims; } catch { return { error: 'malformed token' }; }
  if (typeof c.namespace !== 'string' || typeof c.pvc !== 'string' || typeof c.exp !== 'number') return { error: 'malformed token' };
  if (c.exp < nowMs) return { error: 'token expired' };
  return c;
}

// Errors the cluster verbs (virtctl's) report the way kubectl does: `Error: <what failed>: <why>`,
// with what to do when there is something to do, and a non-zero exit code. main.ts prints them
// without a stack trace; anything else that escapes is a bug and keeps its stack.
import { KubeApiError } from './client.ts';
import { UserError } from './user-error.ts';

/** The object a request was about, for messages like `VirtualMachine "x" not found in namespace "y"`. */
export interface ObjectRef {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string | undefined;
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN']);

function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The API server's own message from a KubeApiError, without our `METHOD /path: ` prefix. */
export function statusMessage(err: KubeApiError): string {
  const st = err.status as { message?: unknown } | undefined;
  return st && typeof st.message === 'string' && st.message ? st.message : err.message;
}

/**
 * Turns a failed API request into a UserError that reads like kubectl's. `server` is the API
 * server's URL, named when it cannot be reached.
 */
export function kubeError(err: unknown, what: ObjectRef | undefined, server: string): UserError {
  if (err instanceof UserError) return err;
  if (err instanceof KubeApiError) {
    if (err.code === 404 && what) {
      return new UserError(`${what.kind} "${what.name}" not found${what.namespace ? ` in namespace "${what.namespace}"` : ''}`);
    }
    if (err.code === 401) return new UserError(`the API server at ${server} did not accept your credentials (Unauthorized): ${statusMessage(err)}; check the user in your kubeconfig`);
    if (err.code === 403) return new UserError(`forbidden: ${statusMessage(err)}`);
    return new UserError(`${statusMessage(err)} (${err.reason}, HTTP ${err.code})`);
  }
  const code = causeCode(err);
  if (code && CONNECT_CODES.has(code)) {
    return new UserError(`cannot reach the Kubernetes API server at ${server}: ${code}; is the cluster (or 'qvirt local up') running? Give --kubeconfig FILE or set KUBECONFIG to use another`);
  }
  return new UserError(err instanceof Error ? err.message : String(err));
}

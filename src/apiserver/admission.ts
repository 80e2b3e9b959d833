// Validating admission: what kube-apiserver's ValidatingAdmissionWebhook plugin does for the
// webhooks an operator registers, with the webhooks as in-process plugins (the embedded server
// calls no webhook services). A plugin sees the request's attributes and may read and patch
// objects; a denial becomes the Status kube-apiserver returns for a webhook's rejection
// (`admission webhook "<name>" denied the request: <message>`, the webhook's code and causes).
// Plugins run after schema validation and before the write, on API requests only (not on the
// server's own writes: garbage collection, namespace cleanup).
import { isDenial, type AdmissionApi, type AdmissionAttributes, type AdmissionDenial, type ValidatingAdmissionPlugin } from '../kube/admission.ts';
import { ApiError } from './errors.ts';

/** kube-apiserver's `webhookerrors.ToStatusErr`: the denial as the request's error. */
export function denialError(webhook: string, d: AdmissionDenial): ApiError {
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const message = d.message ? `${deniedBy}: ${d.message}` : d.reason ? `${deniedBy}: ${d.reason}` : `${deniedBy} without explanation`;
  return new ApiError(d.code >= 400 ? d.code : 400, d.reason ?? '', message, d.causes?.length ? { causes: [...d.causes] } : undefined);
}

/** Runs every matching plugin in order; the first denial is thrown, else the warnings are returned. */
export function runValidatingAdmission(plugins: readonly ValidatingAdmissionPlugin[], a: AdmissionAttributes, api: AdmissionApi): string[] {
  const warnings: string[] = [];
  for (const p of plugins) {
    if (!p.matches(a)) continue;
    const r = p.admit(a, api);
    if (isDenial(r)) throw denialError(p.name, r);
    if (r) warnings.push(...r.warnings);
  }
  return warnings;
}

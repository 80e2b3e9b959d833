/**
 * KubeVirt's `webhookutils` answers: field causes become a 422 Invalid denial with the first ten
 * causes, whose message joins their messages (`, and N more validation errors`), a plain error a 400 with its
 * text; an admitted request may carry warnings.
 */
import type { FieldError } from '../api/field-error.ts';
import type { AdmissionDenial, AdmissionResult } from '../kube/admission.ts';

const MAX_CAUSES_IN_MESSAGE = 10;

/**
 * A cause in the denial's message: KubeVirt's messages mostly name their field (`disks[0].Name 'd' not found.`,
 * compared ignoring case); where ours do not, the field is prefixed so every refusal names it.
 */
export function causeMessage(e: FieldError): string {
  return !e.field || e.reason.toLowerCase().includes(e.field.toLowerCase()) ? e.reason : `${e.field}: ${e.reason}`;
}

/** `webhookutils.ToAdmissionResponse`. */
export function causesDenial(errors: readonly FieldError[]): AdmissionDenial {
  const kept = errors.slice(0, MAX_CAUSES_IN_MESSAGE);
  const shown = kept.map(causeMessage);
  const more = errors.length - shown.length;
  return {
    code: 422,
    reason: 'Invalid',
    message: shown.join(', ') + (more > 0 ? `, and ${more} more validation errors` : ''),
    // The causes carry KubeVirt's message as is beside its field (kubectl prints `field: message`).
    causes: kept.map((e) => ({ reason: e.type, message: e.reason, ...(e.field ? { field: e.field } : {}) })),
  };
}

/** `webhookutils.ToAdmissionResponseError`. */
export const errorDenial = (message: string): AdmissionDenial => ({ code: 400, message });

/** Allowed, with warnings when there are any. */
export const allowed = (warnings: readonly string[]): AdmissionResult => (warnings.length ? { warnings } : undefined);

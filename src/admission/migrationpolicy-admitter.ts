/**
 * virt-api's MigrationPolicy admitter (`migrationpolicy-admitter.go`), on create and update: the
 * schema, then completionTimeoutPerGiB and bandwidthPerMigration not negative, maxDowntimeMs and the
 * experimental options changed only with their feature gates, stallDetector and downtimeTuning not
 * together — KubeVirt's messages, at `spec.<field>`.
 */
import { FeatureGate, isFeatureGateEnabled, type ClusterConfig } from '../api/cluster-config.ts';
import { fieldError, type FieldError } from '../api/field-error.ts';
import { parseWithSchema } from '../api/parse.ts';
import { quantityMilliValue } from '../api/quantity.ts';
import { MigrationPolicySchema } from '../api/migrations/schema.ts';
import type { MigrationPolicy } from '../api/migrations/types.ts';
import type { AdmissionResult } from '../kube/admission.ts';
import { allowed, causesDenial } from './response.ts';

export const MIGRATION_POLICY_WEBHOOK = 'migration-policy-validator.kubevirt.io';
export const MIGRATION_POLICY_WEBHOOK_PATH = '/migration-policy-validate-create';

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** `MigrationPolicyAdmitter.Admit`: `oldObject` on update. */
export function admitMigrationPolicy(object: unknown, config: ClusterConfig, oldObject?: unknown): AdmissionResult {
  const parsed = parseWithSchema<MigrationPolicy>(MigrationPolicySchema, object);
  if (!parsed.value) return causesDenial(parsed.errors);
  const spec = parsed.value.spec;
  const old = oldObject !== undefined ? parseWithSchema<MigrationPolicy>(MigrationPolicySchema, oldObject).value?.spec : undefined;
  const stall = isFeatureGateEnabled(config, FeatureGate.MigrationStallDetection);
  const tuning = isFeatureGateEnabled(config, FeatureGate.MigrationDowntimeTuning);
  const out: FieldError[] = [];
  if (spec.completionTimeoutPerGiB !== undefined && spec.completionTimeoutPerGiB < 0) out.push(fieldError.invalid('spec.completionTimeoutPerGiB', 'must not be negative'));
  if (spec.maxDowntimeMs !== undefined && !same(old?.maxDowntimeMs, spec.maxDowntimeMs) && !stall && !tuning) {
    out.push(fieldError.invalid('spec.maxDowntimeMs', `maxDowntimeMs cannot be modified without enabling the ${FeatureGate.MigrationStallDetection} or ${FeatureGate.MigrationDowntimeTuning} feature gate`));
  }
  const x = spec.experimental;
  if (x?.downtimeTuning && !same(old?.experimental?.downtimeTuning, x.downtimeTuning) && !tuning) {
    out.push(fieldError.invalid('spec.experimental.downtimeTuning', `experimental.downtimeTuning cannot be modified without enabling the ${FeatureGate.MigrationDowntimeTuning} feature gate`));
  }
  if (x?.stallDetector && x.downtimeTuning) {
    out.push(fieldError.invalid('spec.experimental', 'experimental.stallDetector and experimental.downtimeTuning are mutually exclusive; the stall detection path manages its own downtime schedule'));
  }
  if (x?.stallDetector && !same(old?.experimental?.stallDetector, x.stallDetector) && !stall) {
    out.push(fieldError.invalid('spec.experimental.stallDetector', `experimental.stallDetector cannot be modified without enabling the ${FeatureGate.MigrationStallDetection} feature gate`));
  }
  if (spec.bandwidthPerMigration !== undefined && quantityMilliValue(spec.bandwidthPerMigration) < 0n) out.push(fieldError.invalid('spec.bandwidthPerMigration', 'must not be negative'));
  return out.length ? causesDenial(out) : allowed([]);
}

/**
 * migrations.kubevirt.io/v1alpha1 (`staging/src/kubevirt.io/api/migrations/v1alpha1/types.go`):
 * the cluster-scoped MigrationPolicy, whose settings override the cluster's migration configuration
 * for the VMIs its selectors match. Names and strings exactly as KubeVirt's.
 */
import type { ObjectMeta, Quantity } from '../kube.ts';
import type { ExperimentalMigrationOptions } from '../types.ts';

export const MIGRATIONS_GROUP = 'migrations.kubevirt.io';
export const MIGRATIONS_VERSION = 'v1alpha1';
export const MIGRATIONS_API_VERSION = `${MIGRATIONS_GROUP}/${MIGRATIONS_VERSION}`;

/** The CRD's names (`components/crds.go` NewMigrationPolicyCrd): cluster scope, no short names, no category. */
export const MigrationPolicyResource = {
  kind: 'MigrationPolicy',
  listKind: 'MigrationPolicyList',
  plural: 'migrationpolicies',
  singular: 'migrationpolicy',
} as const;

/** `map[string]string`: every key must be present on the labels with the same value. */
export type MigrationPolicyLabelSelector = Record<string, string>;

export interface Selectors {
  namespaceSelector?: MigrationPolicyLabelSelector;
  virtualMachineInstanceSelector?: MigrationPolicyLabelSelector;
}

export interface MigrationPolicySpec {
  /** KubeVirt's `selectors` (required in Go, nil matches nothing). */
  selectors?: Selectors;
  allowAutoConverge?: boolean;
  bandwidthPerMigration?: Quantity;
  completionTimeoutPerGiB?: number;
  maxDowntimeMs?: number;
  allowPostCopy?: boolean;
  allowWorkloadDisruption?: boolean;
  experimental?: ExperimentalMigrationOptions;
}

export type MigrationPolicyStatus = Record<string, never>;

export interface MigrationPolicy {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec: MigrationPolicySpec;
  status?: MigrationPolicyStatus;
}

/**
 * Structural schema of migrations.kubevirt.io/v1alpha1 MigrationPolicy (checked by `tsc` against
 * `./types.ts`): `spec` required, `maxDowntimeMs` within KubeVirt's kubebuilder bounds (1..2000000).
 */
import { bool, int64, looseObject, object, quantity, str, stringMap, type ObjectSchema } from '../schema/dsl.ts';
import { ObjectMetaSchema } from '../schema/kube.ts';
import { ExperimentalMigrationOptionsSchema } from '../schema/kubevirt.ts';
import type { MigrationPolicy, MigrationPolicySpec, Selectors } from './types.ts';

export const SelectorsSchema = object<Selectors>()({
  namespaceSelector: stringMap(),
  virtualMachineInstanceSelector: stringMap(),
});

export const MigrationPolicySpecSchema = object<MigrationPolicySpec>()({
  selectors: SelectorsSchema,
  allowAutoConverge: bool(),
  bandwidthPerMigration: quantity(),
  completionTimeoutPerGiB: int64(),
  maxDowntimeMs: int64({ minimum: 1, maximum: 2_000_000 }),
  allowPostCopy: bool(),
  allowWorkloadDisruption: bool(),
  experimental: ExperimentalMigrationOptionsSchema,
});

export const MigrationPolicySchema: ObjectSchema = object<MigrationPolicy>()(
  {
    apiVersion: str(),
    kind: str(),
    metadata: ObjectMetaSchema,
    spec: MigrationPolicySpecSchema,
    status: looseObject({}, { nullable: true }),
  },
  { required: ['spec'] },
);

/**
 * The MigrationPolicy CRD as virt-operator generates it (`components/crds.go` NewMigrationPolicyCrd):
 * group migrations.kubevirt.io, v1alpha1 served and storage, Cluster scope, no short names and no
 * category, a status subresource, label `kubevirt.io: ""`.
 */
import type { CustomResourceDefinition } from '../schema/crd-types.ts';
import { toOpenAPI } from '../schema/openapi.ts';
import { MIGRATIONS_GROUP, MIGRATIONS_VERSION, MigrationPolicyResource as R } from './types.ts';
import { MigrationPolicySchema } from './schema.ts';

export function migrationPolicyCustomResourceDefinition(): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${R.plural}.${MIGRATIONS_GROUP}`, labels: { 'kubevirt.io': '' } },
    spec: {
      group: MIGRATIONS_GROUP,
      names: { kind: R.kind, listKind: R.listKind, plural: R.plural, singular: R.singular },
      scope: 'Cluster',
      versions: [{ name: MIGRATIONS_VERSION, served: true, storage: true, schema: { openAPIV3Schema: toOpenAPI(MigrationPolicySchema) }, subresources: { status: {} } }],
    },
  };
}

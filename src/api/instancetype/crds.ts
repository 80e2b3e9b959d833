/**
 * The CustomResourceDefinitions of instancetype.kubevirt.io as virt-operator generates them
 * (`components/crds.go` NewVirtualMachine{,Cluster}{Instancetype,Preference}Crd): label
 * `kubevirt.io: ""`, one version v1beta1 served and storage, KubeVirt's short names, the namespaced
 * kinds in category `all`, the cluster kinds in none, no printer columns (kubectl shows NAME and AGE)
 * and no subresources.
 */
import type { CustomResourceDefinition } from '../schema/crd-types.ts';
import { toOpenAPI } from '../schema/openapi.ts';
import { INSTANCETYPE_GROUP, INSTANCETYPE_VERSION, InstancetypeKind, InstancetypeResources } from './constants.ts';
import { InstancetypeSchemaByKind } from './schema.ts';

export function instancetypeCustomResourceDefinition(kind: InstancetypeKind): CustomResourceDefinition {
  const r = InstancetypeResources[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${r.plural}.${INSTANCETYPE_GROUP}`, labels: { 'kubevirt.io': '' } },
    spec: {
      group: INSTANCETYPE_GROUP,
      names: {
        ...(r.categories.length ? { categories: [...r.categories] } : {}),
        kind: r.kind,
        listKind: r.listKind,
        plural: r.plural,
        shortNames: [...r.shortNames],
        singular: r.singular,
      },
      scope: r.scope,
      versions: [{ name: INSTANCETYPE_VERSION, served: true, storage: true, schema: { openAPIV3Schema: toOpenAPI(InstancetypeSchemaByKind[kind]) } }],
    },
  };
}

/** The four, in a stable order. */
export function instancetypeCustomResourceDefinitions(): CustomResourceDefinition[] {
  return Object.values(InstancetypeKind).map(instancetypeCustomResourceDefinition);
}

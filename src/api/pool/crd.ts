/**
 * The VirtualMachinePool CRD as virt-operator generates it (`components/crds.go`
 * NewVirtualMachinePoolCrd): group pool.kubevirt.io, v1alpha1 served and v1beta1 served and
 * stored, Namespaced, short names vmpool/vmpools, category all, KubeVirt's printer columns, the
 * status subresource and the scale subresource (`kubectl scale vmpool`), label `kubevirt.io: ""`.
 */
import type { CustomResourceDefinition, PrinterColumn } from '../schema/crd-types.ts';
import { toOpenAPI } from '../schema/openapi.ts';
import { POOL_GROUP, POOL_SERVED_VERSIONS, POOL_VERSION, VirtualMachinePoolResource as R } from './types.ts';
import { VirtualMachinePoolSchema } from './schema.ts';

const COLUMNS: PrinterColumn[] = [
  { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Number of desired VirtualMachines' },
  { name: 'Current', type: 'integer', jsonPath: '.status.replicas', description: 'Number of managed and not final or deleted VirtualMachines' },
  { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Number of managed VirtualMachines which are ready to receive traffic' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

export function virtualMachinePoolCustomResourceDefinition(): CustomResourceDefinition {
  const openAPIV3Schema = toOpenAPI(VirtualMachinePoolSchema);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${R.plural}.${POOL_GROUP}`, labels: { 'kubevirt.io': '' } },
    spec: {
      group: POOL_GROUP,
      names: { categories: [...R.categories], kind: R.kind, listKind: R.listKind, plural: R.plural, shortNames: [...R.shortNames], singular: R.singular },
      scope: 'Namespaced',
      versions: POOL_SERVED_VERSIONS.map((name) => ({
        name,
        served: true,
        storage: name === POOL_VERSION,
        additionalPrinterColumns: COLUMNS,
        schema: { openAPIV3Schema },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' } },
      })),
    },
  };
}

/**
 * The CustomResourceDefinitions of the four kinds, as KubeVirt's virt-operator generates them
 * (`pkg/virt-operator/resource/generate/components/crds.go`): group kubevirt.io, version v1 served
 * and storage, label `kubevirt.io: ""`, Namespaced, category `all`, KubeVirt's short names, printer
 * columns and subresources (the VMI has **no** status subresource), with the structural schema and
 * CEL rules of this directory. Plain objects; `scripts/gen-crds.ts` writes them as YAML.
 *
 * For every Kubernetes qvirt supports (1.32 and newer: src/deploy/kubernetes-versions.ts): only
 * schema fields those API servers know (see openapi.ts on `reason` / `fieldPath`), and CEL rules
 * within their cost budgets (rules.ts; test/api/crd-cel-cost.test.ts, test/cluster/crds.test.ts).
 */
import { GROUP, Resources, VERSION, CRD_CATEGORY, type Kind } from '../constants.ts';
import type { ObjectSchema } from './dsl.ts';
import { SchemaByKind } from './objects.ts';
import { toOpenAPI } from './openapi.ts';
import type { CustomResourceDefinition, PrinterColumn } from './crd-types.ts';
import { instancetypeCustomResourceDefinitions } from '../instancetype/crds.ts';
import { migrationPolicyCustomResourceDefinition } from '../migrations/crd.ts';
import { virtualMachinePoolCustomResourceDefinition } from '../pool/crd.ts';
import { presetCustomResourceDefinition } from '../preset/crd.ts';

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const condition = (type: string) => `.status.conditions[?(@.type=='${type}')].status`;

const PRINTER_COLUMNS: Record<Kind, PrinterColumn[]> = {
  VirtualMachineInstance: [
    AGE,
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'IP', type: 'string', jsonPath: '.status.interfaces[0].ipAddress' },
    { name: 'NodeName', type: 'string', jsonPath: '.status.nodeName' },
    { name: 'Ready', type: 'string', jsonPath: condition('Ready') },
    { name: 'Live-Migratable', type: 'string', jsonPath: condition('LiveMigratable'), priority: 1 },
    { name: 'Paused', type: 'string', jsonPath: condition('Paused'), priority: 1 },
  ],
  VirtualMachine: [
    AGE,
    { name: 'Status', type: 'string', jsonPath: '.status.printableStatus', description: 'Human Readable Status' },
    { name: 'Ready', type: 'string', jsonPath: condition('Ready') },
  ],
  VirtualMachineInstanceReplicaSet: [
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Number of desired VirtualMachineInstances' },
    { name: 'Current', type: 'integer', jsonPath: '.status.replicas', description: 'Number of managed and not final or deleted VirtualMachineInstances' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Number of managed VirtualMachineInstances which are ready to receive traffic' },
    AGE,
  ],
  VirtualMachineInstanceMigration: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'The current phase of VM instance migration' },
    { name: 'VMI', type: 'string', jsonPath: '.spec.vmiName', description: 'The name of the VMI to perform the migration on' },
  ],
};

const SUBRESOURCES: Record<Kind, CustomResourceDefinition['spec']['versions'][number]['subresources'] | undefined> = {
  // Deliberately none: VMI status is written with the whole object (KubeVirt protects it in its webhook).
  VirtualMachineInstance: undefined,
  VirtualMachine: { status: {} },
  VirtualMachineInstanceReplicaSet: {
    status: {},
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
  },
  VirtualMachineInstanceMigration: { status: {} },
};

/** The CRD for `kind`. */
export function customResourceDefinition(kind: Kind): CustomResourceDefinition {
  const r = Resources[kind];
  const schema: ObjectSchema = SchemaByKind[kind];
  const subresources = SUBRESOURCES[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${r.plural}.${GROUP}`, labels: { 'kubevirt.io': '' } },
    spec: {
      group: GROUP,
      names: {
        categories: [CRD_CATEGORY],
        kind: r.kind,
        listKind: r.listKind,
        plural: r.plural,
        shortNames: [...r.shortNames],
        singular: r.singular,
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          additionalPrinterColumns: PRINTER_COLUMNS[kind],
          schema: { openAPIV3Schema: toOpenAPI(schema) },
          ...(subresources ? { subresources } : {}),
        },
      ],
    },
  };
}

/** Every CRD qvirt installs, in a stable order: the four kubevirt.io kinds, instancetype.kubevirt.io's four, MigrationPolicy, VirtualMachinePool, VirtualMachineInstancePreset. */
export function customResourceDefinitions(): CustomResourceDefinition[] {
  return [
    ...(Object.keys(Resources) as Kind[]).map(customResourceDefinition),
    ...instancetypeCustomResourceDefinitions(),
    migrationPolicyCustomResourceDefinition(),
    virtualMachinePoolCustomResourceDefinition(),
    presetCustomResourceDefinition(),
  ];
}

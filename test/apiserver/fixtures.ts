// A small CRD shaped like KubeVirt's VirtualMachine: status and scale subresources, printer columns
// with a condition filter, a structural schema with enum/pattern/bounds/maxItems/int-or-string,
// a preserve-unknown-fields subtree and CEL rules (including a transition rule).
export const GROUP = 'test.qvirt.io';

export function gadgetCrd(extraRule?: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList', shortNames: ['gd'], categories: ['all'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
          additionalPrinterColumns: [
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            { name: 'Status', type: 'string', jsonPath: '.status.printableStatus' },
            { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Node', type: 'string', jsonPath: '.status.nodeName', priority: 1 },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  required: ['mode'],
                  'x-kubernetes-validations': [
                    { rule: "self.mode != 'Halted' || !has(self.replicas) || self.replicas == 0", message: 'a Halted gadget runs no replicas' },
                    { rule: "!has(oldSelf.owner) || self.owner == oldSelf.owner", message: 'owner is immutable' },
                    { rule: "self.ports.all(p, p.port > 0 && p.port < 65536) && self.ports.exists_one(p, p.primary == true) || size(self.ports) == 0", message: 'ports need exactly one primary', fieldPath: '.ports' },
                    ...(extraRule ? [{ rule: extraRule }] : []),
                  ],
                  properties: {
                    mode: { type: 'string', enum: ['Always', 'Halted', 'Manual'] },
                    replicas: { type: 'integer', minimum: 0, maximum: 5 },
                    owner: { type: 'string', pattern: '^[a-z]+$' },
                    memory: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                    tags: { type: 'array', maxItems: 2, items: { type: 'string', maxLength: 8 } },
                    ports: {
                      type: 'array',
                      default: [],
                      items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' }, primary: { type: 'boolean', default: false } } },
                    },
                    template: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    replicas: { type: 'integer' },
                    selector: { type: 'string' },
                    printableStatus: { type: 'string' },
                    nodeName: { type: 'string' },
                    conditions: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } } },
                  },
                },
              },
            },
          },
        },
        {
          name: 'v1alpha1',
          served: true,
          storage: false,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

export const gadget = (name: string, spec: Record<string, unknown> = { mode: 'Always' }, labels?: Record<string, string>) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Gadget',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec,
});

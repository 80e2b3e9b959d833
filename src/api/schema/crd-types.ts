// The apiextensions.k8s.io/v1 CustomResourceDefinition as qvirt writes its CRDs: the fields the
// kubevirt.io CRDs (./crds.ts) and the other API groups' (instancetype, migrations, pool, preset) use.
import type { JSONSchemaProps } from './openapi.ts';

export interface PrinterColumn {
  name: string;
  type: 'date' | 'string' | 'integer';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: { categories?: string[]; kind: string; listKind: string; plural: string; shortNames?: string[]; singular: string };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      deprecated?: boolean;
      deprecationWarning?: string;
      additionalPrinterColumns?: PrinterColumn[];
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources?: {
        status?: Record<string, never>;
        scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
      };
    }[];
  };
}

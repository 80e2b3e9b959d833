/**
 * The VirtualMachineInstancePreset CRD as virt-operator generates it (`components/crds.go`
 * NewPresetCrd): kubevirt.io, v1 served (deprecated) and v1alpha3 served and stored (deprecated),
 * each with KubeVirt's deprecation warning, Namespaced, short names vmipreset/vmipresets, category all.
 */
import { GROUP } from '../constants.ts';
import type { CustomResourceDefinition } from '../schema/crd-types.ts';
import { toOpenAPI } from '../schema/openapi.ts';
import { PRESET_VERSIONS, PresetResource as R } from './types.ts';
import { VirtualMachineInstancePresetSchema } from './schema.ts';

export function presetCustomResourceDefinition(): CustomResourceDefinition {
  const openAPIV3Schema = toOpenAPI(VirtualMachineInstancePresetSchema);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${R.plural}.${GROUP}`, labels: { 'kubevirt.io': '' } },
    spec: {
      group: GROUP,
      names: { categories: [...R.categories], kind: R.kind, listKind: R.listKind, plural: R.plural, shortNames: [...R.shortNames], singular: R.singular },
      scope: 'Namespaced',
      versions: PRESET_VERSIONS.map((v) => ({ name: v.name, served: true, storage: v.storage, deprecated: true, deprecationWarning: v.deprecationWarning, schema: { openAPIV3Schema } })),
    },
  };
}

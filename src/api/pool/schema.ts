/**
 * Structural schema of pool.kubevirt.io VirtualMachinePool (checked by `tsc` against `./types.ts`),
 * reusing the kubevirt.io/v1 VirtualMachineSpec node: `spec`, `spec.selector` and
 * `spec.virtualMachineTemplate` required as KubeVirt's CRD has them.
 */
import { arr, bool, enumOf, int32, intOrString, looseObject, object, str, time, type ObjectSchema } from '../schema/dsl.ts';
import { LabelSelectorSchema, ObjectMetaSchema, TemplateObjectMetaSchema } from '../schema/kube.ts';
import { VirtualMachineSpecSchema } from '../schema/kubevirt.ts';
import type {
  VirtualMachinePool,
  VirtualMachinePoolAutohealingStrategy,
  VirtualMachinePoolCondition,
  VirtualMachinePoolNameGeneration,
  VirtualMachinePoolScaleInStrategy,
  VirtualMachinePoolSelectionPolicy,
  VirtualMachinePoolSelectors,
  VirtualMachinePoolSpec,
  VirtualMachinePoolStatus,
  VirtualMachinePoolUpdateStrategy,
  VirtualMachineTemplateSpec,
} from './types.ts';

const empty = () => looseObject({});
const statePreservation = () => enumOf(['Disabled', 'Offline', 'Online']);

const NodeSelectorRequirementSchema = looseObject({ key: str(), operator: str(), values: arr(str()) }, { required: ['key', 'operator'] });

const SelectorsSchema = object<VirtualMachinePoolSelectors>()({
  labelSelector: LabelSelectorSchema,
  nodeSelectorRequirementMatcher: arr(NodeSelectorRequirementSchema),
});

const SelectionPolicySchema = object<VirtualMachinePoolSelectionPolicy>()({
  sortPolicy: enumOf(['AscendingOrder', 'DescendingOrder', 'Newest', 'Oldest', 'Random']),
  selectors: SelectorsSchema,
});

const ScaleInStrategySchema = object<VirtualMachinePoolScaleInStrategy>()({
  unmanaged: empty(),
  opportunistic: looseObject({ statePreservation: statePreservation() }),
  proactive: looseObject({ selectionPolicy: SelectionPolicySchema, statePreservation: statePreservation() }),
});

const UpdateStrategySchema = object<VirtualMachinePoolUpdateStrategy>()({
  unmanaged: empty(),
  opportunistic: empty(),
  proactive: looseObject({ selectionPolicy: SelectionPolicySchema }),
});

const NameGenerationSchema = object<VirtualMachinePoolNameGeneration>()({
  appendIndexToConfigMapRefs: bool(),
  appendIndexToSecretRefs: bool(),
});

const AutohealingSchema = object<VirtualMachinePoolAutohealingStrategy>()({
  startUpFailureThreshold: int32({ minimum: 0 }),
  minFailingToStartDuration: str(),
});

export const VirtualMachineTemplateSpecSchema = object<VirtualMachineTemplateSpec>()(
  { metadata: TemplateObjectMetaSchema, spec: VirtualMachineSpecSchema },
  { required: ['spec'] },
);

export const VirtualMachinePoolSpecSchema = object<VirtualMachinePoolSpec>()(
  {
    replicas: int32(),
    selector: LabelSelectorSchema,
    virtualMachineTemplate: VirtualMachineTemplateSpecSchema,
    paused: bool(),
    nameGeneration: NameGenerationSchema,
    maxUnavailable: intOrString(),
    scaleInStrategy: ScaleInStrategySchema,
    updateStrategy: UpdateStrategySchema,
    autohealing: AutohealingSchema,
  },
  { required: ['selector', 'virtualMachineTemplate'] },
);

const ConditionSchema = object<VirtualMachinePoolCondition>()(
  {
    type: str(),
    status: str(),
    lastProbeTime: time({}),
    lastTransitionTime: time({}),
    reason: str(),
    message: str(),
  },
  { required: ['type', 'status'] },
);

const StatusSchema = object<VirtualMachinePoolStatus>()({
  replicas: int32(),
  readyReplicas: int32(),
  conditions: arr(ConditionSchema),
  labelSelector: str(),
});

export const VirtualMachinePoolSchema: ObjectSchema = object<VirtualMachinePool>()(
  { apiVersion: str(), kind: str(), metadata: ObjectMetaSchema, spec: VirtualMachinePoolSpecSchema, status: StatusSchema },
  { required: ['spec'] },
);

/**
 * virt-api's VMI create/update, VM, VMIRS, VirtualMachinePool, VirtualMachineInstancePreset, instancetype.kubevirt.io and MigrationPolicy validating webhooks: their
 * names, the paths virt-api serves them on, their rules, and their admitters. They need only the cluster configuration, so the
 * same list serves the embedded API server's plugins (kubevirt-webhooks.ts) and the AdmissionReview
 * HTTPS server (webhook-server.ts).
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import { GROUP as KubeVirtGroup } from '../api/constants.ts';
import type { AdmissionAttributes, AdmissionResult } from '../kube/admission.ts';
import type { UserInfo } from '../kube/user-info.ts';
import type { InstancetypeSource } from '../api/instancetype/find.ts';
import { INSTANCETYPE_GROUP, INSTANCETYPE_VERSION, InstancetypeKind, InstancetypeResources } from '../api/instancetype/constants.ts';
import { admitInstancetypeObject, InstancetypeWebhooks } from './instancetype-admitters.ts';
import { admitVM, VM_WEBHOOK } from './vms-admitter.ts';
import { admitVMICreate, VMI_CREATE_WEBHOOK } from './vmi-create-admitter.ts';
import { admitVMIUpdate, VMI_UPDATE_WEBHOOK } from './vmi-update-admitter.ts';
import { admitVMIRS, VMIRS_WEBHOOK } from './vmirs-admitter.ts';
import { admitMigrationPolicy, MIGRATION_POLICY_WEBHOOK, MIGRATION_POLICY_WEBHOOK_PATH } from './migrationpolicy-admitter.ts';
import { MIGRATIONS_GROUP, MIGRATIONS_VERSION, MigrationPolicyResource } from '../api/migrations/types.ts';
import { admitVMPool, VMPOOL_WEBHOOK, VMPOOL_WEBHOOK_PATH } from './vmpool-admitter.ts';
import { POOL_GROUP, POOL_VERSION, VirtualMachinePoolResource } from '../api/pool/types.ts';
import { admitPreset, PRESET_WEBHOOK, PRESET_WEBHOOK_PATH } from './preset-admitters.ts';

export interface ObjectWebhook {
  readonly name: string;
  /** virt-api's path for it (`components/webhooks.go`). */
  readonly path: string;
  readonly matches: (a: Pick<AdmissionAttributes, 'operation' | 'group' | 'resource' | 'subresource'>) => boolean;
  /** `instancetypes`: where the VM admitter reads the instance types and preferences a VM names. */
  readonly admit: (a: AdmissionAttributes, config: ClusterConfig, instancetypes?: InstancetypeSource) => AdmissionResult;
}

const kv = { group: KubeVirtGroup, version: 'v1' } as const;
const it = { group: INSTANCETYPE_GROUP, version: INSTANCETYPE_VERSION } as const;
const CU = ['CREATE', 'UPDATE'] as const;

/** The rule's group, version, resource and operations (main resource only: no rule names a subresource). */
export const OBJECT_WEBHOOK_RULES = {
  [VMI_CREATE_WEBHOOK]: { ...kv, resource: 'virtualmachineinstances', operations: ['CREATE'] },
  [VMI_UPDATE_WEBHOOK]: { ...kv, resource: 'virtualmachineinstances', operations: ['UPDATE'] },
  [VM_WEBHOOK]: { ...kv, resource: 'virtualmachines', operations: CU },
  [VMIRS_WEBHOOK]: { ...kv, resource: 'virtualmachineinstancereplicasets', operations: CU },
  [InstancetypeWebhooks.VirtualMachineInstancetype]: { ...it, resource: InstancetypeResources.VirtualMachineInstancetype.plural, operations: CU },
  [InstancetypeWebhooks.VirtualMachineClusterInstancetype]: { ...it, resource: InstancetypeResources.VirtualMachineClusterInstancetype.plural, operations: CU },
  [InstancetypeWebhooks.VirtualMachinePreference]: { ...it, resource: InstancetypeResources.VirtualMachinePreference.plural, operations: CU },
  [InstancetypeWebhooks.VirtualMachineClusterPreference]: { ...it, resource: InstancetypeResources.VirtualMachineClusterPreference.plural, operations: CU },
  [MIGRATION_POLICY_WEBHOOK]: { group: MIGRATIONS_GROUP, version: MIGRATIONS_VERSION, resource: MigrationPolicyResource.plural, operations: CU },
  [VMPOOL_WEBHOOK]: { group: POOL_GROUP, version: POOL_VERSION, resource: VirtualMachinePoolResource.plural, operations: CU },
  [PRESET_WEBHOOK]: { ...kv, resource: 'virtualmachineinstancepresets', operations: CU },
} as const;

const rule = (name: keyof typeof OBJECT_WEBHOOK_RULES) => (a: Pick<AdmissionAttributes, 'operation' | 'group' | 'resource' | 'subresource'>): boolean => {
  const r = OBJECT_WEBHOOK_RULES[name];
  return (r.operations as readonly string[]).includes(a.operation) && a.group === r.group && a.resource === r.resource && a.subresource === undefined;
};

/** virt-api's admitter of one instancetype.kubevirt.io kind, on its path (`/<plural>-validate`). */
const instancetypeWebhook = (kind: InstancetypeKind): ObjectWebhook => ({
  name: InstancetypeWebhooks[kind],
  path: `/${InstancetypeResources[kind].plural}-validate`,
  matches: rule(InstancetypeWebhooks[kind]),
  admit: (a) => admitInstancetypeObject(kind, a.object),
});

export function kubeVirtObjectWebhooks(isKubeVirt: (user: UserInfo | undefined) => boolean): ObjectWebhook[] {
  return [
    { name: VMI_CREATE_WEBHOOK, path: '/virtualmachineinstances-validate-create', matches: rule(VMI_CREATE_WEBHOOK), admit: (a, config) => admitVMICreate(a.object, { config, fromKubeVirtServiceAccount: isKubeVirt(a.user) }) },
    { name: VMI_UPDATE_WEBHOOK, path: '/virtualmachineinstances-validate-update', matches: rule(VMI_UPDATE_WEBHOOK), admit: (a, config) => admitVMIUpdate(a.oldObject, a.object, { config, fromKubeVirtServiceAccount: isKubeVirt(a.user) }) },
    { name: VM_WEBHOOK, path: '/virtualmachines-validate', matches: rule(VM_WEBHOOK), admit: (a, config, instancetypes) => admitVM(a.object, { config, fromKubeVirtServiceAccount: isKubeVirt(a.user), ...(instancetypes ? { instancetypes } : {}), ...(a.operation === 'UPDATE' ? { oldObject: a.oldObject } : {}) }) },
    { name: VMIRS_WEBHOOK, path: '/virtualmachinereplicaset-validate', matches: rule(VMIRS_WEBHOOK), admit: (a, config) => admitVMIRS(a.object, config) },
    ...Object.values(InstancetypeKind).map(instancetypeWebhook),
    { name: VMPOOL_WEBHOOK, path: VMPOOL_WEBHOOK_PATH, matches: rule(VMPOOL_WEBHOOK), admit: (a, config) => admitVMPool(a.object, { config, fromKubeVirtServiceAccount: isKubeVirt(a.user), ...(a.operation === 'UPDATE' ? { oldObject: a.oldObject } : {}) }) },
    { name: PRESET_WEBHOOK, path: PRESET_WEBHOOK_PATH, matches: rule(PRESET_WEBHOOK), admit: (a) => admitPreset(a.object) },
    { name: MIGRATION_POLICY_WEBHOOK, path: MIGRATION_POLICY_WEBHOOK_PATH, matches: rule(MIGRATION_POLICY_WEBHOOK), admit: (a, config) => admitMigrationPolicy(a.object, config, a.operation === 'UPDATE' ? a.oldObject : undefined) },
  ];
}

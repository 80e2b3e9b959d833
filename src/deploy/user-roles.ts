// The ClusterRoles KubeVirt installs for its users (virt-operator's rbac/cluster.go), aggregated into
// Kubernetes' own admin, edit and view roles, so a namespace's admins and editors may use virtctl's
// verbs (subresources.kubevirt.io) on their VMs and its viewers may read them; plus
// kubevirt.io:default, which lets every authenticated user ask for the version (`virtctl version`).
// instancetype.kubevirt.io:view (bound to every authenticated user) reads the cluster-wide instance
// types and preferences. Only the API groups qvirt serves are named (no snapshot, export, clone, pool, ... grants).
import { SUBRESOURCE_GROUP } from '../api/constants.ts';
import { INSTANCETYPE_GROUP, InstancetypeResources } from '../api/instancetype/constants.ts';
import type { KubeObject } from '../kube/client.ts';
import type { PolicyRule } from './manifests.ts';

export const UserRoleNames = {
  Admin: 'kubevirt.io:admin',
  Edit: 'kubevirt.io:edit',
  View: 'kubevirt.io:view',
  Default: 'kubevirt.io:default',
  /** Every authenticated user may read the cluster-wide instance types and preferences. */
  InstancetypeView: 'instancetype.kubevirt.io:view',
} as const;

/** instancetype.kubevirt.io's four resources (namespaced and cluster instance types and preferences). */
const INSTANCETYPE_RESOURCES = Object.values(InstancetypeResources).map((r) => r.plural);
const CLUSTER_INSTANCETYPE_RESOURCES = Object.values(InstancetypeResources).filter((r) => r.scope === 'Cluster').map((r) => r.plural);

const vmi = (s: string) => `virtualmachineinstances/${s}`;
const vm = (s: string) => `virtualmachines/${s}`;
const ALL = ['get', 'delete', 'create', 'update', 'patch', 'list', 'watch', 'deletecollection'];

/** What edit (and admin) grant on the subresources: the console and friends, and every VM verb. */
const operateRules: PolicyRule[] = [
  { apiGroups: [SUBRESOURCE_GROUP], resources: ['console', 'vnc', 'vnc/screenshot', 'portforward', 'guestosinfo', 'filesystemlist', 'userlist', 'sev/fetchcertchain', 'sev/querylaunchmeasurement', 'usbredir', 'objectgraph'].map(vmi).concat(vm('objectgraph')), verbs: ['get'] },
  { apiGroups: [SUBRESOURCE_GROUP], resources: ['pause', 'unpause', 'addvolume', 'removevolume', 'freeze', 'unfreeze', 'softreboot', 'reset', 'sev/setupsession', 'sev/injectlaunchsecret', 'evacuate/cancel'].map(vmi), verbs: ['update'] },
  { apiGroups: [SUBRESOURCE_GROUP], resources: [vm('expand-spec'), vm('portforward')], verbs: ['get'] },
  { apiGroups: [SUBRESOURCE_GROUP], resources: ['start', 'stop', 'restart', 'addvolume', 'removevolume', 'memorydump', 'removememorydump', 'evacuate/cancel'].map(vm), verbs: ['update'] },
  { apiGroups: [SUBRESOURCE_GROUP], resources: ['expand-vm-spec'], verbs: ['update'] },
];

function role(name: string, aggregateTo: string | undefined, rules: readonly PolicyRule[], appLabel: string): KubeObject & Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { [appLabel]: '', ...(aggregateTo ? { [`rbac.authorization.k8s.io/aggregate-to-${aggregateTo}`]: 'true' } : {}) } },
    rules: rules.map((r) => ({ ...r })),
  };
}

/** KubeVirt's user-facing ClusterRoles and the default binding. Pure. */
export function userRoleObjects(appLabel: string): (KubeObject & Record<string, unknown>)[] {
  return [
    role(UserRoleNames.Default, undefined, [
      { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['get', 'list'] },
      { apiGroups: [SUBRESOURCE_GROUP], resources: ['version', 'guestfs'], verbs: ['get', 'list'] },
    ], appLabel),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
      metadata: { name: UserRoleNames.Default, labels: { [appLabel]: '' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: UserRoleNames.Default },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' }],
    },
    role(UserRoleNames.InstancetypeView, undefined, [
      { apiGroups: [INSTANCETYPE_GROUP], resources: CLUSTER_INSTANCETYPE_RESOURCES, verbs: ['get', 'list', 'watch'] },
    ], appLabel),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding',
      metadata: { name: UserRoleNames.InstancetypeView, labels: { [appLabel]: '' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: UserRoleNames.InstancetypeView },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' }],
    },
    role(UserRoleNames.Admin, 'admin', [
      ...operateRules,
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachines', 'virtualmachineinstances', 'virtualmachineinstancepresets', 'virtualmachineinstancereplicasets'], verbs: ALL },
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [INSTANCETYPE_GROUP], resources: INSTANCETYPE_RESOURCES, verbs: ALL },
      { apiGroups: ['pool.kubevirt.io'], resources: ['virtualmachinepools'], verbs: ALL },
      { apiGroups: ['migrations.kubevirt.io'], resources: ['migrationpolicies'], verbs: ['get', 'list', 'watch'] },
    ], appLabel),
    role(UserRoleNames.Edit, 'edit', [
      ...operateRules,
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachines', 'virtualmachineinstances', 'virtualmachineinstancepresets', 'virtualmachineinstancereplicasets'], verbs: ['get', 'delete', 'create', 'update', 'patch', 'list', 'watch'] },
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['get', 'list'] },
      { apiGroups: [INSTANCETYPE_GROUP], resources: INSTANCETYPE_RESOURCES, verbs: ['get', 'delete', 'create', 'update', 'patch', 'list', 'watch'] },
      { apiGroups: ['pool.kubevirt.io'], resources: ['virtualmachinepools'], verbs: ['get', 'delete', 'create', 'update', 'patch', 'list', 'watch'] },
      { apiGroups: ['migrations.kubevirt.io'], resources: ['migrationpolicies'], verbs: ['get', 'list', 'watch'] },
    ], appLabel),
    role(UserRoleNames.View, 'view', [
      { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['get', 'list'] },
      { apiGroups: [SUBRESOURCE_GROUP], resources: [vm('expand-spec'), ...['guestosinfo', 'filesystemlist', 'userlist', 'sev/fetchcertchain', 'sev/querylaunchmeasurement', 'objectgraph'].map(vmi), vm('objectgraph')], verbs: ['get'] },
      { apiGroups: [SUBRESOURCE_GROUP], resources: ['expand-vm-spec'], verbs: ['update'] },
      { apiGroups: ['kubevirt.io'], resources: ['virtualmachines', 'virtualmachineinstances', 'virtualmachineinstancepresets', 'virtualmachineinstancereplicasets', 'virtualmachineinstancemigrations'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [INSTANCETYPE_GROUP], resources: INSTANCETYPE_RESOURCES, verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['pool.kubevirt.io'], resources: ['virtualmachinepools'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['migrations.kubevirt.io'], resources: ['migrationpolicies'], verbs: ['get', 'list', 'watch'] },
    ], appLabel),
  ];
}

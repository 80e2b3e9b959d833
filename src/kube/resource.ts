// Where a Kubernetes resource lives on the API server: group, version, plural, scope.
// One descriptor per resource qvirt reads or writes, so paths are built in one place.

export interface ResourceType {
  readonly group: string; // '' for the core group
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

const res = (group: string, version: string, plural: string, kind: string, namespaced = true): ResourceType => ({ group, version, plural, kind, namespaced });

export const Resources = {
  pods: res('', 'v1', 'pods', 'Pod'),
  nodes: res('', 'v1', 'nodes', 'Node', false),
  namespaces: res('', 'v1', 'namespaces', 'Namespace', false),
  events: res('', 'v1', 'events', 'Event'),
  secrets: res('', 'v1', 'secrets', 'Secret'),
  configMaps: res('', 'v1', 'configmaps', 'ConfigMap'),
  tokenReviews: res('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', false),
  subjectAccessReviews: res('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', false),
  apiServices: res('apiregistration.k8s.io', 'v1', 'apiservices', 'APIService', false),
  persistentVolumeClaims: res('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim'),
  persistentVolumes: res('', 'v1', 'persistentvolumes', 'PersistentVolume', false),
  serviceAccounts: res('', 'v1', 'serviceaccounts', 'ServiceAccount'),
  services: res('', 'v1', 'services', 'Service'),
  leases: res('coordination.k8s.io', 'v1', 'leases', 'Lease'),
  controllerRevisions: res('apps', 'v1', 'controllerrevisions', 'ControllerRevision'),
  deployments: res('apps', 'v1', 'deployments', 'Deployment'),
  daemonSets: res('apps', 'v1', 'daemonsets', 'DaemonSet'),
  clusterRoles: res('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  clusterRoleBindings: res('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  roles: res('rbac.authorization.k8s.io', 'v1', 'roles', 'Role'),
  roleBindings: res('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding'),
  validatingWebhookConfigurations: res('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false),
  customResourceDefinitions: res('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false),
  virtualMachines: res('kubevirt.io', 'v1', 'virtualmachines', 'VirtualMachine'),
  virtualMachineInstances: res('kubevirt.io', 'v1', 'virtualmachineinstances', 'VirtualMachineInstance'),
  virtualMachineInstanceReplicaSets: res('kubevirt.io', 'v1', 'virtualmachineinstancereplicasets', 'VirtualMachineInstanceReplicaSet'),
  virtualMachineInstanceMigrations: res('kubevirt.io', 'v1', 'virtualmachineinstancemigrations', 'VirtualMachineInstanceMigration'),
  // instancetype.kubevirt.io (v1beta1, the version KubeVirt serves and stores).
  virtualMachineInstancetypes: res('instancetype.kubevirt.io', 'v1beta1', 'virtualmachineinstancetypes', 'VirtualMachineInstancetype'),
  virtualMachineClusterInstancetypes: res('instancetype.kubevirt.io', 'v1beta1', 'virtualmachineclusterinstancetypes', 'VirtualMachineClusterInstancetype', false),
  virtualMachinePreferences: res('instancetype.kubevirt.io', 'v1beta1', 'virtualmachinepreferences', 'VirtualMachinePreference'),
  virtualMachineClusterPreferences: res('instancetype.kubevirt.io', 'v1beta1', 'virtualmachineclusterpreferences', 'VirtualMachineClusterPreference', false),
  migrationPolicies: res('migrations.kubevirt.io', 'v1alpha1', 'migrationpolicies', 'MigrationPolicy', false),
  virtualMachinePools: res('pool.kubevirt.io', 'v1beta1', 'virtualmachinepools', 'VirtualMachinePool'),
  /** Deprecated in KubeVirt; v1alpha3 is its storage version, v1 is served too. */
  virtualMachineInstancePresets: res('kubevirt.io', 'v1', 'virtualmachineinstancepresets', 'VirtualMachineInstancePreset'),
  /** CDI's DataVolumes: served by CDI on a cluster, by the local mode itself locally. */
  dataVolumes: res('cdi.kubevirt.io', 'v1beta1', 'datavolumes', 'DataVolume'),
  /** CDI's cluster configuration (the local mode's `config` names its upload proxy). */
  cdiConfigs: res('cdi.kubevirt.io', 'v1beta1', 'cdiconfigs', 'CDIConfig', false),
  /** The cluster-wide settings object (`kubectl -n kubevirt get kubevirt`). */
  kubeVirts: res('kubevirt.io', 'v1', 'kubevirts', 'KubeVirt'),
} as const;

export function apiVersionOf(r: ResourceType): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** The collection path (`/api/v1/namespaces/ns/pods`), or an object's path when a name is given. */
export function resourcePath(r: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  let p = base;
  if (r.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${r.plural}`;
  if (name !== undefined) p += `/${encodeURIComponent(name)}`;
  if (subresource) p += `/${subresource}`;
  return p;
}

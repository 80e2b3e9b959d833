/**
 * KubeVirt's object graph (the `objectgraph` subresource of VMs and VMIs, `virtctl objectgraph`,
 * pkg/virt-api/rest/objectgraph.go, feature gate ObjectGraph): the Kubernetes objects a VM or VMI
 * depends on, as a tree of typed references, each labelled with its dependency type. What backup and
 * restore tools read to know what to carry along with a VM. Pure: the caller looks up the launcher
 * pod's name; the graph is built from the objects' specs and statuses alone, as KubeVirt builds it
 * (a referenced Secret or claim is listed whether it exists or not).
 *
 * Children, in KubeVirt's order: of a VM, its VMI (when `status.created`) with the launcher pod below
 * it, the instance type and preference (optional: the VM keeps its ControllerRevision copy) and their
 * ControllerRevisions, access credentials' Secrets, the volumes' objects (a DataVolume with its claim
 * below it, claims, ConfigMaps, Secrets, ServiceAccounts, cloud-init Secrets), Multus networks'
 * NetworkAttachmentDefinitions (optional); of a VMI, its launcher pod, then the same from its spec.
 * KubeVirt also lists the backend-storage claim of persistent EFI/TPM state; qvirt has none
 * (`efi.persistent` and `tpm.persistent` are refused), so there is none to list.
 */
import type { AccessCredential, InstancetypeMatcher, InstancetypeStatusRef, Network, PreferenceMatcher, VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceSpec, Volume } from './types.ts';
import { Annotation } from './constants.ts';
import { labelSelectorAsSelector, selectorMatches, InvalidLabelSelectorError, type LabelSelector, type Selector } from './label-selector.ts';

/** The label each node carries: what kind of dependency it is. */
export const OBJECT_GRAPH_DEPENDENCY_LABEL = 'kubevirt.io/dependency-type';

export type DependencyType = 'storage' | 'network' | 'compute' | 'config';

/** `k8s.io/api/core/v1.TypedObjectReference`, in the field order Go writes it. */
export interface TypedObjectReference {
  apiGroup: string;
  kind: string;
  name: string;
  namespace: string;
}

/** `v1.ObjectGraphNode`. */
export interface ObjectGraphNode {
  objectReference: TypedObjectReference;
  labels: Record<string, string>;
  optional?: boolean;
  children?: ObjectGraphNode[];
}

/** `v1.ObjectGraphOptions`: `includeOptionalNodes` (default true) and a label selector over the nodes' labels. */
export interface ObjectGraphOptions {
  includeOptionalNodes?: boolean;
  labelSelector?: LabelSelector;
}

/** The resources a graph may name (KubeVirt's objectGraphMap): group, kind and dependency type. */
const RESOURCES = {
  virtualmachines: { group: 'kubevirt.io', kind: 'VirtualMachine', type: 'compute' },
  virtualmachineinstances: { group: 'kubevirt.io', kind: 'VirtualMachineInstance', type: 'compute' },
  virtualmachineinstancetypes: { group: 'instancetype.kubevirt.io', kind: 'VirtualMachineInstancetype', type: 'config' },
  virtualmachineclusterinstancetypes: { group: 'instancetype.kubevirt.io', kind: 'VirtualMachineClusterInstancetype', type: 'config' },
  virtualmachinepreferences: { group: 'instancetype.kubevirt.io', kind: 'VirtualMachinePreference', type: 'config' },
  virtualmachineclusterpreferences: { group: 'instancetype.kubevirt.io', kind: 'VirtualMachineClusterPreference', type: 'config' },
  datavolumes: { group: 'cdi.kubevirt.io', kind: 'DataVolume', type: 'storage' },
  controllerrevisions: { group: 'apps', kind: 'ControllerRevision', type: 'config' },
  configmaps: { group: '', kind: 'ConfigMap', type: 'config' },
  persistentvolumeclaims: { group: '', kind: 'PersistentVolumeClaim', type: 'storage' },
  serviceaccounts: { group: '', kind: 'ServiceAccount', type: 'config' },
  secrets: { group: '', kind: 'Secret', type: 'config' },
  pods: { group: '', kind: 'Pod', type: 'compute' },
  networkattachmentdefinitions: { group: 'k8s.cni.cncf.io', kind: 'NetworkAttachmentDefinition', type: 'network' },
} as const satisfies Record<string, { group: string; kind: string; type: DependencyType }>;

type GraphResource = keyof typeof RESOURCES;

function node(name: string, namespace: string, resource: GraphResource, children?: ObjectGraphNode[], optional = false): ObjectGraphNode {
  const r = RESOURCES[resource];
  return {
    objectReference: { apiGroup: r.group, kind: r.kind, name, namespace },
    labels: { [OBJECT_GRAPH_DEPENDENCY_LABEL]: r.type },
    ...(optional ? { optional: true } : {}),
    ...(children?.length ? { children } : {}),
  };
}

/** The Secrets of the SSH keys and passwords the guest gets (one per credential, the key's first). */
function accessCredentialNodes(acs: readonly AccessCredential[] | undefined, ns: string): ObjectGraphNode[] {
  const out: ObjectGraphNode[] = [];
  for (const ac of acs ?? []) {
    const secret = ac.sshPublicKey?.source?.secret ?? ac.userPassword?.source?.secret;
    if (secret) out.push(node(secret.secretName, ns, 'secrets'));
  }
  return out;
}

function volumeNodes(volumes: readonly Volume[] | undefined, ns: string): ObjectGraphNode[] {
  const out: ObjectGraphNode[] = [];
  for (const v of volumes ?? []) {
    if (v.dataVolume) out.push(node(v.dataVolume.name, ns, 'datavolumes', [node(v.dataVolume.name, ns, 'persistentvolumeclaims')]));
    else if (v.persistentVolumeClaim) out.push(node(v.persistentVolumeClaim.claimName, ns, 'persistentvolumeclaims'));
    else if (v.configMap) out.push(node(v.configMap.name ?? '', ns, 'configmaps'));
    else if (v.secret) out.push(node(v.secret.secretName ?? '', ns, 'secrets'));
    else if (v.serviceAccount) out.push(node(v.serviceAccount.serviceAccountName ?? '', ns, 'serviceaccounts'));
    else {
      const ci = v.cloudInitNoCloud ?? v.cloudInitConfigDrive;
      if (ci?.secretRef) out.push(node(ci.secretRef.name ?? '', ns, 'secrets'));
      if (ci?.networkDataSecretRef) out.push(node(ci.networkDataSecretRef.name ?? '', ns, 'secrets'));
    }
  }
  return out;
}

/** Multus networks' NetworkAttachmentDefinitions (`namespace/name` or a name in the VM's namespace). */
function networkNodes(networks: readonly Network[] | undefined, ns: string): ObjectGraphNode[] {
  const out: ObjectGraphNode[] = [];
  for (const n of networks ?? []) {
    const full = n.multus?.networkName;
    if (!full) continue;
    const parts = full.split('/');
    out.push(parts.length === 2 ? node(parts[1]!, parts[0]!, 'networkattachmentdefinitions', undefined, true) : node(full, ns, 'networkattachmentdefinitions', undefined, true));
  }
  return out;
}

/** An instance type or preference (optional) and the ControllerRevision the VM keeps of it. */
function matcherNodes(matcher: InstancetypeMatcher | PreferenceMatcher | undefined, ref: InstancetypeStatusRef | undefined, ns: string): ObjectGraphNode[] {
  if (!matcher) return [];
  const out: ObjectGraphNode[] = [];
  const resource = `${(matcher.kind ?? '').toLowerCase()}s`;
  if (resource === 'virtualmachineclusterinstancetypes' || resource === 'virtualmachineclusterpreferences') out.push(node(matcher.name ?? '', '', resource, undefined, true));
  else if (resource === 'virtualmachineinstancetypes' || resource === 'virtualmachinepreferences') out.push(node(matcher.name ?? '', ns, resource, undefined, true));
  if (ref?.controllerRevisionRef) out.push(node(ref.controllerRevisionRef.name ?? '', ns, 'controllerrevisions'));
  if (!ref && matcher.revisionName) out.push(node(matcher.revisionName, ns, 'controllerrevisions'));
  return out;
}

function specNodes(spec: VirtualMachineInstanceSpec | undefined, ns: string): ObjectGraphNode[] {
  return [...accessCredentialNodes(spec?.accessCredentials, ns), ...volumeNodes(spec?.volumes, ns), ...networkNodes(spec?.networks, ns)];
}

/** The graph of a VM; `launcherPod` is the name of its VMI's launcher pod, if one was found. */
export function virtualMachineObjectGraph(vm: VirtualMachine, launcherPod: string | undefined, options?: ObjectGraphOptions): ObjectGraphNode {
  const name = vm.metadata?.name ?? '';
  const ns = vm.metadata?.namespace ?? '';
  const children: ObjectGraphNode[] = [];
  if (vm.status?.created) children.push(node(name, ns, 'virtualmachineinstances', launcherPod !== undefined ? [node(launcherPod, ns, 'pods')] : undefined));
  children.push(
    ...matcherNodes(vm.spec.instancetype, vm.status?.instancetypeRef, ns),
    ...matcherNodes(vm.spec.preference, vm.status?.preferenceRef, ns),
    ...specNodes(vm.spec.template?.spec, ns),
  );
  return filtered(node(name, ns, 'virtualmachines', children), options);
}

/** The graph of a VMI; `launcherPod` as above. */
export function virtualMachineInstanceObjectGraph(vmi: VirtualMachineInstance, launcherPod: string | undefined, options?: ObjectGraphOptions): ObjectGraphNode {
  const name = vmi.metadata?.name ?? '';
  const ns = vmi.metadata?.namespace ?? '';
  const children = [...(launcherPod !== undefined ? [node(launcherPod, ns, 'pods')] : []), ...specNodes(vmi.spec, ns)];
  return filtered(node(name, ns, 'virtualmachineinstances', children), options);
}

/**
 * The root's descendants filtered as KubeVirt filters them: an optional node goes when
 * `includeOptionalNodes` is false; a node the selector does not select goes with its subtree; a
 * selector apimachinery refuses selects everything (KubeVirt logs it and includes the node).
 */
function filtered(root: ObjectGraphNode, options: ObjectGraphOptions | undefined): ObjectGraphNode {
  let selector: Selector | undefined;
  if (options?.labelSelector) {
    try {
      selector = labelSelectorAsSelector(options.labelSelector);
    } catch (err) {
      if (!(err instanceof InvalidLabelSelectorError)) throw err;
    }
  }
  const keep = (n: ObjectGraphNode): boolean =>
    !(n.optional && options?.includeOptionalNodes === false) && (selector === undefined || selectorMatches(selector, n.labels));
  const walk = (nodes: readonly ObjectGraphNode[] | undefined): ObjectGraphNode[] =>
    (nodes ?? []).filter(keep).map((n) => { const children = walk(n.children); const { children: _, ...rest } = n; return children.length ? { ...rest, children } : rest; });
  const children = walk(root.children);
  const { children: _, ...rest } = root;
  return children.length ? { ...rest, children } : rest;
}

/** The launcher pod of VMI `name` among `pods` (KubeVirt's getLauncherPodNode: owned by it, else annotated with it), in list order. */
export function launcherPodOf(pods: readonly { metadata?: { name?: string; ownerReferences?: readonly { kind?: string; name?: string }[]; annotations?: Record<string, string> } }[], vmiName: string): string | undefined {
  for (const p of pods) {
    if ((p.metadata?.ownerReferences ?? []).some((o) => o.kind === 'VirtualMachineInstance' && o.name === vmiName)) return p.metadata?.name;
    if (p.metadata?.annotations?.[Annotation.Domain] === vmiName) return p.metadata?.name;
  }
  return undefined;
}

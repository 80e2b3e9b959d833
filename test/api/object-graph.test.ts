// The object graph of a VM or VMI (src/api/object-graph.ts), against KubeVirt's objectgraph.go:
// which objects, in which order, with which labels, and how the options filter them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { launcherPodOf, virtualMachineInstanceObjectGraph, virtualMachineObjectGraph, type ObjectGraphNode } from '../../src/api/object-graph.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

const DEP = 'kubevirt.io/dependency-type';
type Ref = [kind: string, name: string, namespace?: string];
const GROUPS: Record<string, string> = {
  VirtualMachine: 'kubevirt.io', VirtualMachineInstance: 'kubevirt.io', Pod: '', Secret: '', ConfigMap: '', ServiceAccount: '',
  PersistentVolumeClaim: '', DataVolume: 'cdi.kubevirt.io', ControllerRevision: 'apps', NetworkAttachmentDefinition: 'k8s.cni.cncf.io',
  VirtualMachineInstancetype: 'instancetype.kubevirt.io', VirtualMachineClusterInstancetype: 'instancetype.kubevirt.io',
  VirtualMachinePreference: 'instancetype.kubevirt.io', VirtualMachineClusterPreference: 'instancetype.kubevirt.io',
};
const TYPES: Record<string, string> = {
  VirtualMachine: 'compute', VirtualMachineInstance: 'compute', Pod: 'compute', PersistentVolumeClaim: 'storage', DataVolume: 'storage',
  NetworkAttachmentDefinition: 'network',
};
/** A node as KubeVirt writes it; `opt` marks an optional one. */
function n([kind, name, namespace = 'ns1']: Ref, children?: ObjectGraphNode[], opt = false): ObjectGraphNode {
  return { objectReference: { apiGroup: GROUPS[kind]!, kind, name, namespace }, labels: { [DEP]: TYPES[kind] ?? 'config' }, ...(opt ? { optional: true } : {}), ...(children ? { children } : {}) };
}

const template = {
  accessCredentials: [
    { sshPublicKey: { source: { secret: { secretName: 'ssh-keys' } }, propagationMethod: { qemuGuestAgent: { users: ['root'] } } } },
    { userPassword: { source: { secret: { secretName: 'passwords' } }, propagationMethod: { qemuGuestAgent: {} } } },
  ],
  domain: { devices: {} },
  volumes: [
    { name: 'cd', containerDisk: { image: 'x' } },
    { name: 'root', dataVolume: { name: 'root-dv' } },
    { name: 'data', persistentVolumeClaim: { claimName: 'data-claim' } },
    { name: 'cm', configMap: { name: 'app-config' } },
    { name: 'sec', secret: { secretName: 'app-secret' } },
    { name: 'sa', serviceAccount: { serviceAccountName: 'app-sa' } },
    { name: 'ci', cloudInitNoCloud: { secretRef: { name: 'userdata' }, networkDataSecretRef: { name: 'netdata' } } },
    { name: 'cd2', cloudInitConfigDrive: { userData: 'inline' } },
    { name: 'dump', memoryDump: { claimName: 'dump-claim' } },
  ],
  networks: [{ name: 'default', pod: {} }, { name: 'a', multus: { networkName: 'other/nad-a' } }, { name: 'b', multus: { networkName: 'nad-b' } }],
};

function vm(extra: { status?: Record<string, unknown>; spec?: Record<string, unknown> } = {}): VirtualMachine {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm1', namespace: 'ns1' }, spec: { template: { spec: template }, ...extra.spec }, status: extra.status ?? {} } as unknown as VirtualMachine;
}

const specChildren = (): ObjectGraphNode[] => [
  n(['Secret', 'ssh-keys']), n(['Secret', 'passwords']),
  n(['DataVolume', 'root-dv'], [n(['PersistentVolumeClaim', 'root-dv'])]),
  n(['PersistentVolumeClaim', 'data-claim']), n(['ConfigMap', 'app-config']), n(['Secret', 'app-secret']), n(['ServiceAccount', 'app-sa']),
  n(['Secret', 'userdata']), n(['Secret', 'netdata']),
  n(['NetworkAttachmentDefinition', 'nad-a', 'other'], undefined, true), n(['NetworkAttachmentDefinition', 'nad-b'], undefined, true),
];

test('a running VM: its VMI with the launcher pod below it, its instance type and preference, then what its template names', () => {
  const g = virtualMachineObjectGraph(vm({
    spec: { instancetype: { kind: 'VirtualMachineClusterInstancetype', name: 'u1.small' }, preference: { kind: 'virtualmachinepreference', name: 'fedora', revisionName: 'vm1-fedora-1' } },
    status: { created: true, instancetypeRef: { name: 'u1.small', kind: 'VirtualMachineClusterInstancetype', controllerRevisionRef: { name: 'vm1-u1.small-abc' } } },
  }), 'virt-launcher-vm1-x7k2p');
  assert.equal(g, n(['VirtualMachine', 'vm1'], [
    n(['VirtualMachineInstance', 'vm1'], [n(['Pod', 'virt-launcher-vm1-x7k2p'])]),
    // A cluster-wide instance type: the namespace is "" (KubeVirt's pointer to the empty string).
    n(['VirtualMachineClusterInstancetype', 'u1.small', ''], undefined, true),
    n(['ControllerRevision', 'vm1-u1.small-abc']),
    // The kind in any case; no status ref yet: the spec's revisionName.
    n(['VirtualMachinePreference', 'fedora'], undefined, true),
    n(['ControllerRevision', 'vm1-fedora-1']),
    ...specChildren(),
  ]));
});

test('a stopped VM: no VMI node; a VMI created but its pod not found: the VMI without children', () => {
  const stopped = virtualMachineObjectGraph(vm(), undefined);
  assert.equal(stopped.children, specChildren());
  const noPod = virtualMachineObjectGraph(vm({ status: { created: true } }), undefined);
  assert.equal(noPod.children![0], n(['VirtualMachineInstance', 'vm1']));
});

test('an instance type matcher without a kind KubeVirt knows names no instance type; a status ref wins over revisionName', () => {
  const g = virtualMachineObjectGraph(vm({ spec: { instancetype: { name: 'x', revisionName: 'r-spec' } }, status: { instancetypeRef: { controllerRevisionRef: { name: 'r-status' } } } }), undefined);
  assert.equal(g.children!.slice(0, 1), [n(['ControllerRevision', 'r-status'])]);
  assert.equal(g.children!.length, specChildren().length + 1);
});

test('a VMI: its launcher pod, then what its spec names', () => {
  const vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm1', namespace: 'ns1' }, spec: template } as unknown as VirtualMachineInstance;
  assert.equal(virtualMachineInstanceObjectGraph(vmi, 'virt-launcher-vm1-x7k2p'), n(['VirtualMachineInstance', 'vm1'], [n(['Pod', 'virt-launcher-vm1-x7k2p']), ...specChildren()]));
  const bare = { ...vmi, spec: { domain: { devices: {} } } } as unknown as VirtualMachineInstance;
  assert.equal(virtualMachineInstanceObjectGraph(bare, undefined), n(['VirtualMachineInstance', 'vm1']), 'no children: none written');
});

const running = () => vm({ spec: { instancetype: { kind: 'VirtualMachineInstancetype', name: 'it' } }, status: { created: true, instancetypeRef: { controllerRevisionRef: { name: 'cr' } } } });
const kinds = (g: ObjectGraphNode): string[] => (g.children ?? []).map((c) => `${c.objectReference.kind}/${c.objectReference.name}${c.children ? `[${kinds(c).join(',')}]` : ''}`);

const FILTERS: [string, Parameters<typeof virtualMachineObjectGraph>[2], string[]][] = [
  ['no options: everything', undefined, ['VirtualMachineInstance/vm1[Pod/p]', 'VirtualMachineInstancetype/it', 'ControllerRevision/cr', 'Secret/ssh-keys', 'Secret/passwords', 'DataVolume/root-dv[PersistentVolumeClaim/root-dv]', 'PersistentVolumeClaim/data-claim', 'ConfigMap/app-config', 'Secret/app-secret', 'ServiceAccount/app-sa', 'Secret/userdata', 'Secret/netdata', 'NetworkAttachmentDefinition/nad-a', 'NetworkAttachmentDefinition/nad-b']],
  ['includeOptionalNodes false: no instance type, no network attachment definitions', { includeOptionalNodes: false }, ['VirtualMachineInstance/vm1[Pod/p]', 'ControllerRevision/cr', 'Secret/ssh-keys', 'Secret/passwords', 'DataVolume/root-dv[PersistentVolumeClaim/root-dv]', 'PersistentVolumeClaim/data-claim', 'ConfigMap/app-config', 'Secret/app-secret', 'ServiceAccount/app-sa', 'Secret/userdata', 'Secret/netdata']],
  ['includeOptionalNodes true: everything', { includeOptionalNodes: true }, ['VirtualMachineInstance/vm1[Pod/p]', 'VirtualMachineInstancetype/it', 'ControllerRevision/cr', 'Secret/ssh-keys', 'Secret/passwords', 'DataVolume/root-dv[PersistentVolumeClaim/root-dv]', 'PersistentVolumeClaim/data-claim', 'ConfigMap/app-config', 'Secret/app-secret', 'ServiceAccount/app-sa', 'Secret/userdata', 'Secret/netdata', 'NetworkAttachmentDefinition/nad-a', 'NetworkAttachmentDefinition/nad-b']],
  ['storage: the DataVolume keeps its claim', { labelSelector: { matchLabels: { [DEP]: 'storage' } } }, ['DataVolume/root-dv[PersistentVolumeClaim/root-dv]', 'PersistentVolumeClaim/data-claim']],
  ['compute: the VMI and its pod', { labelSelector: { matchLabels: { [DEP]: 'compute' } } }, ['VirtualMachineInstance/vm1[Pod/p]']],
  ['network, optional ones left out: nothing', { includeOptionalNodes: false, labelSelector: { matchLabels: { [DEP]: 'network' } } }, []],
  ['an expression: not config', { labelSelector: { matchExpressions: [{ key: DEP, operator: 'NotIn', values: ['config'] }] } }, ['VirtualMachineInstance/vm1[Pod/p]', 'DataVolume/root-dv[PersistentVolumeClaim/root-dv]', 'PersistentVolumeClaim/data-claim', 'NetworkAttachmentDefinition/nad-a', 'NetworkAttachmentDefinition/nad-b']],
  ['a selector apimachinery refuses: ignored, as KubeVirt logs it and includes the node', { labelSelector: { matchExpressions: [{ key: DEP, operator: 'In', values: [] }] } }, ['VirtualMachineInstance/vm1[Pod/p]', 'VirtualMachineInstancetype/it', 'ControllerRevision/cr', 'Secret/ssh-keys', 'Secret/passwords', 'DataVolume/root-dv[PersistentVolumeClaim/root-dv]', 'PersistentVolumeClaim/data-claim', 'ConfigMap/app-config', 'Secret/app-secret', 'ServiceAccount/app-sa', 'Secret/userdata', 'Secret/netdata', 'NetworkAttachmentDefinition/nad-a', 'NetworkAttachmentDefinition/nad-b']],
];
for (const [name, options, want] of FILTERS) {
  test(`options: ${name}`, () => {
    const g = virtualMachineObjectGraph(running(), 'p', options);
    assert.equal(kinds(g), want);
    assert.is(g.objectReference.name, 'vm1', 'the root is never filtered');
    if (!want.length) assert.not.ok('children' in g, 'no children: none written');
  });
}

test('the launcher pod: owned by the VMI, else annotated with its name (KubeVirt\'s fallback), first in list order', () => {
  const pods = [
    { metadata: { name: 'virt-launcher-other-aaaaa', ownerReferences: [{ kind: 'VirtualMachineInstance', name: 'other' }] } },
    { metadata: { name: 'virt-launcher-vm1-bbbbb', ownerReferences: [{ kind: 'ReplicaSet', name: 'vm1' }], annotations: { 'kubevirt.io/domain': 'vm1' } } },
    { metadata: { name: 'virt-launcher-vm1-ccccc', ownerReferences: [{ kind: 'VirtualMachineInstance', name: 'vm1' }] } },
  ];
  assert.is(launcherPodOf(pods, 'vm1'), 'virt-launcher-vm1-bbbbb');
  assert.is(launcherPodOf(pods.slice(2), 'vm1'), 'virt-launcher-vm1-ccccc');
  assert.is(launcherPodOf(pods, 'nope'), undefined);
});

test.run();

/**
 * Validation carried by the CRDs themselves, so a cluster rejects bad objects with no webhook
 * running: value constraints (enums, patterns, bounds, list sizes) and `x-kubernetes-validations`
 * CEL rules mirroring `../validation/` (the admission rules) wherever a rule can be written without
 * defaulting, other objects, or cluster configuration. (So, for example, a volume with no disk is
 * accepted: defaulting gives it one. Bus-dependent rules only fire on an explicit bus.)
 *
 * Rules attach to schema nodes by identity, so a rule on `VirtualMachineInstanceSpec` applies to a
 * VMI's `spec`, a VM's `spec.template.spec` and a ReplicaSet's `spec.template.spec` alike.
 *
 * CEL cost: the API server refuses a CRD whose rule's estimated cost (times the number of times its
 * node can occur) exceeds 10,000,000, or whose rules together exceed 100,000,000
 * (src/apiserver/cel-cost.ts ports that estimate; test/api/crd-cel-cost.test.ts holds every rule to
 * it under each supported server's estimator and a pessimistic one, and test/cluster/crds.test.ts
 * checks the port against a real kube-apiserver). So every list a rule iterates has `maxItems` and
 * every string a rule compares with another field has `maxLength`, and no rule iterates the result
 * of `filter()` / `map()` (no size estimate before kube-apiserver 1.31: unbounded). The bounds:
 * - 256 items: KubeVirt's own limit on disks, interfaces, volumes, networks and accessCredentials
 *   (its CRDs carry it since KubeVirt PR 11156); the same 256 for the other device lists
 *   (filesystems, inputs, gpus, hostDevices, panicDevices), CPU features, an interface's ports and a
 *   VM's status.volumeRequests (which sits under the disk rules: unbounded, it counted each disk rule
 *   once per disk-sized slice of a 3 MiB request) — more than a VM can use;
 * - names: 63 (DNS label: disks, volumes, filesystems) or 253 (interfaces, networks). The costliest
 *   rules, name matching between interfaces and networks, are 256 × 256 comparisons of 253-character
 *   (1012-byte) strings: ≈ 7.2M of the 10M.
 * Only the CEL subset the embedded API server evaluates is used (has, size, all, exists,
 * exists_one, filter, map, in, matches, ternaries).
 */
import type { Kind } from '../constants.ts';
import { InterfaceModels } from '../constants.ts';
import type { CelRule, Schema } from './dsl.ts';
import {
  AccessCredentialSchema,
  BootloaderSchema,
  CDRomTargetSchema,
  CPUFeatureSchema,
  CPUSchema,
  CloudInitConfigDriveSourceSchema,
  CloudInitNoCloudSourceSchema,
  DevicesSchema,
  DiskSchema,
  DiskTargetSchema,
  DomainSpecSchema,
  FilesystemSchema,
  HostDiskSchema,
  InputSchema,
  InterfaceSchema,
  KernelBootContainerSchema,
  KernelBootSchema,
  MultusNetworkSchema,
  NetworkSchema,
  PortSchema,
  ProbeSchema,
  SSHPublicKeyAccessCredentialPropagationMethodSchema,
  SoundDeviceSchema,
  VirtualMachineInstanceMigrationSpecSchema,
  VirtualMachineInstanceReplicaSetSpecSchema,
  VirtualMachineInstanceSpecSchema,
  VirtualMachineSpecSchema,
  VirtualMachineStatusSchema,
  VolumeSchema,
} from './kubevirt.ts';

/** Constraints merged into one property's schema (e.g. `{ maxLength: 63 }`). */
type PropPatch = Record<string, unknown>;

interface Addition {
  readonly cel?: readonly CelRule[];
  readonly props?: Readonly<Record<string, PropPatch>>;
}

/** `n` present-field tests summed: `(has(self.a) ? 1 : 0) + ...`. */
const countPresent = (fields: readonly string[], on = 'self') => fields.map((f) => `(has(${on}.${f}) ? 1 : 0)`).join(' + ');
/** `has()` along a dotted path: `has(self.a) && has(self.a.b)`. */
const hasPath = (path: string) => {
  const parts = path.split('.');
  const out: string[] = [];
  for (let i = 2; i <= parts.length; i++) out.push(`has(${parts.slice(0, i).join('.')})`);
  return out.join(' && ');
};
const NO_MEMORY_MESSAGE =
  "no memory requested, at least one of 'spec.domain.memory.guest', 'spec.domain.memory.hugepages.pageSize' or 'spec.domain.resources.requests.memory' must be set";
/** The spec at `spec` (a CEL path) asks for memory: guest, hugepages, or a request or limit. */
const memoryRequested = (spec: string): CelRule => ({
  rule:
    `(${hasPath(`${spec}.domain.memory`)} && (has(${spec}.domain.memory.guest) || has(${spec}.domain.memory.hugepages))) || ` +
    `(${hasPath(`${spec}.domain.resources.requests`)} && 'memory' in ${spec}.domain.resources.requests) || ` +
    `(${hasPath(`${spec}.domain.resources.limits`)} && 'memory' in ${spec}.domain.resources.limits)`,
  message: NO_MEMORY_MESSAGE,
  reason: 'FieldValueRequired',
});
/** Every element's `name` is unique in the list. */
const uniqueNames = (message: string): CelRule => ({ rule: 'self.all(x, self.exists_one(y, y.name == x.name))', message });

export const DNS1123_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const MAC_ADDRESS_PATTERN = '^$|^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\\.){2}[0-9A-Fa-f]{4}$';
export const PCI_ADDRESS_PATTERN = '^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]$';
export const PORT_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const SERIAL_PATTERN = '^[A-Za-z0-9_.+-]+$';
const MAX_ITEMS = 256;
const NAME_63 = { maxLength: 63 };
const NAME_253 = { maxLength: 253 };

const VOLUME_SOURCES = [
  'hostDisk', 'persistentVolumeClaim', 'cloudInitNoCloud', 'cloudInitConfigDrive', 'sysprep', 'containerDisk', 'ephemeral', 'emptyDisk',
  'dataVolume', 'configMap', 'secret', 'downwardAPI', 'serviceAccount', 'downwardMetrics', 'memoryDump', 'containerPath',
];

const cloudInitRules = (kind: string): CelRule[] => [
  {
    rule: `${countPresent(['secretRef', 'userDataBase64', 'userData'])} <= 1`,
    message: `${kind} must have only one userdatasource set.`,
  },
  {
    rule: `${countPresent(['networkDataSecretRef', 'networkDataBase64', 'networkData'])} <= 1`,
    message: `${kind} must have only one networkdata source set.`,
  },
  {
    rule: `${countPresent(['secretRef', 'userDataBase64', 'userData', 'networkDataSecretRef', 'networkDataBase64', 'networkData'])} >= 1`,
    message: `${kind} must have at least one userdatasource or one networkdatasource set.`,
  },
];
const cloudInitProps = {
  userData: { maxLength: 2048 },
  networkData: { maxLength: 2048 },
  userDataBase64: { maxLength: 2732 },
  networkDataBase64: { maxLength: 2732 },
};

const DISKS = 'self.domain.devices.disks';
const IFACES = 'self.domain.devices.interfaces';

const ADDITIONS = new Map<Schema, Addition>([
  [
    VirtualMachineInstanceSpecSchema,
    {
      props: {
        volumes: { maxItems: MAX_ITEMS, cel: [uniqueNames('volume names must be unique (spec.volumes[*].name)')] },
        networks: {
          maxItems: MAX_ITEMS,
          cel: [
            uniqueNames('Network with this name already exists, every network must have a unique name'),
            { rule: 'self.filter(n, has(n.pod)).size() <= 1', message: 'more than one interface is connected to a pod network' },
            { rule: 'self.filter(n, has(n.multus) && has(n.multus.default) && n.multus.default).size() <= 1', message: 'Multus CNI should only have one default network' },
            {
              rule: '!(self.exists(n, has(n.pod)) && self.exists(n, has(n.multus) && has(n.multus.default) && n.multus.default))',
              message: 'Pod network cannot be defined when Multus default network is defined',
            },
          ],
        },
        accessCredentials: { maxItems: MAX_ITEMS },
        hostname: { maxLength: 63, pattern: DNS1123_LABEL_PATTERN },
      },
      cel: [
        memoryRequested('self'),
        {
          rule: `!has(${DISKS}) || ${DISKS}.all(d, has(d.cdrom) || (has(self.volumes) && self.volumes.exists(v, v.name == d.name)))`,
          message: 'every disk must name a volume of spec.volumes (disk name not found)',
        },
        {
          rule: `!has(${IFACES}) || ${IFACES}.all(i, has(self.networks) && self.networks.exists(n, n.name == i.name))`,
          message: 'every interface must name a network of spec.networks (interface name not found)',
        },
        {
          rule: `!has(self.networks) || self.networks.all(n, has(${IFACES}) && ${IFACES}.exists(i, i.name == n.name))`,
          message: 'every network must be used by an interface of the same name (network name not found)',
        },
        {
          rule: "!has(self.startStrategy) || self.startStrategy != 'Paused' || !has(self.livenessProbe)",
          message: 'either spec.startStrategy or spec.livenessProbe should be provided.Pausing VMI with LivenessProbe is not supported',
        },
        {
          // A pod network is attached when one is listed, or when defaulting will add one (no networks, no
          // interfaces, autoattachPodInterface not false).
          rule:
            '(has(self.networks) && self.networks.exists(n, has(n.pod))) || ' +
            `((!has(self.networks) || size(self.networks) == 0) && (!has(${IFACES}) || size(${IFACES}) == 0) && ` +
            '(!has(self.domain.devices.autoattachPodInterface) || self.domain.devices.autoattachPodInterface)) || ' +
            '((!has(self.readinessProbe) || (!has(self.readinessProbe.httpGet) && !has(self.readinessProbe.tcpSocket))) && ' +
            '(!has(self.livenessProbe) || (!has(self.livenessProbe.httpGet) && !has(self.livenessProbe.tcpSocket))))',
          message: 'httpGet and tcpSocket probes are only allowed if the Pod Network is attached',
        },
      ],
    },
  ],
  [
    DevicesSchema,
    {
      props: {
        disks: { maxItems: MAX_ITEMS, cel: [uniqueNames('disk names must be unique (spec.domain.devices.disks[*].name)')] },
        interfaces: { maxItems: MAX_ITEMS, cel: [uniqueNames('Only one interface can be connected to one specific network')] },
        filesystems: { maxItems: MAX_ITEMS, cel: [uniqueNames('filesystem names must be unique')] },
        inputs: { maxItems: MAX_ITEMS },
        gpus: { maxItems: MAX_ITEMS },
        hostDevices: { maxItems: MAX_ITEMS },
        panicDevices: { maxItems: MAX_ITEMS },
      },
      cel: [
        {
          // Each disk's bootOrder is its own among disks and no interface's; each interface's is its own among
          // interfaces. (Not by iterating a filter()/map() result: older API servers estimate that unbounded.)
          rule:
            '(!has(self.disks) || self.disks.all(d, !has(d.bootOrder) || ' +
            '(self.disks.exists_one(e, has(e.bootOrder) && e.bootOrder == d.bootOrder) && ' +
            '(!has(self.interfaces) || !self.interfaces.exists(i, has(i.bootOrder) && i.bootOrder == d.bootOrder))))) && ' +
            '(!has(self.interfaces) || self.interfaces.all(i, !has(i.bootOrder) || ' +
            'self.interfaces.exists_one(j, has(j.bootOrder) && j.bootOrder == i.bootOrder)))',
          message: 'Boot order already set for a different device: bootOrder values of disks and interfaces must be unique',
        },
      ],
    },
  ],
  [
    DiskSchema,
    {
      props: {
        name: { ...NAME_63, pattern: DNS1123_LABEL_PATTERN },
        bootOrder: { minimum: 1 },
        serial: { maxLength: 256, pattern: SERIAL_PATTERN },
      },
      cel: [
        { rule: `${countPresent(['disk', 'lun', 'cdrom'])} <= 1`, message: 'a disk can only have a single target type defined' },
        {
          rule: "!(has(self.disk) && has(self.disk.bus) && self.disk.bus == 'sata' && has(self.disk.readonly) && self.disk.readonly)",
          message: 'sata hard-disks do not support read-only.',
        },
      ],
    },
  ],
  [
    DiskTargetSchema,
    {
      props: { pciAddress: { pattern: PCI_ADDRESS_PATTERN } },
      cel: [{ rule: "!has(self.pciAddress) || (has(self.bus) && self.bus == 'virtio')", message: 'setting a PCI address is only possible with bus type virtio.' }],
    },
  ],
  [CDRomTargetSchema, { cel: [{ rule: "!has(self.bus) || self.bus != 'virtio'", message: 'Bus type virtio is invalid for CD-ROM device' }] }],
  [FilesystemSchema, { props: { name: NAME_63 } }],
  [
    VolumeSchema,
    {
      props: { name: NAME_63 },
      cel: [{ rule: `${countPresent(VOLUME_SOURCES)} == 1`, message: 'a volume must have exactly one source type set' }],
    },
  ],
  [CloudInitNoCloudSourceSchema, { props: cloudInitProps, cel: cloudInitRules('cloudInitNoCloud') }],
  [CloudInitConfigDriveSourceSchema, { props: cloudInitProps, cel: cloudInitRules('cloudInitConfigDrive') }],
  [
    HostDiskSchema,
    {
      props: { path: { minLength: 1 } },
      cel: [{ rule: "self.type == 'DiskOrCreate' || !has(self.capacity)", message: "hostDisk.capacity is allowed to pass only with hostDisk.type equal to 'DiskOrCreate'" }],
    },
  ],
  [
    InterfaceSchema,
    {
      props: {
        name: { ...NAME_253, pattern: '^[A-Za-z0-9-_]+$' },
        model: { enum: InterfaceModels },
        macAddress: { pattern: MAC_ADDRESS_PATTERN },
        pciAddress: { pattern: PCI_ADDRESS_PATTERN },
        bootOrder: { minimum: 1 },
        ports: { maxItems: MAX_ITEMS },
      },
      cel: [
        {
          rule: `${countPresent(['bridge', 'masquerade', 'sriov', 'passtBinding', 'binding'])} == 1`,
          message: 'logical interface must have exactly one binding method or binding plugin',
        },
        { rule: '!has(self.slirp)', message: 'Slirp interface support has been discontinued since v1.3' },
        { rule: '!has(self.passt)', message: 'Passt network binding has been discontinued since v1.3' },
        { rule: '!has(self.macvtap)', message: 'Macvtap network binding has been discontinued since v1.3' },
        {
          rule: "!has(self.masquerade) || !has(self.macAddress) || self.macAddress != '02:00:00:00:00:00'",
          message: 'The requested MAC address is reserved for the in-pod bridge. Please choose another one.',
        },
      ],
    },
  ],
  [PortSchema, { props: { port: { minimum: 1, maximum: 65535 }, protocol: { enum: ['TCP', 'UDP'] }, name: { maxLength: 15, pattern: PORT_NAME_PATTERN } } }],
  [
    NetworkSchema,
    {
      props: { name: NAME_253 },
      cel: [{ rule: `${countPresent(['pod', 'multus', 'resourceClaim'])} == 1`, message: 'should have exactly one network type' }],
    },
  ],
  [MultusNetworkSchema, { props: { networkName: { minLength: 1 } } }],
  [InputSchema, { cel: [{ rule: "!has(self.type) || self.type == 'tablet'", message: 'Input device can have only tablet type.' }] }],
  [
    CPUSchema,
    {
      props: { features: { maxItems: MAX_ITEMS } },
      cel: [
        {
          rule: '!has(self.maxSockets) || self.maxSockets == 0 || !has(self.sockets) || self.sockets <= self.maxSockets',
          message: 'Number of sockets in CPU topology is greater than the maximum sockets allowed',
        },
        {
          rule: '!has(self.isolateEmulatorThread) || !self.isolateEmulatorThread || (has(self.dedicatedCpuPlacement) && self.dedicatedCpuPlacement)',
          message: 'IsolateEmulatorThread should be only set in combination with DedicatedCPUPlacement',
        },
        {
          rule: '!has(self.realtime) || (has(self.dedicatedCpuPlacement) && self.dedicatedCpuPlacement)',
          message: 'spec.domain.cpu.dedicatedCpuPlacement must be set to true when spec.domain.cpu.realtime is used',
        },
      ],
    },
  ],
  [CPUFeatureSchema, { props: { policy: { enum: ['', 'force', 'require', 'optional', 'disable', 'forbid'] } } }],
  [
    DomainSpecSchema,
    {
      cel: [
        {
          rule: "!has(self.ioThreadsPolicy) || self.ioThreadsPolicy != 'supplementalPool' || (has(self.ioThreads) && has(self.ioThreads.supplementalPoolThreadCount) && self.ioThreads.supplementalPoolThreadCount >= 1)",
          message: 'the number of iothreads needs to be set and positive for the dedicated policy',
        },
        {
          rule:
            '!(has(self.firmware) && has(self.firmware.bootloader) && has(self.firmware.bootloader.efi) && ' +
            '(!has(self.firmware.bootloader.efi.secureBoot) || self.firmware.bootloader.efi.secureBoot)) || ' +
            '(has(self.features) && has(self.features.smm) && (!has(self.features.smm.enabled) || self.features.smm.enabled)) || ' +
            '(has(self.launchSecurity) && has(self.launchSecurity.tdx))',
          message: 'EFI SecureBoot is enabled. SecureBoot requires SMM, which is currently disabled.',
        },
      ],
    },
  ],
  [BootloaderSchema, { cel: [{ rule: '!(has(self.efi) && has(self.bios))', message: 'bootloader has both EFI and BIOS configured, but they are mutually exclusive.' }] }],
  [KernelBootSchema, { cel: [{ rule: '!has(self.kernelArgs) || self.kernelArgs == "" || has(self.container)', message: 'kernel arguments cannot be provided without an external kernel' }] }],
  [
    KernelBootContainerSchema,
    {
      props: { image: { minLength: 1 }, kernelPath: { pattern: '^/' }, initrdPath: { pattern: '^/' } },
      cel: [{ rule: 'has(self.kernelPath) || has(self.initrdPath)', message: 'kernelBoot.container must be defined with at least one of the following: kernelPath, initrdPath' }],
    },
  ],
  [ProbeSchema, { cel: [{ rule: `${countPresent(['exec', 'httpGet', 'tcpSocket', 'guestAgentPing'])} == 1`, message: 'a probe must have exactly one probe type set' }] }],
  [AccessCredentialSchema, { cel: [{ rule: `${countPresent(['sshPublicKey', 'userPassword'])} == 1`, message: 'must have exactly one access credential type set' }] }],
  [
    SSHPublicKeyAccessCredentialPropagationMethodSchema,
    { cel: [{ rule: `${countPresent(['configDrive', 'noCloud', 'qemuGuestAgent'])} == 1`, message: 'must have exactly one propagationMethod set' }] },
  ],
  [SoundDeviceSchema, { props: { name: { minLength: 1 }, model: { enum: ['', 'ich9', 'ac97'] } } }],
  // Under the disk rules (addVolumeOptions.disk): bounded as spec.volumes is.
  [VirtualMachineStatusSchema, { props: { volumeRequests: { maxItems: MAX_ITEMS } } }],
  [
    VirtualMachineSpecSchema,
    {
      cel: [
        {
          rule: '!(has(self.running) && has(self.runStrategy))',
          message: 'Running and RunStrategy are mutually exclusive. Note that Running is deprecated, please use RunStrategy instead',
        },
        { rule: 'has(self.running) || has(self.runStrategy)', message: 'RunStrategy must be specified' },
      ],
    },
  ],
  [
    VirtualMachineInstanceReplicaSetSpecSchema,
    {
      props: { replicas: { minimum: 0 } },
      cel: [
        {
          rule:
            '(!has(self.selector.matchLabels) || self.selector.matchLabels.all(k, has(self.template.metadata) && has(self.template.metadata.labels) && ' +
            'k in self.template.metadata.labels && self.template.metadata.labels[k] == self.selector.matchLabels[k])) && ' +
            '(!has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, ' +
            "e.operator == 'Exists' ? (has(self.template.metadata) && has(self.template.metadata.labels) && e.key in self.template.metadata.labels) : " +
            "e.operator == 'DoesNotExist' ? !(has(self.template.metadata) && has(self.template.metadata.labels) && e.key in self.template.metadata.labels) : " +
            "e.operator == 'In' ? (has(self.template.metadata) && has(self.template.metadata.labels) && e.key in self.template.metadata.labels && has(e.values) && self.template.metadata.labels[e.key] in e.values) : " +
            '!(has(self.template.metadata) && has(self.template.metadata.labels) && e.key in self.template.metadata.labels && has(e.values) && self.template.metadata.labels[e.key] in e.values)))',
          message: 'selector does not match labels.',
          fieldPath: '.selector',
        },
      ],
    },
  ],
  [
    VirtualMachineInstanceMigrationSpecSchema,
    { cel: [{ rule: "has(self.vmiName) && self.vmiName != ''", message: 'vmiName is missing', reason: 'FieldValueRequired' }] },
  ],
]);

/** The schema with every node's additions applied (memoized per node, so shared nodes stay shared). */
function apply(schema: Schema, memo: Map<Schema, Schema>): Schema {
  const done = memo.get(schema);
  if (done) return done;
  let out: Schema;
  switch (schema.type) {
    case 'object': {
      const add = ADDITIONS.get(schema);
      const properties: Record<string, Schema> = {};
      for (const [k, child] of Object.entries(schema.properties)) {
        const c = apply(child, memo);
        const patch = add?.props?.[k];
        properties[k] = patch ? mergePatch(c, patch) : c;
      }
      out = { ...schema, properties, ...(add?.cel ? { cel: [...(schema.cel ?? []), ...add.cel] } : {}) };
      break;
    }
    case 'array':
      out = { ...schema, items: apply(schema.items, memo) };
      break;
    case 'map':
      out = { ...schema, values: apply(schema.values, memo) };
      break;
    default:
      out = schema;
  }
  memo.set(schema, out);
  return out;
}

function mergePatch(s: Schema, patch: PropPatch): Schema {
  const cel = patch.cel as CelRule[] | undefined;
  return { ...s, ...patch, ...(cel ? { cel: [...(s.cel ?? []), ...cel] } : {}) } as Schema;
}

const memo = new Map<Schema, Schema>();

/** `schema` (a top-level kind's) with the CRD validation of this module applied. */
export function withValidationRules(kind: Kind, schema: Schema & { type: 'object' }): Schema & { type: 'object' } {
  const out = apply(schema, memo) as Schema & { type: 'object' };
  return kind === 'VirtualMachine' ? withInstancetypeMemory(out) : out;
}

type Obj = Schema & { type: 'object' };
const child = (s: Obj, k: string): Obj => s.properties[k] as Obj;
const withChild = (s: Obj, k: string, c: Schema): Obj => ({ ...s, properties: { ...s.properties, [k]: c } });

/**
 * A VM naming an instance type takes its memory from it (KubeVirt's CRDs ask nothing of a VM
 * template's memory; its webhook applies the instance type first): the VM's
 * `spec.template.spec` drops the memory rule, and `spec` carries it unless `spec.instancetype` is
 * set — reported at `spec.template.spec`, where the shared rule reports it.
 */
function withInstancetypeMemory(vm: Obj): Obj {
  const spec = child(vm, 'spec');
  const template = child(spec, 'template');
  const tspec = child(template, 'spec');
  const tspecWithout: Obj = { ...tspec, cel: (tspec.cel ?? []).filter((r) => r.message !== NO_MEMORY_MESSAGE) };
  const rule = memoryRequested('self.template.spec');
  const specWith: Obj = {
    ...withChild(spec, 'template', withChild(template, 'spec', tspecWithout)),
    cel: [...(spec.cel ?? []), { ...rule, rule: `has(self.instancetype) || !has(self.template.spec) || (${rule.rule})`, fieldPath: '.template.spec' }],
  };
  return withChild(vm, 'spec', specWith);
}

/** For tests and docs: every CEL rule, with the node it sits on. */
export function allCelRules(): { node: Schema; rule: CelRule }[] {
  const out: { node: Schema; rule: CelRule }[] = [];
  for (const [node, add] of ADDITIONS) {
    for (const rule of add.cel ?? []) out.push({ node, rule });
    for (const p of Object.values(add.props ?? {})) for (const rule of (p.cel as CelRule[] | undefined) ?? []) out.push({ node, rule });
  }
  return out;
}


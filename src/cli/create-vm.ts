// `qvirt create vm`: virtctl's, printing a VirtualMachine manifest built from flags (KubeVirt's
// pkg/virtctl/create/vm). Client-side only. The same steps in the same order as virtctl: the VM with
// run strategy, grace period and memory; then each set flag (run strategy, instance type, preference,
// container disks, PVCs, the deprecated DataVolume aliases, imported volumes, sysprep, access
// credentials); then the generated cloud-init volume; then instance type/preference inference.
import { readFileSync } from 'node:fs';
import {
  checkExclusiveGroups, CreateError, flagErr, getParamByName, mapParams, QuantityFormatError,
  quantity, randString, splitPrefixedName, type CreateFlags, type ParamSchema, type ParamValue, type ParsedCreateFlags,
} from './create-params.ts';
import { dns1123LabelErrors } from '../api/validation/formats.ts';

type Obj = Record<string, unknown>;

export const VM_FLAGS = {
  name: { type: 'string', help: 'Specify the name of the VM.' },
  'run-strategy': { type: 'string', help: 'Specify the RunStrategy of the VM.', default: 'Always' },
  'termination-grace-period': { type: 'int64', help: 'Specify the termination grace period of the VM.', default: 180 },
  memory: { type: 'string', help: 'Specify the memory of the VM.', default: '512Mi' },
  instancetype: { type: 'string', help: 'Specify the Instance Type of the VM. Mutually exclusive with instancetype inference flags.' },
  'infer-instancetype': { type: 'bool', help: 'Specify if the Instance Type of the VM should be inferred from the first boot disk. Mutually exclusive with --infer-instancetype-from.', default: true },
  'infer-instancetype-from': { type: 'string', help: 'Specify the volume to infer the Instance Type of the VM from. Mutually exclusive with --infer-instancetype.' },
  preference: { type: 'string', help: 'Specify the Preference of the VM. Mutually exclusive with preference inference flags.' },
  'infer-preference': { type: 'bool', help: 'Specify if the Preference of the VM should be inferred from the first boot disk. Mutually exclusive with --infer-preference-from.', default: true },
  'infer-preference-from': { type: 'string', help: 'Specify the volume to infer the Preference of the VM from. Mutually exclusive with --infer-preference.' },
  'volume-containerdisk': { type: 'stringArray', help: 'Specify a containerdisk to be used by the VM. Can be provided multiple times.\nSupported parameters: name:string,src:string,bootorder:uint' },
  'volume-pvc': { type: 'stringArray', help: 'Specify a PVCs to be used by the VM. Can be provided multiple times.\nSupported parameters: name:string,src:string,bootorder:uint' },
  'volume-import': { type: 'stringArray', help: 'Specify the source for DataVolume. Can be provided multiple times.\nSupported types: blank, gcs, http, imageio, pvc, registry, s3, vddk, snapshot, ds (see virtctl create vm --help for their parameters)' },
  'volume-sysprep': { type: 'string', help: 'Specify a ConfigMap or Secret to be used as sysprep volume by the VM.\nSupported parameters: src:string,type:string' },
  user: { type: 'string', help: 'Specify the user in the cloud-init user data that is added to the VM.' },
  'password-file': { type: 'string', help: 'Specify a file to read the password from for the cloud-init user data that is added to the VM.' },
  'ssh-key': { type: 'stringSlice', help: 'Specify one or more SSH authorized keys in the cloud-init user data that is added to the VM.' },
  'ga-manage-ssh': { type: 'bool', help: 'Specify if the qemu-guest-agent should be able to manage SSH in the cloud-init user data that is added to the VM.' },
  'access-cred': { type: 'stringArray', help: 'Specify an access credential to be injected into the VM. Can be provided multiple times.\nSupported parameters: type:string,src:string,method:string,user:string' },
  'cloud-init': { type: 'string', help: 'Specify the type of the generated cloud-init data source.\nSupported values: nocloud, configdrive, none', default: 'nocloud' },
  'cloud-init-user-data': { type: 'string', help: 'Specify the base64 encoded cloud-init user data of the VM.' },
  'cloud-init-network-data': { type: 'string', help: 'Specify the base64 encoded cloud-init network data of the VM.' },
  'volume-datasource': { type: 'stringArray', help: 'DEPRECATED: Use --volume-import with type:ds and same params instead.' },
  'volume-clone-pvc': { type: 'stringArray', help: 'DEPRECATED: Use --volume-import with type:pvc and same params instead.' },
  'volume-blank': { type: 'stringArray', help: 'DEPRECATED: Use --volume-import with type:blank and same params instead.' },
} as const satisfies CreateFlags;

export const VM_LONG = 'Create a VirtualMachine manifest.\n\nIf no boot order was specified volumes have the following fixed boot order:\nContainerdisk > PVC > DataSource > Clone PVC > Blank > Imported volumes';

export const VM_EXAMPLES = `  # Create a manifest for a VirtualMachine with a random name:
  qvirt create vm

  # Create a manifest for a VirtualMachine with a specified name and RunStrategy Always
  qvirt create vm --name=my-vm --run-strategy=Always

  # Create a manifest for a VirtualMachine with a specified VirtualMachineInstancetype (namespaced)
  qvirt create vm --instancetype=virtualmachineinstancetype/my-instancetype

  # Create a manifest for a VirtualMachine with specified memory and an ephemeral containerdisk volume
  qvirt create vm --memory=1Gi --volume-containerdisk=src:my.registry/my-image:my-tag

  # Create a manifest for a VirtualMachine with a cloned DataSource and a blank volume
  qvirt create vm --volume-import=type:ds,src:my-ns/my-ds --volume-import=type:blank,size:50Gi

  # Create a manifest for a VirtualMachine with a generated cloud-init config setting the user and adding an ssh authorized key
  qvirt create vm --user cloud-user --ssh-key="ssh-ed25519 AAAA...."`;

export const VM_EXCLUSIVE_GROUPS = [
  ['memory', 'instancetype', 'infer-instancetype', 'infer-instancetype-from'],
  ['preference', 'infer-preference', 'infer-preference-from'],
  ['cloud-init-user-data', 'user'],
  ['cloud-init-user-data', 'password-file'],
  ['cloud-init-user-data', 'ssh-key'],
  ['cloud-init-user-data', 'ga-manage-ssh'],
] as const;

const RUN_STRATEGIES = ['Always', 'Manual', 'Halted', 'Once', 'RerunOnFailure'];
const CLOUD_INIT_DISK = 'cloudinitdisk';
const SYSPREP_DISK = 'sysprepdisk';
const CLOUD_CONFIG_HEADER = '#cloud-config';

const VOLUME_SOURCE: ParamSchema = { name: 'string', src: 'string', bootorder: 'uint' };
const DV_SOURCE: ParamSchema = { name: 'string', src: 'string', size: 'quantity', type: 'string', bootorder: 'uint' };
const DV_COMMON: ParamSchema = { size: 'quantity', type: 'string', name: 'string', bootorder: 'uint' };

type Params = Record<string, ParamValue | undefined>;
interface Imported { spec: Obj; bootOrder: number | undefined }

function s(p: Params, k: string): string {
  return (p[k] as string | undefined) ?? '';
}
function bootOrderOf(p: Params): number | undefined {
  return p.bootorder as number | undefined;
}
/** Drops the empty strings virtctl's omitempty fields leave out. */
function compact(o: Obj): Obj {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== '' && v !== undefined));
}

function parseNamespacedSrc(p: Params, kind: string): { name: string; namespace: string } {
  if (s(p, 'src') === '') throw flagErr('volume-import', 'src must be specified');
  let r: { prefix: string; name: string };
  try {
    r = splitPrefixedName(s(p, 'src'));
  } catch (err) {
    throw flagErr('volume-import', `src invalid: ${(err as Error).message}`);
  }
  if (r.prefix === '') throw flagErr('volume-import', `namespace of ${kind} "${r.name}" must be specified`);
  return { name: r.name, namespace: r.prefix };
}

const IMPORTERS: Readonly<Record<string, (text: string) => Imported>> = {
  blank: (text) => {
    const p = mapParams('volume-import', text, DV_COMMON);
    return { spec: { source: { blank: {} } }, bootOrder: bootOrderOf(p) };
  },
  gcs: (text) => {
    const p = mapParams('volume-import', text, { secretref: 'string', url: 'string', ...DV_COMMON });
    if (!s(p, 'url')) throw flagErr('volume-import', 'url is required with gcs volume source');
    return { spec: { source: { gcs: compact({ url: s(p, 'url'), secretRef: s(p, 'secretref') }) } }, bootOrder: bootOrderOf(p) };
  },
  http: (text) => {
    const p = mapParams('volume-import', text, { certconfigmap: 'string', extraheaders: 'strings', secretextraheaders: 'strings', secretref: 'string', url: 'string', ...DV_COMMON });
    if (!s(p, 'url')) throw flagErr('volume-import', 'url is required with http volume source');
    return {
      spec: { source: { http: compact({ url: s(p, 'url'), secretRef: s(p, 'secretref'), certConfigMap: s(p, 'certconfigmap'), extraHeaders: p.extraheaders, secretExtraHeaders: p.secretextraheaders }) } },
      bootOrder: bootOrderOf(p),
    };
  },
  imageio: (text) => {
    const p = mapParams('volume-import', text, { certconfigmap: 'string', diskid: 'string', secretref: 'string', url: 'string', ...DV_COMMON });
    if (!s(p, 'url') || !s(p, 'diskid')) throw flagErr('volume-import', 'url and diskid are both required with imageio volume source');
    return { spec: { source: { imageio: compact({ url: s(p, 'url'), diskId: s(p, 'diskid'), secretRef: s(p, 'secretref'), certConfigMap: s(p, 'certconfigmap') }) } }, bootOrder: bootOrderOf(p) };
  },
  pvc: (text) => {
    const p = mapParams('volume-import', text, DV_SOURCE);
    return { spec: { source: { pvc: parseNamespacedSrc(p, 'pvc') } }, bootOrder: bootOrderOf(p) };
  },
  registry: (text) => {
    const p = mapParams('volume-import', text, { certconfigmap: 'string', imagestream: 'string', pullmethod: 'string', secretref: 'string', url: 'string', ...DV_COMMON });
    const pm = s(p, 'pullmethod');
    if (pm !== '' && pm !== 'pod' && pm !== 'node') throw flagErr('volume-import', 'pullmethod must be set to pod or node');
    if ((s(p, 'url') === '') === (s(p, 'imagestream') === '')) throw flagErr('volume-import', 'exactly one of url or imagestream must be defined');
    return {
      spec: { source: { registry: compact({ url: s(p, 'url'), imageStream: s(p, 'imagestream'), pullMethod: pm, certConfigMap: s(p, 'certconfigmap'), secretRef: s(p, 'secretref') }) } },
      bootOrder: bootOrderOf(p),
    };
  },
  s3: (text) => {
    const p = mapParams('volume-import', text, { certconfigmap: 'string', secretref: 'string', url: 'string', ...DV_COMMON });
    if (!s(p, 'url')) throw flagErr('volume-import', 'url is required with s3 volume source');
    return { spec: { source: { s3: compact({ url: s(p, 'url'), certConfigMap: s(p, 'certconfigmap'), secretRef: s(p, 'secretref') }) } }, bootOrder: bootOrderOf(p) };
  },
  vddk: (text) => {
    const p = mapParams('volume-import', text, { backingfile: 'string', initimageurl: 'string', secretref: 'string', thumbprint: 'string', url: 'string', uuid: 'string', ...DV_COMMON });
    for (const [k, what] of [['url', 'url'], ['uuid', 'uuid'], ['thumbprint', 'thumbprint'], ['secretref', 'secretref'], ['backingfile', 'backingfile']] as const) {
      if (!s(p, k)) throw flagErr('volume-import', `${what} is required with vddk volume source`);
    }
    return {
      spec: { source: { vddk: compact({ url: s(p, 'url'), uuid: s(p, 'uuid'), thumbprint: s(p, 'thumbprint'), secretRef: s(p, 'secretref'), initImageURL: s(p, 'initimageurl'), backingFile: s(p, 'backingfile') }) } },
      bootOrder: bootOrderOf(p),
    };
  },
  snapshot: (text) => {
    const p = mapParams('volume-import', text, DV_SOURCE);
    return { spec: { source: { snapshot: parseNamespacedSrc(p, 'snapshot') } }, bootOrder: bootOrderOf(p) };
  },
  ds: (text) => {
    const p = mapParams('volume-import', text, DV_SOURCE);
    if (s(p, 'src') === '') throw flagErr('volume-import', 'src must be specified');
    let r: { prefix: string; name: string };
    try {
      r = splitPrefixedName(s(p, 'src'));
    } catch (err) {
      throw flagErr('volume-import', `src invalid: ${(err as Error).message}`);
    }
    const sourceRef: Obj = { kind: 'DataSource', name: r.name };
    if (r.prefix !== '') sourceRef.namespace = r.prefix;
    return { spec: { sourceRef }, bootOrder: bootOrderOf(p) };
  },
};
const SIZE_OPTIONAL = new Set(['pvc', 'snapshot', 'ds']);

export interface CreateVMResult {
  readonly vm: Obj;
  /** What virtctl writes to stderr (deprecations, the cleartext password warning). */
  readonly warnings: string[];
}

export interface CreateVMEnv {
  readonly random?: () => number;
  readonly readFile?: (path: string) => string;
}

/** The VirtualMachine virtctl prints for these flags (flags as parseCreateFlags returns them). */
export function createVM(f: ParsedCreateFlags, env: CreateVMEnv = {}): CreateVMResult {
  const random = env.random ?? Math.random;
  const readFile = env.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const changed = f.changed;
  const str = (n: string): string => f.values.get(n) as string;
  const arr = (n: string): string[] => f.values.get(n) as string[];
  const warnings: string[] = [];
  checkExclusiveGroups(VM_EXCLUSIVE_GROUPS, changed);

  // setDefaults
  const namespace = changed.has('namespace') ? str('namespace') : '';
  const name = str('name') === '' ? `vm-${randString(5, random)}` : str('name');
  const explicitInstancetypeInference = changed.has('infer-instancetype') || changed.has('infer-instancetype-from');
  const explicitPreferenceInference = changed.has('infer-preference') || changed.has('infer-preference-from');
  let cloudInit = str('cloud-init');
  let gaManageSSH = f.values.get('ga-manage-ssh') === true;
  const volumeImport = [...arr('volume-import')];
  const bootOrders = new Map<number, string>();

  // newVM
  let memory: string;
  try {
    memory = quantity(str('memory'));
  } catch (err) {
    if (err instanceof QuantityFormatError) throw flagErr('memory', err.message);
    throw err;
  }
  const volumes: Obj[] = [];
  const disks: Obj[] = [];
  const dataVolumeTemplates: Obj[] = [];
  const accessCredentials: Obj[] = [];
  const domain: Obj = { devices: {}, memory: { guest: memory }, resources: {} };
  const templateSpec: Obj = { domain, terminationGracePeriodSeconds: f.values.get('termination-grace-period') as number };
  const spec: Obj = { runStrategy: str('run-strategy'), template: { metadata: {}, spec: templateSpec } };
  const metadata: Obj = { name };
  if (namespace !== '') metadata.namespace = namespace;

  const volumeExists = (n: string): Obj | undefined => volumes.find((v) => v.name === n);
  const volumeShouldNotExist = (flag: string, n: string): void => {
    if (volumeExists(n)) throw flagErr(flag, `there is already a volume with name "${n}"`);
  };
  const checkLabel = (flag: string, n: string): void => {
    const errs = dns1123LabelErrors(n);
    if (errs.length > 0) throw flagErr(flag, `invalid name "${n}": ${errs.join(',')}`);
  };
  const addDiskWithBootOrder = (flag: string, n: string, bootOrder: number | undefined): void => {
    if (bootOrder === undefined) return;
    if (bootOrder === 0) throw flagErr(flag, 'bootorder must be greater than 0');
    if (bootOrders.has(bootOrder)) throw flagErr(flag, `bootorder ${bootOrder} was specified multiple times`);
    disks.push({ name: n, bootOrder });
    bootOrders.set(bootOrder, n);
  };
  const matcher = (flag: 'instancetype' | 'preference', singular: string, cluster: string): Obj => {
    let r: { prefix: string; name: string };
    try {
      r = splitPrefixedName(str(flag));
    } catch (err) {
      throw flagErr(flag, (err as Error).message);
    }
    const kind = r.prefix.toLowerCase();
    if (kind !== '' && kind !== singular && kind !== cluster) {
      throw flagErr(flag, `invalid ${flag} kind "${kind}", supported values are: ${singular}, ${cluster}`);
    }
    return kind === '' ? { name: r.name } : { name: r.name, kind };
  };
  const alias = (flag: string, type: string): void => {
    warnings.push(`Flag --${flag} has been deprecated, use flag --volume-import instead`);
    for (const v of arr(flag)) {
      if (v === '') throw flagErr('volume-import', 'params may not be empty');
      volumeImport.unshift(`type:${type},${v}`);
    }
    changed.add('volume-import');
  };

  const steps: Record<string, () => void> = {
    'run-strategy': () => {
      const rs = RUN_STRATEGIES.find((r) => r.toLowerCase() === str('run-strategy').toLowerCase());
      if (!rs) throw flagErr('run-strategy', `invalid run strategy "${str('run-strategy')}", supported values are: ${RUN_STRATEGIES.join(', ')}`);
      spec.runStrategy = rs;
    },
    instancetype: () => {
      const m = matcher('instancetype', 'virtualmachineinstancetype', 'virtualmachineclusterinstancetype');
      delete domain.memory;
      spec.instancetype = m;
    },
    preference: () => {
      spec.preference = matcher('preference', 'virtualmachinepreference', 'virtualmachineclusterpreference');
    },
    'volume-containerdisk': () => {
      arr('volume-containerdisk').forEach((text, i) => {
        const p = mapParams('volume-containerdisk', text, VOLUME_SOURCE);
        if (s(p, 'src') === '') throw flagErr('volume-containerdisk', 'src must be specified');
        const n = s(p, 'name') || `${name}-containerdisk-${i}`;
        checkLabel('volume-containerdisk', n);
        volumeShouldNotExist('volume-containerdisk', n);
        volumes.push({ name: n, containerDisk: { image: s(p, 'src') } });
        addDiskWithBootOrder('volume-containerdisk', n, bootOrderOf(p));
      });
    },
    'volume-pvc': () => {
      for (const text of arr('volume-pvc')) {
        const p = mapParams('volume-pvc', text, VOLUME_SOURCE);
        if (s(p, 'src') === '') throw flagErr('volume-pvc', 'src must be specified');
        let r: { prefix: string; name: string };
        try {
          r = splitPrefixedName(s(p, 'src'));
        } catch (err) {
          throw flagErr('volume-pvc', `src invalid: ${(err as Error).message}`);
        }
        if (r.prefix !== '') throw flagErr('volume-pvc', `not allowed to specify namespace of pvc "${r.name}"`);
        const n = s(p, 'name') || r.name;
        checkLabel('volume-pvc', n);
        volumeShouldNotExist('volume-pvc', n);
        volumes.push({ name: n, persistentVolumeClaim: { claimName: r.name } });
        addDiskWithBootOrder('volume-pvc', n, bootOrderOf(p));
      }
    },
    'volume-datasource': () => alias('volume-datasource', 'ds'),
    'volume-clone-pvc': () => alias('volume-clone-pvc', 'pvc'),
    'volume-blank': () => alias('volume-blank', 'blank'),
    'volume-import': () => {
      for (const text of volumeImport) {
        const t = getParamByName('type', text);
        if ('error' in t) throw flagErr('volume-import', t.error);
        const importer = IMPORTERS[t.value];
        if (!importer) throw flagErr('volume-import', `invalid volume import type "${t.value}", see help for supported values`);
        const { spec: dvSpec, bootOrder } = importer(text);
        const size = getParamByName('size', text);
        if ('error' in size && (!SIZE_OPTIONAL.has(t.value) || !size.notFound)) throw flagErr('volume-import', size.error);
        const nameParam = getParamByName('name', text);
        const n = 'value' in nameParam ? nameParam.value : `imported-volume-${randString(5, random)}`;
        checkLabel('volume-import', n);
        volumeShouldNotExist('volume-import', n);
        const storage: Obj = { resources: {} };
        if ('value' in size && size.value !== '') storage.resources = { requests: { storage: quantity(size.value) } };
        dataVolumeTemplates.push({ metadata: { name: n }, spec: { ...dvSpec, storage } });
        volumes.push({ name: n, dataVolume: { name: n } });
        addDiskWithBootOrder('volume-import', n, bootOrder);
      }
    },
    'volume-sysprep': () => {
      const p = mapParams('volume-sysprep', str('volume-sysprep'), { src: 'string', type: 'string' });
      if (s(p, 'src') === '') throw flagErr('volume-sysprep', 'src must be specified');
      let r: { prefix: string; name: string };
      try {
        r = splitPrefixedName(s(p, 'src'));
      } catch (err) {
        throw flagErr('volume-sysprep', `src invalid: ${(err as Error).message}`);
      }
      if (r.prefix !== '') throw flagErr('volume-sysprep', `not allowed to specify namespace of configmap or secret "${r.name}"`);
      const type = s(p, 'type') || 'configmap';
      volumeShouldNotExist('volume-sysprep', SYSPREP_DISK);
      let sysprep: Obj;
      switch (type.toLowerCase()) {
        case 'configmap': sysprep = { configMap: { name: s(p, 'src') } }; break;
        case 'secret': sysprep = { secret: { name: s(p, 'src') } }; break;
        default: throw flagErr('volume-sysprep', `invalid sysprep source type "${type}", supported values are: configmap, secret`);
      }
      volumes.push({ name: SYSPREP_DISK, sysprep });
    },
    'access-cred': () => {
      for (const text of arr('access-cred')) {
        const p = mapParams('access-cred', text, { type: 'string', src: 'string', method: 'string', user: 'string' });
        if (s(p, 'src') === '') throw flagErr('access-cred', 'src must be specified');
        let r: { prefix: string; name: string };
        try {
          r = splitPrefixedName(s(p, 'src'));
        } catch (err) {
          throw flagErr('access-cred', `src invalid: ${(err as Error).message}`);
        }
        if (r.prefix !== '') throw flagErr('access-cred', `not allowed to specify namespace of secret "${r.name}"`);
        const secret = { secret: { secretName: s(p, 'src') } };
        const method = s(p, 'method');
        const credUser = s(p, 'user');
        switch (s(p, 'type').toLowerCase()) {
          case 'ssh':
          case '': {
            const ssh = (propagationMethod: Obj): void => { accessCredentials.push({ sshPublicKey: { source: secret, propagationMethod } }); };
            const generic = (expected: string, key: string): void => {
              if (credUser !== '') throw flagErr('access-cred', 'user cannot be specified with selected access credential type and method');
              if (!changed.has('cloud-init')) { cloudInit = expected; changed.add('cloud-init'); }
              if (cloudInit.toLowerCase() !== expected) {
                throw flagErr('access-cred', `method param and value passed to --cloud-init have to match: ${expected} vs ${cloudInit}`);
              }
              ssh({ [key]: {} });
            };
            switch (method.toLowerCase()) {
              case 'ga':
              case '': {
                const u = credUser || str('user');
                if (u === '') throw flagErr('access-cred', 'user must be specified with access credential ssh method ga ("--user" flag or param "user")');
                if (!changed.has('ga-manage-ssh')) { gaManageSSH = true; changed.add('ga-manage-ssh'); }
                ssh({ qemuGuestAgent: { users: [u] } });
                break;
              }
              case 'nocloud': generic('nocloud', 'noCloud'); break;
              case 'configdrive': generic('configdrive', 'configDrive'); break;
              default: throw flagErr('access-cred', `invalid access credentials ssh method "${method}", supported values are: ga, nocloud, configdrive`);
            }
            break;
          }
          case 'password':
            if (method !== '' && method.toLowerCase() !== 'ga') throw flagErr('access-cred', `invalid access credentials password method "${method}", supported values are: ga`);
            if (credUser !== '') throw flagErr('access-cred', 'user cannot be specified with selected access credential type and method');
            accessCredentials.push({ userPassword: { source: secret, propagationMethod: { qemuGuestAgent: {} } } });
            break;
          default:
            throw flagErr('access-cred', `invalid access credential type "${s(p, 'type')}", supported values are: ssh, password`);
        }
      }
    },
  };
  const order = ['run-strategy', 'instancetype', 'preference', 'volume-containerdisk', 'volume-pvc', 'volume-datasource', 'volume-clone-pvc', 'volume-blank', 'volume-import', 'volume-sysprep', 'access-cred'];
  for (const flag of order) if (changed.has(flag)) steps[flag]!();

  // cloudInitConfig
  const cloudInitFlags = ['user', 'password-file', 'ssh-key', 'ga-manage-ssh', 'cloud-init', 'cloud-init-user-data', 'cloud-init-network-data'];
  if (cloudInitFlags.some((c) => changed.has(c))) {
    if (changed.has('password-file')) warnings.push('WARNING: --password-file: The password is stored in cleartext in the VM definition!');
    if (volumeExists(CLOUD_INIT_DISK)) throw new CreateError(`there is already a volume with name "${CLOUD_INIT_DISK}"`);
    const buildConfig = (): string => {
      let config = CLOUD_CONFIG_HEADER;
      if (str('user') !== '') config += `\nuser: ${str('user')}`;
      if (str('password-file') !== '') {
        let data: string;
        try {
          data = readFile(str('password-file'));
        } catch (err) {
          throw flagErr('password-file', `open ${str('password-file')}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
        }
        const password = data.trim();
        if (password !== '') config += `\npassword: ${password}\nchpasswd: { expire: False }`;
      }
      const keys = arr('ssh-key');
      if (keys.length > 0) config += `\nssh_authorized_keys:${keys.map((k) => `\n  - ${k}`).join('')}`;
      if (gaManageSSH) config += "\nruncmd:\n  - [ setsebool, -P, 'virt_qemu_ga_manage_ssh', 'on' ]";
      return config;
    };
    const source = (): Obj => {
      const src: Obj = {};
      if (str('cloud-init-network-data') !== '') src.networkDataBase64 = str('cloud-init-network-data');
      if (str('cloud-init-user-data') !== '') src.userDataBase64 = str('cloud-init-user-data');
      else src.userData = buildConfig();
      return src;
    };
    let volume: Obj | undefined;
    switch (cloudInit.toLowerCase()) {
      case 'nocloud': volume = { name: CLOUD_INIT_DISK, cloudInitNoCloud: source() }; break;
      case 'configdrive': volume = { name: CLOUD_INIT_DISK, cloudInitConfigDrive: source() }; break;
      case 'none':
        if (['password-file', 'ssh-key', 'ga-manage-ssh', 'cloud-init-user-data', 'cloud-init-network-data'].some((c) => changed.has(c))) {
          warnings.push('WARNING: --cloud-init: was set to none, not creating a data source although other cloud-init options were set');
        }
        break;
      default:
        throw flagErr('cloud-init', `invalid cloud-init data source type "${cloudInit}", supported values are: nocloud, configdrive, none`);
    }
    if (volume) {
      const src = (volume.cloudInitNoCloud ?? volume.cloudInitConfigDrive) as Obj;
      const empty = src.userData === CLOUD_CONFIG_HEADER && src.networkDataBase64 === undefined;
      if (changed.has('cloud-init') || !empty) volumes.push(volume);
    }
  }

  // inferFromVolume
  const volumeToInferFrom = (): string => {
    if (volumes.length < 1) throw new CreateError('at least one volume is needed to infer an instance type or preference');
    if (bootOrders.size > 0) return bootOrders.get(Math.min(...bootOrders.keys()))!;
    return volumes[0]!.name as string;
  };
  const validToInferFrom = (n: string): void => {
    const vol = volumeExists(n);
    if (!vol) throw new CreateError(`there is no volume with name "${n}"`);
    if (vol.dataVolume) {
      const dvt = dataVolumeTemplates.find((d) => (d.metadata as Obj).name === (vol.dataVolume as Obj).name);
      if (!dvt) return;
      const dvSpec = dvt.spec as Obj;
      const source = dvSpec.source as Obj | undefined;
      if (source && (source.pvc || source.registry || source.snapshot)) return;
      if (dvSpec.sourceRef && (dvSpec.sourceRef as Obj).kind === 'DataSource') return;
      throw new CreateError('this datavolume is not valid to infer an instancetype or preference from (source needs to be PVC, Registry or Snapshot, sourceRef needs to be DataSource)');
    }
    if (vol.persistentVolumeClaim) return;
    throw new CreateError('inference of instancetype or preference works only with datasources, datavolumes or pvcs');
  };
  let inferInstancetypeFrom = str('infer-instancetype-from');
  let inferPreferenceFrom = str('infer-preference-from');
  if (f.values.get('infer-instancetype') === true && str('instancetype') === '' && !changed.has('memory')) {
    try {
      if (inferInstancetypeFrom === '') inferInstancetypeFrom = volumeToInferFrom();
      validToInferFrom(inferInstancetypeFrom);
      spec.instancetype = explicitInstancetypeInference
        ? { inferFromVolume: inferInstancetypeFrom }
        : { inferFromVolume: inferInstancetypeFrom, inferFromVolumeFailurePolicy: 'Ignore' };
      if (explicitInstancetypeInference) delete domain.memory;
    } catch (err) {
      if (explicitInstancetypeInference) throw err;
    }
  }
  if (f.values.get('infer-preference') === true && str('preference') === '') {
    try {
      if (inferPreferenceFrom === '') inferPreferenceFrom = volumeToInferFrom();
      validToInferFrom(inferPreferenceFrom);
      spec.preference = explicitPreferenceInference
        ? { inferFromVolume: inferPreferenceFrom }
        : { inferFromVolume: inferPreferenceFrom, inferFromVolumeFailurePolicy: 'Ignore' };
    } catch (err) {
      if (explicitPreferenceInference) throw err;
    }
  }

  if (dataVolumeTemplates.length > 0) spec.dataVolumeTemplates = dataVolumeTemplates;
  if (disks.length > 0) domain.devices = { disks };
  if (volumes.length > 0) templateSpec.volumes = volumes;
  if (accessCredentials.length > 0) templateSpec.accessCredentials = accessCredentials;
  return { vm: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata, spec, status: {} }, warnings };
}

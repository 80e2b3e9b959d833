// cloud-init seed disks (cloudInitNoCloud, cloudInitConfigDrive), as KubeVirt's launcher makes them
// (pkg/cloud-init/cloud-init.go):
//  - user and network data come from the inline field, else its base64 twin, else (secretRef /
//    networkDataSecretRef) the secret mounted at `<private>/secret/<vol>/{userdata|userData,
//    networkdata|networkData}`;
//  - meta-data: NoCloud `{"instance-type"?, "instance-id": <firmware uuid>, "local-hostname"?,
//    "public-keys"?}`; ConfigDrive `{"instance_type"?, "instance_id": "<name>.<namespace>",
//    "hostname"?, "uuid"?, "devices"?, "public_keys"?}`, encoded byte for byte as Go's json.Marshal;
//  - files in `<ephemeral-disk-dir>/cloud-init-data/<ns>/<name>/data/` (ConfigDrive under
//    `openstack/latest/`), an ISO labelled `cidata` / `config-2` written to `<iso>.staging` and renamed
//    to `noCloud.iso` / `configdrive.iso` beside it; the data files are removed afterwards.
// Only the first cloud-init volume in spec.volumes is used, as in KubeVirt.
import { mkdir, readdir, readFile, rm, writeFile } from '../fs/async.ts';
import { join } from 'node:path';
import type { CloudInitNoCloudSource, VirtualMachineInstance, Volume } from '../../src/api/types.ts';
import { CLOUD_INIT_NETWORK_MAX_LEN, CLOUD_INIT_USER_MAX_LEN, FILE_NAMES, ISO_LABELS, MESSAGES, TIMEOUTS } from './constants.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { makeEmptyIso, makeIso, type IsoWriter, type IsoWriterChoice } from './iso.ts';
import { accessCredentialSource, cloudInitBase, cloudInitStagingDir, configDriveIso, noCloudIso, secretSource, type DiskDirs } from './paths.ts';
import type { DeviceMetadata, PreparedVolume } from './prepared.ts';

export type DataSource = 'noCloud' | 'configDrive';

/** Annotations whose value becomes `instance-type` (cluster-wide wins). */
export const INSTANCETYPE_ANNOTATIONS = {
  cluster: 'kubevirt.io/cluster-instancetype-name',
  namespaced: 'kubevirt.io/instancetype-name',
} as const;

export interface NoCloudMetadata {
  readonly instanceType?: string;
  readonly instanceId: string;
  readonly localHostname?: string;
  readonly publicSSHKeys?: Readonly<Record<string, string>>;
}

export interface ConfigDriveMetadata {
  readonly instanceType?: string;
  readonly instanceId: string;
  readonly hostname?: string;
  readonly uuid?: string;
  readonly devices?: readonly DeviceMetadata[];
  readonly publicSSHKeys?: Readonly<Record<string, string>>;
}

export interface CloudInitData {
  readonly dataSource: DataSource;
  readonly volumeName: string;
  readonly userData: Uint8Array;
  readonly networkData: Uint8Array;
  readonly noCloudMetaData?: NoCloudMetadata;
  readonly configDriveMetaData?: ConfigDriveMetadata;
}

// --- Go's encoding/json, for the few shapes metadata has -------------------------------------

/** A JSON string as Go's json.Marshal writes it (HTML-safe: <, >, & and U+2028/9 escaped). */
export function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

type GoField = readonly [key: string, json: string | undefined];
const goObject = (fields: readonly GoField[]): string =>
  `{${fields.filter((f): f is readonly [string, string] => f[1] !== undefined).map(([k, v]) => `${goJsonString(k)}:${v}`).join(',')}}`;
const omitEmptyString = (s: string | undefined) => (s ? goJsonString(s) : undefined);
/** A Go map[string]string: keys sorted bytewise; omitempty drops an empty map. */
const omitEmptyMap = (m: Readonly<Record<string, string>> | undefined) => {
  const keys = Object.keys(m ?? {}).sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
  if (!m || keys.length === 0) return undefined;
  return `{${keys.map((k) => `${goJsonString(k)}:${goJsonString(m[k]!)}`).join(',')}}`;
};

function deviceJson(d: DeviceMetadata): string {
  return goObject([
    ['type', goJsonString(d.type)],
    ['bus', goJsonString(d.bus)],
    ['address', goJsonString(d.address)],
    ['mac', omitEmptyString(d.mac)],
    ['serial', omitEmptyString(d.serial)],
    ['numaNode', d.numaNode ? String(d.numaNode) : undefined],
    ['alignedCPUs', d.alignedCPUs && d.alignedCPUs.length ? `[${d.alignedCPUs.join(',')}]` : undefined],
    ['tags', d.tags ? `[${d.tags.map(goJsonString).join(',')}]` : 'null'],
  ]);
}

/** NoCloud `meta-data` bytes. */
export function noCloudMetaDataJson(md: NoCloudMetadata): string {
  return goObject([
    ['instance-type', omitEmptyString(md.instanceType)],
    ['instance-id', goJsonString(md.instanceId)],
    ['local-hostname', omitEmptyString(md.localHostname)],
    ['public-keys', omitEmptyMap(md.publicSSHKeys)],
  ]);
}

/** ConfigDrive `openstack/latest/meta_data.json` bytes. */
export function configDriveMetaDataJson(md: ConfigDriveMetadata): string {
  return goObject([
    ['instance_type', omitEmptyString(md.instanceType)],
    ['instance_id', goJsonString(md.instanceId)],
    ['hostname', omitEmptyString(md.hostname)],
    ['uuid', omitEmptyString(md.uuid)],
    ['devices', md.devices ? `[${md.devices.map(deviceJson).join(',')}]` : undefined],
    ['public_keys', omitEmptyMap(md.publicSSHKeys)],
  ]);
}

// --- pure decisions ----------------------------------------------------------------------------

/** dns.SanitizeHostname: spec.hostname, else the VMI name up to its first dot, at most 63 characters. */
export function sanitizeHostname(vmi: VirtualMachineInstance): string {
  if (vmi.spec.hostname) return vmi.spec.hostname;
  return (vmi.metadata?.name ?? '').split('.')[0]!.slice(0, 63);
}

/** The instance type for metadata: the cluster instancetype annotation, else the namespaced one. */
export function instancetypeOf(vmi: VirtualMachineInstance): string {
  const a = vmi.metadata?.annotations ?? {};
  return a[INSTANCETYPE_ANNOTATIONS.cluster] || a[INSTANCETYPE_ANNOTATIONS.namespaced] || '';
}

/**
 * cloudInitUUIDFromVMI: the firmware UUID; a fresh one if the VMI has no firmware section. node:crypto
 * is loaded only then, not by every launcher (~2.4 MiB of RSS: bench/launcher-memory.md).
 */
export function cloudInitUUID(vmi: VirtualMachineInstance): string {
  const fw = vmi.spec.domain.firmware;
  return fw ? (fw.uuid ?? '') : process.getBuiltinModule('node:crypto').randomUUID();
}

/** Strict standard base64 like Go's base64.StdEncoding (newlines ignored). */
export function decodeBase64Strict(s: string, field: string): Uint8Array {
  const clean = s.replace(/[\r\n]/g, '');
  const bad = clean.search(/[^A-Za-z0-9+/=]/);
  const pad = clean.indexOf('=');
  if (bad >= 0) throw new Error(`${field}: illegal base64 data at input byte ${bad}`);
  if (clean.length % 4 !== 0) throw new Error(`${field}: illegal base64 data at input byte ${clean.length - (clean.length % 4)}`);
  if (pad >= 0 && (pad < clean.length - 2 || /[^=]/.test(clean.slice(pad)))) throw new Error(`${field}: illegal base64 data at input byte ${pad}`);
  return Buffer.from(clean, 'base64');
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** The inline sources of one cloud-init volume (readCloudInitData): raw wins over base64. */
export function inlineCloudInitData(src: CloudInitNoCloudSource): { userData: Uint8Array; networkData: Uint8Array } {
  const pick = (raw: string | undefined, b64: string | undefined, field: string) =>
    raw ? utf8(raw) : b64 ? decodeBase64Strict(b64, field) : new Uint8Array(0);
  return {
    userData: pick(src.userData, src.userDataBase64, 'userDataBase64'),
    networkData: pick(src.networkData, src.networkDataBase64, 'networkDataBase64'),
  };
}

/**
 * The admission limits of KubeVirt's VMI webhook on inline/base64 data (2048 bytes each after
 * decoding), with its messages. Returns the problems; empty when the volume is acceptable.
 */
export function cloudInitLimitViolations(volume: Volume, index: number): string[] {
  const kind = volume.cloudInitNoCloud ? 'cloudInitNoCloud' : volume.cloudInitConfigDrive ? 'cloudInitConfigDrive' : undefined;
  if (!kind) return [];
  const src = (volume.cloudInitNoCloud ?? volume.cloudInitConfigDrive)!;
  const field = `spec.volumes[${index}].${kind}`;
  const out: string[] = [];
  const len = (raw: string | undefined, b64: string | undefined, name: string): number => {
    if (raw) return Buffer.byteLength(raw, 'utf8');
    if (b64) {
      try {
        return decodeBase64Strict(b64, name).length;
      } catch {
        out.push(`${field}.${name} is not a valid base64 value.`);
      }
    }
    return 0;
  };
  if (len(src.userData, src.userDataBase64, 'userDataBase64') > CLOUD_INIT_USER_MAX_LEN) out.push(MESSAGES.userDataTooLong(field));
  if (len(src.networkData, src.networkDataBase64, 'networkDataBase64') > CLOUD_INIT_NETWORK_MAX_LEN) out.push(MESSAGES.networkDataTooLong(field));
  return out;
}

// --- reading the sources -----------------------------------------------------------------------

async function readFirstFound(dir: string, names: readonly string[]): Promise<Uint8Array | Error> {
  let last: Error = new Error(`none of ${names.join(', ')} in ${dir}`);
  for (const n of names) {
    try {
      return await readFile(join(dir, n));
    } catch (err) {
      last = err instanceof Error ? err : new Error(String(err));
    }
  }
  return last;
}

/** SSH keys of accessCredentials propagated by this data source, numbered "0", "1", ... in file order. */
export async function resolveSSHPublicKeys(vmi: VirtualMachineInstance, dirs: DiskDirs, source: DataSource): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  let count = 0;
  for (const cred of vmi.spec.accessCredentials ?? []) {
    const ssh = cred.sshPublicKey;
    if (!ssh) continue;
    const propagated = source === 'noCloud' ? ssh.propagationMethod?.noCloud : ssh.propagationMethod?.configDrive;
    if (!propagated) continue;
    const secretName = ssh.source?.secret?.secretName;
    if (!secretName) continue;
    const dir = accessCredentialSource(dirs, secretName);
    const entries = await readdir(dir, { withFileTypes: true });
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (e.isDirectory() || e.name.startsWith('..')) continue;
      let data: string;
      try {
        data = await readFile(join(dir, e.name), 'utf8');
      } catch (err) {
        throw new Error(`Unable to read public keys found at volume: ${dir}/${e.name} error: ${errorMessage(err)}`);
      }
      if (data === '') continue;
      keys[String(count++)] = data;
    }
  }
  return keys;
}

/**
 * ReadCloudInitVolumeDataSource: the data of the first cloud-init volume, or undefined if the VMI has
 * none. Throws VolumePreparationError with KubeVirt's messages.
 */
export async function readCloudInitData(vmi: VirtualMachineInstance, dirs: DiskDirs, devices?: readonly DeviceMetadata[]): Promise<CloudInitData | undefined> {
  const volume = (vmi.spec.volumes ?? []).find((v) => v.cloudInitNoCloud || v.cloudInitConfigDrive);
  if (!volume) return undefined;
  const dataSource: DataSource = volume.cloudInitNoCloud ? 'noCloud' : 'configDrive';
  const kind = dataSource === 'noCloud' ? 'cloudInitNoCloud' : 'cloudInitConfigDrive';
  const src = (volume.cloudInitNoCloud ?? volume.cloudInitConfigDrive)!;
  const fail = (reason: string, cause?: unknown): never => { throw new VolumePreparationError(volume.name, kind, reason, { cause }); };

  let keys: Record<string, string> = {};
  try {
    keys = await resolveSSHPublicKeys(vmi, dirs, dataSource);
  } catch (err) {
    fail(`reading access credentials: ${errorMessage(err)}`, err);
  }

  let data: { userData: Uint8Array; networkData: Uint8Array };
  try {
    data = inlineCloudInitData(src);
  } catch (err) {
    return fail(errorMessage(err), err);
  }
  // The secret-backed volume is the first cloud-init volume of this kind with a secretRef.
  const secretVolume = (vmi.spec.volumes ?? []).find((v) => {
    const s = dataSource === 'noCloud' ? v.cloudInitNoCloud : v.cloudInitConfigDrive;
    return s && (s.secretRef || s.networkDataSecretRef);
  });
  if (secretVolume === volume) {
    const dir = secretSource(dirs, volume.name);
    const user = src.secretRef ? await readFirstFound(dir, FILE_NAMES.secretUserData) : undefined;
    const net = src.networkDataSecretRef ? await readFirstFound(dir, FILE_NAMES.secretNetworkData) : undefined;
    if (user instanceof Error && net instanceof Error) fail(MESSAGES.cloudInitNoSecretData(volume.name));
    if (user instanceof Uint8Array && user.length > 0) data.userData = user;
    if (net instanceof Uint8Array && net.length > 0) data.networkData = net;
  }
  if (data.userData.length === 0 && data.networkData.length === 0) fail(MESSAGES.cloudInitSourceRequired);

  const uuid = cloudInitUUID(vmi);
  const hostname = sanitizeHostname(vmi);
  const instanceType = instancetypeOf(vmi);
  const name = vmi.metadata?.name ?? '';
  const namespace = vmi.metadata?.namespace ?? '';
  if (dataSource === 'noCloud') {
    return {
      dataSource, volumeName: volume.name, ...data,
      noCloudMetaData: { instanceType, instanceId: uuid, localHostname: hostname, publicSSHKeys: keys },
    };
  }
  return {
    dataSource, volumeName: volume.name, ...data,
    configDriveMetaData: { instanceType, instanceId: `${name}.${namespace}`, hostname, uuid, publicSSHKeys: keys, ...(devices && devices.length > 0 ? { devices } : {}) },
  };
}

// --- writing the seed disk -----------------------------------------------------------------------

/** The files of the seed disk, relative to its root. */
export function seedFiles(data: CloudInitData): { path: string; bytes: Uint8Array }[] {
  const files: { path: string; bytes: Uint8Array }[] = [];
  if (data.dataSource === 'noCloud') {
    const md = data.noCloudMetaData ?? { instanceId: '' };
    files.push({ path: FILE_NAMES.noCloudUserData, bytes: data.userData });
    files.push({ path: FILE_NAMES.noCloudMetaData, bytes: utf8(noCloudMetaDataJson(md)) });
    if (data.networkData.length > 0) files.push({ path: FILE_NAMES.noCloudNetworkConfig, bytes: data.networkData });
  } else {
    const md = data.configDriveMetaData ?? { instanceId: '' };
    const d = FILE_NAMES.configDriveDir;
    files.push({ path: `${d}/${FILE_NAMES.configDriveUserData}`, bytes: data.userData });
    files.push({ path: `${d}/${FILE_NAMES.configDriveMetaData}`, bytes: utf8(configDriveMetaDataJson(md)) });
    if (data.networkData.length > 0) files.push({ path: `${d}/${FILE_NAMES.configDriveNetworkData}`, bytes: data.networkData });
  }
  return files;
}

export const cloudInitIsoPath = (dirs: DiskDirs, vmi: VirtualMachineInstance, source: DataSource): string =>
  (source === 'noCloud' ? noCloudIso : configDriveIso)(dirs, vmi.metadata?.namespace ?? '', vmi.metadata?.name ?? '');

export interface CloudInitIsoOptions {
  readonly writer?: IsoWriterChoice;
  /** Migration target: write a zero-filled placeholder of this size instead (GenerateEmptyIso). */
  readonly emptySize?: number;
}

/** GenerateLocalData: writes the seed files and the ISO; returns the ISO path and the writer used. */
export async function generateCloudInitIso(vmi: VirtualMachineInstance, dirs: DiskDirs, data: CloudInitData, opts: CloudInitIsoOptions = {}): Promise<{ iso: string; writer: IsoWriter | undefined }> {
  const name = vmi.metadata?.name ?? '';
  const namespace = vmi.metadata?.namespace ?? '';
  const kind = data.dataSource === 'noCloud' ? 'cloudInitNoCloud' : 'cloudInitConfigDrive';
  const iso = cloudInitIsoPath(dirs, vmi, data.dataSource);
  const fail = (reason: string, cause?: unknown): never => { throw new VolumePreparationError(data.volumeName, kind, reason, { cause }); };
  try {
    await mkdir(cloudInitBase(dirs, namespace, name), { recursive: true });
  } catch (err) {
    fail(`unable to create cloud-init base path ${cloudInitBase(dirs, namespace, name)}: ${errorMessage(err)}`, err);
  }
  if (opts.emptySize !== undefined) {
    await makeEmptyIso(iso, opts.emptySize).catch((err: unknown) => fail(`failed to create empty iso ${iso}: ${errorMessage(err)}`, err));
    return { iso, writer: undefined };
  }
  if (data.userData.length === 0 && data.networkData.length === 0) fail(MESSAGES.cloudInitDataRequired);
  const staging = cloudInitStagingDir(dirs, namespace, name);
  const files = seedFiles(data).map((f) => ({ ...f, abs: join(staging, f.path) }));
  try {
    for (const f of files) {
      await mkdir(join(f.abs, '..'), { recursive: true });
      await rm(f.abs, { force: true });
      await writeFile(f.abs, f.bytes, { mode: 0o600 });
    }
    const label = data.dataSource === 'noCloud' ? ISO_LABELS.noCloud : ISO_LABELS.configDrive;
    const writer = await makeIso({ output: iso, volumeId: label, sourceDir: staging, layout: 'dir', timeoutMs: TIMEOUTS.cloudInitIsoMs, ...(opts.writer ? { writer: opts.writer } : {}) });
    return { iso, writer };
  } catch (err) {
    if (err instanceof VolumePreparationError) throw err;
    return fail(`generating local cloud-init data failed: ${errorMessage(err)}`, err);
  } finally {
    for (const f of files) await rm(f.abs, { force: true }).catch(() => undefined);
  }
}

/** Reads the data and makes the ISO for the VMI's cloud-init volume; undefined if it has none. */
export async function prepareCloudInit(
  vmi: VirtualMachineInstance,
  dirs: DiskDirs,
  opts: { writer?: IsoWriterChoice; devices?: readonly DeviceMetadata[]; emptyIsos?: boolean } = {},
): Promise<PreparedVolume | undefined> {
  const volumes = vmi.spec.volumes ?? [];
  const index = volumes.findIndex((v) => v.cloudInitNoCloud || v.cloudInitConfigDrive);
  if (index < 0) return undefined;
  const volume = volumes[index]!;
  const kind = volume.cloudInitNoCloud ? 'cloudInitNoCloud' : 'cloudInitConfigDrive';
  const problems = cloudInitLimitViolations(volume, index);
  if (problems.length) throw new VolumePreparationError(volume.name, kind, problems.join('; '));
  const data = await readCloudInitData(vmi, dirs, opts.devices);
  if (!data) return undefined;
  let emptySize: number | undefined;
  if (opts.emptyIsos) {
    emptySize = vmi.status?.volumeStatus?.find((s) => s.name === volume.name)?.size;
    if (emptySize === undefined) throw new VolumePreparationError(volume.name, kind, `failed to find the status of volume ${volume.name}`);
  }
  const { iso, writer } = await generateCloudInitIso(vmi, dirs, data, { ...(opts.writer ? { writer: opts.writer } : {}), ...(emptySize !== undefined ? { emptySize } : {}) });
  return {
    name: volume.name, source: kind, type: 'file', path: iso, format: 'raw', readOnly: false, discard: false, created: true,
    ...(writer ? { isoWriter: writer } : {}),
  };
}

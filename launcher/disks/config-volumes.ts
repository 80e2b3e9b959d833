// configMap, secret, downwardAPI, serviceAccount and sysprep volumes used as disks: the directory the
// kubelet mounted for the volume becomes an ISO (pkg/config): every entry of it is grafted at the
// ISO root with symlinks followed, labelled with the volume's `volumeLabel` (default `cfgdata`;
// sysprep `unattendCD`), at `<private>/<kind>-disks/<vol>.iso` (service account:
// `<private>/service-account-disk/service-account.iso`). Only volumes a disk references get an ISO
// (sysprep: every sysprep volume with a configMap or secret).
import { mkdir, readdir } from '../fs/async.ts';
import { dirname } from 'node:path';
import type { VirtualMachineInstance, Volume } from '../../src/api/types.ts';
import { ISO_LABELS, MESSAGES, SYSPREP_ANSWER_FILES, TIMEOUTS } from './constants.ts';
import { VolumePreparationError, errorMessage } from './errors.ts';
import { makeEmptyIso, makeIso, type IsoWriterChoice } from './iso.ts';
import {
  configMapIso, configMapSource, downwardAPIIso, downwardAPISource, secretIso, secretSource, serviceAccountIso, sysprepIso, sysprepSource,
  type DiskDirs,
} from './paths.ts';
import type { PreparedVolume } from './prepared.ts';

export type ConfigVolumeKind = 'configMap' | 'secret' | 'downwardAPI' | 'serviceAccount' | 'sysprep';

export interface ConfigVolumeLayout {
  readonly kind: ConfigVolumeKind;
  /** The mounted directory the ISO is made of. */
  readonly sourceDir: string;
  readonly iso: string;
  readonly label: string;
}

export function configVolumeKind(volume: Volume): ConfigVolumeKind | undefined {
  if (volume.configMap) return 'configMap';
  if (volume.secret) return 'secret';
  if (volume.downwardAPI) return 'downwardAPI';
  if (volume.serviceAccount) return 'serviceAccount';
  if (volume.sysprep) return 'sysprep';
  return undefined;
}

/** Source directory, ISO path and label of a config volume (pure). */
export function configVolumeLayout(dirs: DiskDirs, volume: Volume): ConfigVolumeLayout | undefined {
  const kind = configVolumeKind(volume);
  const label = (l: string | undefined) => l || ISO_LABELS.configDefault;
  switch (kind) {
    case 'configMap': return { kind, sourceDir: configMapSource(dirs, volume.name), iso: configMapIso(dirs, volume.name), label: label(volume.configMap?.volumeLabel) };
    case 'secret': return { kind, sourceDir: secretSource(dirs, volume.name), iso: secretIso(dirs, volume.name), label: label(volume.secret?.volumeLabel) };
    case 'downwardAPI': return { kind, sourceDir: downwardAPISource(dirs, volume.name), iso: downwardAPIIso(dirs, volume.name), label: label(volume.downwardAPI?.volumeLabel) };
    case 'serviceAccount': return { kind, sourceDir: dirs.serviceAccountDir, iso: serviceAccountIso(dirs), label: ISO_LABELS.configDefault };
    case 'sysprep': return { kind, sourceDir: sysprepSource(dirs, volume.name), iso: sysprepIso(dirs, volume.name), label: ISO_LABELS.sysprep };
    default: return undefined;
  }
}

/** Whether KubeVirt makes an ISO for this volume: referenced by a disk; sysprep only with contents. */
export function needsConfigIso(vmi: VirtualMachineInstance, volume: Volume): boolean {
  const kind = configVolumeKind(volume);
  if (!kind) return false;
  if (kind === 'sysprep') return Boolean(volume.sysprep?.configMap || volume.sysprep?.secret);
  return (vmi.spec.domain.devices.disks ?? []).some((d) => d.name === volume.name);
}

export interface ConfigVolumeOptions {
  readonly writer?: IsoWriterChoice;
  /** Migration target: a zero-filled placeholder of this size. */
  readonly emptySize?: number;
}

export async function prepareConfigVolume(volume: Volume, dirs: DiskDirs, opts: ConfigVolumeOptions = {}): Promise<PreparedVolume> {
  const layout = configVolumeLayout(dirs, volume);
  if (!layout) throw new VolumePreparationError(volume.name, 'config', 'not a configMap, secret, downwardAPI, serviceAccount or sysprep volume');
  const fail = (reason: string, cause?: unknown): never => { throw new VolumePreparationError(volume.name, layout.kind, reason, { cause }); };
  let names: string[] = [];
  try {
    names = await readdir(layout.sourceDir);
  } catch (err) {
    fail(layout.kind === 'sysprep'
      ? `Error validating that autounattend.xml or unattend.xml have been provided: ${errorMessage(err)}`
      : `reading the mounted volume ${layout.sourceDir}: ${errorMessage(err)}`, err);
  }
  if (layout.kind === 'sysprep' && !names.some((n) => (SYSPREP_ANSWER_FILES as readonly string[]).includes(n.toLowerCase()))) fail(MESSAGES.sysprepMissingAnswerFile);
  try {
    await mkdir(dirname(layout.iso), { recursive: true });
  } catch (err) {
    fail(`creating ${dirname(layout.iso)}: ${errorMessage(err)}`, err);
  }
  let writer: PreparedVolume['isoWriter'];
  try {
    if (opts.emptySize !== undefined) await makeEmptyIso(layout.iso, opts.emptySize);
    else writer = await makeIso({ output: layout.iso, volumeId: layout.label, sourceDir: layout.sourceDir, layout: 'graft', timeoutMs: TIMEOUTS.configIsoMs, ...(opts.writer ? { writer: opts.writer } : {}) });
  } catch (err) {
    fail(`creating ${layout.iso}: ${errorMessage(err)}`, err);
  }
  return {
    name: volume.name, source: layout.kind, type: 'file', path: layout.iso, format: 'raw', readOnly: false, discard: false, created: true,
    ...(writer ? { isoWriter: writer } : {}),
  };
}

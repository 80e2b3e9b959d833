/**
 * KubeVirt's storage admitter's disk rules (`pkg/storage/admitters/disks.go`): names, one target,
 * PCI addresses, boot order, bus support, serial, cache, IO mode, error policy, block sizes; and
 * `ValidatePath` for the paths a volume or kernel boot names inside a container image.
 */
import { DiskBus } from '../constants.ts';
import { fieldError, FieldErrorType, type FieldError, type FieldPath } from '../field-error.ts';
import type { Disk } from '../types.ts';
import { dns1123LabelErrors, PCI_ADDRESS } from './formats.ts';

const MAX_SERIAL_LEN = 256;
const MIN_CUSTOM_BLOCK_SIZE = 512;
const MAX_CUSTOM_BLOCK_SIZE = 2097152;

/** `storageadmitters.ValidateDisks`. */
export function validateDisks(p: FieldPath, disks: readonly Disk[], out: FieldError[]): void {
  disks.forEach((disk, i) => {
    const dp = p.index(i);
    disks.slice(0, i).forEach((other, j) => {
      if (other.name === disk.name) out.push(fieldError.invalid(dp.child('name'), `${dp} and ${p.index(j)} must not have the same Name.`));
    });
    const targets = [disk.disk, disk.lun, disk.cdrom].filter((x) => x !== undefined).length;
    if (targets > 1) out.push(fieldError.invalid(dp, `${dp} can only have a single target type defined`));
    if (disk.disk?.pciAddress) {
      if (disk.disk.bus !== DiskBus.VirtIO) out.push(fieldError.invalid(dp.child('disk').child('pciAddress'), `disk ${dp.child('name')} - setting a PCI address is only possible with bus type virtio.`));
      if (!PCI_ADDRESS.test(disk.disk.pciAddress)) out.push(fieldError.invalid(dp.child('disk').child('pciAddress'), `disk ${dp.child('name')} has malformed PCI address (${disk.disk.pciAddress}).`));
    }
    if (disk.bootOrder !== undefined && disk.bootOrder < 1) out.push(fieldError.invalid(dp.child('bootOrder'), `${dp} must have a boot order > 0, if supplied`));
    const [type, bus] = disk.disk ? ['disk', disk.disk.bus] : disk.lun ? ['lun', disk.lun.bus] : disk.cdrom ? ['cdrom', disk.cdrom.bus] : ['', undefined];
    if (bus) {
      if (bus === DiskBus.VirtIO && type === 'cdrom') out.push(fieldError.invalid(dp.child('cdrom').child('bus'), `Bus type ${bus} is invalid for CD-ROM device`));
      else if (bus === DiskBus.SATA && disk.disk?.readonly) out.push(fieldError.invalid(dp.child('disk').child('bus'), `${bus} hard-disks do not support read-only.`));
      else if (!(Object.values(DiskBus) as string[]).includes(bus)) {
        out.push(fieldError.invalid(dp.child(type).child('bus'), `${dp} is set with an unrecognized bus ${bus}, must be one of: [virtio scsi sata usb]`));
      }
      if (disk.dedicatedIOThread && bus !== DiskBus.VirtIO) {
        out.push({ field: dp.toString(), type: FieldErrorType.NotSupported, reason: `IOThreads are not supported for disks on a ${bus} bus` });
      }
    }
    if (disk.serial) {
      if (!/^[A-Za-z0-9_.+-]+$/.test(disk.serial)) out.push(fieldError.invalid(dp.child('serial'), `${dp} must be made up of the following characters [A-Za-z0-9_.+-], if specified`));
      if ([...disk.serial].length > MAX_SERIAL_LEN) out.push(fieldError.invalid(dp.child('serial'), `${dp} must be less than or equal to ${MAX_SERIAL_LEN} in length, if specified`));
    }
    if (disk.cache && !['none', 'writethrough', 'writeback'].includes(disk.cache)) out.push(fieldError.invalid(dp.child('cache'), `${dp.child('cache')} has invalid value ${disk.cache}`));
    if (disk.io && disk.io !== 'native' && disk.io !== 'threads') {
      out.push({ field: dp.child('io').toString(), type: FieldErrorType.NotSupported, reason: `Disk IO mode for ${p} is not supported. Supported modes are: native, threads.` });
    }
    if (disk.errorPolicy && !['stop', 'ignore', 'report', 'enospace'].includes(disk.errorPolicy)) {
      out.push(fieldError.invalid(dp.child('errorPolicy'), `${dp.child('errorPolicy')} has invalid value "${disk.errorPolicy}"`));
    }
    for (const msg of dns1123LabelErrors(disk.name)) out.push(fieldError.invalid(dp.child('name'), msg));
    const bs = disk.blockSize;
    if (bs?.custom) {
      const bp = dp.child('blockSize');
      if (bs.matchVolume && bs.matchVolume.enabled !== false) out.push(fieldError.invalid(bp, "Block size matching can't be enabled together with a custom value"));
      else {
        const { logical = 0, physical = 0, discardGranularity } = bs.custom;
        const cp = bp.child('custom');
        if (logical > physical) out.push(fieldError.invalid(cp.child('logical'), `Logical size ${logical} must be the same or less than the physical size of ${physical}`));
        else if (bus === DiskBus.SATA && logical !== MIN_CUSTOM_BLOCK_SIZE) out.push(fieldError.invalid(cp.child('logical'), `Logical size ${logical} must be ${MIN_CUSTOM_BLOCK_SIZE} for SATA devices`));
        else if (discardGranularity !== undefined && logical !== 0 && discardGranularity % logical !== 0) {
          out.push(fieldError.invalid(cp.child('discardGranularity'), `Discard granularity ${discardGranularity} must be multiples of logical size ${logical}`));
        } else {
          for (const [k, size] of [['logical', logical], ['physical', physical]] as const) {
            if (size < MIN_CUSTOM_BLOCK_SIZE) out.push(fieldError.invalid(cp.child(k), `Provided size of ${size} is less than the supported minimum size of ${MIN_CUSTOM_BLOCK_SIZE}`));
            else if (size > MAX_CUSTOM_BLOCK_SIZE) out.push(fieldError.invalid(cp.child(k), `Provided size of ${size} is greater than the supported maximum size of ${MAX_CUSTOM_BLOCK_SIZE}`));
            else if ((size & (size - 1)) !== 0) out.push(fieldError.invalid(cp.child(k), `Provided size of ${size} is not a power of 2`));
          }
        }
      }
    }
  });
}

/** `ValidatePath`: `filepath.Join("/", p) == strings.TrimSuffix(p, "/")`: absolute, no `.`/`..`/`//` components. */
export function validatePath(path: FieldPath, p: string): FieldError[] {
  if (p === '/') return [fieldError.invalid(path, `${path} must not point to root`)];
  const trimmed = p.replace(/\/+$/, '');
  const segs = trimmed.split('/');
  const clean = p.startsWith('/') && segs.slice(1).every((s) => s !== '' && s !== '.' && s !== '..');
  return clean ? [] : [fieldError.invalid(path, `${path} must be an absolute path to a file without relative components`)];
}

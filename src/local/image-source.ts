// What a path given to `qvirt image import` is: an OCI layout directory, a skopeo `dir:` directory,
// an OCI archive (`skopeo copy ... oci-archive:x.tar`, `podman save --format oci-archive`), a
// `docker save` archive (`docker-archive:`; gzip-compressed too), or a bare disk image (qcow2 and
// the other formats QEMU reads by their header, or raw). The decision is pure (`classifyFile`) over
// the file's first bytes, its size and, for a tar, its member names.

export type ImageSource =
  | { readonly kind: 'oci-layout' | 'dir' | 'oci-archive' | 'docker-archive'; readonly transport: string }
  | { readonly kind: 'disk'; readonly format: string };

/** How many bytes of a file `classifyFile` wants to see (ISO 9660's descriptor is at 32 KiB). */
export const HEAD_BYTES = 34 * 1024;

const at = (b: Buffer, off: number, s: string) => b.length >= off + s.length && b.toString('latin1', off, off + s.length) === s;

/** Disk image formats QEMU recognizes by their header. */
const DISK_MAGIC: ReadonlyArray<[string, number, string]> = [
  ['qcow2', 0, 'QFI\xfb'],
  ['vmdk', 0, 'KDMV'],
  ['vhdx', 0, 'vhdxfile'],
  ['vdi', 64, '\x7f\x10\xda\xbe'],
  ['vpc', 0, 'conectix'],
  ['qed', 0, 'QED\0'],
];

/** Headers of files that are not disk images, and what to say about them. */
const NOT_DISK: ReadonlyArray<[number, string, string]> = [
  [0, '\x1f\x8b', 'a gzip-compressed file (decompress it first, or give a gzip-compressed docker save archive)'],
  [0, '\xfd7zXZ\0', 'an xz-compressed file (decompress it first)'],
  [0, '\x28\xb5\x2f\xfd', 'a zstd-compressed file (decompress it first)'],
  [0, 'BZh', 'a bzip2-compressed file (decompress it first)'],
  [0, 'PK\x03\x04', 'a zip archive'],
  [0, '\x7fELF', 'an ELF executable'],
];

/** Raw disks: a partition table, a filesystem or an ISO 9660 image at the start. */
function rawSignature(head: Buffer): string | undefined {
  if (at(head, 510, '\x55\xaa')) return 'partition table / boot sector';
  if (at(head, 512, 'EFI PART')) return 'GPT';
  if (at(head, 32769, 'CD001')) return 'ISO 9660';
  if (at(head, 1080, '\x53\xef')) return 'ext2/3/4';
  if (at(head, 0, 'XFSB')) return 'XFS';
  if (at(head, 3, 'NTFS') || at(head, 82, 'FAT32') || at(head, 54, 'FAT')) return 'FAT/NTFS';
  return undefined;
}

const isTar = (head: Buffer) => at(head, 257, 'ustar');

/** Mostly printable text (a manifest, a script, a README given by mistake). */
function looksLikeText(head: Buffer): boolean {
  const n = Math.min(head.length, 4096);
  if (n === 0) return true;
  let printable = 0;
  for (let i = 0; i < n; i++) {
    const c = head[i]!;
    if (c === 9 || c === 10 || c === 13 || (c >= 32 && c < 127)) printable++;
  }
  return printable / n > 0.95;
}

/** A directory: which layout it holds, from the names of its entries. */
export function classifyDir(path: string, names: readonly string[]): ImageSource {
  if (names.includes('oci-layout') && names.includes('index.json')) return { kind: 'oci-layout', transport: `oci:${path}` };
  if (names.includes('manifest.json') && names.includes('version')) return { kind: 'dir', transport: `dir:${path}` };
  throw new Error(`${path} is a directory but neither an OCI image layout (oci-layout, index.json) nor a skopeo dir: image (manifest.json, version)`);
}

/**
 * A file: `members` lists a tar's member names (asked for only when the file is a tar or gzip:
 * `docker save | gzip`). Throws with the reason when the file is none of the things we import.
 */
export function classifyFile(path: string, head: Buffer, size: number, members?: readonly string[]): ImageSource {
  for (const [format, off, magic] of DISK_MAGIC) if (at(head, off, magic)) return { kind: 'disk', format };
  if (isTar(head) || (at(head, 0, '\x1f\x8b') && members)) {
    const names = (members ?? []).map((m) => m.replace(/^\.\//, '').replace(/\/$/, ''));
    if (names.includes('oci-layout') && names.includes('index.json')) return { kind: 'oci-archive', transport: `oci-archive:${path}` };
    if (names.includes('manifest.json') || names.includes('repositories')) return { kind: 'docker-archive', transport: `docker-archive:${path}` };
    if (isTar(head)) throw new Error(`${path} is a tar archive but neither an OCI archive (oci-layout, index.json) nor a docker save archive (manifest.json): a container-disk image is imported as such an archive, a disk as the bare qcow2 or raw file`);
  }
  for (const [off, magic, what] of NOT_DISK) if (at(head, off, magic)) throw new Error(`${path} is not a disk image: it is ${what}`);
  if (size === 0) throw new Error(`${path} is not a disk image: it is empty`);
  if (rawSignature(head)) return { kind: 'disk', format: 'raw' };
  if (looksLikeText(head)) throw new Error(`${path} is not a disk image: it is a text file`);
  if (size % 512 !== 0) throw new Error(`${path} is not a disk image: not qcow2 (or another format QEMU recognizes) and its size (${size} bytes) is not a whole number of 512-byte sectors, as a raw disk's is`);
  return { kind: 'disk', format: 'raw' };
}

// The container images qvirt ships and how the manifests name them. `npm run images`
// (scripts/images.ts) builds them as OCI archives tagged by content hash and records the
// references it produced in dist/images/images.json; `qvirt install` and the kustomize overlay it
// writes pin those tags. Without a build, manifests carry DEFAULT_TAG.

/** The two images: the per-VM launcher (QEMU, firmware, node, launcher bundle) and the components'. */
export const ImageNames = {
  /** virt-launcher's counterpart: the compute, guest-console-log and container-disk-binary containers. */
  Launcher: 'qvirt/launcher',
  /** virt-controller and virt-handler: `qvirt controller`, `qvirt handler`. */
  Virt: 'qvirt/virt',
} as const;
export type ImageName = (typeof ImageNames)[keyof typeof ImageNames];

/** The tag the checked-in manifests use; `qvirt install` replaces it with the built content-hash tag. */
export const DEFAULT_TAG = 'latest';

/** Image references by image name (`qvirt/launcher` → `qvirt/launcher:3f2a…`). */
export type ImageRefs = Readonly<Record<ImageName, string>>;

export const defaultImageRefs: ImageRefs = {
  [ImageNames.Launcher]: `${ImageNames.Launcher}:${DEFAULT_TAG}`,
  [ImageNames.Virt]: `${ImageNames.Virt}:${DEFAULT_TAG}`,
};

/** Where `npm run images` writes its archives and `images.json`, relative to the repository. */
export const IMAGES_OUT_DIR = 'dist/images';
export const IMAGES_INDEX_FILE = 'images.json';

/** What dist/images/images.json holds for each image. */
export interface BuiltImage {
  readonly name: ImageName;
  readonly ref: string;
  readonly archive: string;
  /** Compressed (archive) and uncompressed (root filesystem) sizes in bytes. */
  readonly compressedBytes: number;
  readonly uncompressedBytes: number;
  readonly manifestDigest: string;
}

/** Parses images.json; names the field that is wrong. */
export function parseBuiltImages(input: unknown): BuiltImage[] {
  if (!Array.isArray(input)) throw new Error(`${IMAGES_INDEX_FILE}: expected an array of images`);
  return input.map((x: unknown, i) => {
    const o = x as Partial<BuiltImage> | null;
    const at = `${IMAGES_INDEX_FILE}[${i}]`;
    if (!o || typeof o !== 'object') throw new Error(`${at}: expected an object`);
    if (o.name !== ImageNames.Launcher && o.name !== ImageNames.Virt) throw new Error(`${at}.name: unknown image ${JSON.stringify(o.name)}`);
    if (typeof o.ref !== 'string' || !o.ref.startsWith(`${o.name}:`)) throw new Error(`${at}.ref: expected "${o.name}:<tag>", got ${JSON.stringify(o.ref)}`);
    for (const k of ['archive', 'manifestDigest'] as const) if (typeof o[k] !== 'string') throw new Error(`${at}.${k}: expected a string`);
    for (const k of ['compressedBytes', 'uncompressedBytes'] as const) if (typeof o[k] !== 'number') throw new Error(`${at}.${k}: expected a number`);
    return o as BuiltImage;
  });
}

/** Image references from built images, falling back to the defaults for images not built. */
export function imageRefsFrom(built: readonly BuiltImage[]): ImageRefs {
  const refs: Record<string, string> = { ...defaultImageRefs };
  for (const b of built) refs[b.name] = b.ref;
  return refs as ImageRefs;
}

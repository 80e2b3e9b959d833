// `npm run images`: builds qvirt's container images without a container engine and writes OCI
// archives to dist/images (ctr images import / k3s ctr images import / podman load), tagged by
// content hash, plus dist/images/images.json. See scripts/images/*.ts.
//   node scripts/images.ts [--only qvirt/launcher|qvirt/virt]
import { buildImages, ALL_IMAGES } from './images/build.ts';
import type { ImageName } from '../src/deploy/images.ts';

const args = process.argv.slice(2);
let only: ImageName[] | undefined;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--only') {
    const v = args[++i];
    if (!ALL_IMAGES.includes(v as ImageName)) { process.stderr.write(`images: --only: expected one of ${ALL_IMAGES.join(', ')}, got ${JSON.stringify(v)}\n`); process.exit(2); }
    (only ??= []).push(v as ImageName);
  } else { process.stderr.write(`images: unknown argument ${args[i]} (usage: node scripts/images.ts [--only IMAGE]...)\n`); process.exit(2); }
}
const built = await buildImages({ ...(only ? { only } : {}) });
for (const b of built) process.stdout.write(`${b.ref}\t${b.archive}\t${(b.compressedBytes / 2 ** 20).toFixed(1)} MiB compressed\t${(b.uncompressedBytes / 2 ** 20).toFixed(1)} MiB unpacked\n`);

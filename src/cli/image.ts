// `qvirt image import NAME FILE` / `qvirt image list` / `qvirt image rm NAME`: the local image store
// that stands in for a container registry on machines without one. An imported disk becomes a
// containerDisk image (`spec.volumes[].containerDisk.image: NAME`).
import { stat } from 'node:fs/promises';
import { parseFlags, usage, UsageError } from './flags.ts';
import { ImageStore } from '../local/image-store.ts';
import { initialProgress, mib, renderProgress } from './progress.ts';

const specs = {
  'image-store': { type: 'string', value: 'DIR', help: 'the local image store (default: QVIRT_IMAGE_STORE, /var/lib/qvirt/images as root)' },
} as const;

function progressBar(total: number): (done: number) => void {
  const tty = process.stderr.isTTY === true;
  let state = initialProgress;
  return (done) => {
    const r = renderProgress(state, done, total, tty);
    state = r.state;
    if (r.text) process.stderr.write(r.text);
  };
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  const [verb, ...rest] = args;
  if (help || !verb) {
    process.stdout.write(usage('qvirt image import NAME FILE | list | rm NAME', 'Manage the local image store (container disks for machines without a registry).', specs));
    return help ? 0 : 2;
  }
  const store = new ImageStore(flags['image-store']);
  switch (verb) {
    case 'import': {
      const [name, file] = rest;
      if (!name || !file || rest.length !== 2) throw new UsageError('usage: qvirt image import NAME FILE');
      const st = await stat(file).catch(() => undefined);
      if (!st?.isFile()) { process.stderr.write(`error: ${file} is not a readable file\n`); return 1; }
      const info = await store.importDisk(name, file, progressBar(st.size));
      process.stdout.write(`imported ${info.ref} (${mib(info.sizeBytes)}) into ${store.root}\n`);
      return 0;
    }
    case 'list': {
      const images = await store.list();
      process.stdout.write(`${'IMAGE'.padEnd(60)} ${'SIZE'.padStart(12)}  IMPORTED\n`);
      for (const i of images) process.stdout.write(`${i.ref.padEnd(60)} ${mib(i.sizeBytes).padStart(12)}  ${i.importedAt}\n`);
      return 0;
    }
    case 'rm': {
      const [name] = rest;
      if (!name) throw new UsageError('usage: qvirt image rm NAME');
      if (!(await store.remove(name))) { process.stderr.write(`error: no image ${name} in ${store.root}\n`); return 1; }
      process.stdout.write(`removed ${name}\n`);
      return 0;
    }
    default:
      throw new UsageError(`unknown verb "${verb}": import, list or rm`);
  }
}

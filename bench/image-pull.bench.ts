// Pull of a 200 MiB container disk from a registry on loopback (Debian's docker-registry, TLS and
// basic auth, test/lib/registry.ts) into the local image store — skopeo's transfer into a scratch
// dir: layout, the layer unpacked into the image's root, renamed into place — beside `skopeo copy`
// of the same image to a directory in the same run (the transfer alone, digests verified). The disk
// is half random, half zeros per MiB (gzip'd layer ≈ 100 MiB), as a used qcow2 roughly is.
// Median of RUNS alternating runs (default 3, QVIRT_BENCH_RUNS overrides); target ≤ 1.2×.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ImageStore } from '../src/local/image-store.ts';
import { pullImage } from '../src/local/image-pull.ts';
import { buildOciLayout } from '../test/lib/oci-image.ts';
import { startRegistry } from '../test/lib/registry.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { median, report, saveResults } from './lib.ts';

const RUNS = Number(process.env.QVIRT_BENCH_RUNS ?? 3);
const MIB = 200;
const run = promisify(execFile);

const work = tempDir('qpb');
const reg = await startRegistry(join(work.path, 'registry'));
try {
  const disk = join(work.path, 'disk.img');
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(disk).on('error', reject).on('finish', resolve);
    for (let i = 0; i < MIB; i++) out.write(Buffer.concat([randomBytes(512 * 1024), Buffer.alloc(512 * 1024)]));
    out.end();
  });
  const layout = join(work.path, 'layout');
  await buildOciLayout(layout, [[{ path: '/disk/disk.img', src: disk }]], 'v1');
  rmSync(disk);
  await reg.push(`oci:${layout}:v1`, 'bench/disk:v1');
  rmSync(layout, { recursive: true, force: true });
  const ref = `${reg.host}/bench/disk:v1`;
  const store = new ImageStore(join(work.path, 'store'));
  const credentials = [{ key: reg.host, secret: 'bench', username: reg.user, password: reg.password }];

  const skopeoMs: number[] = [];
  const pullMs: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const dest = join(work.path, `copy-${i}`);
    let t0 = performance.now();
    await run('skopeo', ['--insecure-policy', 'copy', '-q', '--src-creds', `${reg.user}:${reg.password}`, '--src-cert-dir', join(reg.certsDir, reg.host), `docker://${ref}`, `dir:${dest}`]);
    const s = performance.now() - t0;
    rmSync(dest, { recursive: true, force: true });
    await store.remove(ref);
    t0 = performance.now();
    const info = await pullImage(store, ref, { credentials, registries: { certsDir: reg.certsDir } });
    const p = performance.now() - t0;
    if (info.sizeBytes !== MIB * 1048576) throw new Error(`pulled ${info.sizeBytes} bytes, not ${MIB} MiB`);
    // The first round warms the registry's and the page cache; it is not counted.
    if (i > 0) { skopeoMs.push(s); pullMs.push(p); }
  }
  report({
    name: `pull of a ${MIB} MiB container disk into the store`,
    value: median(pullMs), unit: 'ms',
    baseline: median(skopeoMs), baselineName: 'skopeo copy to a dir',
    target: { maxRatio: 1.2 },
    details: { runs: RUNS, pullMs: pullMs.map((x) => Math.round(x)).join(' '), skopeoMs: skopeoMs.map((x) => Math.round(x)).join(' ') },
  });
  process.exitCode = saveResults('image-pull') ? 0 : 2;
} finally {
  await reg.stop();
  work.cleanup();
}

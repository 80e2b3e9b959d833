// DataVolume http import, beside the same work done by hand in the same run on the same machine:
//  figure:   a DataVolume (http source, a ~200 MiB qcow2 served on loopback) created → Succeeded, in
//            the local mode: claim created and bound, download, qemu-img convert to raw, renamed
//            into the claim's disk.img, status written. Median of 5.
//  baseline: `curl -o file URL && qemu-img convert -f qcow2 -O raw file disk.img`. Median of 5.
// Target ≤ 1.2× the baseline.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalMode } from '../src/local/up.ts';
import { Resources } from '../src/kube/resource.ts';
import { componentLogger } from '../src/log/logger.ts';
import type { DataVolume } from '../src/api/cdi/types.ts';
import type { KubeObject } from '../src/kube/client.ts';
import { median, report, saveResults, timeMs } from './lib.ts';

const RUNS = 5;
const SIZE_MIB = 200;
const work = mkdtempSync('/tmp/qvdvb-');
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A qcow2 of ~200 MiB of data (random: nothing for the transfer to skip).
const files = join(work, 'files');
mkdirSync(files);
execFileSync('sh', ['-c', `head -c ${SIZE_MIB}M /dev/urandom > disk.raw && qemu-img convert -f raw -O qcow2 disk.raw disk.qcow2 && rm disk.raw`], { cwd: files });
// The server in a process of its own, as curl is: not sharing the importer's event loop.
const server = spawn(process.execPath, [join(import.meta.dirname, '../test/lib/image-server-process.ts'), files], { stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => server.kill('SIGKILL'));
const [first] = await once(server.stdout!, 'data') as [Buffer];
const url = `${(JSON.parse(first.toString().split('\n')[0]!) as { httpUrl: string }).httpUrl}/disk.qcow2`;

async function baselineOnce(i: number): Promise<number> {
  const dir = join(work, `bare-${i}`);
  mkdirSync(dir);
  const ms = await timeMs(async () => {
    // Async: the image server runs in this process.
    await promisify(execFile)('curl', ['-sSf', '-o', join(dir, 'disk.qcow2'), url]);
    await promisify(execFile)('qemu-img', ['convert', '-f', 'qcow2', '-O', 'raw', join(dir, 'disk.qcow2'), join(dir, 'disk.img')]);
  });
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

const log = componentLogger('bench', { level: (process.env.QVIRT_LOG_LEVEL as 'error' | undefined) ?? 'error' });
const local = await startLocalMode({ dataDir: join(work, 'data'), port: 0, emulation: true, log, podNetwork: false });
async function importOnce(i: number): Promise<number> {
  const name = `bench-${i}`;
  const dv = { apiVersion: 'cdi.kubevirt.io/v1beta1', kind: 'DataVolume', metadata: { name, namespace: 'default' }, spec: { source: { http: { url } }, storage: { resources: { requests: { storage: `${SIZE_MIB + 16}Mi` } } } } };
  const ms = await timeMs(async () => {
    await local.client.create(Resources.dataVolumes, dv as never);
    for (;;) {
      const cur = await local.client.get<DataVolume & KubeObject>(Resources.dataVolumes, 'default', name);
      if (cur.status?.phase === 'Succeeded') return;
      if (cur.status?.phase === 'Failed') throw new Error(`import failed: ${JSON.stringify(cur.status)}`);
      await sleep(20);
    }
  });
  await local.client.delete(Resources.dataVolumes, 'default', name);
  return ms;
}

const base: number[] = [];
const fig: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    base.push(await baselineOnce(i));
    fig.push(await importOnce(i));
  }
} finally {
  await local.stop();
  server.kill('SIGTERM');
}
report({
  name: `DataVolume http import of a ${SIZE_MIB} MiB qcow2`,
  value: median(fig),
  unit: 'ms',
  baseline: median(base),
  baselineName: 'curl + qemu-img convert',
  target: { maxRatio: 1.2 },
  details: { runs: RUNS, min: Math.min(...fig), max: Math.max(...fig), baselineMin: Math.min(...base), baselineMax: Math.max(...base) },
});
process.exit(saveResults('datavolume-import') ? 0 : 2);

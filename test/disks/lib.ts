// Test helpers for disk images: read ISOs back with independent tools (xorriso, blkid, qemu-img).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

/** Every regular file of an ISO, path → bytes, extracted by xorriso reading the given tree. */
export function readIso(iso: string, tree: 'any' | 'norock' = 'any'): Map<string, Buffer> {
  const out = mkdtempSync('/tmp/qv-isox-');
  try {
    execFileSync('xorriso', ['-read_fs', tree, '-indev', iso, '-osirrox', 'on', '-extract', '/', out], { stdio: ['ignore', 'ignore', 'pipe'] });
    const files = new Map<string, Buffer>();
    const walk = (dir: string, rel: string) => {
      for (const n of readdirSync(dir).sort()) {
        const p = join(dir, n);
        const r = rel ? `${rel}/${n}` : n;
        if (statSync(p).isDirectory()) walk(p, r);
        else files.set(r, readFileSync(p));
      }
    };
    walk(out, '');
    return files;
  } finally {
    execFileSync('chmod', ['-R', 'u+rwx', out]);
    rmSync(out, { recursive: true, force: true });
  }
}

/** `blkid` LABEL and TYPE of an image. */
export function blkid(path: string): { label: string; type: string } {
  const label = execFileSync('blkid', ['-o', 'value', '-s', 'LABEL', path], { encoding: 'utf8' }).trim();
  const type = execFileSync('blkid', ['-o', 'value', '-s', 'TYPE', path], { encoding: 'utf8' }).trim();
  return { label, type };
}

export interface ChainLink { filename: string; format: string; 'virtual-size': number; 'backing-filename'?: string; 'backing-filename-format'?: string; 'full-backing-filename'?: string }

/** `qemu-img info --backing-chain --output=json`. */
export function backingChain(path: string): ChainLink[] {
  return JSON.parse(execFileSync('qemu-img', ['info', '--backing-chain', '--output=json', path], { encoding: 'utf8' })) as ChainLink[];
}

export function qemuImg(...args: string[]): string {
  return execFileSync('qemu-img', args, { encoding: 'utf8' });
}

/** A minimal VMI in wire form. */
export function vmiWith(spec: Partial<VirtualMachineInstance['spec']> & Pick<VirtualMachineInstance['spec'], 'volumes'>, meta: { name?: string; namespace?: string; uid?: string; annotations?: Record<string, string> } = {}): VirtualMachineInstance {
  const volumes = spec.volumes ?? [];
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: meta.name ?? 'testvmi', namespace: meta.namespace ?? 'default', uid: meta.uid ?? '1234-uid', ...(meta.annotations ? { annotations: meta.annotations } : {}) },
    spec: {
      ...spec,
      domain: spec.domain ?? {
        firmware: { uuid: '5d307ca9-b3ef-428c-8861-06e72d69f223' },
        devices: { disks: volumes.map((v) => ({ name: v.name, disk: { bus: 'virtio' } })) },
      },
      volumes,
    },
  };
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function failure(p: Promise<unknown>): Promise<Error> {
  let value: unknown;
  try {
    value = await p;
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`rejected with a non-Error: ${String(err)}`);
  }
  throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
}

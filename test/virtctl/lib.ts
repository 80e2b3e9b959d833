// A local mode for the virtctl verb tests, and the verbs run as a user runs them: `bin/qvirt VERB`
// as a subprocess with the local mode's kubeconfig.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importTestGuest } from '../../src/local/guest/guest.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startLocalMode, type LocalMode, type LocalModeOptions } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { isNotFound } from '../../src/kube/client.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';
import type { VirtualMachine, VirtualMachineInstance } from '../../src/api/types.ts';

export const QVIRT = fileURLToPath(new URL('../../bin/qvirt', import.meta.url));
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Env {
  readonly local: LocalMode;
  readonly podsDir: string;
  /** `qvirt ARGS...` with the local mode's kubeconfig; never throws. */
  qvirt(...args: string[]): Promise<{ code: number; out: string; err: string }>;
  stop(): Promise<void>;
}

/** A local mode in a temporary directory; `extra` adds local-mode options (a pod network...). */
export async function startEnv(prefix: string, extra: Partial<Pick<LocalModeOptions, 'podNetwork' | 'clusterConfig'>> = {}): Promise<Env> {
  const t = tempDir(prefix);
  const store = new ImageStore(join(t.path, 'store'));
  await importTestGuest(store);
  const local = await startLocalMode({ dataDir: join(t.path, 'data'), port: 0, emulation: 'auto', imageStore: store, log: componentLogger('test', { level: 'error' }), ...extra });
  const env = { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: local.kubeconfig, QVIRT_RUNTIME_DIR: join(t.path, 'run'), QVIRT_LOG_LEVEL: 'warn' };
  return {
    local,
    podsDir: join(t.path, 'data', 'pods'),
    qvirt: (...args) => new Promise((resolve) => {
      execFile(QVIRT, args, { env, timeout: 60_000 }, (err, out, errOut) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: String(out), err: String(errOut) });
      });
    }),
    stop: async () => {
      try { await local.stop(); } finally { t.cleanup(); }
    },
  };
}

/** Polls `fn` until it returns something truthy (or `timeoutMs` passes: then it throws, naming `what`). */
export async function eventually<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, what: string, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) { last = err; }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(intervalMs);
  }
}

export async function getVmi(env: Env, name: string, ns = 'default'): Promise<VirtualMachineInstance | undefined> {
  try {
    return await env.local.client.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, ns, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function getVm(env: Env, name: string, ns = 'default'): Promise<VirtualMachine> {
  return env.local.client.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, ns, name);
}

/** Waits for the VMI to be Running with a new UID (not one of `notUids`). */
export function runningVmi(env: Env, name: string, notUids: readonly string[] = [], timeoutMs = 120_000): Promise<VirtualMachineInstance> {
  return eventually(async () => {
    const v = await getVmi(env, name);
    return v?.status?.phase === 'Running' && !notUids.includes(v.metadata!.uid!) ? v : undefined;
  }, timeoutMs, `VMI ${name} Running${notUids.length ? ` with a new uid (not ${notUids.join(', ')})` : ''}`);
}

/** The guest's serial console log, kept in the launcher pod's private emptyDir. */
export function serialLog(env: Env, uid: string): string {
  for (const pod of existsSync(env.podsDir) ? readdirSync(env.podsDir) : []) {
    const f = join(env.podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', uid, 'virt-serial0-log');
    if (existsSync(f)) return readFileSync(f, 'utf8');
  }
  return '';
}

export function waitForSerial(env: Env, uid: string, marker: string | RegExp, timeoutMs = 120_000): Promise<string> {
  return eventually(() => {
    const text = serialLog(env, uid);
    return (typeof marker === 'string' ? text.includes(marker) : marker.test(text)) ? text : undefined;
  }, timeoutMs, `${marker} on the serial console of VMI ${uid}`);
}

/** A VM of the test guest with the given run strategy. */
export function testVm(name: string, runStrategy: string, extra: Record<string, unknown> = {}): VirtualMachine {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: 'default' },
    spec: {
      runStrategy,
      template: {
        metadata: { labels: { 'kubevirt.io/vm': name } },
        spec: {
          terminationGracePeriodSeconds: 20,
          domain: {
            firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests', container: { image: 'qvirt/test-guest:latest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
            devices: {},
            resources: { requests: { memory: '192Mi' } },
          },
          ...extra,
        },
      },
    },
  } as unknown as VirtualMachine;
}

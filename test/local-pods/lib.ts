// Harness: the embedded API server (plain HTTP), a client, a node object, and temp dirs for the
// runner's pods, short roots and image store; everything torn down by close().
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { componentLogger, type Logger } from '../../src/log/logger.ts';
import { kubeConfigForServer } from '../../src/kube/kubeconfig.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Pod } from '../../src/local/pod-runner/pod.ts';

export const log: Logger = componentLogger('local-pods-test', { level: (process.env.QVIRT_LOG_LEVEL as 'warn' | undefined) ?? 'warn' });

export interface Env {
  api: ApiServer;
  client: KubeClient;
  dir: string;
  podsDir: string;
  rootsDir: string;
  close(): Promise<void>;
}

export async function startEnv(): Promise<Env> {
  const t = tempDir('qlp');
  const api = await startApiServer({ tls: false, log });
  const client = new KubeClient(kubeConfigForServer(api.url));
  return {
    api, client, dir: t.path, podsDir: `${t.path}/pods`, rootsDir: `${t.path}/r`,
    close: async () => { await client.close(); await api.stop(); t.cleanup(); },
  };
}

export async function waitFor<T>(what: string, f: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await f();
      if (v) return v;
    } catch (err) { last = err; }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export const getPod = (c: KubeClient, name: string, ns = 'default') => c.get<Pod>(Resources.pods, ns, name);

export function pidAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch { return false; }
}

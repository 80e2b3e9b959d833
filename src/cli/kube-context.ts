// Which cluster and namespace a cluster verb talks to, as virtctl and kubectl decide it:
// --kubeconfig, then $KUBECONFIG, then the kubeconfig of a running `qvirt local up`, then
// ~/.kube/config (then the in-cluster service account); --namespace/-n, then the current
// context's namespace, then "default". The choice is a pure function; `connect` is its shell.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../kube/client.ts';
import { credentialsFrom, kubeconfigEnvSource, type KubeconfigCredentials } from '../kube/kubeconfig.ts';
import type { ClusterAccess } from '../kube/handler-endpoint.ts';
import { readLiveLocalUpRecord } from '../local/local-up-record.ts';
import { UserError } from '../kube/user-error.ts';

/** The flags every cluster verb takes (spread into its flag specs). */
export const clusterFlags = {
  kubeconfig: { type: 'string', value: 'FILE', help: 'the kubeconfig to use (default: $KUBECONFIG, a running `qvirt local up`, ~/.kube/config)' },
  namespace: { type: 'string', short: 'n', value: 'NS', help: 'the namespace (default: the kubeconfig context\'s, else "default")' },
} as const;

export type KubeconfigSource =
  | { readonly from: 'flag' | 'env' | 'local-up' | 'home'; readonly path: string }
  | { readonly from: 'in-cluster' };

export interface KubeconfigInputs {
  readonly flag?: string | undefined;
  /** $KUBECONFIG (may list several files, separated by ':'). */
  readonly env?: string | undefined;
  /** The kubeconfig of a running `qvirt local up` (a stale record is already dropped). */
  readonly localUp?: string | undefined;
  readonly homeConfig: string;
  readonly homeConfigExists: boolean;
  readonly inCluster: boolean;
}

/** The kubeconfig to load, in kubectl's order with the local mode between $KUBECONFIG and ~/.kube/config. */
export function chooseKubeconfig(i: KubeconfigInputs): KubeconfigSource | undefined {
  if (i.flag) return { from: 'flag', path: i.flag };
  if (i.env) return { from: 'env', path: i.env };
  if (i.localUp) return { from: 'local-up', path: i.localUp };
  if (i.homeConfigExists) return { from: 'home', path: i.homeConfig };
  if (i.inCluster) return { from: 'in-cluster' };
  return undefined;
}

/** --namespace, else the current context's namespace, else "default". */
export function chooseNamespace(flag: string | undefined, contextNamespace: string | undefined): string {
  return flag || contextNamespace || 'default';
}

/** The cluster a verb works on: its access, and where the kubeconfig came from. */
export interface ClusterContext extends ClusterAccess {
  readonly source: KubeconfigSource;
}

export function loadKubeconfigFrom(source: KubeconfigSource): KubeconfigCredentials {
  try {
    if (source.from === 'in-cluster') return credentialsFrom({ kind: 'in-cluster' });
    // $KUBECONFIG may name several files, merged as kubectl merges them.
    if (source.from === 'env') return credentialsFrom(kubeconfigEnvSource(source.path) ?? { kind: 'file', path: source.path });
    if (!existsSync(source.path)) throw new Error(`no such file: ${source.path}`);
    return credentialsFrom({ kind: 'file', path: source.path });
  } catch (err) {
    const where = source.from === 'in-cluster' ? 'the in-cluster service account' : `${source.path} (${describeSource(source)})`;
    throw new UserError(`cannot load the kubeconfig ${where}: ${(err as Error).message}${/current-context|contexts/.test((err as Error).message) ? '; set one with \'kubectl config use-context\'' : ''}`);
  }
}

export function describeSource(s: KubeconfigSource): string {
  switch (s.from) {
    case 'flag': return 'from --kubeconfig';
    case 'env': return 'from $KUBECONFIG';
    case 'local-up': return 'of the running `qvirt local up`';
    case 'home': return 'the default ~/.kube/config';
    case 'in-cluster': return 'the in-cluster service account';
  }
}

/** Runs a cluster verb with its context (see `connect`) and closes the client however it ends. */
export async function withCluster<T>(flags: { kubeconfig?: string | undefined; namespace?: string | undefined }, fn: (ctx: ClusterContext) => Promise<T>): Promise<T> {
  const ctx = connect(flags);
  try {
    return await fn(ctx);
  } finally {
    await ctx.client.close();
  }
}

/** Resolves the kubeconfig and namespace for a cluster verb and makes its client. */
export function connect(flags: { kubeconfig?: string | undefined; namespace?: string | undefined }): ClusterContext {
  const homeConfig = join(homedir(), '.kube', 'config');
  const source = chooseKubeconfig({
    flag: flags.kubeconfig,
    env: process.env.KUBECONFIG,
    localUp: flags.kubeconfig || process.env.KUBECONFIG ? undefined : readLiveLocalUpRecord()?.kubeconfig,
    homeConfig,
    homeConfigExists: existsSync(homeConfig),
    inCluster: Boolean(process.env.KUBERNETES_SERVICE_HOST),
  });
  if (!source) {
    throw new UserError('no cluster to talk to: no --kubeconfig, no $KUBECONFIG, no running `qvirt local up` and no ~/.kube/config; start one with `qvirt local up` or give --kubeconfig FILE');
  }
  const kc = loadKubeconfigFrom(source);
  const client = new KubeClient(kc);
  client.userAgent = 'qvirt-cli';
  return { client, namespace: chooseNamespace(flags.namespace, kc.context.namespace), source, server: client.server.origin };
}

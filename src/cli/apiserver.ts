// `qvirt apiserver --data-dir DIR`: qvirt's embedded Kubernetes-compatible API server on its own,
// with KubeVirt's CRDs (deploy/crds) applied at start and an admin kubeconfig written into DIR —
// a cluster API for `qvirt controller` and kubectl without a Kubernetes cluster. Ctrl-C (SIGINT)
// or SIGTERM stops it cleanly.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { componentLogger } from '../log/logger.ts';
import { startApiServer } from '../apiserver/index.ts';
import { isKubeVirtOrAdmin, kubeVirtWebhooks } from '../admission/kubevirt-webhooks.ts';
import { KubeClient, isAlreadyExists, isNotFound, type KubeObject } from '../kube/client.ts';
import { Resources, type ResourceType } from '../kube/resource.ts';
import { kubeConfigForServer } from '../../controller/kubeconfig.ts';

export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../../deploy/crds/', import.meta.url));

const specs = {
  'data-dir': { type: 'string', value: 'DIR', help: 'where objects, certificates and the admin kubeconfig are kept (required)' },
  port: { type: 'number', value: 'N', help: 'port to listen on (0 picks a free one)', default: 6443 },
  host: { type: 'string', value: 'ADDR', help: 'address to listen on', default: '127.0.0.1' },
  tls: { type: 'boolean', help: 'serve HTTPS with client-certificate and token authentication (--tls=false: plain HTTP, no auth)', default: true },
  crds: { type: 'string', value: 'DIR', help: 'apply every CustomResourceDefinition YAML in this directory at start', default: DEFAULT_CRD_DIR },
} as const;

export interface Crd extends KubeObject {
  spec: { group: string; names: { plural: string; kind: string }; scope: string; versions: { name: string; served?: boolean; storage?: boolean }[] };
}

/** Creates (or replaces) one CRD and waits until the API server serves its kind. */
export async function applyCrd(client: KubeClient, crd: Crd, timeoutMs = 10_000): Promise<void> {
  try {
    await client.create(Resources.customResourceDefinitions, crd);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const cur = await client.get<Crd>(Resources.customResourceDefinitions, undefined, crd.metadata!.name!);
    await client.update(Resources.customResourceDefinitions, { ...crd, metadata: { ...crd.metadata, resourceVersion: cur.metadata?.resourceVersion } });
  }
  const version = crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]!.name;
  const r: ResourceType = { group: crd.spec.group, version, plural: crd.spec.names.plural, kind: crd.spec.names.kind, namespaced: crd.spec.scope === 'Namespaced' };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.list(r, { limit: 1 });
      return;
    } catch (err) {
      if (!isNotFound(err) || Date.now() > deadline) throw new Error(`CRD ${crd.metadata?.name} is not served: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      await new Promise((res) => setTimeout(res, 50));
    }
  }
}

/** Creates (or replaces) every CRD in `dir` and waits until each of its resources is served. */
export async function applyCrdFiles(client: KubeClient, dir: string = DEFAULT_CRD_DIR, timeoutMs = 10_000): Promise<string[]> {
  const { default: yaml } = await import('js-yaml');
  const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
  const applied: string[] = [];
  for (const f of files) {
    for (const doc of yaml.loadAll(readFileSync(join(dir, f), 'utf8'))) {
      const crd = doc as Crd | null;
      if (!crd || crd.kind !== 'CustomResourceDefinition') continue;
      await applyCrd(client, crd, timeoutMs).catch((err: unknown) => { throw new Error(`applying ${join(dir, f)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err }); });
      applied.push(crd.metadata?.name ?? f);
    }
  }
  return applied;
}

export async function main(argv: string[]): Promise<number> {
  const { flags, help } = parseFlags(specs, argv);
  if (help) {
    process.stdout.write(usage('qvirt apiserver --data-dir DIR [flags]', 'Run qvirt\'s embedded Kubernetes-compatible API server with KubeVirt\'s CRDs applied; writes an admin kubeconfig into DIR.', specs));
    return 0;
  }
  const dataDir = flags['data-dir'];
  if (!dataDir) throw new UsageError('--data-dir DIR is required');
  const log = componentLogger('apiserver');
  const api = await startApiServer({ dataDir, port: flags.port ?? 6443, host: flags.host ?? '127.0.0.1', tls: flags.tls, log, admission: kubeVirtWebhooks({ isKubeVirt: isKubeVirtOrAdmin }) });
  let stopping: Promise<void> | undefined;
  const stop = () => { stopping ??= api.stop(); return stopping; };
  try {
    // client-node refuses plain HTTP unless the kubeconfig says insecure-skip-tls-verify: say it.
    if (!flags.tls && api.kubeconfigPath) writeFileSync(api.kubeconfigPath, kubeConfigForServer(api.url).exportConfig());
    const client = api.kubeconfigPath ? KubeClient.fromFile(api.kubeconfigPath) : new KubeClient(kubeConfigForServer(api.url));
    const crds = await applyCrdFiles(client, flags.crds);
    // KubeVirt's namespace: where `qvirt controller` keeps its leader-election Lease by default.
    await client.create(Resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kubevirt' } }).catch((err: unknown) => { if (!isAlreadyExists(err)) throw err; });
    await client.close();
    log.info({ crds }, 'CustomResourceDefinitions applied');
  } catch (err) {
    await stop();
    throw err;
  }
  process.stdout.write(`API server: ${api.url}\n${api.kubeconfigPath ? `kubeconfig: ${api.kubeconfigPath}\n` : ''}`);
  await new Promise<void>((resolve) => {
    const onSignal = () => { process.off('SIGINT', onSignal); process.off('SIGTERM', onSignal); resolve(); };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  await stop();
  return 0;
}

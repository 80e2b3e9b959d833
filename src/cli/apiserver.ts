// `qvirt apiserver --data-dir DIR`: qvirt's embedded Kubernetes-compatible API server on its own,
// with KubeVirt's CRDs (deploy/crds) applied at start and an admin kubeconfig written into DIR —
// a cluster API for `qvirt controller` and kubectl without a Kubernetes cluster. Ctrl-C (SIGINT)
// or SIGTERM stops it cleanly.
import { writeFileSync } from 'node:fs';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { componentLogger } from '../log/logger.ts';
import { startApiServer } from '../apiserver/index.ts';
import { isKubeVirtOrAdmin, kubeVirtWebhooks } from '../admission/kubevirt-webhooks.ts';
import { KubeClient, isAlreadyExists } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { applyCrdFiles, DEFAULT_CRD_DIR } from '../deploy/crds.ts';
import { kubeConfigForServer } from '../kube/kubeconfig.ts';

const specs = {
  'data-dir': { type: 'string', value: 'DIR', help: 'where objects, certificates and the admin kubeconfig are kept (required)' },
  port: { type: 'number', value: 'N', help: 'port to listen on (0 picks a free one)', default: 6443 },
  host: { type: 'string', value: 'ADDR', help: 'address to listen on', default: '127.0.0.1' },
  tls: { type: 'boolean', help: 'serve HTTPS with client-certificate and token authentication (--tls=false: plain HTTP, no auth)', default: true },
  crds: { type: 'string', value: 'DIR', help: 'apply every CustomResourceDefinition YAML in this directory at start', default: DEFAULT_CRD_DIR },
} as const;

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

// `qvirt version`: qvirt's own version, the Node it runs on and the QEMU it would launch; then, as
// `virtctl version` prints them, `Client Version: version.Info{...}` and — when a cluster is
// configured (--kubeconfig, $KUBECONFIG, a running `qvirt local up`, ~/.kube/config, in-cluster) —
// `Server Version: version.Info{...}` from virt-api's /apis/subresources.kubevirt.io/v1/version.
// With no cluster configured it is a local tool and stops after the client; a configured cluster
// that does not answer is an error (exit 1), as in virtctl. --client skips the server.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SUBRESOURCE_GROUP } from '../api/constants.ts';
import { KubeApiError } from '../kube/client.ts';
import { readLiveLocalUpRecord } from '../local/local-up-record.ts';
import { serverVersion } from '../version/server-version.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { chooseKubeconfig, withCluster } from './kube-context.ts';
import { parseVerb } from './verb.ts';
import { formatVersionInfo, parseVersionInfo } from './version-info.ts';

const SERVER_TIMEOUT_MS = 15_000;

/** Whether any kubeconfig would be found (kube-context.ts's order), without loading it. */
function clusterConfigured(kubeconfig: string | undefined): boolean {
  const homeConfig = join(homedir(), '.kube', 'config');
  return chooseKubeconfig({
    flag: kubeconfig,
    env: process.env.KUBECONFIG,
    localUp: kubeconfig || process.env.KUBECONFIG ? undefined : readLiveLocalUpRecord()?.kubeconfig,
    homeConfig,
    homeConfigExists: existsSync(homeConfig),
    inCluster: Boolean(process.env.KUBERNETES_SERVICE_HOST),
  }) !== undefined;
}

export async function main(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt version [flags]',
    summary: 'Print the client and server version information: qvirt\'s own, the Node and QEMU it uses, and the version of KubeVirt\'s API (virt-api) of the current cluster.',
    flags: { client: { type: 'boolean', short: 'c', help: 'client version only (no server required)' } },
    args: [],
    examples: '  # Print the client and server versions for the current context:\n  qvirt version',
  }, argv);
  if (!v) return 0;
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  let qemu = 'not found';
  try {
    const { stdout } = await promisify(execFile)(process.env.QVIRT_QEMU ?? 'qemu-system-x86_64', ['--version']);
    qemu = stdout.split('\n')[0] ?? qemu;
  } catch { /* reported as not found */ }
  process.stdout.write(`qvirt ${pkg.version}\nnode ${process.version}\nqemu ${qemu}\n`);
  process.stdout.write(`Client Version: ${formatVersionInfo(serverVersion(pkg.version))}\n`);
  if (v.flags.client || !clusterConfigured(v.flags.kubeconfig)) return 0;
  return withCluster(v.flags, async (ctx) => {
    let body: unknown;
    try {
      body = await ctx.client.request('GET', `/apis/${SUBRESOURCE_GROUP}/v1/version`, { signal: AbortSignal.timeout(SERVER_TIMEOUT_MS) });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) {
        throw new UserError(`failed to get server version: the API server at ${ctx.server} does not serve ${SUBRESOURCE_GROUP}; is qvirt installed there ('qvirt install'; kubectl get apiservice v1.${SUBRESOURCE_GROUP}) or 'qvirt local up' running? ('qvirt version --client' prints the client only)`);
      }
      if ((err as Error).name === 'TimeoutError' || /aborted|timeout/i.test((err as Error).message)) {
        throw new UserError(`failed to get server version: the API server at ${ctx.server} did not answer within ${SERVER_TIMEOUT_MS / 1000}s; is the cluster (or 'qvirt local up') running? ('qvirt version --client' prints the client only)`);
      }
      throw new UserError(`failed to get server version: ${kubeError(err, undefined, ctx.server).message}`);
    }
    let info;
    try { info = parseVersionInfo(body); } catch (err) { throw new UserError(`failed to get server version: ${(err as Error).message}`); }
    process.stdout.write(`Server Version: ${formatVersionInfo(info)}\n`);
    return 0;
  });
}

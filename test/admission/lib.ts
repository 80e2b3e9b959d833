// The embedded API server with KubeVirt's webhooks, as the admission suites use it: the admin's
// client, a client authenticated as KubeVirt's controller service account, the CRDs applied; and
// how a refusal reads through KubeClient.
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from '../../src/apiserver/index.ts';
import { kubeVirtWebhooks } from '../../src/admission/kubevirt-webhooks.ts';
import { applyCrdFiles } from '../../src/deploy/crds.ts';
import { KubeApiError, KubeClient } from '../../src/kube/client.ts';
import { componentLogger } from '../../src/log/logger.ts';

const CONTROLLER_TOKEN = 'controller-token';

export interface AdmissionCluster {
  readonly api: ApiServer;
  readonly admin: KubeClient;
  /** Authenticated as system:serviceaccount:kubevirt:kubevirt-controller. */
  readonly controller: KubeClient;
  stop(): Promise<void>;
}

function tokenConfig(url: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u', token }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  return kc;
}

export async function startAdmissionCluster(dataDir: string): Promise<AdmissionCluster> {
  const api = await startApiServer({
    dataDir, tls: true, log: componentLogger('admission-test', { level: 'warn' }),
    users: [{ token: CONTROLLER_TOKEN, user: { name: 'system:serviceaccount:kubevirt:kubevirt-controller', groups: ['system:serviceaccounts'] } }],
    admission: kubeVirtWebhooks({}),
  });
  const admin = KubeClient.fromFile(api.kubeconfigPath);
  const controller = new KubeClient(tokenConfig(api.url, CONTROLLER_TOKEN));
  await applyCrdFiles(admin);
  return {
    api, admin, controller,
    async stop() {
      await admin.close();
      await controller.close();
      await api.stop();
    },
  };
}

export interface Refusal { code: number; message: string; causes: { field?: string; reason?: string }[] }

/** The API error a request ends with; throws when it was admitted. */
export async function refused(p: Promise<unknown>): Promise<Refusal> {
  try { await p; } catch (err) {
    if (err instanceof KubeApiError) {
      const s = err.status as { message: string; details?: { causes?: { field?: string; reason?: string }[] } };
      return { code: err.code, message: s.message, causes: s.details?.causes ?? [] };
    }
    throw err;
  }
  throw new Error('the request was admitted');
}

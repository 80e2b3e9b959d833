/**
 * `qvirt controller --webhook-port`: virt-api's validating webhooks for a real cluster (VMI, VM,
 * VMIRS; migration create and the launcher eviction interceptor, which read the cluster). Every
 * replica serves them (the Service selects them all) with the certificate of one Secret in its
 * namespace, which whichever replica first sees it due creates or renews (pkiDecision); the
 * ValidatingWebhookConfiguration's webhooks get the CA bundle; a renewed certificate is served at
 * once. Checked again every CHECK_INTERVAL_MS (a configuration applied again, without caBundle,
 * gets it back then).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ClusterConfig } from '../api/cluster-config.ts';
import { isAlreadyExists, isConflict, isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { pkiDecision, pkiFromSecretData, pkiToSecretData, renewPki, type WebhookPki } from './webhook-certs.ts';
import { startWebhookServer, type WebhookServer } from './webhook-server.ts';
import { kubeVirtApiWebhooks } from './api-webhooks.ts';
import { isKubeVirtControllerServiceAccount } from './kubevirt-webhooks.ts';
import type { UserInfo } from '../kube/user-info.ts';
import { subresourceApi } from '../virt-api/subresource-api.ts';
import { accessReviewAuthorizer } from '../virt-api/access-review.ts';
import { aggregatedFrontDoor } from '../virt-api/aggregated-server.ts';
import { patchApiServiceCaBundle } from '../virt-api/api-service.ts';
import { fetchInstancetypeSource } from '../kube/instancetype-source.ts';

/** One Secret and one configuration read per check: cheap enough to notice soon a re-applied configuration without its caBundle. */
export const CHECK_INTERVAL_MS = 60_000;
export const WEBHOOK_SECRET = 'kubevirt-virt-controller-webhook-certs';
export const WEBHOOK_SERVICE = 'virt-controller-webhooks';
export const WEBHOOK_CONFIGURATION = 'qvirt-validator';

/** The names the serving certificate carries: the Service's, as kube-apiserver dials it. */
export const serviceHosts = (namespace: string): string[] => [`${WEBHOOK_SERVICE}.${namespace}.svc`, `${WEBHOOK_SERVICE}.${namespace}.svc.cluster.local`];

interface Secret extends KubeObject { type?: string; data?: Record<string, string> }
interface WebhookConfiguration extends KubeObject { webhooks?: { name: string; clientConfig?: { caBundle?: string } }[] }

/** The PKI in the Secret, created or renewed when due; a race with another replica re-reads. */
export async function ensureWebhookPki(client: KubeClient, namespace: string, hosts: readonly string[], log: Logger, now = () => new Date()): Promise<WebhookPki> {
  for (let attempt = 0; ; attempt++) {
    let secret: Secret | undefined;
    try {
      secret = await client.get<Secret>(Resources.secrets, namespace, WEBHOOK_SECRET);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const current = pkiFromSecretData(secret?.data);
    const d = pkiDecision(current, hosts, now());
    if (d.type === 'keep' && current) return current;
    const next = renewPki(current, d, hosts, now());
    try {
      if (secret) await client.update<Secret>(Resources.secrets, { ...secret, data: pkiToSecretData(next) });
      else await client.create<Secret>(Resources.secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: WEBHOOK_SECRET, namespace }, type: 'Opaque', data: pkiToSecretData(next) });
      log.info({ namespace, secret: WEBHOOK_SECRET, renewal: d.type, reason: d.type === 'keep' ? '' : d.reason }, 'webhook certificates renewed');
      return next;
    } catch (err) {
      if (attempt < 3 && (isAlreadyExists(err) || isConflict(err))) continue; // another replica wrote it
      throw err;
    }
  }
}

/** Sets `clientConfig.caBundle` on each webhook of the configuration that does not carry this bundle; true if it patched. */
export async function patchCaBundle(client: KubeClient, caBundle: string, log: Logger): Promise<boolean> {
  let vwc: WebhookConfiguration;
  try {
    vwc = await client.get<WebhookConfiguration>(Resources.validatingWebhookConfigurations, undefined, WEBHOOK_CONFIGURATION);
  } catch (err) {
    if (isNotFound(err)) { log.debug({ name: WEBHOOK_CONFIGURATION }, 'no ValidatingWebhookConfiguration (yet) to give the CA bundle'); return false; }
    throw err;
  }
  const b64 = Buffer.from(caBundle, 'utf8').toString('base64');
  const ops = (vwc.webhooks ?? []).flatMap((w, i) => (w.clientConfig?.caBundle === b64 ? [] : [
    { op: 'test', path: `/webhooks/${i}/name`, value: w.name },
    { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: b64 },
  ]));
  if (!ops.length) return false;
  await client.patch(Resources.validatingWebhookConfigurations, undefined, WEBHOOK_CONFIGURATION, ops, 'json');
  log.info({ name: WEBHOOK_CONFIGURATION, webhooks: ops.length / 2 }, 'CA bundle set on the webhooks');
  return true;
}

export interface ControllerWebhooksOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly port: number;
  readonly host?: string;
  readonly config: () => ClusterConfig;
  readonly log: Logger;
  /** Default: the Service's names. */
  readonly hosts?: readonly string[];
  readonly checkIntervalMs?: number;
  /** Who counts as virt-controller for the migration admitter; default: KubeVirt's controller service account. */
  readonly isVirtController?: (user: UserInfo | undefined) => boolean;
  /** Also serve virt-api's subresources.kubevirt.io behind its APIServices (default true). */
  readonly subresources?: boolean;
  /** virt-controller's GET /metrics on the same port (as KubeVirt serves its metrics on its HTTPS port). */
  readonly metrics?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}

export interface ControllerWebhooks {
  readonly server: WebhookServer;
  /** Re-reads the Secret now, renews when due, serves and publishes what it holds. */
  check(): Promise<void>;
  stop(): Promise<void>;
}

export async function startControllerWebhooks(o: ControllerWebhooksOptions): Promise<ControllerWebhooks> {
  const hosts = o.hosts ?? serviceHosts(o.namespace);
  let pki = await ensureWebhookPki(o.client, o.namespace, hosts, o.log);
  await patchCaBundle(o.client, pki.caBundle, o.log);
  const apiWebhooks = kubeVirtApiWebhooks({ client: o.client, isVirtController: o.isVirtController ?? isKubeVirtControllerServiceAccount });
  // virt-api's subresources on the same server, as virt-api serves its webhooks and subresources on one port.
  const api = o.subresources === false ? undefined : subresourceApi({ client: o.client, authorize: accessReviewAuthorizer(o.client), config: o.config, log: o.log.child({ part: 'virt-api' }) });
  const door = api ? aggregatedFrontDoor({ client: o.client, api, log: o.log.child({ part: 'virt-api' }) }) : undefined;
  let clientCa = await door?.refresh();
  const server = await startWebhookServer({
    host: o.host ?? '0.0.0.0', port: o.port, key: pki.serving.keyPem, cert: pki.serving.certPem, config: o.config, apiWebhooks, log: o.log,
    instancetypes: (vm) => fetchInstancetypeSource(o.client, vm),
    ...(door ? { aggregated: door } : {}), ...(clientCa ? { clientCa } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
  });
  if (api) await patchApiServiceCaBundle(o.client, pki.caBundle, o.log);
  const check = async () => {
    const next = await ensureWebhookPki(o.client, o.namespace, hosts, o.log);
    if (next.serving.certPem !== pki.serving.certPem) server.setCertificate(next.serving.keyPem, next.serving.certPem);
    pki = next;
    await patchCaBundle(o.client, next.caBundle, o.log);
    if (door) {
      const ca = await door.refresh();
      if (ca !== clientCa) { clientCa = ca; server.setClientCa(ca); }
      await patchApiServiceCaBundle(o.client, next.caBundle, o.log);
    }
  };
  const timer = setInterval(() => { check().catch((err: unknown) => o.log.warn({ err: (err as Error).message }, 'webhook certificate check failed; retrying at the next interval')); }, o.checkIntervalMs ?? CHECK_INTERVAL_MS);
  timer.unref();
  return { server, check, stop: async () => { clearInterval(timer); api?.close(); await server.close(); } };
}

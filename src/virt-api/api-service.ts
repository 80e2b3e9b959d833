// The APIServices that put virt-api's subresource group behind kube-apiserver's aggregation layer,
// one per served version, as virt-operator installs them (v1.subresources.kubevirt.io, ...): they
// point at the Service of the pods serving the group, and carry the CA bundle of the serving
// certificate, which the serving pods set themselves (as they do for the webhooks).
import { SUBRESOURCE_GROUP } from '../api/constants.ts';
import { isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import type { Logger } from '../log/logger.ts';
import { SUBRESOURCE_VERSIONS } from './subresource-routes.ts';

export const apiServiceName = (version: string) => `${version}.${SUBRESOURCE_GROUP}`;

interface ApiService extends KubeObject { spec?: { caBundle?: string } }

/** The APIService objects for the install (no caBundle: the serving pods set it). Pure. */
export function apiServiceObjects(namespace: string, serviceName: string, labels: Record<string, string>): (KubeObject & Record<string, unknown>)[] {
  return SUBRESOURCE_VERSIONS.map((version) => ({
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: apiServiceName(version), labels },
    spec: {
      group: SUBRESOURCE_GROUP,
      version,
      service: { namespace, name: serviceName, port: 443 },
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
  }));
}

/** Sets spec.caBundle on each of the group's APIServices that does not carry it; how many it patched. */
export async function patchApiServiceCaBundle(client: KubeClient, caBundle: string, log: Logger): Promise<number> {
  const b64 = Buffer.from(caBundle, 'utf8').toString('base64');
  let patched = 0;
  for (const version of SUBRESOURCE_VERSIONS) {
    const name = apiServiceName(version);
    let svc: ApiService;
    try {
      svc = await client.get<ApiService>(Resources.apiServices, undefined, name);
    } catch (err) {
      if (isNotFound(err)) { log.debug({ name }, 'no APIService (yet) to give the CA bundle'); continue; }
      throw err;
    }
    if (svc.spec?.caBundle === b64) continue;
    await client.patch(Resources.apiServices, undefined, name, { spec: { caBundle: b64 } }, 'merge');
    patched++;
  }
  if (patched) log.info({ apiServices: patched }, 'CA bundle set on the subresource APIServices');
  return patched;
}

/**
 * virt-api's two webhooks that look things up in the cluster, for a real kube-apiserver (served by
 * `qvirt controller --webhook-port`, webhook-server.ts): the VirtualMachineInstanceMigration create
 * admitter (the VMI and the namespace's migrations) and the virt-launcher eviction interceptor (the
 * pod, its VMI, and the VMI's evacuation mark written before the 429). The embedded API server runs
 * the same decisions as in-process plugins over its store (kubevirt-webhooks.ts); here the lookups
 * and the mark go through the API with the controller's credentials.
 */
import type { ClusterConfig } from '../api/cluster-config.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/types.ts';
import type { AdmissionAttributes, AdmissionResult } from '../kube/admission.ts';
import type { UserInfo } from '../kube/user-info.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { admitMigrationCreate, isMigrationCreate, MIGRATION_CREATE_WEBHOOK, migrationUnderReview } from './migration-create-admitter.ts';
import { evictedLauncherVMIName, evictionAnswer, evictionRequest, isPodEviction, LAUNCHER_EVICTION_WEBHOOK, launcherEvictionDecision, markForEvacuationPatch, type EvictedPod } from './pod-eviction-admitter.ts';

type Matchable = Pick<AdmissionAttributes, 'operation' | 'group' | 'resource' | 'subresource'>;

export interface ApiWebhook {
  readonly name: string;
  /** virt-api's path for it (`components/webhooks.go`). */
  readonly path: string;
  /** What it was registered for: a review for anything else is misrouted. */
  readonly expects: string;
  readonly matches: (a: Matchable) => boolean;
  readonly admit: (a: AdmissionAttributes, config: ClusterConfig) => Promise<AdmissionResult>;
}

/** virt-api's paths (`MigrationCreateValidatePath`, `PodEvictionValidatePath`). */
export const MIGRATION_CREATE_PATH = '/migration-validate-create';
export const POD_EVICTION_PATH = '/pod-eviction-validate';

/** The object, or undefined when it does not exist. */
async function getOrNone<T>(get: () => Promise<T>): Promise<T | undefined> {
  try {
    return await get();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}


export interface ApiWebhookOptions {
  readonly client: KubeClient;
  /** Who counts as virt-controller (may set `spec.priority`): KubeVirt's controller service account. */
  readonly isVirtController: (user: UserInfo | undefined) => boolean;
}

export function kubeVirtApiWebhooks(o: ApiWebhookOptions): ApiWebhook[] {
  const { client, isVirtController } = o;
  const migrationCreate: ApiWebhook = {
    name: MIGRATION_CREATE_WEBHOOK,
    path: MIGRATION_CREATE_PATH,
    expects: 'virtualmachineinstancemigrations',
    matches: isMigrationCreate,
    admit: async (a, config) => {
      const migration = migrationUnderReview(a);
      const { vmiName } = migration.spec;
      const ns = a.namespace;
      const [vmi, migrations] = await Promise.all([
        vmiName ? getOrNone(() => client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, ns, vmiName)) : Promise.resolve(undefined),
        client.list<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, { namespace: ns }).then((l) => l.items),
      ]);
      return admitMigrationCreate({
        migration,
        vmi,
        // A retried create must not find itself in flight.
        migrations: migrations.filter((m) => !(migration.metadata?.name && m.metadata?.name === migration.metadata.name)),
        fromVirtController: isVirtController(a.user),
        config,
      });
    },
  };
  const launcherEviction: ApiWebhook = {
    name: LAUNCHER_EVICTION_WEBHOOK,
    path: POD_EVICTION_PATH,
    expects: 'pods/eviction',
    matches: isPodEviction,
    admit: async (a, config) => {
      const pod = await getOrNone(() => client.get<EvictedPod & { metadata?: { name?: string } }>(Resources.pods, a.namespace, a.name));
      const vmiName = evictedLauncherVMIName(pod);
      const vmi = vmiName ? await getOrNone(() => client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, a.namespace, vmiName)) : undefined;
      const { annotations, dryRun } = evictionRequest(a);
      const d = launcherEvictionDecision({ pod, vmi, evictionAnnotations: annotations, config });
      if (d.type === 'mark') {
        try {
          await client.patch(Resources.virtualMachineInstances, a.namespace, vmi!.metadata!.name!, markForEvacuationPatch(vmi!, d.nodeName, d.fromDescheduler), 'json', undefined, { dryRun });
        } catch (err) {
          return evictionAnswer(d, err);
        }
      }
      return evictionAnswer(d);
    },
  };
  return [migrationCreate, launcherEviction];
}

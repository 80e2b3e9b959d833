/**
 * virt-api's validating webhooks as plugins of the embedded API server (the local mode runs no
 * webhook server): the VirtualMachineInstanceMigration create admitter and the virt-launcher eviction
 * interceptor. Thin shells: look up what the pure decisions need, ask them, and (eviction) write
 * the VMI's evacuation mark.
 */
import { defaultClusterConfig, type ClusterConfig } from '../api/cluster-config.ts';
import { configFromKubeVirt, selectKubeVirt, type KubeVirtCR } from '../kube/kubevirt-config.ts';
import { GROUP as KubeVirtGroup, KUBEVIRT_SERVICE_ACCOUNTS } from '../api/constants.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/types.ts';
import type { UserInfo } from '../kube/user-info.ts';
import type { AdmissionApi, AdmissionAttributes, ValidatingAdmissionPlugin } from '../kube/admission.ts';
import { admitMigrationCreate, isMigrationCreate, MIGRATION_CREATE_WEBHOOK, migrationUnderReview } from './migration-create-admitter.ts';
import { kubeVirtObjectWebhooks } from './object-webhooks.ts';
import { admissionApiInstancetypeSource } from './instancetype-source.ts';
import { admitVMIPresets, VMI_MUTATOR_WEBHOOK, withPresets } from './preset-admitters.ts';
import { evictedLauncherVMIName, evictionAnswer, evictionRequest, isPodEviction, LAUNCHER_EVICTION_WEBHOOK, launcherEvictionDecision, markForEvacuationPatch, type EvictedPod } from './pod-eviction-admitter.ts';

const VMIS = 'virtualmachineinstances';
const MIGRATIONS = 'virtualmachineinstancemigrations';

/** KubeVirt's controller service account (`hasRequestOriginatedFromVirtController`). */
export const VIRT_CONTROLLER_SERVICE_ACCOUNT_SUFFIX = ':kubevirt-controller';
export const isKubeVirtControllerServiceAccount = (user: UserInfo | undefined): boolean =>
  !!user && user.name.startsWith('system:serviceaccount:') && user.name.endsWith(VIRT_CONTROLLER_SERVICE_ACCOUNT_SUFFIX);

/** KubeVirt's service accounts (`KubeVirtServiceAccounts`: virt-controller, virt-handler, virt-api), in any namespace. */
export const isKubeVirtServiceAccount = (user: UserInfo | undefined): boolean =>
  !!user && user.name.startsWith('system:serviceaccount:') && KUBEVIRT_SERVICE_ACCOUNTS.some((sa) => user.name.endsWith(`:${sa}`));

/**
 * Where qvirt's own components share the cluster admin's credentials (the local mode, `qvirt
 * apiserver`), the admin (`system:masters`) and an unauthenticated server's requests count as
 * KubeVirt's service accounts, else the controllers' VMI spec updates would be refused.
 */
export const isKubeVirtOrAdmin = (user: UserInfo | undefined): boolean =>
  user === undefined || isKubeVirtServiceAccount(user) || user.groups.includes('system:masters');

export interface KubeVirtWebhookOptions {
  /** The cluster configuration in force (eviction strategy, feature gates); default: the KubeVirt CR's. */
  readonly config?: (api: AdmissionApi) => ClusterConfig;
  /** Who counts as virt-controller (may set `spec.priority` on migrations); default: KubeVirt's controller service account. */
  readonly isVirtController?: (user: UserInfo | undefined) => boolean;
  /** Who counts as KubeVirt itself (may change a VMI's spec, reserved labels); default: KubeVirt's service accounts. */
  readonly isKubeVirt?: (user: UserInfo | undefined) => boolean;
}

/** The configuration of the cluster's KubeVirt CR (defaults without one or when it is invalid). */
export function clusterConfigFromStore(api: AdmissionApi): ClusterConfig {
  const base = defaultClusterConfig();
  const cr = selectKubeVirt(api.list(KubeVirtGroup, 'kubevirts', undefined) as unknown as KubeVirtCR[]);
  return configFromKubeVirt(cr, base, () => undefined).config ?? base;
}

export function kubeVirtWebhooks(o: KubeVirtWebhookOptions): ValidatingAdmissionPlugin[] {
  const isVirtController = o.isVirtController ?? isKubeVirtControllerServiceAccount;
  const config = o.config ?? clusterConfigFromStore;
  const isKubeVirt = o.isKubeVirt ?? isKubeVirtServiceAccount;
  // virt-api validates a new VMI after its mutator merged the presets in: the VMI create admitter sees them merged.
  const presetsMerged = (a: AdmissionAttributes, api: AdmissionApi): AdmissionAttributes => (a.operation === 'CREATE' && a.resource === VMIS && a.group === KubeVirtGroup
    ? { ...a, object: withPresets(a.object, api.list(KubeVirtGroup, 'virtualmachineinstancepresets', a.namespace)) as AdmissionAttributes['object'] }
    : a);
  const objects: ValidatingAdmissionPlugin[] = kubeVirtObjectWebhooks(isKubeVirt).map((w) => ({ name: w.name, matches: w.matches, admit: (a, api) => w.admit(presetsMerged(a, api), config(api), admissionApiInstancetypeSource(api)) }));
  const migrationCreate: ValidatingAdmissionPlugin = {
    name: MIGRATION_CREATE_WEBHOOK,
    matches: isMigrationCreate,
    admit: (a: AdmissionAttributes, api: AdmissionApi) => {
      const migration = migrationUnderReview(a);
      const vmiName = migration.spec.vmiName;
      return admitMigrationCreate({
        migration,
        vmi: vmiName ? api.get(KubeVirtGroup, VMIS, a.namespace, vmiName) as unknown as VirtualMachineInstance | undefined : undefined,
        migrations: api.list(KubeVirtGroup, MIGRATIONS, a.namespace) as unknown as VirtualMachineInstanceMigration[],
        fromVirtController: isVirtController(a.user),
        config: config(api),
      });
    },
  };
  const launcherEviction: ValidatingAdmissionPlugin = {
    name: LAUNCHER_EVICTION_WEBHOOK,
    matches: isPodEviction,
    admit: (a, api) => {
      const pod = api.get('', 'pods', a.namespace, a.name) as EvictedPod | undefined;
      const vmiName = evictedLauncherVMIName(pod);
      const vmi = vmiName ? api.get(KubeVirtGroup, VMIS, a.namespace, vmiName) as unknown as VirtualMachineInstance | undefined : undefined;
      const { annotations, dryRun } = evictionRequest(a);
      const d = launcherEvictionDecision({ pod, vmi, evictionAnnotations: annotations, config: config(api) });
      if (d.type === 'mark') {
        try {
          api.jsonPatch(KubeVirtGroup, VMIS, a.namespace, vmi!.metadata!.name!, markForEvacuationPatch(vmi!, d.nodeName, d.fromDescheduler), { dryRun });
        } catch (err) {
          return evictionAnswer(d, err);
        }
      }
      return evictionAnswer(d);
    },
  };
  // The preset step of virt-api's VMI mutator, on create: conflicting presets refuse the VMI.
  const vmiPresets: ValidatingAdmissionPlugin = {
    name: VMI_MUTATOR_WEBHOOK,
    matches: (a) => a.operation === 'CREATE' && a.group === KubeVirtGroup && a.resource === VMIS && a.subresource === undefined,
    admit: (a, api) => admitVMIPresets(a.object, api.list(KubeVirtGroup, 'virtualmachineinstancepresets', a.namespace)),
  };
  return [vmiPresets, ...objects, migrationCreate, launcherEviction];
}

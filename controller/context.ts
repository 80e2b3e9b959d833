// What the manager hands every controller: the API client, the shared informers (one cache per
// resource, shared by all controllers, as client-go's shared informer factory), the event recorder,
// the cluster configuration and the launcher image.
import type { KubeClient } from '../src/kube/client.ts';
import type { Informer } from '../src/kube/informer.ts';
import type { EventRecorder } from '../src/kube/events.ts';
import type { Logger } from '../src/log/logger.ts';
import type { ClusterConfig } from '../src/api/cluster-config.ts';
import type { VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration, VirtualMachineInstanceReplicaSet } from '../src/api/types.ts';
import type { Node, Pod } from './pod.ts';
import type { RenderConfig } from './vmi/render-config.ts';
import type { DataVolume } from '../src/api/cdi/types.ts';
import type { KubeObject } from '../src/kube/client.ts';
import type { MigrationPolicy } from '../src/api/migrations/types.ts';
import type { VirtualMachineInstancePreset } from '../src/api/preset/types.ts';

/** instancetype.kubevirt.io's four kinds and the ControllerRevisions that pin them to VMs. */
export interface InstancetypeInformers {
  readonly instancetypes: Informer<KubeObject>;
  readonly clusterInstancetypes: Informer<KubeObject>;
  readonly preferences: Informer<KubeObject>;
  readonly clusterPreferences: Informer<KubeObject>;
  readonly controllerRevisions: Informer<KubeObject>;
}

export interface SharedInformers {
  readonly vms: Informer<VirtualMachine>;
  readonly vmis: Informer<VirtualMachineInstance>;
  readonly pods: Informer<Pod>;
  readonly replicaSets: Informer<VirtualMachineInstanceReplicaSet>;
  readonly migrations: Informer<VirtualMachineInstanceMigration>;
  readonly nodes: Informer<Node>;
}

export interface ControllerContext {
  readonly client: KubeClient;
  readonly informers: SharedInformers;
  readonly recorder: EventRecorder;
  readonly log: Logger;
  readonly config: ClusterConfig;
  readonly renderConfig: RenderConfig;
  readonly launcherImage: string;
  readonly now: () => Date;
  /** instancetype.kubevirt.io and ControllerRevision caches (absent: the VM controller reads them from the API). */
  readonly instancetypeInformers?: InstancetypeInformers;
  /** migrations.kubevirt.io MigrationPolicies (absent or not yet synced: the migration controller lists them). */
  readonly migrationPolicies?: Informer<MigrationPolicy>;
  /** CDI's DataVolumes (absent or not synced — e.g. no CDI on the cluster: the VM controller reads them from the API). */
  readonly dataVolumes?: Informer<DataVolume & KubeObject>;
  /** kubevirt.io VirtualMachineInstancePresets, merged into new VMIs at first sight (absent: none). */
  readonly vmiPresets?: Informer<VirtualMachineInstancePreset>;
}

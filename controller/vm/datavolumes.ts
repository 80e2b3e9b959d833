// A VM's DataVolumes (KubeVirt's vm.go handleDataVolumes, watch/util CreateDataVolumeManifest,
// storage/types dv.go): the DataVolume made from each `spec.dataVolumeTemplates` entry (its name,
// labels and annotations, `cdi.kubevirt.io/allowClaimAdoption`, the `kubevirt.io/created-by` label
// and the VM as controlling owner), whether they are ready for the VM to start, and the printable
// status inputs (Provisioning, DataVolumeError). Pure.
import { CDI_API_VERSION, CdiAnnotations, DataVolumePhase, type DataVolume } from '../../src/api/cdi/types.ts';
import { API_VERSION, Kind, Label } from '../../src/api/constants.ts';
import type { DataVolumeTemplateSpec, VirtualMachine, Volume } from '../../src/api/types.ts';

/** KubeVirt's event reasons. */
export const DataVolumeEvents = {
  SuccessfulDataVolumeCreate: 'SuccessfulDataVolumeCreate',
  FailedDataVolumeCreate: 'FailedDataVolumeCreate',
  FailedDataVolumeImport: 'FailedDataVolumeImport',
} as const;

/** GenerateDataVolumeFromTemplate + CreateDataVolumeManifest. */
export function dataVolumeFromTemplate(t: DataVolumeTemplateSpec, vm: VirtualMachine): DataVolume {
  const spec = structuredClone(t.spec) as DataVolume['spec'];
  const priorityClassName = vm.spec.template?.spec?.priorityClassName;
  if (!spec.priorityClassName && priorityClassName) spec.priorityClassName = priorityClassName;
  // A pvc source without a namespace is the VM's namespace (GetResolvedCloneSource).
  if (spec.source?.pvc && !spec.source.pvc.namespace && vm.metadata?.namespace) spec.source.pvc.namespace = vm.metadata.namespace;
  return {
    apiVersion: CDI_API_VERSION,
    kind: 'DataVolume',
    metadata: {
      ...structuredClone(t.metadata ?? {}),
      namespace: vm.metadata?.namespace,
      labels: { ...(t.metadata?.labels ?? {}), [Label.CreatedBy]: vm.metadata?.uid ?? '' },
      annotations: { ...(t.metadata?.annotations ?? {}), [CdiAnnotations.allowClaimAdoption]: 'true' },
      ownerReferences: [{ apiVersion: API_VERSION, kind: Kind.VirtualMachine, name: vm.metadata?.name ?? '', uid: vm.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec,
  };
}

export type DataVolumeLookup = (name: string) => DataVolume | undefined;

export type DataVolumePlan =
  | { readonly type: 'create'; readonly dataVolume: DataVolume }
  | { readonly type: 'failed'; readonly name: string };

/**
 * handleDataVolumes: DataVolumes to create (templates with neither a DV nor — old CDI's case — any
 * object yet), those that failed (an event each), and whether every one is ready: Succeeded,
 * WaitForFirstConsumer or PendingPopulation.
 */
export function planDataVolumes(vm: VirtualMachine, lookup: DataVolumeLookup): { actions: DataVolumePlan[]; ready: boolean } {
  const actions: DataVolumePlan[] = [];
  let ready = true;
  for (const t of vm.spec.dataVolumeTemplates ?? []) {
    const name = t.metadata?.name ?? '';
    const dv = lookup(name);
    if (!dv) { ready = false; actions.push({ type: 'create', dataVolume: dataVolumeFromTemplate(t, vm) }); continue; }
    const phase = dv.status?.phase;
    if (phase === DataVolumePhase.Succeeded || phase === DataVolumePhase.WaitForFirstConsumer || phase === DataVolumePhase.PendingPopulation) continue;
    if (phase === DataVolumePhase.Failed) actions.push({ type: 'failed', name });
    ready = false;
  }
  return { actions, ready };
}

/** Whether the VM controller creates DataVolumes now (`kubevirt.io/immediate-data-volume-creation` not "false"). */
export function immediateDataVolumeCreation(vm: VirtualMachine): boolean {
  return vm.metadata?.annotations?.[CdiAnnotations.immediateDataVolumeCreation] !== 'false';
}

/** HasDataVolumeErrors: the first dataVolume volume whose DV failed or whose importer stopped on an error. */
export function dataVolumeError(volumes: readonly Volume[] | undefined, lookup: DataVolumeLookup): string | undefined {
  for (const v of volumes ?? []) {
    if (!v.dataVolume) continue;
    const dv = lookup(v.dataVolume.name);
    if (!dv) continue;
    if (dv.status?.phase === DataVolumePhase.Failed) return `DataVolume ${v.dataVolume.name} is in Failed phase`;
    const running = dv.status?.conditions?.find((c) => c.type === 'Running');
    if (running?.status === 'False' && (running.reason === 'Error' || running.reason === 'ImagePullFailed')) return `DataVolume ${v.dataVolume.name} importer has stopped running due to an error: ${running.message ?? ''}`;
  }
  return undefined;
}

/** HasDataVolumeProvisioning: a dataVolume volume whose DV exists and is neither done nor waiting for its first consumer unbound. */
export function dataVolumeProvisioning(volumes: readonly Volume[] | undefined, lookup: DataVolumeLookup): boolean {
  for (const v of volumes ?? []) {
    if (!v.dataVolume) continue;
    const dv = lookup(v.dataVolume.name);
    if (!dv || dv.status?.phase === DataVolumePhase.Succeeded || dv.status?.phase === DataVolumePhase.PendingPopulation) continue;
    const bound = dv.status?.conditions?.some((c) => c.type === 'Bound' && c.status === 'True') ?? false;
    if (bound || dv.status?.phase !== DataVolumePhase.WaitForFirstConsumer) return true;
  }
  return false;
}

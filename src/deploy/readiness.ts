// When an installed component is ready (pure): a Deployment when its observed generation is
// current and every desired replica is updated and ready; a DaemonSet when every scheduled pod is
// updated and ready; a CRD when Established. Each answer carries the progress line to print.

export interface WorkloadStatus {
  metadata?: { generation?: number; name?: string };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    desiredNumberScheduled?: number;
    numberReady?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export interface Readiness {
  readonly ready: boolean;
  readonly progress: string;
}

const current = (o: WorkloadStatus) => (o.status?.observedGeneration ?? 0) >= (o.metadata?.generation ?? 1);

export function deploymentReadiness(d: WorkloadStatus): Readiness {
  const want = d.spec?.replicas ?? 1;
  const ready = d.status?.readyReplicas ?? 0;
  const updated = d.status?.updatedReplicas ?? 0;
  const ok = current(d) && ready >= want && updated >= want;
  return { ready: ok, progress: `Deployment ${d.metadata?.name}: ${ready}/${want} ready${current(d) ? '' : ' (rollout not observed yet)'}` };
}

export function daemonSetReadiness(ds: WorkloadStatus): Readiness {
  const want = ds.status?.desiredNumberScheduled ?? 0;
  const ready = ds.status?.numberReady ?? 0;
  const updated = ds.status?.updatedNumberScheduled ?? 0;
  // A DaemonSet no node has been chosen for yet (desired 0 before its controller ran) is not ready.
  const ok = current(ds) && ds.status?.desiredNumberScheduled !== undefined && ready >= want && updated >= want;
  return { ready: ok, progress: `DaemonSet ${ds.metadata?.name}: ${ready}/${want} nodes ready${current(ds) ? '' : ' (rollout not observed yet)'}` };
}

export function crdEstablished(crd: WorkloadStatus): boolean {
  return (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
}

// virt-controller's /metrics (KubeVirt's pkg/monitoring/metrics/virt-controller): whether this replica
// is ready to lead and whether it leads (kubevirt_virt_controller_{ready,leading}_status), the process's
// work queues (virt-controller-vm, -vmi, -replicaset, -migration, -node, -evacuation) and REST client
// requests (src/metrics), and — from the leader's informers, as KubeVirt's vmistats collector reads its
// stores — kubevirt_vmi_info for every VMI with its launcher pod in vmi_pod, and
// kubevirt_vmi_launcher_memory_overhead_bytes (status.memory.memoryOverhead, else the overhead the
// launcher pod was rendered with, KubeVirt's fallback). A standby has no informers: its VMI families
// are empty, as KubeVirt's are. Pure but for the registry it gathers.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClusterConfig } from '../../src/api/cluster-config.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { EXPOSITION_CONTENT_TYPE, formatExposition, MetricType, type MetricFamily } from '../../src/metrics/exposition.ts';
import { FamilyBuilder } from '../../src/metrics/family-builder.ts';
import { defaultRegistry, type Registry } from '../../src/metrics/registry.ts';
import { vmiMetrics, VmiMetric, type InstancetypeKind, type VendorLookup } from '../../src/metrics/vmi-info.ts';
import type { InstancetypeInformers } from '../context.ts';
import { workQueueMetrics } from '../../src/metrics/workqueue.ts';
import { Label } from '../../src/api/constants.ts';
import { memoryOverhead } from '../vmi/overhead.ts';
import { renderConfigFromClusterConfig } from '../vmi/render-config.ts';

export const METRICS_PATH = '/metrics';
/** The label KubeVirt reads an instance type's vendor from. */
export const INSTANCETYPE_VENDOR_LABEL = 'instancetype.kubevirt.io/vendor';
/** KubeVirt's Service in front of its components' metrics ports (port name `metrics`). */
export const PROMETHEUS_METRICS_SERVICE = 'kubevirt-prometheus-metrics';

interface Pod extends KubeObject { spec?: { nodeName?: string }; status?: { phase?: string } }

/** What the metrics need of the controller process. */
export interface ControllerMetricsView {
  /** Campaigning (or running without leader election): ready to take the lead. */
  ready(): boolean;
  leading(): boolean;
  /** The leader's caches; empty on a standby. */
  vmis(): readonly VirtualMachineInstance[];
  pods(): readonly Pod[];
  /** The launcher overhead the VMI's pod was rendered with, in bytes (absent: not computable). */
  overheadBytes(vmi: VirtualMachineInstance): number | undefined;
  /** The vendor label of an instance type or preference a VMI names (kubevirt_vmi_info's instance_type/preference). */
  readonly vendor?: VendorLookup | undefined;
}

/** KubeVirt's getVMIPod: the VMI's Running launcher pod on the VMI's node. Pure. */
export function launcherPodOf(vmi: VirtualMachineInstance, pods: readonly Pod[]): string {
  const uid = vmi.metadata?.uid;
  if (!uid) return '';
  const pod = pods.find((p) => p.metadata?.namespace === vmi.metadata?.namespace && p.metadata?.labels?.[Label.CreatedBy] === uid
    && p.status?.phase === 'Running' && p.spec?.nodeName === vmi.status?.nodeName);
  return pod?.metadata?.name ?? '';
}

/** The VMI families of one scrape. Pure. */
export function controllerVmiFamilies(view: Pick<ControllerMetricsView, 'vmis' | 'pods' | 'overheadBytes' | 'vendor'>): MetricFamily[] {
  const out = new FamilyBuilder();
  const pods = view.pods();
  for (const vmi of view.vmis()) {
    vmiMetrics(vmi, out, view.vendor, launcherPodOf(vmi, pods));
    if (vmi.status?.memory?.memoryOverhead === undefined) {
      out.add(VmiMetric.launcherMemoryOverhead, { namespace: vmi.metadata?.namespace ?? '', name: vmi.metadata?.name ?? '' }, view.overheadBytes(vmi));
    }
  }
  return out.families();
}

export class ControllerMetrics {
  private readonly view: ControllerMetricsView;
  private readonly registry: Registry;

  constructor(view: ControllerMetricsView, registry: Registry = defaultRegistry) {
    this.view = view;
    this.registry = registry;
    workQueueMetrics(); // registered before the first queue exists
  }

  /** The exposition text of one scrape. */
  async scrape(): Promise<string> {
    const component: MetricFamily[] = [
      { name: 'kubevirt_virt_controller_leading_status', help: 'Indication for an operating virt-controller.', type: MetricType.Gauge, samples: [{ labels: {}, value: this.view.leading() ? 1 : 0 }] },
      { name: 'kubevirt_virt_controller_ready_status', help: 'Indication for a virt-controller that is ready to take the lead.', type: MetricType.Gauge, samples: [{ labels: {}, value: this.view.ready() ? 1 : 0 }] },
    ];
    return formatExposition([...component, ...await this.registry.gather(), ...controllerVmiFamilies(this.view)]);
  }
}

/** The view of a running ControllerManager: its leader's informers, overheads under the cluster's configuration. */
export function managerMetricsView(manager: { readonly isLeader: boolean; readonly current?: { informers: { vmis: { list(): VirtualMachineInstance[] }; pods: { list(): unknown[] } } } | undefined; readonly instancetypes?: Pick<InstancetypeInformers, 'instancetypes' | 'clusterInstancetypes' | 'preferences' | 'clusterPreferences'> | undefined }, config: () => ClusterConfig): ControllerMetricsView {
  const informerOf: Record<InstancetypeKind, 'instancetypes' | 'clusterInstancetypes' | 'preferences' | 'clusterPreferences'> = {
    VirtualMachineInstancetype: 'instancetypes', VirtualMachineClusterInstancetype: 'clusterInstancetypes',
    VirtualMachinePreference: 'preferences', VirtualMachineClusterPreference: 'clusterPreferences',
  };
  return {
    vendor: (kind, namespace, name) => manager.instancetypes?.[informerOf[kind]].get(namespace ? `${namespace}/${name}` : name)?.metadata?.labels?.[INSTANCETYPE_VENDOR_LABEL],
    ready: () => true,
    leading: () => manager.isLeader,
    vmis: () => manager.current?.informers.vmis.list() ?? [],
    pods: () => (manager.current?.informers.pods.list() ?? []) as Pod[],
    overheadBytes: (vmi) => {
      // As the VMI controller renders the launcher pod (controller/vmi/launcher-pod.ts).
      const cfg = renderConfigFromClusterConfig(config(), '');
      try {
        const o = memoryOverhead(vmi, { architecture: cfg.defaultArchitecture, additionalGuestMemoryOverheadRatio: cfg.additionalGuestMemoryOverheadRatio });
        return Number(o.bytes);
      } catch {
        return undefined;
      }
    },
  };
}

/** GET (or HEAD) of /metrics: one scrape; the endpoint is read-only. */
export async function serveControllerMetrics(metrics: ControllerMetrics, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const send = (code: number, text: string, type = 'text/plain; charset=utf-8') => {
    res.writeHead(code, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  if (path !== METRICS_PATH) return send(404, `${path}: not found (virt-controller serves ${METRICS_PATH})\n`);
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, `${METRICS_PATH} is read-only: use GET\n`);
  send(200, await metrics.scrape(), EXPOSITION_CONTENT_TYPE);
}

// What a VMI object itself says, as KubeVirt's vmistats collector reports it from virt-controller
// (pkg/monitoring/metrics/virt-controller/vmistats_collector.go): kubevirt_vmi_info with its label
// set — the launcher pod's name in vmi_pod — and kubevirt_vmi_launcher_memory_overhead_bytes. Pure.
import { Label, VMIConditionType } from '../api/constants.ts';
import { quantityToNumber } from '../api/quantity.ts';
import type { VirtualMachineInstance } from '../api/types.ts';
import { hasVmiConditionWithStatus } from '../api/vmi-conditions.ts';
import type { FamilyBuilder } from './family-builder.ts';
import { MetricType } from './exposition.ts';

export const VmiMetric = {
  info: { name: 'kubevirt_vmi_info', type: MetricType.Gauge, help: 'Information about VirtualMachineInstances.' },
  launcherMemoryOverhead: { name: 'kubevirt_vmi_launcher_memory_overhead_bytes', type: MetricType.Gauge, help: "Estimation of the memory amount required for virt-launcher's infrastructure components (e.g. libvirt, QEMU)." },
} as const;

/** The annotations kubevirt_vmi_info reads (KubeVirt's `vm.kubevirt.io/` system info and v1.*InstancetypeAnnotation). */
export const VmiInfoAnnotation = {
  OS: 'vm.kubevirt.io/os',
  Workload: 'vm.kubevirt.io/workload',
  Flavor: 'vm.kubevirt.io/flavor',
  Instancetype: 'kubevirt.io/instancetype-name',
  ClusterInstancetype: 'kubevirt.io/cluster-instancetype-name',
  Preference: 'kubevirt.io/preference-name',
  ClusterPreference: 'kubevirt.io/cluster-preference-name',
} as const;

/** The instancetype objects a VMI may name, as the vendor lookup is asked about them. */
export type InstancetypeKind = 'VirtualMachineInstancetype' | 'VirtualMachineClusterInstancetype' | 'VirtualMachinePreference' | 'VirtualMachineClusterPreference';

/**
 * The `instancetype.kubevirt.io/vendor` label of a referenced instancetype or preference: undefined when
 * the object is not known (not found, not looked up yet).
 */
export type VendorLookup = (kind: InstancetypeKind, namespace: string | undefined, name: string) => string | undefined;

/** KubeVirt names only the vendors it ships; anything else (or unknown) is `<other>`, bounding the label's values. */
export const WHITELISTED_INSTANCETYPE_VENDORS: ReadonlySet<string> = new Set(['kubevirt.io', 'redhat.com']);
export const OTHER = '<other>';

function referenced(vmi: VirtualMachineInstance, vendor: VendorLookup, named: [string, InstancetypeKind, boolean], cluster: [string, InstancetypeKind]): string {
  const a = vmi.metadata?.annotations ?? {};
  const pick = (name: string, kind: InstancetypeKind, namespaced: boolean) => {
    const v = vendor(kind, namespaced ? vmi.metadata?.namespace : undefined, name);
    return v !== undefined && WHITELISTED_INSTANCETYPE_VENDORS.has(v) ? name : OTHER;
  };
  if (a[named[0]] !== undefined) return pick(a[named[0]]!, named[1], named[2]);
  if (a[cluster[0]] !== undefined) return pick(a[cluster[0]]!, cluster[1], false);
  return '';
}

/** KubeVirt's isVMEvictable: a VMI that must live-migrate on eviction is evictable only while LiveMigratable=True. */
export function isEvictable(vmi: VirtualMachineInstance): boolean {
  if (vmi.spec.evictionStrategy !== 'LiveMigrate') return true;
  return hasVmiConditionWithStatus(vmi, VMIConditionType.LiveMigratable);
}

/** kubevirt_vmi_info's labels, in KubeVirt's order ('' values are left out when written); `vmiPod` the running launcher pod's name. Pure. */
export function vmiInfoLabels(vmi: VirtualMachineInstance, vendor: VendorLookup = () => undefined, vmiPod = ''): Record<string, string> {
  const a = vmi.metadata?.annotations ?? {};
  const os = vmi.status?.guestOSInfo;
  return {
    node: vmi.status?.nodeName ?? '',
    namespace: vmi.metadata?.namespace ?? '',
    name: vmi.metadata?.name ?? '',
    phase: (vmi.status?.phase ?? '').toLowerCase(),
    os: a[VmiInfoAnnotation.OS] ?? '',
    workload: a[VmiInfoAnnotation.Workload] ?? '',
    flavor: a[VmiInfoAnnotation.Flavor] ?? '',
    instance_type: referenced(vmi, vendor, [VmiInfoAnnotation.Instancetype, 'VirtualMachineInstancetype', true], [VmiInfoAnnotation.ClusterInstancetype, 'VirtualMachineClusterInstancetype']),
    preference: referenced(vmi, vendor, [VmiInfoAnnotation.Preference, 'VirtualMachinePreference', true], [VmiInfoAnnotation.ClusterPreference, 'VirtualMachineClusterPreference']),
    guest_os_kernel_release: os?.kernelRelease ?? '',
    guest_os_machine: vmi.status?.machine?.type ?? '',
    guest_os_arch: os?.machine ?? '',
    guest_os_name: os?.name ?? '',
    guest_os_version_id: os?.versionId ?? '',
    evictable: String(isEvictable(vmi)),
    outdated: String(vmi.metadata?.labels?.[Label.OutdatedLauncherImage] !== undefined),
    vmi_pod: vmiPod,
  };
}

/** The VMI's own families into `out`. Pure. */
export function vmiMetrics(vmi: VirtualMachineInstance, out: FamilyBuilder, vendor?: VendorLookup, vmiPod = ''): void {
  out.add(VmiMetric.info, vmiInfoLabels(vmi, vendor, vmiPod), 1);
  const overhead = vmi.status?.memory?.memoryOverhead;
  if (overhead !== undefined) {
    let bytes: number | undefined;
    try { bytes = quantityToNumber(overhead); } catch { bytes = undefined; }
    out.add(VmiMetric.launcherMemoryOverhead, { namespace: vmi.metadata?.namespace ?? '', name: vmi.metadata?.name ?? '' }, bytes);
  }
}

// Where a launcher pod may run (pkg/virt-controller/services/nodeselectorrenderer.go and the
// affinity helpers of template.go): node labels the node agent and its labeller publish.
import { DEFAULT_CPU_MODEL, CPU_MODEL_HOST_PASSTHROUGH, Label, LabelPrefix } from '../../src/api/constants.ts';
import type { Affinity, VirtualMachineInstance } from '../../src/api/types.ts';

/**
 * The pod's nodeSelector: `kubevirt.io/schedulable: "true"`, the architecture when the VMI names
 * one, the cluster's `nodeSelectors`, the VMI's own; then `"true"` labels for dedicated CPUs
 * (`kubevirt.io/cpumanager`), a named CPU model, the machine type, required CPU features,
 * realtime and SEV.
 */
export function renderNodeSelector(vmi: VirtualMachineInstance, clusterNodeSelectors: Readonly<Record<string, string>>): Record<string, string> {
  const sel: Record<string, string> = { [Label.NodeSchedulable]: 'true' };
  if (vmi.spec.architecture) sel[Label.KubernetesArch] = vmi.spec.architecture.toLowerCase();
  Object.assign(sel, clusterNodeSelectors, vmi.spec.nodeSelector ?? {});
  const cpu = vmi.spec.domain.cpu;
  const enable = (label: string) => {
    sel[label] = 'true';
  };
  if (cpu?.dedicatedCpuPlacement) enable(Label.KubevirtCPUManager);
  if (cpu?.model && cpu.model !== DEFAULT_CPU_MODEL && cpu.model !== CPU_MODEL_HOST_PASSTHROUGH) enable(LabelPrefix.CPUModel + cpu.model);
  const machineType = vmi.status?.machine?.type || vmi.spec.domain.machine?.type;
  if (machineType) enable(LabelPrefix.MachineType + machineType);
  if (cpu?.model) {
    for (const f of cpu.features ?? []) if (f.policy === undefined || f.policy === '' || f.policy === 'require') enable(LabelPrefix.CPUFeature + f.name);
  }
  if (cpu?.realtime !== undefined) enable(Label.Realtime);
  const ls = vmi.spec.domain.launchSecurity;
  if (ls?.sev !== undefined) {
    enable(Label.SEV);
    if (ls.sev.policy?.encryptedState === true) enable(Label.SEVES);
  }
  if (ls?.snp !== undefined) enable(Label.SEVSNP);
  if (ls?.tdx !== undefined) enable(Label.TDX);
  return sel;
}

/** `modifyNodeAffintyToRejectLabel`: AND a `DoesNotExist` requirement into every required term. */
function rejectLabel(affinity: Affinity | undefined, label: string): Affinity {
  const out: Affinity = structuredClone(affinity ?? {});
  const requirement = { key: label, operator: 'DoesNotExist' as const };
  const na = (out.nodeAffinity = out.nodeAffinity ?? {});
  const required = na.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required || required.nodeSelectorTerms.length === 0) {
    na.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [{ matchExpressions: [requirement] }] };
  } else {
    for (const term of required.nodeSelectorTerms) term.matchExpressions = [...(term.matchExpressions ?? []), requirement];
  }
  return out;
}

/**
 * The pod's affinity: the VMI's, plus a node requirement that the host-model CPU of the node is
 * not obsolete (when the CPU model is host-model or unset) and that forbidden CPU features are
 * absent. Undefined when nothing applies.
 */
export function renderAffinity(vmi: VirtualMachineInstance): Affinity | undefined {
  let affinity = vmi.spec.affinity ? structuredClone(vmi.spec.affinity) : undefined;
  const cpu = vmi.spec.domain.cpu;
  if (!cpu || !cpu.model || cpu.model === DEFAULT_CPU_MODEL) affinity = rejectLabel(affinity, Label.NodeHostModelIsObsolete);
  for (const f of cpu?.features ?? []) if (f.policy === 'forbid') affinity = rejectLabel(affinity, LabelPrefix.CPUFeature + f.name);
  return affinity;
}

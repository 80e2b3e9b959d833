// The migration target pod (pkg/virt-controller/services/template.go RenderMigrationManifest +
// migration.go createTargetPod): the VMI's launch manifest with container-disk images pinned to the
// digests the source pod runs, marked with the migration's UID and name, kept off the source node
// by a required pod anti-affinity on `kubevirt.io/created-by`, restricted by the migration's
// addedNodeSelector, to nodes that can run the source's host-model CPU and share its CPU vendor,
// and placed in the source's SELinux level.
import { DEFAULT_CPU_MODEL, Annotation, Label, LabelPrefix } from '../../src/api/constants.ts';
import { imageIDsFromSourcePod } from '../vmi/container-disk.ts';
import { renderLaunchManifest, type LaunchManifestOptions } from '../vmi/launcher-pod.ts';
import type { Pod } from '../pod.ts';
import type { RenderConfig } from '../vmi/render-config.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';

export class MigrationTargetPodError extends Error {
  override name = 'MigrationTargetPodError';
  constructor(m: VirtualMachineInstanceMigration, why: string) {
    super(`migration ${m.metadata?.namespace ?? ''}/${m.metadata?.name ?? ''}: cannot render the target pod: ${why}`);
  }
}

export interface TargetPodOptions extends Omit<LaunchManifestOptions, 'imageIDs'> {
  /** Labels of the node the VMI runs on (host-model CPU and vendor labels come from there). */
  readonly sourceNodeLabels: Readonly<Record<string, string>>;
  /** `migrations.matchSELinuxLevelOnMigration` (default true). */
  readonly matchSELinuxLevel?: boolean;
}

/** `getHostCpuModelFromMap`: the host-model CPU label and required-feature labels, as target selectors. */
export function hostModelSelectors(labels: Readonly<Record<string, string>>): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let model: string | undefined;
  let modelValue = '';
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith(LabelPrefix.HostModelCPU)) {
      model = k.slice(LabelPrefix.HostModelCPU.length);
      modelValue = v;
    }
    if (k.startsWith(LabelPrefix.HostModelRequiredFeatures)) out[LabelPrefix.CPUFeature + k.slice(LabelPrefix.HostModelRequiredFeatures.length)] = v;
  }
  if (model === undefined) return undefined;
  out[LabelPrefix.SupportedHostModelMigrationCPU + model] = modelValue;
  return out;
}

const vendorKey = (labels: Readonly<Record<string, string>> | undefined) => Object.keys(labels ?? {}).find((k) => k.startsWith(LabelPrefix.CPUVendor));

/** The SELinux level (`s0:c1,c2`) of a context `user:role:type:level`; undefined for "none"/unlabelled. */
export function selinuxLevel(context: string): string | undefined {
  const parts = context.split(':');
  return parts.length >= 4 ? parts.slice(3).join(':') : undefined;
}

export function renderMigrationTargetPod(
  vmi: VirtualMachineInstance,
  migration: VirtualMachineInstanceMigration,
  sourcePod: Pod,
  cfg: RenderConfig,
  opts: TargetPodOptions,
): Pod {
  let imageIDs: Map<string, string>;
  try {
    imageIDs = imageIDsFromSourcePod(vmi, sourcePod.status?.containerStatuses ?? []);
  } catch (e) {
    throw new MigrationTargetPodError(migration, `can not proceed with the migration when no reproducible image digest can be detected: ${(e as Error).message}`);
  }
  const pod = renderLaunchManifest(vmi, cfg, { ...opts, imageIDs });
  const spec = pod.spec!;

  // never next to the source (or any other pod of this VMI)
  const term = { labelSelector: { matchLabels: { [Label.CreatedBy]: vmi.metadata?.uid ?? '' } }, topologyKey: Label.KubernetesHostname };
  spec.affinity = spec.affinity ?? {};
  spec.affinity.podAntiAffinity = spec.affinity.podAntiAffinity ?? {};
  spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution = [...(spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution ?? []), term];

  spec.nodeSelector = { ...(migration.spec.addedNodeSelector ?? {}), ...(spec.nodeSelector ?? {}) };
  pod.metadata!.labels![Label.MigrationJobUID] = migration.metadata?.uid ?? '';
  pod.metadata!.annotations![Annotation.MigrationJobName] = migration.metadata?.name ?? '';

  if (vmi.spec.domain.cpu?.model === DEFAULT_CPU_MODEL) {
    let pinned: Record<string, string> = {};
    let migratedBefore = false;
    for (const [k, v] of Object.entries(sourcePod.spec?.nodeSelector ?? {})) {
      if (k.includes(LabelPrefix.CPUFeature) || k.includes(LabelPrefix.SupportedHostModelMigrationCPU)) {
        pinned[k] = v;
        migratedBefore = true;
      }
    }
    if (!migratedBefore) {
      const fromNode = hostModelSelectors(opts.sourceNodeLabels);
      if (!fromNode) throw new MigrationTargetPodError(migration, `unable to locate host cpu model, the source node does not carry a label "${LabelPrefix.HostModelCPU}<model>"`);
      pinned = fromNode;
    }
    Object.assign(spec.nodeSelector, pinned);
  }

  if (!vendorKey(spec.nodeSelector)) {
    const key = vendorKey(opts.sourceNodeLabels);
    if (key) spec.nodeSelector[key] = 'true';
  }

  if (opts.matchSELinuxLevel !== false) {
    const ctx = vmi.status?.selinuxContext;
    if (ctx === undefined || ctx === '') throw new MigrationTargetPodError(migration, 'SELinux context not set on VMI status');
    if (ctx !== 'none') {
      const level = selinuxLevel(ctx);
      if (level) spec.securityContext = { ...(spec.securityContext ?? {}), seLinuxOptions: { level } };
    }
  }
  return pod;
}

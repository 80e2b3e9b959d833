// Hotplug attachment pods, as KubeVirt's VMI controller keeps them (pkg/virt-controller/watch/vmi
// hotplug.go, services/template.go RenderHotplugAttachmentPodTemplate, storage/hotplug
// VolumesToAttach): the claims of volumes hotplugged into a running VMI are not in its launcher pod,
// so one pod per VMI, `hp-volume-<random>`, owned by the launcher pod and pinned to its node, mounts
// every one of them; the kubelet attaches and mounts them on the node, and the node agent
// bind-mounts each claim's disk.img from there into the launcher pod (handler/hotplug/disk-mounter.ts).
// When the set of volumes changes a new pod with the new set is created, and the old one deleted
// once the new one runs and no volume that left the VMI still needs it; with no hotplug volume
// left, or the VMI finished, every attachment pod goes.
//
// qvirt's one exception: the local mode's local-path claims are directories of this machine, which
// the node agent reaches without a pod (it links them); they get no attachment pod.
//
// Pure functions of the VMI, its launcher pod, the attachment pods and the claims.
import { Annotation, ConditionReason, EventReason, HOTPLUG_DISK_APP_LABEL_VALUE, Label, LauncherContainer, NON_ROOT_UID, isFinalVMIPhase } from '../../src/api/constants.ts';
import { ATTACHMENT_POD_GENERATE_NAME_PREFIX, HOTPLUG_ATTACHMENT_COMMAND, HOTPLUG_ATTACHMENT_DIR, PodPhase, PodVolumes } from '../constants.ts';
import { controllerOf, isPodReady, podIsDown } from '../pod-state.ts';
import { supportResources } from './launcher-pod.ts';
import { SupportContainer, type RenderConfig } from './render-config.ts';
import type { ClaimFacts } from './pvc-lookup.ts';
import type { Pod, PodVolume, VolumeMount } from '../pod.ts';
import type { Toleration, VirtualMachineInstance, VolumePhase, VolumeStatus } from '../../src/api/types.ts';

/** A PVC-backed volume of the VMI spec that the launcher pod does not mount. */
export interface HotplugVolume {
  readonly name: string;
  readonly claimName: string;
}

/** KubeVirt's VolumesToAttach: the spec's persistentVolumeClaim/dataVolume volumes the launcher pod does not have. */
export function volumesToAttach(vmi: VirtualMachineInstance, launcherPod: Pod): HotplugVolume[] {
  const inPod = new Set((launcherPod.spec?.volumes ?? []).map((v) => v.name));
  const out: HotplugVolume[] = [];
  for (const v of vmi.spec.volumes ?? []) {
    if (inPod.has(v.name)) continue;
    const claimName = v.persistentVolumeClaim?.claimName ?? v.dataVolume?.name;
    if (claimName) out.push({ name: v.name, claimName });
  }
  return out;
}

/** Hotplug volumes whose claim is a directory of this machine (local mode): no attachment pod. */
export function isNodeLocal(v: HotplugVolume, claims: ReadonlyMap<string, ClaimFacts>): boolean {
  return claims.get(v.claimName)?.nodeLocal === true;
}

/** KubeVirt's VolumeReadyToAttachToNode: the claim exists and is bound (and needs a pod at all). */
export function readyVolumes(volumes: readonly HotplugVolume[], claims: ReadonlyMap<string, ClaimFacts>): HotplugVolume[] {
  return volumes.filter((v) => claims.get(v.claimName)?.phase === 'Bound' && !isNodeLocal(v, claims));
}

/** The claims an attachment pod mounts, by volume name. */
export function attachmentPodClaims(pod: Pod): Map<string, string> {
  return new Map((pod.spec?.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [[v.name, v.persistentVolumeClaim.claimName] as const] : [])));
}

/** podVolumesMatchesReadyVolumes: the pod mounts exactly these volumes (with these claims). */
export function podMatchesVolumes(pod: Pod, volumes: readonly HotplugVolume[]): boolean {
  const claims = attachmentPodClaims(pod);
  return claims.size === volumes.length && volumes.every((v) => claims.get(v.name) === v.claimName);
}

/** A pod the kubelet runs: its only container is ready (what processHotplugVolumeStatus waits for). */
export function attachmentPodReady(pod: Pod): boolean {
  const s = pod.status?.containerStatuses ?? [];
  return s.length === 1 && s[0]!.ready && pod.metadata?.deletionTimestamp == null;
}

export function isAttachmentPod(pod: Pod): boolean {
  return pod.metadata?.labels?.[Label.App] === HOTPLUG_DISK_APP_LABEL_VALUE && controllerOf(pod.metadata)?.kind === 'Pod';
}

/** `namespace/name` of the VMI an attachment pod works for (its annotation: the owner is the launcher pod). */
export function attachmentPodVMIKey(pod: Pod): string | undefined {
  const name = pod.metadata?.annotations?.[Annotation.OwnerVMIName];
  return isAttachmentPod(pod) && name ? `${pod.metadata?.namespace ?? ''}/${name}` : undefined;
}

/** hotplugPodTolerations: the node conditions an attachment pod must not be kept off by. */
const HOTPLUG_POD_TOLERATIONS: readonly Toleration[] = [
  'node.kubernetes.io/unschedulable',
  'node.kubernetes.io/network-unavailable',
  'node.kubernetes.io/disk-pressure',
  'node.kubernetes.io/memory-pressure',
  'node.kubernetes.io/pid-pressure',
].map((key) => ({ key, operator: 'Exists', effect: 'NoSchedule' }));

/** The launcher pod's tolerations plus KubeVirt's, sorted by key, neighbours that are equal dropped (slices.Compact). */
function tolerations(launcherPod: Pod): Toleration[] {
  const all = [...HOTPLUG_POD_TOLERATIONS, ...(launcherPod.spec?.tolerations ?? [])].sort((a, b) => (a.key ?? '').localeCompare(b.key ?? ''));
  return all.filter((t, i) => i === 0 || JSON.stringify(t) !== JSON.stringify(all[i - 1]));
}

/** matchSELinuxLevelOfVMI: the level of the VMI's launcher (`user:role:type:level`), `s0` when it runs without SELinux. */
export function selinuxLevel(vmi: VirtualMachineInstance): string {
  const ctx = vmi.status?.selinuxContext;
  if (!ctx || ctx === 'none') return 's0';
  const parts = ctx.split(':');
  return parts.length > 3 ? parts.slice(3).join(':') : 's0';
}

/**
 * RenderHotplugAttachmentPodTemplate: the launcher image running the container-disk helper as the
 * qemu user with nothing else, a claim per volume (block claims as devices, filesystem claims mounted
 * unless the volume is already MountedToPod or Ready), the launcher pod's node by required node
 * affinity, deleted without a grace period. No service account token: the pod needs no API access.
 */
export function renderAttachmentPod(vmi: VirtualMachineInstance, launcherPod: Pod, volumes: readonly HotplugVolume[], claims: ReadonlyMap<string, ClaimFacts>, cfg: RenderConfig): Pod {
  const phases = new Map((vmi.status?.volumeStatus ?? []).filter((s) => s.hotplugVolume).map((s) => [s.name, s.phase]));
  const podVolumes: PodVolume[] = [{ name: PodVolumes.HotplugDisks, emptyDir: {} }];
  const mounts: VolumeMount[] = [{ name: PodVolumes.HotplugDisks, mountPath: HOTPLUG_ATTACHMENT_DIR, mountPropagation: 'HostToContainer' }];
  const devices: { name: string; devicePath: string }[] = [];
  for (const v of volumes) {
    podVolumes.push({ name: v.name, persistentVolumeClaim: { claimName: v.claimName } });
    const claim = claims.get(v.claimName);
    if (!claim) continue;
    if (claim.volumeMode === 'Block') devices.push({ name: v.name, devicePath: `${HOTPLUG_ATTACHMENT_DIR}/${v.name}/${claim.uid ?? ''}` });
    else if (phases.get(v.name) !== 'Ready' && phases.get(v.name) !== 'MountedToPod') mounts.push({ name: v.name, mountPath: `/${v.name}` });
  }
  const selinux: { type?: string; level: string } = { level: selinuxLevel(vmi) };
  if (cfg.selinuxLauncherType) selinux.type = cfg.selinuxLauncherType;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: ATTACHMENT_POD_GENERATE_NAME_PREFIX,
      namespace: vmi.metadata?.namespace ?? '',
      labels: { [Label.App]: HOTPLUG_DISK_APP_LABEL_VALUE },
      annotations: { [Annotation.OwnerVMIName]: vmi.metadata?.name ?? '', [Annotation.OwnerVMIUID]: vmi.metadata?.uid ?? '' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: launcherPod.metadata?.name ?? '', uid: launcherPod.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [{
        name: LauncherContainer.HotplugDisk,
        image: cfg.launcherImage,
        imagePullPolicy: cfg.imagePullPolicy,
        command: [...HOTPLUG_ATTACHMENT_COMMAND],
        resources: supportResources(cfg, SupportContainer.HotplugAttachment, { cpu: '10m', memory: '2M' }, { cpu: '100m', memory: '80M' }, false),
        securityContext: {
          allowPrivilegeEscalation: false,
          runAsNonRoot: true,
          runAsUser: NON_ROOT_UID,
          seccompProfile: { type: 'RuntimeDefault' },
          capabilities: { drop: ['ALL'] },
          seLinuxOptions: selinux,
        },
        volumeMounts: mounts,
        ...(devices.length > 0 ? { volumeDevices: devices } : {}),
      }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: Label.KubernetesHostname, operator: 'In', values: [launcherPod.spec?.nodeName ?? ''] }] }] } } },
      tolerations: tolerations(launcherPod),
      volumes: podVolumes,
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
    },
  };
}

const created = (p: Pod) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;

/** getActiveAndOldAttachmentPods: the newest pod matching the ready volumes, and every other pod (newest first). */
export function activeAndOldPods(ready: readonly HotplugVolume[], pods: readonly Pod[]): { current: Pod | undefined; old: Pod[] } {
  let current: Pod | undefined;
  const old: Pod[] = [];
  for (const p of [...pods].sort((a, b) => created(a) - created(b))) {
    if (!podMatchesVolumes(p, ready)) { old.push(p); continue; }
    if (current) old.push(current);
    current = p;
  }
  return { current, old: old.sort((a, b) => created(b) - created(a)) };
}

/**
 * Phases of a volume that left the VMI in which its attachment pod must stay: the node still has it
 * mounted. KubeVirt waits out Ready and MountedToPod; qvirt's node agent keeps the mount until the
 * guest has released the disk, which it reports as Detaching, so that waits too.
 */
const STILL_MOUNTED: ReadonlySet<VolumePhase | undefined> = new Set<VolumePhase | undefined>(['Ready', 'MountedToPod', 'Detaching']);

export interface AttachmentPlan {
  /** Create an attachment pod for these volumes. */
  readonly create?: readonly HotplugVolume[] | undefined;
  /** Names of attachment pods to delete. */
  readonly delete: readonly string[];
  /** The pod that mounts (or will mount) the ready volumes. */
  readonly current?: Pod | undefined;
  readonly ready: readonly HotplugVolume[];
  /** Hotplug volumes whose claim is missing or not bound yet (no PVC informer: look again later). */
  readonly waiting?: boolean | undefined;
}

/** A launcher pod of the VMI and the attachment pods it owns. */
export interface LauncherAttachments {
  readonly launcher: Pod;
  readonly attachmentPods: readonly Pod[];
}

const names = (pods: readonly Pod[]) => pods.filter((p) => p.metadata?.deletionTimestamp == null).map((p) => p.metadata?.name ?? '');

/**
 * What to do about a VMI's attachment pods (the sync of watch/vmi). The VMI finished: delete them
 * all; a launcher pod that finished: delete its (orphaned) ones. The VMI going away, or its current
 * launcher pod not ready or terminating: nothing more (they go with the launcher pod). Otherwise
 * handleHotplugVolumes: create a pod for the ready volumes when none matches them and no other is
 * still starting; delete the old pods, except the newest one that runs while its replacement does
 * not yet, and any pod still holding a volume that left the VMI but is still mounted on the node.
 */
export function planAttachmentPods(vmi: VirtualMachineInstance, current: Pod | undefined, launchers: readonly LauncherAttachments[], claims: ReadonlyMap<string, ClaimFacts>): AttachmentPlan {
  if (isFinalVMIPhase(vmi.status?.phase)) return { delete: launchers.flatMap((l) => names(l.attachmentPods)), ready: [] };
  const orphaned = launchers.filter((l) => podIsDown(l.launcher)).flatMap((l) => names(l.attachmentPods));
  if (vmi.metadata?.deletionTimestamp != null || !current || current.metadata?.deletionTimestamp != null || !isPodReady(current)) return { delete: orphaned, ready: [] };
  const pods = launchers.find((l) => l.launcher.metadata?.uid === current.metadata?.uid)?.attachmentPods ?? [];
  const wanted = volumesToAttach(vmi, current).filter((v) => !isNodeLocal(v, claims));
  const ready = readyVolumes(wanted, claims);
  const { current: pod, old } = activeAndOldPods(ready, pods);
  const pending = old.some((p) => p.status?.phase !== PodPhase.Running && p.status?.phase !== PodPhase.Succeeded && p.status?.phase !== PodPhase.Failed);
  const create = !pod && !pending && ready.length > 0 ? ready : undefined;

  const inSpec = new Set((vmi.spec.volumes ?? []).map((v) => v.name));
  const leaving = new Map((vmi.status?.volumeStatus ?? []).filter((s) => s.hotplugVolume && !inSpec.has(s.name)).map((s) => [s.name, s.phase]));
  const currentRuns = pod?.status?.phase === PodPhase.Running;
  let keptRunning = false;
  const del: string[] = [...orphaned];
  for (const p of old) {
    if (p.metadata?.deletionTimestamp != null) continue;
    if (!keptRunning && p.status?.phase === PodPhase.Running && ready.length > 0 && !currentRuns) { keptRunning = true; continue; }
    if ([...attachmentPodClaims(p).keys()].some((name) => leaving.has(name) && STILL_MOUNTED.has(leaving.get(name)))) continue;
    del.push(p.metadata?.name ?? '');
  }
  return { create, delete: del, current: pod, ready, waiting: ready.length < wanted.length };
}

/** getVolumePhaseMessageReason: a volume's phase while no attachment pod mounts it, from its claim. */
function claimPhase(claimName: string, claims: ReadonlyMap<string, ClaimFacts>): Pick<VolumeStatus, 'phase' | 'reason' | 'message'> {
  const c = claims.get(claimName);
  if (!c) return { phase: 'Pending', reason: ConditionReason.FailedPvcNotFound, message: `PVC ${claimName} not found` };
  if (c.phase === 'Bound') return { phase: 'Bound', reason: ConditionReason.PVCNotReady, message: 'PVC is in phase Bound' };
  if (c.phase === 'Lost') return { phase: 'Pending', reason: ConditionReason.PVCNotReady, message: 'PVC is in phase Lost' };
  return { phase: 'Pending', reason: ConditionReason.PVCNotReady, message: 'PVC is in phase ClaimPending' };
}

/** Phases the node agent writes once it acts (it owns them from there). */
const NODE_PHASES: ReadonlySet<VolumePhase | undefined> = new Set<VolumePhase | undefined>(['MountedToPod', 'Ready']);
const ATTACHABLE: ReadonlySet<VolumePhase | undefined> = new Set<VolumePhase | undefined>([undefined, 'Pending', 'Bound']);

export interface AttachmentVolumeStatus {
  /** The new volumeStatus; undefined when nothing changed. */
  readonly volumeStatus: VolumeStatus[] | undefined;
  /** Normal events (processHotplugVolumeStatus's SuccessfulCreate per volume attached to the node). */
  readonly events: ReadonlyArray<{ reason: string; message: string }>;
}

/**
 * processHotplugVolumeStatus for each hotplug volume that takes an attachment pod: the pod's name,
 * its UID once its container is ready (the node agent mounts from that pod), phase AttachedToNode
 * from Pending/Bound; with no pod, the claim's phase (Pending/Bound) — except a volume the node
 * agent already mounted or plugged (MountedToPod, Ready), whose phase the agent owns. Node-local
 * claims are left to the node agent entirely.
 */
export function withAttachmentVolumeStatus(vmi: VirtualMachineInstance, launcherPod: Pod, plan: AttachmentPlan, claims: ReadonlyMap<string, ClaimFacts>): AttachmentVolumeStatus {
  const hot = volumesToAttach(vmi, launcherPod).filter((v) => !isNodeLocal(v, claims));
  if (hot.length === 0) return { volumeStatus: undefined, events: [] };
  const ready = new Set(plan.ready.map((v) => v.name));
  const out = [...(vmi.status?.volumeStatus ?? [])];
  const events: Array<{ reason: string; message: string }> = [];
  for (const v of hot) {
    const i = out.findIndex((s) => s.name === v.name);
    const prev: VolumeStatus = i >= 0 ? out[i]! : { name: v.name, target: '' };
    const hotplugVolume = { ...prev.hotplugVolume };
    const next: VolumeStatus = { ...prev, hotplugVolume };
    const pod = ready.has(v.name) ? plan.current : undefined;
    if (!pod) {
      if (!NODE_PHASES.has(prev.phase)) {
        delete hotplugVolume.attachPodUID;
        Object.assign(next, claimPhase(v.claimName, claims));
      }
    } else {
      hotplugVolume.attachPodName = pod.metadata?.name ?? '';
      if (attachmentPodReady(pod) && pod.metadata?.uid) hotplugVolume.attachPodUID = pod.metadata.uid;
      else delete hotplugVolume.attachPodUID;
      if (ATTACHABLE.has(prev.phase)) {
        Object.assign(next, { phase: 'AttachedToNode', reason: EventReason.SuccessfulCreate, message: `Created hotplug attachment pod ${hotplugVolume.attachPodName}, for volume ${v.name}` });
        events.push({ reason: next.reason!, message: next.message! });
      } else if (prev.phase === 'Detaching') {
        // Unplugged and quickly added again: start over from the claim.
        Object.assign(next, claimPhase(v.claimName, claims));
      }
    }
    if (i >= 0) out[i] = next; else out.push(next);
  }
  const sorted = out.sort((a, b) => a.name.localeCompare(b.name));
  const changed = JSON.stringify(sorted) !== JSON.stringify(vmi.status?.volumeStatus ?? []);
  return { volumeStatus: changed ? sorted : undefined, events: changed ? events : [] };
}

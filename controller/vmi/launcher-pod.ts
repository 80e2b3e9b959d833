// The launcher pod of a VMI (pkg/virt-controller/services/template.go renderLaunchManifest),
// rendered as a pure function of the VMI, the cluster settings and a few lookups. The pod keeps
// KubeVirt's shape — names, labels, annotations, volumes, init containers, security context,
// grace periods, readiness gate — so tools written for KubeVirt find what they expect; what runs
// inside is qvirt's: `/usr/bin/qvirt launcher` with virt-launcher's flag set in `compute`,
// `qvirt tail` in `guest-console-log`, qvirt's container-disk helper in the disk containers.
import { CAP_NET_BIND_SERVICE, CAP_SYS_NICE, CONTAINER_DISK_BINARY_INIT_TARGET, CONTAINER_DISK_BINARY_SOURCE, GRACE_PERIOD_PADDING_SECONDS, LAUNCHER_COMMAND, LAUNCHER_POD_GENERATE_NAME_PREFIX, LIBVIRT_STARTUP_DELAY_SECONDS, POD_ANNOTATION_EXCLUDED_PREFIXES, PROBE_COMMAND, PodVolumes, QEMU_TIMEOUT_JITTER_RANGE_SECONDS, TAIL_COMMAND } from '../constants.ts';
import { ProbeDefaults, API_VERSION, Annotation, DEFAULT_GRACE_PERIOD_SECONDS, Kind, LAUNCHER_APP_LABEL_VALUE, Label, LauncherContainer, NON_ROOT_UID, POD_CONDITION_VM_UNPAUSED, PodPath, ROOT_UID } from '../../src/api/constants.ts';
import { virtualMachineInstanceID } from '../../src/api/vmi-id.ts';
import { mathRandomInt, type RandomInt } from '../vm/backoff.ts';
import { containerDiskContainers, containerDiskInitContainers, hasContainerDisks } from './container-disk.ts';
import { renderAffinity, renderNodeSelector } from './node-selector.ts';
import { memoryOverhead, wantsGuaranteedQOS, type MemoryOverhead } from './overhead.ts';
import { DEFAULT_VIRT_LAUNCHER_LOG_VERBOSITY, EXT_LOG_VERBOSITY_THRESHOLD, SupportContainer, supportContainerQuantity, type RenderConfig } from './render-config.ts';
import { renderComputeResources, type ResourceOptions } from './resources.ts';
import { containerDiskPullSecrets, renderVolumes, serviceAccountNameFromVolumes, type PVCInfo } from './volumes.ts';
import type { Container, ContainerProbe, ContainerResources, EnvVar, Pod, PodSecurityContext, SecurityContext } from '../pod.ts';
import type { Probe, VirtualMachineInstance } from '../../src/api/types.ts';

export interface LaunchManifestOptions extends ResourceOptions {
  /** PVCs of the VMI's namespace by claim name (block vs filesystem, access modes). */
  readonly pvcs?: ReadonlyMap<string, PVCInfo>;
  /** Container-disk images pinned by digest (migration targets). */
  readonly imageIDs?: ReadonlyMap<string, string>;
  /** Jitter source of `--qemu-timeout` (Go's rand.Intn). */
  readonly randomInt?: RandomInt;
}

export class LaunchManifestError extends Error {
  override name = 'LaunchManifestError';
  constructor(vmi: VirtualMachineInstance, field: string, why: string) {
    super(`failed to render launch manifest for VirtualMachineInstance ${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}: ${field}: ${why}`);
  }
}

/** `vmitrait.IsNonRoot`: `status.runtimeUser` non-zero (the webhook sets 107) or the legacy annotation. */
export function isNonRoot(vmi: VirtualMachineInstance): boolean {
  return (vmi.status?.runtimeUser ?? 0) !== 0 || vmi.metadata?.annotations?.['kubevirt.io/nonroot'] !== undefined;
}

/** `spec.terminationGracePeriodSeconds`, or KubeVirt's default 30. */
export function vmiGracePeriodSeconds(vmi: VirtualMachineInstance): number {
  return vmi.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_PERIOD_SECONDS;
}

/** `dns.SanitizeHostname`: `spec.hostname`, else the VMI name up to the first dot, at most 63 characters. */
export function sanitizeHostname(vmi: VirtualMachineInstance): string {
  if (vmi.spec.hostname) return vmi.spec.hostname;
  return (vmi.metadata?.name ?? '').split('.')[0]!.slice(0, 63);
}

/** The launcher pod's labels: the VMI's plus KubeVirt's identity labels. */
export function podLabels(vmi: VirtualMachineInstance, hostname: string): Record<string, string> {
  const labels: Record<string, string> = { ...(vmi.metadata?.labels ?? {}) };
  labels[Label.App] = LAUNCHER_APP_LABEL_VALUE;
  labels[Label.CreatedBy] = vmi.metadata?.uid ?? '';
  labels[Label.DeprecatedVirtualMachineName] = hostname;
  labels[Label.VirtualMachineInstanceID] = virtualMachineInstanceID(vmi.metadata?.name ?? '');
  const istio = vmi.metadata?.annotations?.[Annotation.IstioInject];
  if (istio !== undefined) labels[Annotation.IstioInject] = istio;
  return labels;
}

/** The pod's annotations: `kubevirt.io/domain`, the VMI's (minus kubectl and api-version ones), and KubeVirt's markers. */
export function podAnnotations(vmi: VirtualMachineInstance): Record<string, string> {
  const out: Record<string, string> = { [Annotation.Domain]: vmi.metadata?.name ?? '' };
  for (const [k, v] of Object.entries(vmi.metadata?.annotations ?? {})) {
    if (POD_ANNOTATION_EXCLUDED_PREFIXES.some((p) => k.startsWith(p))) continue;
    out[k] = v;
  }
  out[Annotation.DefaultContainer] = LauncherContainer.Compute;
  out[Annotation.MigrationTransportUnix] = 'true';
  out[Annotation.RequestEvictOnly] = '';
  return out;
}

/** `kubevirt.io/keep-launcher-alive-after-failure*` with value "" or `true…` → `--keep-after-failure`. */
function keepLauncherAfterFailure(vmi: VirtualMachineInstance): boolean {
  return Object.entries(vmi.metadata?.annotations ?? {}).some(([k, v]) => k.startsWith(Annotation.KeepLauncherAfterFailure) && (v === '' || v.startsWith('true')));
}

/** virt-launcher's flags, in KubeVirt's order, for `qvirt launcher`. */
export function launcherArgs(vmi: VirtualMachineInstance, cfg: RenderConfig, randomInt: RandomInt): string[] {
  const grace = vmiGracePeriodSeconds(vmi) + GRACE_PERIOD_PADDING_SECONDS;
  const args = [
    '--qemu-timeout', `${randomInt(QEMU_TIMEOUT_JITTER_RANGE_SECONDS) + cfg.qemuTimeoutBaseSeconds}s`,
    '--name', vmi.metadata?.name ?? '',
    '--uid', vmi.metadata?.uid ?? '',
    '--namespace', vmi.metadata?.namespace ?? '',
    '--kubevirt-share-dir', PodPath.Public,
    '--ephemeral-disk-dir', PodPath.EphemeralDisks,
    '--container-disk-dir', PodPath.ContainerDisks,
    '--grace-period-seconds', String(grace),
    '--hook-sidecars', '0',
    '--ovmf-path', cfg.ovmfPath,
    '--disk-memory-limit', String(cfg.diskMemoryLimitBytes),
    '--hypervisor', cfg.hypervisor,
  ];
  if (isNonRoot(vmi)) args.push('--run-as-nonroot');
  const filters = vmi.metadata?.annotations?.[Annotation.CustomLibvirtLogFilters];
  if (filters !== undefined) args.push('--libvirt-log-filters', filters);
  if (cfg.useEmulation) args.push('--allow-emulation');
  if (keepLauncherAfterFailure(vmi)) args.push('--keep-after-failure');
  if (vmi.metadata?.annotations?.[Annotation.FuncTestLauncherFailFast] !== undefined) args.push('--simulate-crash');
  return args;
}

/** A VMI probe as the compute container's probe: exec and guest-agent pings go through `qvirt probe`. */
export function renderProbe(vmi: VirtualMachineInstance, probe: Probe): ContainerProbe {
  const timeout = probe.timeoutSeconds ?? ProbeDefaults.timeoutSeconds;
  const out: ContainerProbe = {
    initialDelaySeconds: (probe.initialDelaySeconds ?? 0) + LIBVIRT_STARTUP_DELAY_SECONDS,
    timeoutSeconds: timeout,
    periodSeconds: probe.periodSeconds ?? ProbeDefaults.periodSeconds,
    successThreshold: probe.successThreshold ?? ProbeDefaults.successThreshold,
    failureThreshold: probe.failureThreshold ?? ProbeDefaults.failureThreshold,
  };
  const domainName = `${vmi.metadata?.namespace ?? ''}_${vmi.metadata?.name ?? ''}`;
  if (probe.guestAgentPing !== undefined) {
    out.exec = { command: [...PROBE_COMMAND, '--domainName', domainName, '--timeoutSeconds', String(timeout), '--guestAgentPing'] };
    out.timeoutSeconds = timeout + 1;
  } else if (probe.exec?.command && probe.exec.command.length > 0) {
    const [argv0, ...rest] = probe.exec.command;
    out.exec = { command: [...PROBE_COMMAND, '--domainName', domainName, '--timeoutSeconds', String(timeout), '--command', argv0!, '--', ...rest] };
    out.timeoutSeconds = timeout + 1;
  } else if (probe.exec) {
    out.exec = { ...probe.exec };
  }
  if (probe.httpGet) out.httpGet = structuredClone(probe.httpGet);
  if (probe.tcpSocket) out.tcpSocket = structuredClone(probe.tcpSocket);
  return out;
}

/** `securityContext(userId, capabilities)` of rendercontainer.go. */
function containerSecurityContext(uid: number, capabilities: SecurityContext['capabilities']): SecurityContext {
  const nonRoot = uid !== 0;
  const sc: SecurityContext = { runAsUser: uid, runAsNonRoot: nonRoot };
  if (capabilities) sc.capabilities = capabilities;
  if (nonRoot) {
    sc.runAsGroup = uid;
    sc.allowPrivilegeEscalation = false;
  }
  return sc;
}

function podSecurityContext(nonRoot: boolean): PodSecurityContext {
  return nonRoot ? { fsGroup: NON_ROOT_UID, runAsUser: NON_ROOT_UID, runAsGroup: NON_ROOT_UID, runAsNonRoot: true } : { fsGroup: NON_ROOT_UID, runAsUser: ROOT_UID };
}

/** Whether the serial console is logged (and so the `guest-console-log` sidecar exists). */
export function serialConsoleLogEnabled(vmi: VirtualMachineInstance, cfg: RenderConfig): boolean {
  const d = vmi.spec.domain.devices;
  if (d.autoattachSerialConsole === false) return false;
  if (d.logSerialConsole !== undefined) return d.logSerialConsole;
  return !cfg.serialConsoleLogDisabled;
}

/** requests/limits of a helper container: defaults, replaced per resource by the cluster's supportContainerResources. */
export function supportResources(cfg: RenderConfig, type: string, requests: Record<string, string>, limits: Record<string, string>, guaranteed: boolean): ContainerResources {
  const req: Record<string, string> = {};
  const lim: Record<string, string> = {};
  for (const [k, v] of Object.entries(requests)) req[k] = supportContainerQuantity(cfg, type, 'requests', k) ?? v;
  for (const [k, v] of Object.entries(limits)) lim[k] = supportContainerQuantity(cfg, type, 'limits', k) ?? v;
  if (guaranteed) {
    req['cpu'] = lim['cpu']!;
    req['memory'] = lim['memory']!;
  }
  return { requests: sortedKeys(req), limits: sortedKeys(lim) };
}

function guestConsoleLogContainer(vmi: VirtualMachineInstance, cfg: RenderConfig, guaranteed: boolean, verbosity: number): Container {
  const resources = supportResources(cfg, SupportContainer.GuestConsoleLog, { memory: '35M', cpu: '5m' }, { memory: '60M', cpu: '15m' }, guaranteed);
  return {
    name: LauncherContainer.GuestConsoleLog,
    image: cfg.launcherImage,
    imagePullPolicy: cfg.imagePullPolicy,
    command: [...TAIL_COMMAND],
    args: ['--logfile', `${PodPath.Private}/${vmi.metadata?.uid ?? ''}/virt-serial0-log`],
    env: [{ name: 'VIRT_LAUNCHER_LOG_VERBOSITY', value: String(verbosity) }],
    volumeMounts: [{ name: PodVolumes.Private, mountPath: PodPath.Private, readOnly: true }],
    resources,
    securityContext: { runAsUser: NON_ROOT_UID, runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    restartPolicy: 'Always',
  };
}

function containerDiskBinaryInitContainer(cfg: RenderConfig, nonRoot: boolean, guaranteed: boolean): Container {
  const type = SupportContainer.ContainerDisk;
  const resources: ContainerResources = guaranteed
    ? supportResources(cfg, type, {}, { cpu: '10m', memory: '40M' }, true)
    : supportResources(cfg, type, { cpu: '10m', memory: '1M' }, { cpu: '100m', memory: '40M' }, false);
  return {
    name: LauncherContainer.ContainerDiskBinary,
    image: cfg.launcherImage,
    imagePullPolicy: cfg.imagePullPolicy,
    command: ['/usr/bin/cp'],
    args: ['--preserve=all', CONTAINER_DISK_BINARY_SOURCE, CONTAINER_DISK_BINARY_INIT_TARGET],
    volumeMounts: [{ name: PodVolumes.VirtBinShareDir, mountPath: PodPath.InitBinDir }],
    resources,
    securityContext: containerSecurityContext(nonRoot ? NON_ROOT_UID : ROOT_UID, { drop: ['ALL'] }),
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

/** Resources of every container-disk container (`getMinimalInitContainerDiskResources`). */
export function containerDiskResources(cfg: RenderConfig, guaranteed: boolean): ContainerResources {
  const r = supportResources(cfg, SupportContainer.ContainerDisk, { cpu: '1m', memory: '1M' }, { cpu: '10m', memory: '40M' }, guaranteed);
  return { requests: sortedKeys({ ...r.requests, 'ephemeral-storage': '50M' }), limits: r.limits! };
}

const sortedKeys = (m: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(m).sort(([a], [b]) => a.localeCompare(b)));

/** Effective launcher verbosity and whether to export it (VMI label `logVerbosity` or non-default cluster value). */
function launcherVerbosity(vmi: VirtualMachineInstance, cfg: RenderConfig): { value: number; exported: boolean } {
  const cluster = cfg.virtLauncherLogVerbosity ?? DEFAULT_VIRT_LAUNCHER_LOG_VERBOSITY;
  const label = vmi.metadata?.labels?.[Label.LogVerbosity];
  if (label !== undefined) {
    const n = Number.parseInt(label, 10);
    if (!Number.isFinite(n) || String(n) !== label.trim()) throw new LaunchManifestError(vmi, `metadata.labels[${Label.LogVerbosity}]`, `verbosity ${JSON.stringify(label)} is not an integer`);
    return { value: n, exported: true };
  }
  return { value: cluster, exported: cluster !== DEFAULT_VIRT_LAUNCHER_LOG_VERBOSITY };
}

/**
 * `renderLaunchManifest`: the virt-launcher pod for this VMI (a pod to create with generateName).
 * Throws PvcNotFoundError when a PVC it uses is missing, LaunchManifestError on invalid input.
 */
export function renderLaunchManifest(vmi: VirtualMachineInstance, cfg: RenderConfig, opts: LaunchManifestOptions = {}): Pod {
  const name = vmi.metadata?.name;
  const namespace = vmi.metadata?.namespace;
  if (!name) throw new LaunchManifestError(vmi, 'metadata.name', 'must not be empty');
  if (!namespace) throw new LaunchManifestError(vmi, 'metadata.namespace', 'must not be empty');
  const nonRoot = isNonRoot(vmi);
  const uid = nonRoot ? NON_ROOT_UID : ROOT_UID;
  const guaranteed = vmi.spec.domain.cpu?.dedicatedCpuPlacement === true || wantsGuaranteedQOS(vmi);
  const imageIDs = opts.imageIDs ?? new Map<string, string>();

  const overhead: MemoryOverhead = memoryOverhead(vmi, { architecture: cfg.defaultArchitecture, additionalGuestMemoryOverheadRatio: cfg.additionalGuestMemoryOverheadRatio });
  const resources = renderComputeResources(vmi, cfg, overhead, opts);
  const rendered = renderVolumes(vmi, opts.pvcs ?? new Map());
  const verbosity = launcherVerbosity(vmi, cfg);

  // compute
  const env: EnvVar[] = [];
  if (uid !== 0) {
    env.push({ name: 'XDG_CACHE_HOME', value: PodPath.Private }, { name: 'XDG_CONFIG_HOME', value: PodPath.Private }, { name: 'XDG_RUNTIME_DIR', value: '/var/run' });
  }
  if (rendered.sharedFilesystemPaths.length > 0) env.push({ name: 'SHARED_FILESYSTEM_PATHS', value: rendered.sharedFilesystemPaths.join(':') });
  if (verbosity.exported) env.push({ name: 'VIRT_LAUNCHER_LOG_VERBOSITY', value: String(verbosity.value) });
  const debugLabel = (l: string) => (vmi.metadata?.labels?.[l] ?? '').toLowerCase() === 'true';
  if (debugLabel(Label.DebugLogs) || verbosity.value > EXT_LOG_VERBOSITY_THRESHOLD) env.push({ name: 'LIBVIRT_DEBUG_LOGS', value: '1' });
  if (debugLabel(Label.VirtiofsdDebugLogs) || verbosity.value > EXT_LOG_VERBOSITY_THRESHOLD) env.push({ name: 'VIRTIOFSD_DEBUG_LOGS', value: '1' });
  env.push({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });

  const capabilities: SecurityContext['capabilities'] = nonRoot ? { add: [CAP_NET_BIND_SERVICE], drop: ['ALL'] } : { add: [CAP_NET_BIND_SERVICE, CAP_SYS_NICE] };
  const compute: Container = {
    name: LauncherContainer.Compute,
    image: cfg.launcherImage,
    imagePullPolicy: cfg.imagePullPolicy,
    command: [...LAUNCHER_COMMAND],
    args: launcherArgs(vmi, cfg, opts.randomInt ?? mathRandomInt),
    env,
    resources,
    volumeMounts: rendered.mounts,
    securityContext: containerSecurityContext(uid, capabilities),
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  if (rendered.devices.length > 0) compute.volumeDevices = rendered.devices;
  const ports = (vmi.spec.domain.devices.interfaces ?? []).flatMap((i) => (i.ports ?? []).map((p) => ({ ...(p.name !== undefined ? { name: p.name } : {}), containerPort: p.port, protocol: p.protocol || 'TCP' })));
  if (ports.length > 0) compute.ports = ports;
  if (vmi.spec.readinessProbe) compute.readinessProbe = renderProbe(vmi, vmi.spec.readinessProbe);
  if (vmi.spec.livenessProbe) compute.livenessProbe = renderProbe(vmi, vmi.spec.livenessProbe);

  const diskResources = containerDiskResources(cfg, guaranteed);
  const containers: Container[] = [compute, ...containerDiskContainers(vmi, imageIDs, diskResources)];
  const initContainers: Container[] = [];
  if (serialConsoleLogEnabled(vmi, cfg)) initContainers.push(guestConsoleLogContainer(vmi, cfg, guaranteed, verbosity.value));
  if (hasContainerDisks(vmi)) {
    initContainers.push(containerDiskBinaryInitContainer(cfg, nonRoot, guaranteed));
    initContainers.push(...containerDiskInitContainers(vmi, imageIDs, diskResources));
  }

  const hostname = sanitizeHostname(vmi);
  const grace = vmiGracePeriodSeconds(vmi) + 2 * GRACE_PERIOD_PADDING_SECONDS;
  const pullSecrets = containerDiskPullSecrets(vmi);
  const kbSecret = vmi.spec.domain.firmware?.kernelBoot?.container?.imagePullSecret;
  if (kbSecret && !pullSecrets.includes(kbSecret)) pullSecrets.push(kbSecret);
  if (cfg.imagePullSecret && !pullSecrets.includes(cfg.imagePullSecret)) pullSecrets.push(cfg.imagePullSecret);
  const saVolume = serviceAccountNameFromVolumes(vmi);
  const istio = vmi.metadata?.annotations?.[Annotation.IstioInject]?.toLowerCase() === 'true';

  const spec: Pod['spec'] = {
    hostname,
    securityContext: podSecurityContext(nonRoot),
    terminationGracePeriodSeconds: grace,
    restartPolicy: 'Never',
    containers,
    nodeSelector: renderNodeSelector(vmi, cfg.nodeSelectors),
    volumes: rendered.volumes,
    readinessGates: [{ conditionType: POD_CONDITION_VM_UNPAUSED }],
    enableServiceLinks: false,
    automountServiceAccountToken: saVolume !== undefined || istio,
  };
  if (cfg.selinuxLauncherType) spec.securityContext = { ...spec.securityContext, seLinuxOptions: { type: cfg.selinuxLauncherType } };
  if (initContainers.length > 0) spec.initContainers = initContainers;
  if (vmi.spec.subdomain) spec.subdomain = vmi.spec.subdomain;
  if (pullSecrets.length > 0) spec.imagePullSecrets = pullSecrets.map((n) => ({ name: n }));
  if (vmi.spec.dnsConfig) spec.dnsConfig = structuredClone(vmi.spec.dnsConfig);
  if (vmi.spec.dnsPolicy) spec.dnsPolicy = vmi.spec.dnsPolicy;
  if (vmi.spec.schedulerName) spec.schedulerName = vmi.spec.schedulerName;
  if (vmi.spec.tolerations) spec.tolerations = structuredClone(vmi.spec.tolerations);
  if (vmi.spec.topologySpreadConstraints) spec.topologySpreadConstraints = structuredClone(vmi.spec.topologySpreadConstraints);
  if (cfg.defaultRuntimeClass) spec.runtimeClassName = cfg.defaultRuntimeClass;
  if (vmi.spec.priorityClassName) spec.priorityClassName = vmi.spec.priorityClassName;
  const affinity = renderAffinity(vmi);
  if (affinity) spec.affinity = affinity;
  if (vmi.spec.serviceAccountName) spec.serviceAccountName = vmi.spec.serviceAccountName;
  else if (saVolume) spec.serviceAccountName = saVolume;
  if (vmi.spec.resourceClaims?.length) spec.resourceClaims = vmi.spec.resourceClaims.map((c) => ({ name: c.name, ...(c.resourceClaimName ? { resourceClaimName: c.resourceClaimName } : {}), ...(c.resourceClaimTemplateName ? { resourceClaimTemplateName: c.resourceClaimTemplateName } : {}) }));

  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${LAUNCHER_POD_GENERATE_NAME_PREFIX}${name}-`,
      namespace,
      labels: podLabels(vmi, hostname),
      annotations: podAnnotations(vmi),
      ownerReferences: [{ apiVersion: API_VERSION, kind: Kind.VirtualMachineInstance, name, uid: vmi.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    spec,
  };
}

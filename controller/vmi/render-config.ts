// The cluster settings the launcher pod renderer reads (KubeVirt's ClusterConfig getters used by
// pkg/virt-controller/services): a plain object so rendering stays a pure function. The controller
// shell fills it from the KubeVirt CR's `spec.configuration` (src/api cluster config).
import { PodPath } from '../../src/api/constants.ts';
import { DEFAULT_DISK_MEMORY_LIMIT_BYTES, DEFAULT_LAUNCHER_QEMU_TIMEOUT_SECONDS } from '../constants.ts';
import type { PullPolicy } from '../../src/api/types.ts';
import type { ClusterConfig } from '../../src/api/cluster-config.ts';

export interface RenderConfig {
  /** qvirt's launcher image: runs `compute`, `guest-console-log`, `container-disk-binary`. */
  readonly launcherImage: string;
  readonly imagePullPolicy: PullPolicy;
  /** `developerConfiguration.useEmulation`: no /dev/kvm needed, `--allow-emulation`. */
  readonly useEmulation: boolean;
  /** `developerConfiguration.cpuAllocationRatio` (default 10: one vCPU requests 100m). */
  readonly cpuAllocationRatio: number;
  /** `developerConfiguration.memoryOvercommit` in percent (default 100). */
  readonly memoryOvercommit: number;
  /** `developerConfiguration.nodeSelectors`: added to every launcher pod. */
  readonly nodeSelectors: Readonly<Record<string, string>>;
  /** `additionalGuestMemoryOverheadRatio`, e.g. "1.5". */
  readonly additionalGuestMemoryOverheadRatio?: string | undefined;
  /** Cluster default architecture when the VMI names none. */
  readonly defaultArchitecture: string;
  /** Firmware directory handed to the launcher (`--ovmf-path`). */
  readonly ovmfPath: string;
  /** `diskVerification.memoryLimit` in bytes (`--disk-memory-limit`). */
  readonly diskMemoryLimitBytes: number;
  /** Base of `--qemu-timeout` (seconds); a per-pod jitter in [0, 120) is added. */
  readonly qemuTimeoutBaseSeconds: number;
  /** `virtualMachineOptions.disableSerialConsoleLog`. */
  readonly serialConsoleLogDisabled: boolean;
  /** Cluster-wide image pull secret for the launcher image. */
  readonly imagePullSecret?: string | undefined;
  /** `defaultRuntimeClass`. */
  readonly defaultRuntimeClass?: string | undefined;
  /** `developerConfiguration.logVerbosity.virtLauncher` (KubeVirt's default is 2). */
  readonly virtLauncherLogVerbosity?: number | undefined;
  /** The hypervisor name passed as `--hypervisor` and used for the device resource. */
  readonly hypervisor: string;
  /** `selinuxLauncherType`: the SELinux type of launcher pods (pod `seLinuxOptions.type`). */
  readonly selinuxLauncherType?: string | undefined;
  /** `supportContainerResources`: per helper-container type, requests/limits that replace the defaults. */
  readonly supportContainerResources?: readonly SupportContainerOverride[] | undefined;
}

export interface SupportContainerOverride {
  /** KubeVirt's SupportContainerType, e.g. `guest-console-log`, `container-disk`. */
  readonly type: string;
  readonly resources: { readonly requests?: Readonly<Record<string, string>> | undefined; readonly limits?: Readonly<Record<string, string>> | undefined };
}

/** KubeVirt's support container types the launcher pod renderer consults. */
export const SupportContainer = { GuestConsoleLog: 'guest-console-log', ContainerDisk: 'container-disk', HotplugAttachment: 'hotplug-disk' } as const;

/** The configured request (or limit) of a resource for a helper container type, if any. */
export function supportContainerQuantity(cfg: Pick<RenderConfig, 'supportContainerResources'>, type: string, kind: 'requests' | 'limits', resource: string): string | undefined {
  return cfg.supportContainerResources?.find((s) => s.type === type)?.resources[kind]?.[resource];
}

/** KubeVirt's defaults, with qvirt's launcher image name. */
export const DEFAULT_RENDER_CONFIG: RenderConfig = {
  launcherImage: 'quay.io/qvirt/qvirt:latest',
  imagePullPolicy: 'IfNotPresent',
  useEmulation: false,
  cpuAllocationRatio: 10,
  memoryOvercommit: 100,
  nodeSelectors: {},
  defaultArchitecture: 'amd64',
  ovmfPath: PodPath.OVMF,
  diskMemoryLimitBytes: DEFAULT_DISK_MEMORY_LIMIT_BYTES,
  qemuTimeoutBaseSeconds: DEFAULT_LAUNCHER_QEMU_TIMEOUT_SECONDS,
  serialConsoleLogDisabled: false,
  hypervisor: 'kvm',
};

/** The default virt-launcher verbosity: an env var is only set when a VMI or the cluster differs. */
export const DEFAULT_VIRT_LAUNCHER_LOG_VERBOSITY = 2;
/** Above this verbosity the launcher's extended debug logs are switched on. */
export const EXT_LOG_VERBOSITY_THRESHOLD = 5;

/**
 * The renderer's view of a defaulted cluster configuration (src/api/cluster-config.ts). The
 * launcher image is the controller's own (KubeVirt passes it on virt-controller's command line).
 */
export function renderConfigFromClusterConfig(config: ClusterConfig, launcherImage: string, opts: { imagePullSecret?: string } = {}): RenderConfig {
  const arch = config.architectureConfiguration.defaultArchitecture || DEFAULT_RENDER_CONFIG.defaultArchitecture;
  const archConfig = (config.architectureConfiguration as unknown as Record<string, { ovmfPath?: string } | undefined>)[arch];
  return {
    launcherImage,
    imagePullPolicy: config.imagePullPolicy,
    useEmulation: config.developerConfiguration.useEmulation,
    cpuAllocationRatio: config.developerConfiguration.cpuAllocationRatio,
    memoryOvercommit: config.developerConfiguration.memoryOvercommit,
    nodeSelectors: { ...config.developerConfiguration.nodeSelectors },
    additionalGuestMemoryOverheadRatio: config.additionalGuestMemoryOverheadRatio,
    defaultArchitecture: arch,
    ovmfPath: config.ovmfPath || archConfig?.ovmfPath || DEFAULT_RENDER_CONFIG.ovmfPath,
    diskMemoryLimitBytes: DEFAULT_RENDER_CONFIG.diskMemoryLimitBytes,
    qemuTimeoutBaseSeconds: DEFAULT_RENDER_CONFIG.qemuTimeoutBaseSeconds,
    serialConsoleLogDisabled: config.virtualMachineOptions?.disableSerialConsoleLog !== undefined,
    imagePullSecret: opts.imagePullSecret,
    defaultRuntimeClass: config.defaultRuntimeClass,
    virtLauncherLogVerbosity: config.developerConfiguration.logVerbosity.virtLauncher,
    hypervisor: DEFAULT_RENDER_CONFIG.hypervisor,
    selinuxLauncherType: config.selinuxLauncherType,
    supportContainerResources: config.supportContainerResources.map((s) => ({ type: s.type, resources: { requests: s.resources.requests, limits: s.resources.limits } })),
  };
}

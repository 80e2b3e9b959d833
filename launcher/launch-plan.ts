// From a VMI to a running QEMU's plan: prepare the disks, pick the accelerator, build the argv.
// This is the launcher's `start` step (what libvirt's domain definition was for virt-launcher);
// the supervisor in launcher/supervise spawns and watches what it returns.
import { copyFile, mkdir, rm, stat } from './fs/async.ts';
import { basename, dirname, join } from 'node:path';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import type { Logger } from '../src/log/logger.ts';
import { AcceleratorUnavailableError, chooseAccelerator } from './accel/choose.ts';
import { probeKvm } from './accel/kvm-probe.ts';
import { convertVMI, type ConvertContext, type LaunchPlan, type OvmfPaths } from './convert/index.ts';
import { resolvedVolume, resolvedVolumes, type VolumeProbe } from './convert/volumes.ts';
import { cpuTopology, vcpuCount } from './convert/cpu.ts';
import { memoryLayout } from './convert/memory.ts';
import { prepareHotplugVolume } from './disks/hotplug-volume.ts';
import { accessCredentialSource, type DiskDirs } from './disks/paths.ts';
import { prepareVolumes, type PrepareOptions } from './disks/prepare.ts';
import { probeVolume } from './disks/probe.ts';
import type { PreparedLaunch } from './supervise/prepared-launch.ts';
import { loadQemuFacts } from './qemu-facts.ts';
import { preparePodNetwork } from './network/pod-network.ts';
import { startSwtpm, type SwtpmProcess } from './tpm/swtpm.ts';
import { lowerVcpuPriority } from './supervise/vcpu-priority.ts';

export interface LauncherEnvironment {
  readonly dirs: DiskDirs;
  /** /var/run/kubevirt-private/<uid> (under the container root). */
  readonly privateVmiDir: string;
  readonly qemuBinary: string;
  readonly allowEmulation: boolean;
  /** Where node-wide facts are cached (the KVM verdict, QEMU's machine types). */
  readonly cacheDir: string;
  readonly ovmfDir: string;
  readonly diskMemoryLimitBytes?: number;
  /** Local mode has no mount namespace: hostDisks are opened at their host path. */
  readonly hostDiskView?: 'pod' | 'host';
  readonly owner?: { uid: number; gid: number };
  readonly log: Logger;
  /** Where the node wants the guest's vCPU threads (a cgroup v1 directory; vcpu-priority.ts). */
  readonly vcpuCgroup?: string | undefined;
  /** Called with the accelerator decision (logged and reported to the handler as an event). */
  readonly onEvent?: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
}

export class LaunchError extends Error {
  override name = 'LaunchError';
}

/** Debian/KubeVirt OVMF file names in `dir` (KubeVirt's --ovmf-path; Debian ships them in /usr/share/OVMF). */
export function ovmfPaths(dir: string): OvmfPaths {
  return {
    code: join(dir, 'OVMF_CODE_4M.fd'),
    vars: join(dir, 'OVMF_VARS_4M.fd'),
    secureBootCode: join(dir, 'OVMF_CODE_4M.secboot.fd'),
    secureBootVars: join(dir, 'OVMF_VARS_4M.ms.fd'),
  };
}

/** The kernel-boot artifacts KubeVirt links into `<container-disk-dir>/kernel-boot/<basename>`. */
function kernelBootArtifacts(vmi: VirtualMachineInstance, dirs: DiskDirs): ConvertContext['kernelBoot'] {
  const c = vmi.spec.domain.firmware?.kernelBoot?.container;
  if (!c) return undefined;
  const dir = join(dirs.containerDiskDir, 'kernel-boot');
  return {
    ...(c.kernelPath ? { kernel: join(dir, basename(c.kernelPath)) } : {}),
    ...(c.initrdPath ? { initrd: join(dir, basename(c.initrdPath)) } : {}),
  };
}

async function mustExist(path: string, field: string): Promise<void> {
  const st = await stat(path).catch(() => undefined);
  if (!st) throw new LaunchError(`${field}: ${path} does not exist in the launcher (was the image made available to the pod?)`);
}

/** Prepares everything for `vmi` and returns the plan the supervisor runs. */
export async function planLaunch(vmi: VirtualMachineInstance, env: LauncherEnvironment): Promise<PreparedLaunch> {
  const log = env.log;
  const [facts, kvm] = await Promise.all([
    loadQemuFacts(env.qemuBinary, join(env.cacheDir, 'qemu-facts.json')),
    probeKvm({ qemu: env.qemuBinary, cacheFile: join(env.cacheDir, 'kvm-probe.json') }),
  ]);
  const choice = chooseAccelerator(kvm, env.allowEmulation);
  if (choice.accel === null) throw new AcceleratorUnavailableError(choice.error);
  if (choice.accel === 'tcg') {
    log.info({ reason: choice.reason }, 'kvm not usable: using software emulation');
  }

  const prepareOpts: PrepareOptions = {
    log,
    ...(env.diskMemoryLimitBytes ? { diskMemoryLimitBytes: env.diskMemoryLimitBytes } : {}),
    ...(env.hostDiskView ? { hostDiskView: env.hostDiskView } : {}),
    ...(env.owner ? { owner: env.owner } : {}),
    ...(env.onEvent ? { onEvent: (reason: string, message: string) => env.onEvent!('Normal', reason, message) } : {}),
  };
  const prepared = await prepareVolumes(vmi, env.dirs, prepareOpts);
  const probes: Record<string, VolumeProbe> = {};
  await Promise.all(prepared.volumes.map(async (p) => { probes[p.name] = await probeVolume(p); }));

  const kernelBoot = kernelBootArtifacts(vmi, env.dirs);
  if (kernelBoot?.kernel) await mustExist(kernelBoot.kernel, 'spec.domain.firmware.kernelBoot.container.kernelPath');
  if (kernelBoot?.initrd) await mustExist(kernelBoot.initrd, 'spec.domain.firmware.kernelBoot.container.initrdPath');

  await mkdir(env.privateVmiDir, { recursive: true });
  // Pod networking: the node agent's tap (DHCP served from here) or passt; user-mode without a pod network.
  const net = await preparePodNetwork(vmi, { privateDir: env.dirs.privateDir, privateVmiDir: env.privateVmiDir, log });
  const ctx: ConvertContext = {
    qemu: { binary: facts.binary, machine: facts.q35Machine, version: facts.version },
    accelerator: choice.accel,
    paths: {
      privateDir: env.privateVmiDir,
      nvramDir: join(env.dirs.privateDir, 'libvirt', 'qemu', 'nvram'),
      ephemeralDiskDir: env.dirs.ephemeralDiskDir,
      containerDiskDir: env.dirs.containerDiskDir,
      hotplugDiskDir: env.dirs.hotplugDiskDir,
    },
    volumes: resolvedVolumes(prepared.volumes, probes),
    ovmf: ovmfPaths(env.ovmfDir),
    ...(kernelBoot ? { kernelBoot } : {}),
    podNetwork: net.backends,
    monitorFd: { fd: 3 },
    now: new Date(),
  };
  // The domain, the files QEMU expects before it starts (the per-VM EFI variable store) and the emulated
  // TPM (swtpm listens before QEMU starts and connects to it). If any fails no QEMU runs: the DHCP
  // server and passt go too.
  let plan: LaunchPlan;
  let swtpm: SwtpmProcess | undefined;
  try {
    plan = convertVMI(vmi, ctx);
    for (const f of plan.files) {
      if (f.onlyIfMissing && (await stat(f.destination).catch(() => undefined))) continue;
      await mkdir(dirname(f.destination), { recursive: true });
      await copyFile(f.source, f.destination);
    }
    if (plan.tpm) {
      swtpm = await startSwtpm(plan.tpm, 'spec.domain.devices.tpm', log)
        .catch((err: unknown) => { throw new LaunchError((err as Error).message, { cause: err }); });
    }
  } catch (err) {
    await net.stop();
    throw err;
  }
  for (const w of plan.warnings) log.warn({ warning: w }, 'VMI setting ignored');
  env.onEvent?.('Normal', choice.accel === 'kvm' ? 'HardwareVirtualization' : 'SoftwareEmulation', choice.reason);

  // QEMU does not unlink its listening sockets (VNC never; none when it is killed): the launcher does.
  const sockets = [plan.serialSocket, plan.vncSocket, plan.guestAgentSocket, plan.qmpDebugSocket, 'path' in plan.qmp ? plan.qmp.path : undefined]
    .filter((p): p is string => typeof p === 'string');
  const acpiFeature = vmi.spec.domain.features?.acpi;
  return {
    ...plan,
    binary: facts.binary,
    preStart: async (qmp) => {
      // The vCPUs below the launcher's control threads (vcpu-priority.ts), beside `cont` rather than before
      // it: QEMU answers query-cpus-fast ahead of the `cont` sent after it on the same connection, so the
      // threads are reniced as the guest starts, and their cgroup v1 move (an RCU grace period: 7–21 ms
      // measured on an idle machine) no longer delays every start. The guest's first milliseconds run at
      // its pod's weight.
      void lowerVcpuPriority(qmp, { cgroup: env.vcpuCgroup }).then((r) => {
        if (r.failed.length > 0) log.warn({ nice: r.nice, cgroup: r.cgroup, failed: r.failed }, 'vCPU threads not lowered: they run at the launcher\'s priority');
        else log.debug({ nice: r.nice, cgroup: r.cgroup, threads: r.threads }, 'vCPU threads lowered below the launcher');
      }, (err: unknown) => {
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'vCPU threads not lowered: query-cpus-fast failed');
      });
    },
    accessCredentialDir: (secretName) => accessCredentialSource(env.dirs, secretName),
    domain: {
      uuid: vmi.spec.domain.firmware?.uuid,
      hypervisor: choice.accel === 'kvm' ? 'kvm' : 'qemu',
      acpi: acpiFeature?.enabled !== false,
    },
    cleanup: async () => {
      await net.stop();
      await swtpm?.stop();
      await Promise.all(sockets.map((p) => rm(p, { force: true })));
    },
    hotplug: {
      state: { pciPorts: plan.pciPorts, devices: plan.devices, nextBlockNodeIndex: plan.nextBlockNodeIndex },
      convert: ctx,
      resolveVolume: async (v, name) => {
        const p = await prepareHotplugVolume(v, name, env.dirs, env.hostDiskView ? { hostDiskView: env.hostDiskView } : {});
        return resolvedVolume(p, await probeVolume(p));
      },
      vcpus: (() => {
        const t = cpuTopology(vmi);
        return { current: vcpuCount(t), max: t.maxSockets * t.cores * t.threads };
      })(),
      memory: memoryLayout(vmi),
      vcpuCgroup: env.vcpuCgroup,
      accelerator: choice.accel,
    },
  };
}

// `qvirt launcher`: one per VM, virt-launcher's role without libvirt. It serves KubeVirt's Cmd gRPC
// service on <share>/sockets/launcher-sock, starts QEMU when the handler syncs the VMI, reports
// domain events to the handler, and exits when QEMU has ended. SIGTERM starts a graceful shutdown
// (the handler powers the guest off); after the grace period QEMU is destroyed.
import { access, constants, mkdir } from './fs/async.ts';
import { isAbsolute, join } from 'node:path';
import { parseFlags, usage, UsageError } from '../src/flags/flags.ts';
import { componentLogger, forObject } from '../src/log/logger.ts';
import type { DiskDirs } from './disks/paths.ts';
import { launcherFlags } from './flags.ts';
import { planLaunch } from './launch-plan.ts';
import { startLauncherRuntime } from './runtime.ts';
import { cleanupContainerDiskDirectory } from './disks/container-disk-cleanup.ts';

async function firstExisting(dirs: string[]): Promise<string> {
  for (const d of dirs) {
    try { await access(join(d, 'OVMF_CODE_4M.fd'), constants.R_OK); return d; } catch { /* next */ }
  }
  return dirs[0]!;
}

export async function main(argv: string[]): Promise<number> {
  const { flags, help } = parseFlags(launcherFlags, argv);
  if (help) {
    process.stdout.write(usage('qvirt launcher --name NAME --uid UID --namespace NS [flags]', 'Run one VirtualMachineInstance on QEMU (virt-launcher\'s role).', launcherFlags));
    return 0;
  }
  for (const f of ['name', 'uid', 'namespace'] as const) if (!flags[f]) throw new UsageError(`--${f} is required`);
  if (flags.hypervisor !== 'kvm') throw new UsageError(`--hypervisor ${flags.hypervisor}: only kvm is supported`);
  if ((flags['hook-sidecars'] ?? 0) > 0) throw new UsageError('--hook-sidecars: hook sidecars are not supported by qvirt');
  const name = flags.name!;
  const uid = flags.uid!;
  const namespace = flags.namespace!;

  const root = flags.root ?? process.env.QVIRT_CONTAINER_ROOT ?? '/';
  const under = (p: string) => (isAbsolute(p) ? join(root, p) : p);
  const shareDir = under(flags['kubevirt-share-dir']!);
  const privateDir = under('/var/run/kubevirt-private');
  const dirs: DiskDirs = {
    kubevirtShareDir: shareDir,
    ephemeralDiskDir: under(flags['ephemeral-disk-dir']!),
    containerDiskDir: under(flags['container-disk-dir']!),
    hotplugDiskDir: under(flags['hotplug-disk-dir']!),
    privateDir,
    libvirtRuntimeDir: under('/var/run/libvirt'),
    serviceAccountDir: under('/var/run/secrets/kubernetes.io/serviceaccount'),
    devDir: root === '/' ? '/dev' : under('/dev'),
  };
  const privateVmiDir = join(privateDir, uid);
  const cacheDir = flags['cache-dir'] ?? process.env.QVIRT_CACHE_DIR ?? '/var/cache/qvirt';
  const qemuBinary = process.env.QVIRT_QEMU ?? flags.qemu!;
  // KubeVirt's default --ovmf-path is /usr/share/edk2/ovmf (its images' layout); Debian's images and
  // hosts (the local mode runs launchers on the host) keep OVMF in /usr/share/OVMF: the given
  // directory first, then the known ones, whichever holds the firmware.
  const ovmfDir = await firstExisting([...(flags['ovmf-path'] ? [flags['ovmf-path']] : []), '/usr/share/OVMF', '/usr/share/edk2/ovmf']);
  const notify = flags['notify-socket'];

  const root_log = componentLogger('launcher', { destination: 1 });
  const log = forObject(root_log, { namespace, name, uid, kind: 'VirtualMachineInstance' });
  if (flags['libvirt-log-filters']) log.info('--libvirt-log-filters ignored: qvirt has no libvirt');

  await Promise.all([shareDir, privateVmiDir, dirs.ephemeralDiskDir, dirs.containerDiskDir].map((d) => mkdir(d, { recursive: true })));

  const runtime = await startLauncherRuntime({
    shareDir,
    runDir: privateVmiDir,
    vmiRef: { namespace, name, uid },
    log: root_log,
    graceSeconds: flags['grace-period-seconds'] ?? 30,
    ...(notify === 'none' ? { notifySocket: null } : notify ? { notifySocket: notify } : {}),
    domainStartTimeoutMs: (flags['qemu-timeout'] ?? 180) * 1000,
    qemuBinary,
    podPath: under,
    start: async (vmi) => {
      if (vmi.metadata?.uid && vmi.metadata.uid !== uid) throw new Error(`SyncVirtualMachine for VMI uid ${vmi.metadata.uid}, but this launcher serves ${uid}`);
      const plan = await planLaunch(vmi, {
        dirs,
        privateVmiDir,
        qemuBinary,
        allowEmulation: flags['allow-emulation'],
        cacheDir,
        ovmfDir,
        diskMemoryLimitBytes: flags['disk-memory-limit'],
        hostDiskView: root === '/' ? 'pod' : 'host',
        ...(flags['run-as-nonroot'] && process.getuid?.() === 0 ? { owner: { uid: 107, gid: 107 } } : {}),
        log,
        vcpuCgroup: flags['vcpu-cgroup'] ?? process.env.QVIRT_VCPU_CGROUP,
        onEvent: (type, reason, message) => runtime.manager.emit('k8s-event', { type, reason, message }),
      });
      return plan;
    },
  });
  log.info({ socket: join(shareDir, 'sockets', 'launcher-sock') }, 'launcher ready');

  const onSignal = (sig: NodeJS.Signals) => {
    log.info({ signal: sig }, 'signal received: graceful shutdown');
    void runtime.shutdown();
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGQUIT', 'SIGHUP'] as const) process.on(sig, onSignal);

  const result = await runtime.done;
  const failed = result.reason === 'no-domain' || result.state.status === 'Crashed' || result.state.reason === 'Crashed' || result.state.reason === 'Panicked';
  log.info({ reason: result.reason, status: result.state.status, stateReason: result.state.reason, exit: result.exit }, 'launcher finished');
  if (failed && flags['keep-after-failure']) {
    log.warn('--keep-after-failure: staying alive after a failure until SIGTERM');
    await new Promise<void>((resolve) => {
      for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => resolve());
    });
  }
  // The pod's containerDisk containers end once their disks are gone from the shared directory.
  await cleanupContainerDiskDirectory(dirs.containerDiskDir, log);
  return failed ? 1 : 0;
}

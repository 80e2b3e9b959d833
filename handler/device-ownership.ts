// KubeVirt's claimDeviceOwnership: a non-root launcher (qemu, 107) gets the device nodes the device
// plugins passed into its container. The runtime creates them in the container's own /dev with the
// host's owner and mode (root, 0600), so QEMU could open neither /dev/kvm nor /dev/net/tun ("could not
// open /dev/net/tun: Permission denied"). virt-handler chowns them there, in the compute container's
// /dev only: the host's nodes are untouched.
import { access, chown, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Logger } from '../src/log/logger.ts';
import { POD_HOST_DEV_FILE } from '../src/kube/pod-host-dev.ts';
import { podProcesses } from './launcher/pod-processes.ts';

/** The devices a launcher may have been given (handler/device-plugins): kvm, tun, vhost-net. */
export const LAUNCHER_DEVICES = ['kvm', 'net/tun', 'vhost-net'] as const;

/** The compute container's process among a pod's: the launcher (`qvirt launcher`, the bundle). */
export const isLauncherCommand = (cmdline: string): boolean => /qvirt-launcher\.[cm]js|\bqvirt launcher\b/.test(cmdline);

/**
 * Chowns the launcher container's device nodes to `uid` (no-op for root, for a pod whose launcher is
 * not found, for devices it was not given, and for a pod whose containers see the host's /dev — the
 * local pod runner's, marked by `<podDir>/host-dev`, and any node that is the host's own: a container
 * has nodes of its own or none to give). Returns the nodes changed.
 */
export async function claimDeviceOwnership(podDir: string, uid: number, log: Logger, proc = '/proc', hostDev = '/dev'): Promise<string[]> {
  if (uid === 0) return [];
  if (await access(join(podDir, POD_HOST_DEV_FILE)).then(() => true, () => false)) return [];
  const launcher = (await podProcesses(basename(podDir), proc)).find((p) => isLauncherCommand(p.cmdline));
  if (!launcher) return [];
  const changed: string[] = [];
  for (const dev of LAUNCHER_DEVICES) {
    const node = join(proc, String(launcher.pid), 'root', 'dev', dev);
    const st = await stat(node).catch(() => undefined);
    if (!st || !st.isCharacterDevice() || (st.uid === uid && st.gid === uid)) continue;
    const host = await stat(join(hostDev, dev)).catch(() => undefined);
    if (host && host.dev === st.dev && host.ino === st.ino) continue;
    await chown(node, uid, uid);
    changed.push(`/dev/${dev}`);
  }
  if (changed.length) log.info({ devices: changed, uid, pid: launcher.pid }, 'device nodes of the launcher container given to its user');
  return changed;
}

// Helpers for the pod network tests: a local mode with its own pod bridge and subnet, VMIs of the
// test guest with a given interface, the guest's console log, host-side leftovers.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Interface, VirtualMachineInstance } from '../../src/api/types.ts';
import type { LocalMode } from '../../src/local/up.ts';
import { Resources } from '../../src/kube/resource.ts';
import { TEST_GUEST_IMAGE } from '../../src/local/guest/guest.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A VMI of the test guest with `iface` on the pod network (none when `iface` is undefined) and a shell user-data script. */
export function guestVmi(name: string, iface: Partial<Interface> | undefined, userData: string): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default' },
    spec: {
      terminationGracePeriodSeconds: 0,
      domain: {
        firmware: { kernelBoot: { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests qvirt.ga=0', container: { image: TEST_GUEST_IMAGE, kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
        devices: {
          disks: [{ name: 'cloudinit', disk: { bus: 'virtio' } }],
          ...(iface ? { interfaces: [{ name: 'default', ...iface }] } : { autoattachPodInterface: false }),
        },
        resources: { requests: { memory: '256Mi' } },
      },
      ...(iface ? { networks: [{ name: 'default', pod: {} }] } : {}),
      volumes: [{ name: 'cloudinit', cloudInitNoCloud: { userData: `#!/bin/sh\n${userData}\n` } }],
    },
  } as VirtualMachineInstance;
}

/** A user-data line: a persistent TCP server on `port` answering `text` to every connection. */
export const tcpServer = (port: number, text: string) =>
  `printf '#!/bin/sh\\necho ${text}\\n' > /tmp/answer; chmod +x /tmp/answer; nc -ll -p ${port} -e /tmp/answer </dev/null >/dev/null 2>&1 &`;

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 240_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export async function getVmi(local: LocalMode, name: string): Promise<VirtualMachineInstance | undefined> {
  return local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name).catch(() => undefined);
}

export interface PodView { metadata?: { uid?: string; name?: string; labels?: Record<string, string> }; status?: { podIP?: string; podIPs?: Array<{ ip: string }> } }

/** The launcher pod of a VMI. */
export async function launcherPod(local: LocalMode, vmiUid: string): Promise<PodView | undefined> {
  const pods = await local.client.list<PodView>(Resources.pods, { namespace: 'default', labelSelector: `kubevirt.io/created-by=${vmiUid}` }).catch(() => ({ items: [] as PodView[] }));
  return pods.items[0];
}

/** The guest's serial console log, from the launcher pod's private emptyDir. */
export function consoleLog(podsDir: string, vmiUid: string): string {
  let text = '';
  for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
    const f = join(podsDir, pod, 'volumes/kubernetes.io~empty-dir/private', vmiUid, 'virt-serial0-log');
    if (existsSync(f)) text += readFileSync(f, 'utf8');
  }
  return text;
}

/** Connects to host:port and returns what the server sends before closing (undefined on failure). */
export function tcpRead(host: string, port: number, timeoutMs = 3000): Promise<string | undefined> {
  return new Promise((resolve) => {
    let data = '';
    const s = connect({ host, port });
    const t = setTimeout(() => { s.destroy(); resolve(undefined); }, timeoutMs);
    s.on('data', (d) => { data += d.toString(); });
    s.on('end', () => { clearTimeout(t); resolve(data); });
    s.on('error', () => { clearTimeout(t); resolve(undefined); });
  });
}

export const sh = (cmd: string, args: string[]) => { try { return execFileSync(cmd, args, { encoding: 'utf8' }); } catch (err) { return String((err as { stdout?: string }).stdout ?? ''); } };

/** Builds (once; cached) the passt the launcher image ships, which the local pod runner puts on launchers' PATH. */
export function ensureBuiltPasst(): string {
  return execFileSync(new URL('../../scripts/passt/build.sh', import.meta.url).pathname, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** The pod network namespace of a launcher pod (the local pod runner's name for it). */
export const podNetnsName = (podUid: string) => `qvirt-${podUid.replace(/-/g, '').slice(0, 12)}`;

/** Pids of the router advertisement senders (perl) running in a network namespace. */
export function raSenders(netnsName: string): number[] {
  return sh('ip', ['netns', 'pids', netnsName]).split('\n').filter(Boolean).map(Number)
    .filter((pid) => { try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'perl'; } catch { return false; } });
}

/** Whether a process is still alive (a zombie is not: its parent may be gone, its reaper slow). */
export const alive = (pid: number) => {
  try { return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
};

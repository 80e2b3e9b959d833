// QEMU's events as the VMI's Kubernetes events and conditions, from real guests (the test guest under
// TCG or KVM) in the local mode, three VMIs at once:
// - a guest that panics (`echo c > /proc/sysrq-trigger`) with KubeVirt's ISA pvpanic device:
//   GuestPanicked "GuestPanicked (details unavailable)", then the VMI Failed with virt-handler's
//   Stopped "The VirtualMachineInstance crashed.", and the node agent's kubevirt_vmi_guest_os_panic_total;
// - a guest writing past the end of a tmpfs (1 MiB) that holds its 16 MiB sparse hostDisk: QEMU
//   stops the guest (KubeVirt's error policy stop), IOerror "VM Paused due to not enough space on
//   volume: full" and the VMI's Paused condition PausedIOError (root: the tmpfs is mounted);
// - a guest that arms its i6300esb watchdog and stops feeding it (Watchdog, the guest reset), then
//   reboots itself (Reset "VirtualMachineInstance reset by the guest"), then powers off (the VMI
//   Succeeded, Stopped "The VirtualMachineInstance was shut down."). Its scratch disk carries the
//   step across the resets.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { HANDLER_CA_ANNOTATION, HANDLER_ENDPOINT_ANNOTATION } from '../../src/api/constants.ts';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import { tempDir } from '../lib/tmp.ts';
import { eventually, getVmi, serialLog, startEnv, type Env } from './lib.ts';

const root = process.getuid?.() === 0;
const t = tempDir('qevents');
const fullDir = join(t.path, 'full');
let mounted = false;
let env!: Env;

const KERNEL_BOOT = { kernelArgs: 'console=ttyS0 quiet cryptomgr.notests', container: { image: 'qvirt/test-guest:latest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } };

function vmi(name: string, userData: string, devices: Record<string, unknown>, volumes: unknown[] = []): KubeObject {
  const disks = (devices.disks as unknown[] | undefined) ?? [];
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name, namespace: 'default' },
    spec: {
      terminationGracePeriodSeconds: 0,
      domain: {
        firmware: { kernelBoot: KERNEL_BOOT },
        devices: { ...devices, disks: [...disks, { name: 'cloudinit', disk: { bus: 'virtio' } }] },
        resources: { requests: { memory: '160Mi' } },
      },
      volumes: [...volumes, { name: 'cloudinit', cloudInitNoCloud: { userData } }],
    },
  } as KubeObject;
}

const FIND_DISK = (serial: string) => `for d in /sys/block/vd*; do [ "$(cat $d/serial 2>/dev/null)" = ${serial} ] && dev=/dev/\${d##*/}; done`;

const PANIC = `#!/bin/sh
echo QVIRT-EVENTS-PANIC
echo c > /proc/sysrq-trigger
`;

const IO_ERROR = `#!/bin/sh
${FIND_DISK('full')}
echo QVIRT-EVENTS-WRITING dev=$dev
dd if=/dev/urandom of=$dev bs=64k count=64 conv=fsync 2>/dev/null
echo QVIRT-EVENTS-WRITTEN
`;

// One step per boot, remembered on the scratch disk: arm the watchdog and let it fire; reboot; power off.
const WATCHDOG = `#!/bin/sh
${FIND_DISK('scratch')}
step=$(dd if=$dev bs=16 count=1 2>/dev/null | tr -dc a-z)
mark() { printf '%-16s' "$1" | dd of=$dev bs=16 count=1 conv=fsync 2>/dev/null; }
case "$step" in
  '') mark armed; echo QVIRT-EVENTS-WATCHDOG-ARMED; watchdog -T 1 -t 3600 /dev/watchdog ;;
  armed) mark rebooted; echo QVIRT-EVENTS-REBOOTING; reboot ;;
  *) echo QVIRT-EVENTS-POWEROFF; poweroff ;;
esac
`;

interface Ev { type: string; reason: string; message: string }

/** How many times an event happened: the recorder aggregates repeats into one object's `count`, as client-go does. */
async function occurrences(name: string, reason: string): Promise<number> {
  const list = await env.local.client.list<KubeObject & { reason?: string; count?: number; involvedObject?: { kind?: string; name?: string } }>(Resources.events, { namespace: 'default' });
  return list.items.filter((e) => e.involvedObject?.kind === 'VirtualMachineInstance' && e.involvedObject.name === name && e.reason === reason)
    .reduce((n, e) => n + (e.count ?? 1), 0);
}

/** The node agent's /metrics, with the local mode's admin token and the agent's CA from its Node. */
async function agentMetrics(): Promise<string> {
  const node = await env.local.client.get<KubeObject>(Resources.nodes, undefined, env.local.nodeName);
  const ann = node.metadata?.annotations ?? {};
  const ca = Buffer.from(ann[HANDLER_CA_ANNOTATION] ?? '', 'base64').toString('utf8');
  const token = readFileSync(join(dirname(env.local.kubeconfig), 'api', 'pki', 'token'), 'utf8').trim();
  return new Promise((resolve, reject) => {
    httpsRequest(new URL('/metrics', ann[HANDLER_ENDPOINT_ANNOTATION]), { ca, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`/metrics: HTTP ${res.statusCode}: ${body}`))));
    }).on('error', reject).end();
  });
}

async function eventsOf(name: string): Promise<Ev[]> {
  const list = await env.local.client.list<KubeObject & { type?: string; reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } }>(Resources.events, { namespace: 'default' });
  return list.items.filter((e) => e.involvedObject?.kind === 'VirtualMachineInstance' && e.involvedObject.name === name)
    .map((e) => ({ type: e.type ?? '', reason: e.reason ?? '', message: e.message ?? '' }));
}

async function eventOf(name: string, reason: string, timeoutMs: number): Promise<Ev> {
  return eventually(async () => (await eventsOf(name)).find((e) => e.reason === reason), timeoutMs, `event ${reason} on VMI ${name}`)
    .catch(async (err: Error) => {
      const v = await getVmi(env, name);
      throw new Error(`${err.message}; events: ${JSON.stringify(await eventsOf(name))}; serial: ${serialLog(env, v?.metadata?.uid ?? '').slice(-1500)}`);
    });
}

test.before(async () => {
  env = await startEnv('qevt', { clusterConfig: { developerConfiguration: { featureGates: ['HostDisk'] } } });
  const creates = [
    env.local.client.create(Resources.virtualMachineInstances, vmi('ev-panic', PANIC, { panicDevices: [{ model: 'isa' }] })),
    env.local.client.create(Resources.virtualMachineInstances, vmi('ev-watchdog', WATCHDOG,
      { watchdog: { name: 'wd0', i6300esb: { action: 'reset' } }, disks: [{ name: 'scratch', serial: 'scratch', disk: { bus: 'virtio' } }] },
      [{ name: 'scratch', emptyDisk: { capacity: '1Mi' } }])),
  ];
  if (root) {
    mkdirSync(fullDir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0777', 'qvirt-test-full', fullDir]);
    mounted = true;
    writeFileSync(join(fullDir, 'full.img'), '');
    truncateSync(join(fullDir, 'full.img'), 16 << 20);
    execFileSync('chown', ['107:107', join(fullDir, 'full.img')]);
    creates.push(env.local.client.create(Resources.virtualMachineInstances, vmi('ev-ioerror', IO_ERROR,
      { disks: [{ name: 'full', serial: 'full', disk: { bus: 'virtio' } }] },
      [{ name: 'full', hostDisk: { path: join(fullDir, 'full.img'), type: 'Disk' } }])));
  }
  await Promise.all(creates);
});

test.after(async () => {
  try {
    await env?.stop();
  } finally {
    if (mounted) {
      try { execFileSync('umount', [fullDir]); } catch { execFileSync('umount', ['-l', fullDir]); }
    }
    t.cleanup();
  }
});

test('a guest panic (pvpanic): GuestPanicked, then the VMI Failed with virt-handler\'s Stopped', async () => {
  const panicked = await eventOf('ev-panic', 'GuestPanicked', 120_000);
  assert.equal(panicked, { type: 'Warning', reason: 'GuestPanicked', message: 'GuestPanicked (details unavailable)' });
  await eventually(async () => (await getVmi(env, 'ev-panic'))?.status?.phase === 'Failed', 30_000, 'VMI ev-panic Failed');
  const stopped = await eventOf('ev-panic', 'Stopped', 10_000);
  assert.equal(stopped, { type: 'Warning', reason: 'Stopped', message: 'The VirtualMachineInstance crashed.' });
  assert.is((await eventsOf('ev-panic')).filter((e) => e.reason === 'GuestPanicked').length, 1, 'one panic, one event');
  // The node agent counts it: KubeVirt's kubevirt_vmi_guest_os_panic_total.
  const metrics = await agentMetrics();
  assert.match(metrics, /^kubevirt_vmi_guest_os_panic_total\{namespace="default",name="ev-panic",type="unknown",bugcheck_code="unknown"\} 1$/m);
});

test('a write past the end of the disk\'s filesystem: IOerror naming the volume, the VMI Paused with PausedIOError', async () => {
  if (!root) { console.log('  (not root: no tmpfs to fill; the I/O-error case needs root)'); return; }
  const ioerror = await eventOf('ev-ioerror', 'IOerror', 120_000);
  assert.equal(ioerror, { type: 'Warning', reason: 'IOerror', message: 'VM Paused due to not enough space on volume: full' });
  const v = await eventually(async () => {
    const x = await getVmi(env, 'ev-ioerror');
    return x?.status?.conditions?.some((c) => c.type === 'Paused') ? x : undefined;
  }, 30_000, 'the Paused condition on ev-ioerror');
  const paused = v.status!.conditions!.find((c) => c.type === 'Paused')!;
  assert.equal([paused.status, paused.reason, paused.message], ['True', 'PausedIOError', 'VMI was paused, low-level IO error detected']);
  assert.is(v.status?.phase, 'Running', 'an I/O-error pause keeps the VMI Running (KubeVirt: paused, not failed)');
  assert.not.match(serialLog(env, v.metadata!.uid!), /QVIRT-EVENTS-WRITTEN/, 'the guest never finished its write');
});

test('a watchdog that fires, a guest that reboots itself, then powers off: Watchdog, Reset, Stopped', async () => {
  const wd = await eventOf('ev-watchdog', 'Watchdog', 120_000);
  assert.equal(wd, { type: 'Warning', reason: 'Watchdog', message: "The guest's watchdog wd0 expired: the guest was reset" });
  const reset = await eventOf('ev-watchdog', 'Reset', 120_000);
  assert.equal(reset, { type: 'Normal', reason: 'Reset', message: 'VirtualMachineInstance reset by the guest' });
  await eventually(async () => (await getVmi(env, 'ev-watchdog'))?.status?.phase === 'Succeeded', 120_000, 'VMI ev-watchdog Succeeded after the guest powered off')
    .catch(async (err: Error) => {
      const v = await getVmi(env, 'ev-watchdog');
      throw new Error(`${err.message}; phase ${v?.status?.phase}; events: ${JSON.stringify(await eventsOf('ev-watchdog'))}; serial: ${serialLog(env, v?.metadata?.uid ?? '').slice(-3000)}`);
    });
  const stopped = await eventOf('ev-watchdog', 'Stopped', 10_000);
  assert.equal(stopped, { type: 'Normal', reason: 'Stopped', message: 'The VirtualMachineInstance was shut down.' });
  // Counted with the recorder's aggregation: each reset reaches QEMU as a burst of RESETs (the firmware resets again).
  assert.equal([await occurrences('ev-watchdog', 'Watchdog'), await occurrences('ev-watchdog', 'Reset')], [1, 1],
    'one watchdog reset, one guest reset (the watchdog\'s reset is not the guest\'s, nor the firmware\'s reset after either)');
});

test.run();

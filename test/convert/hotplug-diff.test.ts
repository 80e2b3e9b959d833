// The pure decisions behind live updates: which disks/NICs a sync plugs or unplugs (hotplugDiff),
// what a vCPU change does (vcpuChange) and the virtio-mem size for a memory change (memoryChange).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { hotplugDiff, memoryChange, vcpuChange, type HotplugTracking } from '../../launcher/convert/hotplug-diff.ts';
import type { HotplugState } from '../../launcher/convert/hotplug.ts';
import type { PlanDevice } from '../../launcher/convert/plan.ts';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function vmi(p: { disks?: Array<[string, string?]>; volumes?: Array<[string, 'hot' | 'cold']>; status?: Array<[string, string]>; ifaces?: Array<[string, string?]>; nets?: string[]; cpu?: Record<string, number>; memory?: Record<string, string> } = {}): VirtualMachineInstance {
  return {
    metadata: { name: 'v', namespace: 'ns', uid: 'u' },
    spec: {
      domain: {
        devices: {
          disks: (p.disks ?? []).map(([name, bus]) => ({ name, disk: { bus: (bus ?? 'virtio') as 'virtio' } })),
          interfaces: (p.ifaces ?? []).map(([name, state]) => ({ name, masquerade: {}, ...(state ? { state: state as 'absent' } : {}) })),
        },
        ...(p.cpu ? { cpu: p.cpu } : {}),
        ...(p.memory ? { memory: p.memory } : {}),
      },
      volumes: (p.volumes ?? []).map(([name, kind]) => (kind === 'hot' ? { name, persistentVolumeClaim: { claimName: name, hotpluggable: true } } : { name, emptyDisk: { capacity: '1Gi' } })),
      networks: (p.nets ?? []).map((name) => ({ name, pod: {} })),
    },
    status: { volumeStatus: (p.status ?? []).map(([name, phase]) => ({ name, target: '', phase: phase as 'Ready', hotplugVolume: {} })) },
  } as VirtualMachineInstance;
}

const dev = (alias: string, kind: PlanDevice['kind']): PlanDevice => ({ alias, kind, qemuId: `ua-${alias}`, driver: 'x' });
const state = (...devices: PlanDevice[]): HotplugState => ({ pciPorts: [], devices, nextBlockNodeIndex: 1 });
const track = (hotplugged: string[] = [], detaching: string[] = []): HotplugTracking => ({ hotplugged: new Set(hotplugged), detaching: new Set(detaching) });

const diffCases: Array<{ name: string; vmi: VirtualMachineInstance; state: HotplugState; tracking: HotplugTracking; want: Partial<ReturnType<typeof hotplugDiff>> & { blockedMatch?: RegExp } }> = [
  {
    name: 'a mounted hotplug volume is attached',
    vmi: vmi({ disks: [['root'], ['hp']], volumes: [['root', 'cold'], ['hp', 'hot']], status: [['hp', 'MountedToPod']] }),
    state: state(dev('root', 'disk')), tracking: track(),
    want: { attachDisks: ['hp'], detachDisks: [] },
  },
  {
    name: 'a hotplug volume the node has not mounted yet (Pending / AttachedToNode) waits',
    vmi: vmi({ disks: [['a'], ['b']], volumes: [['a', 'hot'], ['b', 'hot']], status: [['a', 'Pending'], ['b', 'AttachedToNode']] }),
    state: state(), tracking: track(),
    want: { attachDisks: [], detachDisks: [] },
  },
  {
    name: 'an attached Ready volume is left alone; a sata hotplug disk is refused',
    vmi: vmi({ disks: [['hp'], ['s', 'sata']], volumes: [['hp', 'hot'], ['s', 'hot']], status: [['hp', 'Ready'], ['s', 'MountedToPod']] }),
    state: state(dev('hp', 'disk')), tracking: track(['ua-hp']),
    want: { attachDisks: [], detachDisks: [], blockedMatch: /only virtio and scsi/ },
  },
  {
    name: 'a hotplugged disk removed from the spec is detached; a cold one never is',
    vmi: vmi({ disks: [], volumes: [] }),
    state: state(dev('root', 'disk'), dev('hp', 'disk')), tracking: track(['ua-hp']),
    want: { detachDisks: ['ua-hp'] },
  },
  {
    name: 'a disk already detaching is not detached twice, and adding it back is blocked',
    vmi: vmi({ disks: [['hp']], volumes: [['hp', 'hot']], status: [['hp', 'MountedToPod']] }),
    state: state(dev('hp', 'disk')), tracking: track(['ua-hp'], ['ua-hp']),
    want: { attachDisks: [], detachDisks: [], blockedMatch: /still being detached/ },
  },
  {
    name: 'a hostDisk added to the running VMI is attached (the launcher prepares it)',
    vmi: { ...vmi({ disks: [['root'], ['hd']], volumes: [['root', 'cold']] }), spec: { ...vmi({ disks: [['root'], ['hd']] }).spec, volumes: [{ name: 'root', emptyDisk: { capacity: '1Gi' } }, { name: 'hd', hostDisk: { path: '/x/hd.img', type: 'DiskOrCreate', capacity: '1Gi' } }] } } as VirtualMachineInstance,
    state: state(dev('root', 'disk')), tracking: track(),
    want: { attachDisks: ['hd'], detachDisks: [] },
  },
  {
    name: 'a new interface is plugged; state absent and removed interfaces are unplugged',
    vmi: vmi({ ifaces: [['default'], ['new'], ['gone', 'absent']], nets: ['default', 'new', 'gone'] }),
    state: state(dev('default', 'interface'), dev('gone', 'interface'), dev('old', 'interface')), tracking: track(),
    want: { attachInterfaces: ['new'], detachInterfaces: ['ua-gone', 'ua-old'] },
  },
  {
    name: 'an interface without a network is not plugged',
    vmi: vmi({ ifaces: [['lonely']], nets: [] }),
    state: state(), tracking: track(),
    want: { attachInterfaces: [], detachInterfaces: [] },
  },
];

for (const c of diffCases) {
  test(`hotplugDiff: ${c.name}`, () => {
    const got = hotplugDiff(c.vmi, c.state, c.tracking);
    const { blockedMatch, ...want } = c.want;
    for (const [k, v] of Object.entries(want)) assert.equal(got[k as keyof typeof got], v, k);
    if (blockedMatch) assert.ok(got.blocked.some((b) => blockedMatch.test(b.reason)), JSON.stringify(got.blocked));
    else assert.equal(got.blocked, []);
  });
}

const cpuCases: Array<[string, Record<string, number>, number, number, 'kvm' | 'tcg', string, RegExp?]> = [
  ['unchanged', { sockets: 2, maxSockets: 4 }, 2, 4, 'tcg', 'none'],
  ['raised within maxSockets', { sockets: 3, maxSockets: 4 }, 1, 4, 'tcg', 'add'],
  ['raised with cores: sockets × cores', { sockets: 2, cores: 2, maxSockets: 4 }, 2, 8, 'kvm', 'add'],
  ['beyond maxSockets', { sockets: 5, maxSockets: 4 }, 1, 4, 'tcg', 'refuse', /lower than sockets/],
  ['beyond what the domain was started with', { sockets: 3, maxSockets: 8 }, 1, 2, 'tcg', 'refuse', /room for 2/],
  ['lowered under TCG', { sockets: 1, maxSockets: 4 }, 2, 4, 'tcg', 'refuse', /software emulation \(TCG\)/],
  ['lowered under KVM', { sockets: 1, maxSockets: 4 }, 2, 4, 'kvm', 'refuse', /not supported by qvirt/],
];
for (const [name, cpu, current, max, accel, kind, reason] of cpuCases) {
  test(`vcpuChange: ${name}`, () => {
    const got = vcpuChange(vmi({ cpu }), current, max, accel);
    assert.is(got.kind, kind);
    if (got.kind === 'add') assert.is(got.to, (cpu.sockets ?? 1) * (cpu.cores ?? 1));
    if (reason) assert.match(got.kind === 'refuse' ? got.reason : '', reason);
  });
}

const hot = { bootBytes: GiB, guestBytes: GiB, maxBytes: 2 * GiB };
const memCases: Array<[string, Record<string, string>, typeof hot | { bootBytes: number; guestBytes: number }, number, string, number?]> = [
  ['unchanged', { guest: '1Gi', maxGuest: '2Gi' }, hot, 0, 'none'],
  ['raised: requested-size = guest − boot', { guest: '1536Mi', maxGuest: '2Gi' }, hot, 0, 'resize', 512 * MiB],
  ['lowered again', { guest: '1Gi', maxGuest: '2Gi' }, hot, 512 * MiB, 'resize', 0],
  ['above maxGuest', { guest: '3Gi', maxGuest: '4Gi' }, hot, 0, 'refuse'],
  ['below the boot size', { guest: '512Mi', maxGuest: '2Gi' }, hot, 0, 'refuse'],
  ['no memory hotplug at start', { guest: '2Gi' }, { bootBytes: GiB, guestBytes: GiB }, 0, 'refuse'],
];
for (const [name, memory, layout, current, kind, requested] of memCases) {
  test(`memoryChange: ${name}`, () => {
    const got = memoryChange(vmi({ memory }), layout, current);
    assert.is(got.kind, kind, JSON.stringify(got));
    if (requested !== undefined && got.kind === 'resize') assert.is(got.requestedBytes, requested);
  });
}

test.run();

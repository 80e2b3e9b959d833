// Hotplug on a running domain, over QMP (libvirt's attach/detach without libvirt): on every
// SyncVirtualMachine the VMI is diffed against what is plugged (launcher/convert/hotplug-diff) and
// disks (blockdev-add + device_add onto a spare root port or scsi0), NICs (netdev_add + device_add),
// vCPUs (device_add of the next free socket) and virtio-mem (`requested-size`) are changed.
//
// Unplug never waits for the guest while holding anything: device_del is sent and the device is
// reported Detaching; when DEVICE_DELETED for *that* device id arrives (pitfall 3: not the
// virtio-backend child event) its block nodes / netdev are deleted (pitfall 5) and its port freed.
// A guest that never acknowledges leaves it Detaching, with a reason saying so, for as long as that
// lasts (a reset completes it: pitfall 4). Everything that changes the plugged state runs through one
// queue, so a completion arriving in the middle of a sync cannot interleave with it.
import type { Logger } from '../../src/log/logger.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { DomainSpec } from '../../src/api/domain/domain.ts';
import type { ConvertContext, PlanDevice, QmpSetupCommand, ResolvedVolume } from '../convert/plan.ts';
import { planDiskHotplug, planInterfaceHotplug, planUnplug, type HotplugState } from '../convert/hotplug.ts';
import { hotplugDiff, memoryChange, vcpuChange } from '../convert/hotplug-diff.ts';
import type { MemoryLayout } from '../convert/memory.ts';
import { deviceIndices, diskTarget } from '../convert/disks.ts';
import { QemuId } from '../convert/constants.ts';
import { errorMessage, onQmpEvents, type QmpConnection, type QmpEventMessage, type QmpEventStream } from './qmp-connection.ts';
import { lowerVcpuPriority } from './vcpu-priority.ts';
import { rfc3339 } from '../../src/log/iso-time.ts';

/** What the launch step knows that hotplug needs (PreparedLaunch.hotplug). */
export interface HotplugEnvironment {
  /** The plan's ports, devices and next block node number. */
  state: HotplugState;
  /** The converter's context (for NIC plans). */
  convert: ConvertContext;
  /** Prepares (node-provided) volume `name` of `vmi` and resolves it for the planner. */
  resolveVolume(vmi: VirtualMachineInstance, name: string): Promise<ResolvedVolume>;
  /** vCPUs at start and the most the domain has room for (maxSockets × cores × threads). */
  vcpus: { current: number; max: number };
  /** Memory layout at start (virtio-mem present when maxBytes is set). */
  memory: MemoryLayout;
  accelerator: 'kvm' | 'tcg';
  /** The node's cgroup for this guest's vCPU threads (vcpu-priority.ts), where hot-added ones go too. */
  vcpuCgroup?: string | undefined;
}

export interface HotplugOptions {
  log: Logger;
  /** A device_del older than this without DEVICE_DELETED is reported as not acknowledged. Default 10 s. */
  unplugAckTimeoutMs?: number;
  /** Called (synchronously) whenever what the domain reports changed. */
  onChange: () => void;
}

export interface DetachingDevice {
  alias: string;
  qemuId: string;
  kind: string;
  since: string;
  reason: string;
}

/** The domain's view of hotplug, for buildDomain's spec extras and tests. */
export interface HotplugReport {
  disks: Array<{ name: string; qemuId: string; kind: string; target: string; bus: string; source: string; hotplugged: boolean }>;
  interfaces: Array<{ name: string; qemuId: string; mac: string }>;
  detaching: DetachingDevice[];
  /** Changes asked for that cannot be applied to the running domain, one sentence each. */
  refused: string[];
  vcpus: { current: number; max: number };
  /** guestBytes: boot memory plus what the guest has plugged; requestedBytes: virtio-mem requested-size. */
  memory: { guestBytes: number; maxBytes?: number | undefined; requestedBytes: number };
}

/** Errors of a sync that did what it could: each names the device and why. */
export class HotplugError extends Error {
  override readonly name = 'HotplugError';
}

const now = () => rfc3339(Date.now());

interface Pending { device: PlanDevice; since: number; sinceIso: string; timer: NodeJS.Timeout; acked: boolean; timedOut: boolean }

export class DomainHotplug {
  private state: HotplugState;
  private readonly env: HotplugEnvironment;
  private readonly qmp: QmpConnection;
  private readonly o: HotplugOptions;
  private readonly hotplugged = new Set<string>();
  private readonly pending = new Map<string, Pending>();
  private readonly sources = new Map<string, { target: string; bus: string; source: string }>();
  private readonly macs = new Map<string, string>();
  private vcpus: number;
  private requestedMemory: number;
  /** What the guest has actually plugged of virtio-mem (MEMORY_DEVICE_SIZE_CHANGE). */
  private pluggedMemory: number;
  private refused: string[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly events: QmpEventStream;

  constructor(qmp: QmpConnection, env: HotplugEnvironment, o: HotplugOptions) {
    this.qmp = qmp;
    this.env = env;
    this.o = o;
    this.state = { pciPorts: [...env.state.pciPorts], devices: [...env.state.devices], nextBlockNodeIndex: env.state.nextBlockNodeIndex };
    this.vcpus = env.vcpus.current;
    this.requestedMemory = env.memory.maxBytes !== undefined ? env.memory.guestBytes - env.memory.bootBytes : 0;
    this.pluggedMemory = this.requestedMemory;
    this.events = onQmpEvents(qmp, ['DEVICE_DELETED', 'MEMORY_DEVICE_SIZE_CHANGE'], (ev) => this.onEvent(ev), o.log);
  }

  /** The domain's guest devices now: the plan's and those hotplugged since. */
  devices(): readonly PlanDevice[] {
    return this.state.devices;
  }

  /** Cold devices' facts from the VMI the domain was started with (targets, sources, MACs). */
  recordColdDevices(vmi: VirtualMachineInstance): void {
    const names = deviceIndices(vmi);
    for (const d of this.state.devices) {
      if (d.kind === 'disk' || d.kind === 'lun' || d.kind === 'cdrom') {
        const disk = vmi.spec.domain.devices.disks?.find((x) => x.name === d.alias);
        const vol = this.env.convert.volumes[d.alias];
        this.sources.set(d.qemuId, { target: names.get(d.alias)?.name ?? '', bus: disk ? diskTarget(disk).bus : '', source: vol?.path ?? '' });
      }
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  get currentState(): HotplugState {
    return this.state;
  }

  /** Brings the running domain in line with `vmi`. Throws HotplugError listing what could not be done. */
  sync(vmi: VirtualMachineInstance): Promise<void> {
    return this.serial(async () => {
      const problems: string[] = [];
      const refused: string[] = [];
      const diff = hotplugDiff(vmi, this.state, { hotplugged: this.hotplugged, detaching: new Set(this.pending.keys()) });
      for (const b of diff.blocked) refused.push(b.reason);
      for (const id of [...diff.detachDisks, ...diff.detachInterfaces]) {
        try {
          await this.unplug(id);
        } catch (err) {
          problems.push(`unplugging ${id.replace(/^ua-/, '')}: ${errorMessage(err)}`);
        }
      }
      for (const name of diff.attachDisks) {
        try {
          await this.plugDisk(vmi, name);
        } catch (err) {
          problems.push(`attaching disk "${name}": ${errorMessage(err)}`);
        }
      }
      for (const name of diff.attachInterfaces) {
        try {
          await this.plugInterface(vmi, name);
        } catch (err) {
          problems.push(`attaching interface "${name}": ${errorMessage(err)}`);
        }
      }
      const cpu = vcpuChange(vmi, this.vcpus, this.env.vcpus.max, this.env.accelerator);
      if (cpu.kind === 'refuse') refused.push(cpu.reason);
      if (cpu.kind === 'add') {
        try {
          await this.addVcpus(cpu.to);
        } catch (err) {
          problems.push(`hot-adding vCPUs ${cpu.from} → ${cpu.to}: ${errorMessage(err)}`);
        }
      }
      const mem = memoryChange(vmi, this.env.memory, this.requestedMemory);
      if (mem.kind === 'refuse') refused.push(mem.reason);
      if (mem.kind === 'resize') {
        try {
          await this.qmp.execute('qom-set', { path: `/machine/peripheral/${QemuId.VirtioMem}`, property: 'requested-size', value: mem.requestedBytes });
          this.o.log.info({ requestedBytes: mem.requestedBytes, guestBytes: mem.guestBytes }, 'virtio-mem requested-size set');
          this.requestedMemory = mem.requestedBytes;
        } catch (err) {
          problems.push(`resizing memory to ${mem.guestBytes} bytes: ${errorMessage(err)}`);
        }
      }
      const refusedChanged = JSON.stringify(refused) !== JSON.stringify(this.refused);
      this.refused = refused;
      for (const r of refused) this.o.log.warn({ reason: r }, 'live change refused');
      if (refusedChanged) this.o.onChange();
      if (problems.length > 0) throw new HotplugError(problems.join('; '));
    });
  }

  private async run(commands: readonly QmpSetupCommand[]): Promise<number> {
    let done = 0;
    for (const c of commands) {
      await this.qmp.execute(c.execute, c.arguments);
      done++;
    }
    return done;
  }

  private async plugDisk(vmi: VirtualMachineInstance, name: string): Promise<void> {
    const t0 = Date.now();
    const vol = await this.env.resolveVolume(vmi, name);
    const plan = planDiskHotplug(vmi, name, vol, this.state);
    let done = 0;
    try {
      done = await this.run(plan.commands);
    } catch (err) {
      // Undo the block nodes added before the failure (top of the chain was added last).
      const added = plan.commands.slice(0, done).filter((c) => c.execute === 'blockdev-add').map((c) => String(c.arguments?.['node-name'])).reverse();
      for (const n of added) await this.qmp.execute('blockdev-del', { 'node-name': n }).catch(() => undefined);
      throw err;
    }
    this.state = plan.state;
    this.hotplugged.add(plan.device.qemuId);
    const disk = vmi.spec.domain.devices.disks?.find((d) => d.name === name);
    this.sources.set(plan.device.qemuId, { target: deviceIndices(vmi).get(name)?.name ?? '', bus: disk ? diskTarget(disk).bus : '', source: vol.path });
    for (const w of plan.warnings) this.o.log.warn({ warning: w }, 'hotplug setting ignored');
    this.o.log.info({ disk: name, bus: plan.device.bus, nodes: plan.device.nodeNames, ms: Date.now() - t0 }, 'disk hotplugged');
    this.o.onChange();
  }

  private async plugInterface(vmi: VirtualMachineInstance, name: string): Promise<void> {
    const plan = planInterfaceHotplug(vmi, name, this.state, this.env.convert);
    let netdevAdded = false;
    try {
      for (const c of plan.commands) {
        await this.qmp.execute(c.execute, c.arguments);
        if (c.execute === 'netdev_add') netdevAdded = true;
      }
    } catch (err) {
      if (netdevAdded && plan.device.netdevId) await this.qmp.execute('netdev_del', { id: plan.device.netdevId }).catch(() => undefined);
      throw err;
    }
    this.state = plan.state;
    const mac = plan.commands.find((c) => c.execute === 'device_add')?.arguments?.['mac'];
    if (typeof mac === 'string') this.macs.set(plan.device.qemuId, mac);
    for (const w of plan.warnings) this.o.log.warn({ warning: w }, 'hotplug setting ignored');
    this.o.log.info({ interface: name, bus: plan.device.bus }, 'interface hotplugged');
    this.o.onChange();
  }

  /** device_del now; the rest when the guest has released the device. */
  private async unplug(qemuId: string): Promise<void> {
    const plan = planUnplug(this.state, qemuId);
    const device = this.state.devices.find((d) => d.qemuId === qemuId)!;
    const since = Date.now();
    const timeout = this.o.unplugAckTimeoutMs ?? 10_000;
    const p: Pending = {
      device, since, sinceIso: now(), acked: false, timedOut: false,
      timer: setTimeout(() => {
        if (!this.pending.has(qemuId)) return;
        p.timedOut = true;
        this.o.log.warn({ device: qemuId, waitedMs: Date.now() - since }, 'guest has not acknowledged the unplug');
        this.o.onChange();
      }, timeout),
    };
    p.timer.unref();
    this.pending.set(qemuId, p);
    try {
      await this.qmp.execute(plan.deviceDel.execute, plan.deviceDel.arguments);
    } catch (err) {
      clearTimeout(p.timer);
      this.pending.delete(qemuId);
      // QEMU no longer has it (e.g. removed by a reset in between): finish the bookkeeping.
      if (/not found/i.test(errorMessage(err))) {
        await this.finishUnplug(qemuId);
        return;
      }
      throw err;
    }
    this.o.log.info({ device: qemuId }, 'device_del sent: waiting for the guest to release the device');
    this.o.onChange();
  }

  /** DEVICE_DELETED completes a pending unplug; MEMORY_DEVICE_SIZE_CHANGE is the guest's virtio-mem size. */
  private onEvent(ev: QmpEventMessage): void {
    if (this.closed) return;
    if (ev.event === 'MEMORY_DEVICE_SIZE_CHANGE' && (ev.data?.['id'] === QemuId.VirtioMem || ev.data?.['qom-path'] === `/machine/peripheral/${QemuId.VirtioMem}`)) {
      const size = ev.data?.['size'];
      if (typeof size === 'number' && size !== this.pluggedMemory) {
        this.pluggedMemory = size;
        this.o.log.info({ pluggedBytes: size, requestedBytes: this.requestedMemory }, 'guest memory resized');
        this.o.onChange();
      }
      return;
    }
    if (ev.event !== 'DEVICE_DELETED') return;
    const id = ev.data?.['device'];
    if (typeof id !== 'string') return; // the virtio-backend child event carries only `path`
    const p = this.pending.get(id);
    if (!p || p.acked) return;
    p.acked = true;
    clearTimeout(p.timer);
    this.o.log.info({ device: id, ms: Date.now() - p.since }, 'guest released the device');
    void this.serial(async () => {
      this.pending.delete(id);
      await this.finishUnplug(id);
    }).catch((err: unknown) => this.o.log.error({ device: id, err: errorMessage(err) }, 'cleaning up after an unplug failed'));
  }

  private async finishUnplug(qemuId: string): Promise<void> {
    if (!this.state.devices.some((d) => d.qemuId === qemuId)) return;
    const plan = planUnplug(this.state, qemuId);
    this.state = plan.state;
    this.hotplugged.delete(qemuId);
    this.sources.delete(qemuId);
    this.macs.delete(qemuId);
    this.o.onChange();
    for (const c of plan.afterDeleted) {
      try {
        await this.qmp.execute(c.execute, c.arguments);
      } catch (err) {
        this.o.log.warn({ command: c.execute, args: c.arguments, err: errorMessage(err) }, 'releasing an unplugged device\'s backend failed');
      }
    }
  }

  private async addVcpus(to: number): Promise<void> {
    const slots = await this.qmp.execute('query-hotpluggable-cpus') as Array<{ type: string; 'qom-path'?: string; props: Record<string, number> }>;
    const free = slots.filter((s) => !s['qom-path'])
      .sort((a, b) => (a.props['socket-id'] ?? 0) - (b.props['socket-id'] ?? 0) || (a.props['core-id'] ?? 0) - (b.props['core-id'] ?? 0) || (a.props['thread-id'] ?? 0) - (b.props['thread-id'] ?? 0));
    const plugged = slots.length - free.length;
    if (plugged >= to) { this.vcpus = plugged; return; }
    for (const slot of free.slice(0, to - plugged)) {
      const id = `vcpu${slot.props['socket-id'] ?? 0}-${slot.props['core-id'] ?? 0}-${slot.props['thread-id'] ?? 0}`;
      await this.qmp.execute('device_add', { driver: slot.type, id, ...slot.props });
      this.vcpus++;
      this.o.log.info({ vcpu: id, vcpus: this.vcpus }, 'vCPU hot-added');
    }
    // A new vCPU thread starts at the priority of QEMU's main loop: lower it as at start.
    await lowerVcpuPriority(this.qmp, { cgroup: this.env.vcpuCgroup }).catch((err: unknown) => this.o.log.warn({ err: errorMessage(err) }, 'hot-added vCPU threads not lowered'));
    this.o.onChange();
  }

  report(): HotplugReport {
    const disks: HotplugReport['disks'] = [];
    const interfaces: HotplugReport['interfaces'] = [];
    for (const d of this.state.devices) {
      if (d.kind === 'disk' || d.kind === 'lun' || d.kind === 'cdrom') {
        const s = this.sources.get(d.qemuId);
        disks.push({ name: d.alias, qemuId: d.qemuId, kind: d.kind, target: s?.target ?? '', bus: s?.bus ?? '', source: s?.source ?? '', hotplugged: this.hotplugged.has(d.qemuId) });
      } else if (d.kind === 'interface') {
        interfaces.push({ name: d.alias, qemuId: d.qemuId, mac: this.macs.get(d.qemuId) ?? '' });
      }
    }
    const timeout = this.o.unplugAckTimeoutMs ?? 10_000;
    const detaching = [...this.pending.values()].map((p) => ({
      alias: p.device.alias,
      qemuId: p.device.qemuId,
      kind: p.device.kind,
      since: p.sinceIso,
      reason: p.timedOut
        ? `the guest has not acknowledged the unplug of ${p.device.kind} "${p.device.alias}" (device_del sent ${p.sinceIso}, no DEVICE_DELETED within ${Math.round(timeout / 1000)} s): the guest may not support ACPI hotplug or may be using the device; it stays attached until the guest releases it or the VM is reset`
        : `waiting for the guest to release ${p.device.kind} "${p.device.alias}"`,
    }));
    const mem = this.env.memory;
    return {
      disks,
      interfaces,
      detaching,
      refused: [...this.refused],
      vcpus: { current: this.vcpus, max: this.env.vcpus.max },
      memory: { guestBytes: mem.bootBytes + this.pluggedMemory, maxBytes: mem.maxBytes, requestedBytes: this.requestedMemory },
    };
  }

  close(): void {
    this.closed = true;
    this.events.close();
    for (const p of this.pending.values()) clearTimeout(p.timer);
  }
}

/**
 * The domain spec sections for a hotplug report (Go field names, as KubeVirt's api.Domain): disks
 * with their alias, target and source; interfaces with alias and MAC; the vCPU count; current
 * memory; and qvirt's hotplug status (devices still detaching and refused live changes).
 */
export function hotplugDomainSpec(r: HotplugReport): Partial<DomainSpec> {
  return {
    Devices: {
      Disks: r.disks.map((d) => ({
        Device: d.kind,
        Alias: { Name: d.qemuId },
        Target: { Device: d.target, Bus: d.bus },
        Source: { File: d.source },
        HotplugVolume: d.hotplugged,
      })),
      Interfaces: r.interfaces.map((i) => ({ Alias: { Name: i.qemuId }, MAC: i.mac ? { MAC: i.mac } : null })),
    },
    VCPU: { Placement: 'static', CPUs: r.vcpus.max },
    VCPUs: { Current: r.vcpus.current, Max: r.vcpus.max },
    CurrentMemory: { Value: r.memory.guestBytes, Unit: 'b' },
    MaxMemory: r.memory.maxBytes !== undefined ? { Value: r.memory.maxBytes, Unit: 'b' } : null,
    QVirtHotplug: {
      Detaching: r.detaching.map((d) => ({ Alias: d.alias, Device: d.qemuId, Kind: d.kind, Since: d.since, Reason: d.reason })),
      Refused: r.refused,
    },
  };
}

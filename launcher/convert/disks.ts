// Disks, CD-ROMs and LUNs on virtio, sata, scsi and usb: -blockdev storage (+ format) nodes named
// as libvirt names them (`libvirt-N-storage` / `libvirt-N-format`, backing chains for overlays),
// the cache/io mapping of KubeVirt's SetDriverCacheMode/SetOptimalIOMode, error policies, serials,
// boot order, iothreads and block sizes, and the frontend device with id `ua-<disk name>`.
import type { Disk, DiskBus, VirtualMachineInstance, Volume } from '../../src/api/types.ts';
import { PciOrder, at, json, type DeviceProps, type PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext, type ResolvedImage, type ResolvedVolume } from './plan.ts';
import { QemuId, USER_ALIAS_PREFIX } from './constants.ts';
import { virtioDriver } from './virtio.ts';

const DISKS = 'spec.domain.devices.disks';

export type CacheMode = 'none' | 'writethrough' | 'writeback';

/** libvirt cache= → QEMU node cache options and the device's write-cache (qemu-qmp.md §2.4). */
export const CACHE_MODES: Record<CacheMode, { direct: boolean; noFlush: boolean; writeCache: 'on' | 'off' }> = {
  none: { direct: true, noFlush: false, writeCache: 'on' },
  writethrough: { direct: false, noFlush: false, writeCache: 'off' },
  writeback: { direct: false, noFlush: false, writeCache: 'on' },
};

type Target = 'disk' | 'lun' | 'cdrom';

export function diskTarget(disk: Disk): { target: Target; bus: DiskBus; readonly: boolean } {
  if (disk.lun) return { target: 'lun', bus: disk.lun.bus ?? 'sata', readonly: disk.lun.readonly ?? false };
  if (disk.cdrom) return { target: 'cdrom', bus: disk.cdrom.bus ?? 'sata', readonly: disk.cdrom.readonly ?? true };
  return { target: 'disk', bus: disk.disk?.bus ?? 'sata', readonly: disk.disk?.readonly ?? false };
}

/** Linux sd.c device names: a..z, aa..zz, ... (KubeVirt formatDeviceName). */
export function formatDeviceName(prefix: string, index: number): string {
  let name = '';
  let i = index;
  while (i >= 0) {
    name = String.fromCharCode(97 + (i % 26)) + name;
    i = Math.floor(i / 26) - 1;
  }
  return prefix + name;
}

const prefixOf = (bus: DiskBus): string => (bus === 'virtio' ? 'vd' : 'sd');

/**
 * KubeVirt's deviceNamer: target names (vda, sdb, ...) per prefix, keeping the targets already
 * recorded in status.volumeStatus; returns the index of each disk's name (its SCSI unit / SATA port).
 */
export function deviceIndices(vmi: VirtualMachineInstance): Map<string, { name: string; index: number }> {
  const disks = vmi.spec.domain.devices.disks ?? [];
  const existing = new Map<string, string>();
  for (const vs of vmi.status?.volumeStatus ?? []) if (vs.target) existing.set(vs.name, vs.target);
  const used = new Map<string, Set<string>>();
  const usedFor = (p: string): Set<string> => {
    let s = used.get(p);
    if (!s) used.set(p, (s = new Set()));
    return s;
  };
  for (const d of disks) {
    const t = existing.get(d.name);
    if (t) usedFor(prefixOf(diskTarget(d).bus)).add(t);
  }
  const out = new Map<string, { name: string; index: number }>();
  for (const d of disks) {
    const prefix = prefixOf(diskTarget(d).bus);
    const taken = usedFor(prefix);
    const kept = existing.get(d.name);
    if (kept && kept.startsWith(prefix)) {
      for (let i = 0; i < 26 * 26 * 26; i++) {
        if (formatDeviceName(prefix, i) === kept) {
          out.set(d.name, { name: kept, index: i });
          break;
        }
      }
      if (out.has(d.name)) continue;
    }
    for (let i = 0; i < 26 * 26 * 26; i++) {
      const name = formatDeviceName(prefix, i);
      if (!taken.has(name)) {
        taken.add(name);
        out.set(d.name, { name, index: i });
        break;
      }
    }
  }
  return out;
}

/** SetDriverCacheMode: explicit mode, else none when O_DIRECT works, else writethrough. */
export function cacheMode(disk: Disk, vol: ResolvedVolume, field: string): CacheMode {
  const direct = (vol.directIO ?? true) && (vol.backing?.directIO ?? true);
  const requested = disk.cache ?? (disk.shareable ? 'none' : undefined);
  if (disk.shareable && requested !== 'none') {
    throw new ConversionError(`${field}.cache`, `a shareable disk requires cache "none", got "${requested}"`);
  }
  if (requested === 'none' && !direct) {
    throw new ConversionError(`${field}.cache`, `cache mode "none" needs direct I/O, which the file system holding ${vol.path} does not support`);
  }
  if (requested) return requested;
  return direct ? 'none' : 'writethrough';
}

/** SetOptimalIOMode: explicit io, else native for O_DIRECT block devices or preallocated files. */
export function ioMode(disk: Disk, vol: ResolvedVolume, cache: CacheMode, field: string): 'native' | 'threads' | undefined {
  if (disk.io === 'native' && cache !== 'none') {
    throw new ConversionError(`${field}.io`, `io "native" needs cache "none" (O_DIRECT); the disk uses "${cache}"`);
  }
  if (disk.io) return disk.io;
  if (cache === 'none' && ((vol.kind ?? 'file') === 'block' || vol.preallocated)) return 'native';
  return undefined;
}

/** error_policy → werror/rerror (libvirt: enospace only sets werror). */
export function errorPolicy(disk: Disk): Record<string, string> {
  switch (disk.errorPolicy ?? 'stop') {
    case 'stop': return { werror: 'stop', rerror: 'stop' };
    case 'ignore': return { werror: 'ignore', rerror: 'ignore' };
    case 'report': return { werror: 'report', rerror: 'report' };
    case 'enospace': return { werror: 'enospc' };
  }
}

/** KubeVirt iothreads.GetIOThreadsCountType. */
export function ioThreadCounts(vmi: VirtualMachineInstance, cpuRequest: number): { total: number; auto: number } {
  const d = vmi.spec.domain;
  const disks = d.devices.disks ?? [];
  const has = d.ioThreadsPolicy !== undefined || disks.some((x) => x.dedicatedIOThread);
  if (!has) return { total: 0, auto: 0 };
  if (d.ioThreadsPolicy === 'supplementalPool') {
    throw new ConversionError('spec.domain.ioThreadsPolicy', 'the supplementalPool IOThreads policy needs iothread-vq-mapping (QEMU ≥ 9), not available');
  }
  const dedicated = disks.filter((x) => x.dedicatedIOThread).length;
  let auto = disks.length - dedicated;
  let limit = 1;
  if (d.ioThreadsPolicy === 'auto') {
    limit = d.cpu?.dedicatedCpuPlacement && d.cpu.isolateEmulatorThread ? 1 : cpuRequest * 2;
  }
  if (auto + dedicated > limit) auto = Math.max(1, limit - dedicated);
  return { total: auto + dedicated, auto };
}

export interface DiskSummary {
  /** A virtio-scsi controller is needed (KubeVirt: always unless disableHotplug, or scsi disks). */
  scsiController: boolean;
  scsiIoThread?: string;
  /** Extra ich9-ahci controllers (sata1, ...) for SATA indices beyond q35's six ports. */
  extraAhci: number;
  usbDisks: boolean;
  virtioDisks: number;
}

interface Chain {
  top: ResolvedImage;
  backing?: ResolvedImage;
}


export interface BlockChain {
  /** -blockdev / blockdev-add arguments, in creation order (backing first, format last). */
  nodes: Array<Record<string, unknown>>;
  /** The node the frontend's `drive` names. */
  drive: string;
  /** Every node, top of the chain first: the blockdev-del order after unplug. */
  nodeNames: string[];
  cache: CacheMode;
}

/**
 * The -blockdev nodes of one disk: `libvirt-<topN>-storage` (+ `-format` for qcow2), and for an
 * overlay its read-only backing image as `libvirt-<backN>-*`.
 */
export function blockChain(disk: Disk, vol: ResolvedVolume, field: string, topN: number, backN?: number): BlockChain {
  const { target } = diskTarget(disk);
  const readonly = diskTarget(disk).readonly || vol.readOnly === true;
  const cache = cacheMode(disk, vol, field);
  const aio = ioMode(disk, vol, cache, field);
  const c = CACHE_MODES[cache];
  const cacheOpt = { direct: c.direct, 'no-flush': c.noFlush };
  const discard = target !== 'cdrom' && !vol.discardIgnore;
  const nodes: Array<Record<string, unknown>> = [];
  const nodeNames: string[] = [];
  const driverOf = (img: ResolvedImage): string => ((img.kind ?? 'file') === 'block' ? 'host_device' : 'file');
  let backingNode: string | null = null;
  if (vol.backing) {
    if (backN === undefined) throw new Error('blockChain: a backing image needs a node index');
    const bk = vol.backing;
    const bs = `libvirt-${backN}-storage`;
    const storage: Record<string, unknown> = { driver: driverOf(bk), filename: bk.path, 'node-name': bs };
    if (bk.format === 'qcow2') {
      storage['auto-read-only'] = true;
      storage['cache'] = cacheOpt;
      const bf = `libvirt-${backN}-format`;
      nodes.push(storage, { 'node-name': bf, 'read-only': true, cache: cacheOpt, driver: 'qcow2', file: bs, backing: null });
      backingNode = bf;
      nodeNames.push(bf, bs);
    } else {
      storage['read-only'] = true;
      storage['cache'] = cacheOpt;
      nodes.push(storage);
      backingNode = bs;
      nodeNames.push(bs);
    }
  }
  const ts = `libvirt-${topN}-storage`;
  const top: Record<string, unknown> = { driver: driverOf(vol), filename: vol.path, 'node-name': ts };
  const withFormat = vol.format === 'qcow2';
  if (withFormat) top['auto-read-only'] = true;
  else top['read-only'] = readonly;
  if (discard) top['discard'] = 'unmap';
  if (aio) top['aio'] = aio;
  top['cache'] = cacheOpt;
  nodes.push(top);
  let drive = ts;
  const topNames = [ts];
  if (withFormat) {
    const tf = `libvirt-${topN}-format`;
    const fmt: Record<string, unknown> = { 'node-name': tf, 'read-only': readonly };
    if (discard) fmt['discard'] = 'unmap';
    fmt['cache'] = cacheOpt;
    fmt['driver'] = 'qcow2';
    fmt['file'] = ts;
    fmt['backing'] = backingNode;
    nodes.push(fmt);
    drive = tf;
    topNames.unshift(tf);
  }
  return { nodes, drive, nodeNames: [...topNames, ...nodeNames], cache };
}

export interface DiskFrontend {
  props: DeviceProps;
  /** `pci` for virtio disks (a root port is assigned later), else the QEMU bus. */
  busName: string;
  pci: boolean;
  /** Index of the AHCI controller a SATA device needs (0 = q35's built-in). */
  ahciController?: number;
}

/** The guest-visible device of a disk, without drive/cache/policy properties. */
export function diskFrontend(
  disk: Disk,
  o: { id: string; index: number; transitional: boolean; vol?: ResolvedVolume },
  field: string,
  warn: (message: string) => void,
): DiskFrontend {
  const { target, bus } = diskTarget(disk);
  const readonly = diskTarget(disk).readonly || o.vol?.readOnly === true;
  switch (bus) {
    case 'virtio':
      if (target !== 'disk') throw new ConversionError(`${field}.${target}.bus`, `a ${target} cannot use the virtio bus`);
      return { props: { driver: virtioDriver('virtio-blk', o.transitional), id: o.id }, busName: 'pci', pci: true };
    case 'sata': {
      if (target === 'lun') throw new ConversionError(`${field}.lun.bus`, 'a LUN needs the scsi bus (SATA cannot pass SCSI commands through)');
      if (target === 'disk' && readonly) throw new ConversionError(`${field}.disk.readonly`, 'read-only SATA disks are not supported by QEMU (ide-hd); use virtio or scsi');
      const controller = Math.floor(o.index / 6);
      const port = o.index % 6;
      const busName = controller === 0 ? `${QemuId.BuiltinAhciBus}.${port}` : `${QemuId.SataPrefix}${controller}.${port}`;
      return { props: { driver: target === 'cdrom' ? 'ide-cd' : 'ide-hd', bus: busName, id: o.id }, busName, pci: false, ahciController: controller };
    }
    case 'scsi': {
      let driver = target === 'cdrom' ? 'scsi-cd' : 'scsi-hd';
      if (target === 'lun') {
        if ((o.vol?.kind ?? 'file') === 'block') driver = 'scsi-block';
        else warn(`${field}: LUN "${disk.name}" is backed by a file, not a block device; emulated as scsi-hd without SCSI passthrough`);
      }
      const busName = `${QemuId.Scsi}.0`;
      const props: DeviceProps = { driver, bus: busName, channel: 0, 'scsi-id': 0, lun: o.index, id: o.id };
      if (driver === 'scsi-hd') props['device_id'] = `drive-${o.id}`;
      return { props, busName, pci: false };
    }
    case 'usb':
      if (target !== 'disk') throw new ConversionError(`${field}.${target}.bus`, `a ${target} cannot use the usb bus`);
      return { props: { driver: 'usb-storage', bus: `${QemuId.Usb}.0`, id: o.id }, busName: `${QemuId.Usb}.0`, pci: false };
    default:
      throw new ConversionError(`${field}.${target}.bus`, `unknown bus "${String(bus)}"`);
  }
}

/** drive, boot order, serial, write-cache, error policy, share-rw, block sizes: common to every bus. */
export function applyDiskProps(props: DeviceProps, disk: Disk, drive: string | undefined, cache: CacheMode | undefined, vol: ResolvedVolume | undefined, field: string): void {
  if (drive) props['drive'] = drive;
  if (disk.bootOrder !== undefined) props['bootindex'] = disk.bootOrder;
  if (disk.serial) props['serial'] = disk.serial;
  if (drive && cache && props.driver !== 'scsi-block') props['write-cache'] = CACHE_MODES[cache].writeCache;
  if (drive) Object.assign(props, errorPolicy(disk));
  if (disk.shareable) props['share-rw'] = true;
  const bs = disk.blockSize;
  if (bs?.custom) {
    if (bs.custom.logical !== undefined) props['logical_block_size'] = bs.custom.logical;
    if (bs.custom.physical !== undefined) props['physical_block_size'] = bs.custom.physical;
    if (bs.custom.discardGranularity !== undefined) props['discard_granularity'] = bs.custom.discardGranularity;
  } else if (bs?.matchVolume && bs.matchVolume.enabled !== false && vol) {
    if (!vol.blockIO) throw new ConversionError(`${field}.blockSize.matchVolume`, `the launcher did not detect the block sizes of volume "${disk.name}"`);
    props['logical_block_size'] = vol.blockIO.logical;
    props['physical_block_size'] = vol.blockIO.physical;
    if (vol.blockIO.discardGranularity !== undefined) props['discard_granularity'] = vol.blockIO.discardGranularity;
  }
}

export function configureDisks(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder, opts: { vcpus: number; cpuRequest: number }): DiskSummary {
  const devices = vmi.spec.domain.devices;
  const disks = devices.disks ?? [];
  const volumes = new Map<string, { v: Volume; i: number }>();
  (vmi.spec.volumes ?? []).forEach((v, i) => volumes.set(v.name, { v, i }));
  const names = deviceIndices(vmi);
  const transitional = devices.useVirtioTransitional === true;
  const summary: DiskSummary = {
    scsiController: !devices.disableHotplug || disks.some((d) => diskTarget(d).bus === 'scsi'),
    extraAhci: 0,
    usbDisks: false,
    virtioDisks: 0,
  };

  // Which disks become devices, with which image chain.
  const plan: Array<{ disk: Disk; i: number; chain?: Chain; vol?: ResolvedVolume }> = [];
  disks.forEach((disk, i) => {
    const field = at(DISKS, i);
    const { target } = diskTarget(disk);
    if (disk.changedBlockTracking) throw new ConversionError(`${field}.changedBlockTracking`, 'changed block tracking is not supported by qvirt yet');
    if (disk.lun?.reservation) throw new ConversionError(`${field}.lun.reservation`, 'SCSI persistent reservations (pr-helper) are not supported by qvirt yet');
    if (disk.disk?.pciAddress) throw new ConversionError(`${field}.disk.pciAddress`, 'explicit PCI addresses are not supported by qvirt yet');
    const entry = volumes.get(disk.name);
    if (!entry) {
      if (target === 'cdrom') { plan.push({ disk, i }); return; }
      throw new ConversionError(field, `no volume named "${disk.name}" in spec.volumes`);
    }
    const vol = ctx.volumes[disk.name];
    if (!vol) {
      const hot = entry.v.persistentVolumeClaim?.hotpluggable || entry.v.dataVolume?.hotpluggable;
      if (hot) {
        b.warn(`${at('spec.volumes', entry.i)}: hotpluggable volume "${disk.name}" is not attached yet; it will be hotplugged`);
        return;
      }
      throw new ConversionError(at('spec.volumes', entry.i), `volume "${disk.name}" was not prepared by the launcher (no disk file)`);
    }
    if (vol.backing && vol.format !== 'qcow2') {
      throw new ConversionError(at('spec.volumes', entry.i), `volume "${disk.name}" has a backing image but is ${vol.format}, not qcow2`);
    }
    plan.push({ disk, i, chain: vol.backing ? { top: vol, backing: vol.backing } : { top: vol }, vol });
  });

  // libvirt numbers storage sources per chain element; the first disk's top gets the highest N.
  let nextNode = plan.reduce((n, p) => n + (p.chain ? (p.chain.backing ? 2 : 1) : 0), 0);
  b.nextBlockNodeIndex = nextNode + 1;

  const threads = ioThreadCounts(vmi, opts.cpuRequest);
  for (let t = 1; t <= threads.total; t++) b.backend('-object', json({ 'qom-type': 'iothread', id: `${QemuId.IoThreadPrefix}${t}` }));
  let autoThread = 1;
  let dedicatedThread = threads.auto + 1;

  for (const { disk, i, chain, vol } of plan) {
    const field = at(DISKS, i);
    const { target, bus } = diskTarget(disk);
    const id = USER_ALIAS_PREFIX + disk.name;
    const placement = names.get(disk.name) ?? { name: '', index: 0 };
    let drive: string | undefined;
    const nodeNames: string[] = [];
    let cache: CacheMode | undefined;

    if (chain && vol) {
      const topN = nextNode--;
      const backN = chain.backing ? nextNode-- : undefined;
      const built = blockChain(disk, vol, field, topN, backN);
      for (const n of built.nodes) b.backend('-blockdev', json(n));
      drive = built.drive;
      nodeNames.push(...built.nodeNames);
      cache = built.cache;
    }

    const fe = diskFrontend(disk, { id, index: placement.index, transitional, ...(vol ? { vol } : {}) }, field, (w) => b.warn(w));
    const { props, busName, pci } = fe;
    if (bus === 'virtio') summary.virtioDisks++;
    if (bus === 'usb') summary.usbDisks = true;
    if (fe.ahciController !== undefined) summary.extraAhci = Math.max(summary.extraAhci, fe.ahciController);
    applyDiskProps(props, disk, drive, cache, vol, field);
    if (bus === 'virtio') {
      if (threads.total > 0) {
        const t = disk.dedicatedIOThread ? dedicatedThread++ : autoThread;
        if (!disk.dedicatedIOThread) autoThread = (autoThread % threads.auto) + 1;
        props['iothread'] = `${QemuId.IoThreadPrefix}${t}`;
      }
      if (devices.blockMultiQueue) props['num-queues'] = opts.vcpus;
    }
    if (disk.cdrom?.tray === 'open') {
      b.setup.push({ execute: 'blockdev-open-tray', arguments: { id, force: true }, reason: `${field}.cdrom.tray=open` });
    }
    b.device(props, pci ? { order: PciOrder.Disk, nic: false } : undefined);
    const rec = { alias: disk.name, kind: target, qemuId: id, driver: props.driver, bus: pci ? 'pci' : busName };
    b.record(nodeNames.length > 0 ? { ...rec, nodeNames } : rec);
  }

  if (summary.scsiController && threads.auto > 0 && disks.some((d) => diskTarget(d).bus === 'scsi' && d.dedicatedIOThread)) {
    let current = 1;
    for (const d of disks) if (diskTarget(d).bus === 'virtio' && !d.dedicatedIOThread) current = (current % threads.auto) + 1;
    summary.scsiIoThread = `${QemuId.IoThreadPrefix}${current}`;
  }
  return summary;
}

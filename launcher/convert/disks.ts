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
    const { target, bus, readonly } = diskTarget(disk);
    const id = USER_ALIAS_PREFIX + disk.name;
    const placement = names.get(disk.name) ?? { name: '', index: 0 };
    let drive: string | undefined;
    const nodeNames: string[] = [];
    let cache: CacheMode | undefined;

    if (chain && vol) {
      cache = cacheMode(disk, vol, field);
      const aio = ioMode(disk, vol, cache, field);
      const c = CACHE_MODES[cache];
      const cacheOpt = { direct: c.direct, 'no-flush': c.noFlush };
      const discard = target !== 'cdrom' && !vol.discardIgnore;
      const topN = nextNode--;
      const backN = chain.backing ? nextNode-- : undefined;
      let backingNode: string | null = null;
      if (chain.backing && backN !== undefined) {
        const bk = chain.backing;
        const bs = `libvirt-${backN}-storage`;
        const storage: Record<string, unknown> = { driver: (bk.kind ?? 'file') === 'block' ? 'host_device' : 'file', filename: bk.path, 'node-name': bs };
        if (bk.format === 'qcow2') {
          storage['auto-read-only'] = true;
          storage['cache'] = cacheOpt;
          const bf = `libvirt-${backN}-format`;
          b.backend('-blockdev', json(storage), '-blockdev', json({ 'node-name': bf, 'read-only': true, cache: cacheOpt, driver: 'qcow2', file: bs, backing: null }));
          backingNode = bf;
        } else {
          storage['read-only'] = true;
          storage['cache'] = cacheOpt;
          b.backend('-blockdev', json(storage));
          backingNode = bs;
        }
      }
      const ts = `libvirt-${topN}-storage`;
      const top: Record<string, unknown> = { driver: (vol.kind ?? 'file') === 'block' ? 'host_device' : 'file', filename: vol.path, 'node-name': ts };
      const withFormat = vol.format === 'qcow2';
      if (withFormat) top['auto-read-only'] = true;
      else top['read-only'] = readonly;
      if (discard) top['discard'] = 'unmap';
      if (aio) top['aio'] = aio;
      top['cache'] = cacheOpt;
      b.backend('-blockdev', json(top));
      if (withFormat) {
        const tf = `libvirt-${topN}-format`;
        const fmt: Record<string, unknown> = { 'node-name': tf, 'read-only': readonly };
        if (discard) fmt['discard'] = 'unmap';
        fmt['cache'] = cacheOpt;
        fmt['driver'] = 'qcow2';
        fmt['file'] = ts;
        fmt['backing'] = backingNode;
        b.backend('-blockdev', json(fmt));
        drive = tf;
        nodeNames.push(tf, ts);
      } else {
        drive = ts;
        nodeNames.push(ts);
      }
      if (backingNode) {
        nodeNames.push(backingNode);
        if (backingNode.endsWith('-format')) nodeNames.push(backingNode.replace(/-format$/, '-storage'));
      }
    }

    // Frontend device.
    let props: DeviceProps;
    let busName: string;
    let pci = false;
    switch (bus) {
      case 'virtio': {
        if (target !== 'disk') throw new ConversionError(`${field}.${target}.bus`, `a ${target} cannot use the virtio bus`);
        props = { driver: virtioDriver('virtio-blk', transitional), id };
        busName = 'pci';
        pci = true;
        summary.virtioDisks++;
        break;
      }
      case 'sata': {
        if (target === 'lun') throw new ConversionError(`${field}.lun.bus`, 'a LUN needs the scsi bus (SATA cannot pass SCSI commands through)');
        if (target === 'disk' && readonly) throw new ConversionError(`${field}.disk.readonly`, 'read-only SATA disks are not supported by QEMU (ide-hd); use virtio or scsi');
        const controller = Math.floor(placement.index / 6);
        const port = placement.index % 6;
        summary.extraAhci = Math.max(summary.extraAhci, controller);
        busName = controller === 0 ? `${QemuId.BuiltinAhciBus}.${port}` : `${QemuId.SataPrefix}${controller}.${port}`;
        props = { driver: target === 'cdrom' ? 'ide-cd' : 'ide-hd', bus: busName, id };
        break;
      }
      case 'scsi': {
        let driver = target === 'cdrom' ? 'scsi-cd' : 'scsi-hd';
        if (target === 'lun') {
          if ((vol?.kind ?? 'file') === 'block') driver = 'scsi-block';
          else b.warn(`${field}: LUN "${disk.name}" is backed by a file, not a block device; emulated as scsi-hd without SCSI passthrough`);
        }
        busName = `${QemuId.Scsi}.0`;
        props = { driver, bus: busName, channel: 0, 'scsi-id': 0, lun: placement.index, id };
        if (driver === 'scsi-hd') props['device_id'] = `drive-${id}`;
        break;
      }
      case 'usb': {
        if (target !== 'disk') throw new ConversionError(`${field}.${target}.bus`, `a ${target} cannot use the usb bus`);
        busName = `${QemuId.Usb}.0`;
        props = { driver: 'usb-storage', bus: busName, id };
        summary.usbDisks = true;
        break;
      }
      default:
        throw new ConversionError(`${field}.${target}.bus`, `unknown bus "${String(bus)}"`);
    }
    if (drive) props['drive'] = drive;
    if (disk.bootOrder !== undefined) props['bootindex'] = disk.bootOrder;
    if (disk.serial) props['serial'] = disk.serial;
    if (drive && cache && props.driver !== 'scsi-block') props['write-cache'] = CACHE_MODES[cache].writeCache;
    if (drive) Object.assign(props, errorPolicy(disk));
    if (disk.shareable) props['share-rw'] = true;
    if (bus === 'virtio') {
      if (threads.total > 0) {
        const t = disk.dedicatedIOThread ? dedicatedThread++ : autoThread;
        if (!disk.dedicatedIOThread) autoThread = (autoThread % threads.auto) + 1;
        props['iothread'] = `${QemuId.IoThreadPrefix}${t}`;
      }
      if (devices.blockMultiQueue) props['num-queues'] = opts.vcpus;
    }
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

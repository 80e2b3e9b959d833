// `qvirt addvolume|removevolume NAME --volume-name=CLAIM`: virtctl's volume hotplug. virtctl calls
// virt-api's addvolume/removevolume subresources (src/virt-api serves them); the CLI sends the patches
// virt-api would (src/api/volume-requests.ts) with the user's own credentials: for a VM a request in
// `status.volumeRequests` (the VM controller moves it into spec.template and into the running VMI);
// for a VMI without a VM, a test-guarded patch of its spec. The node then mounts the claim and the
// launcher plugs it.
import type { AddVolumeOptions, Disk, VirtualMachine, VirtualMachineInstance, VirtualMachineVolumeRequest } from '../api/types.ts';
import { VolumeRequestError } from '../api/volume-requests.ts';
import { volumeRequestPatch, type VolumeTarget } from '../virt-api/volumes.ts';
import { isNotFound, KubeApiError } from '../kube/client.ts';
import { Resources } from '../kube/resource.ts';
import { UsageError } from '../flags/flags.ts';
import { kubeError } from '../kube/kube-error.ts';
import { UserError } from '../kube/user-error.ts';
import { withCluster, type ClusterContext } from './kube-context.ts';
import { parseVerb } from './verb.ts';

/** DNS-1035 label length (validation.DNS1035LabelMaxLength). */
const MAX_NAME = 63;
const CACHES = new Set(['none', 'writethrough', 'writeback']);

const common = {
  'volume-name': { type: 'string', value: 'NAME', help: 'name of the volume source: a PersistentVolumeClaim (or DataVolume) in the namespace' },
  'dry-run': { type: 'boolean', help: 'check and print the patch that would be sent, change nothing' },
} as const;

/** The options of `addvolume` as virtctl builds them (add_volume.go). Pure. */
export function addVolumeOptions(o: { volumeName: string; diskName?: string | undefined; serial?: string | undefined; cache?: string | undefined; diskType: string; bus: string; dataVolume: boolean }): AddVolumeOptions {
  const name = o.diskName || o.volumeName;
  if (name.length > MAX_NAME) {
    throw new UsageError(o.diskName
      ? `Invalid disk name ${o.diskName}, must not exceed ${MAX_NAME} characters`
      : `Invalid volume name ${o.volumeName}, must not exceed ${MAX_NAME} characters. Use in conjunction with --disk-name to specify a shorter name`);
  }
  const disk: Disk = { name };
  switch (o.diskType) {
    case 'disk':
      if (o.bus !== 'scsi' && o.bus !== 'virtio') throw new UsageError(`--bus: invalid bus type '${o.bus}' for disk. Only 'scsi' and 'virtio' are supported.`);
      disk.disk = { bus: o.bus };
      break;
    case 'lun':
      if (o.bus !== 'scsi') throw new UsageError(`--bus: invalid bus type '${o.bus}' for LUN disk. Only 'scsi' bus is supported.`);
      disk.lun = { bus: 'scsi' };
      break;
    default:
      throw new UsageError(`--disk-type: invalid disk type '${o.diskType}'. Only lun and disk are supported.`);
  }
  disk.serial = o.serial || name;
  if (o.cache) {
    if (!CACHES.has(o.cache)) throw new UsageError(`--cache: invalid cache value ${o.cache} (none, writethrough or writeback)`);
    disk.cache = o.cache as Disk['cache'];
  }
  return {
    name,
    disk,
    volumeSource: o.dataVolume
      ? { dataVolume: { name: o.volumeName, hotpluggable: true } }
      : { persistentVolumeClaim: { claimName: o.volumeName, hotpluggable: true } },
  };
}

/** virtctl: the VM's subresource first; a VMI without a VM when there is no VM of that name. */
async function target(ctx: ClusterContext, name: string): Promise<VolumeTarget> {
  try {
    return { kind: 'vm', vm: await ctx.client.get<VirtualMachine & { metadata?: object }>(Resources.virtualMachines, ctx.namespace, name) };
  } catch (err) {
    if (!isNotFound(err)) throw kubeError(err, { kind: 'VirtualMachine', name, namespace: ctx.namespace }, ctx.server);
  }
  try {
    return { kind: 'vmi', vmi: await ctx.client.get<VirtualMachineInstance & { metadata?: object }>(Resources.virtualMachineInstances, ctx.namespace, name) };
  } catch (err) {
    throw kubeError(err, { kind: 'VirtualMachineInstance', name, namespace: ctx.namespace }, ctx.server);
  }
}

async function submit(ctx: ClusterContext, name: string, request: VirtualMachineVolumeRequest, dryRun: boolean): Promise<'VM' | 'VMI'> {
  const t = await target(ctx, name);
  const kind = t.kind === 'vm' ? 'VirtualMachine' : 'VirtualMachineInstance';
  let p;
  try {
    p = volumeRequestPatch(t, request);
  } catch (err) {
    if (err instanceof VolumeRequestError) throw new UserError(`${kind} "${name}" in namespace "${ctx.namespace}": ${err.message}`);
    throw err;
  }
  if (dryRun) {
    process.stdout.write(`Dry Run execution\nPATCH ${p.resource.plural}/${name}${p.subresource ? ` (${p.subresource})` : ''}: ${JSON.stringify(p.ops)}\n`);
  } else {
    try {
      await ctx.client.patch(p.resource, ctx.namespace, name, p.ops, 'json', p.subresource);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 422 && /test/.test(err.message)) {
        throw new UserError(`the ${kind} "${name}" changed while the request was being made; try again`);
      }
      throw kubeError(err, { kind, name, namespace: ctx.namespace }, ctx.server);
    }
  }
  return t.kind === 'vm' ? 'VM' : 'VMI';
}

export async function addvolume(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt addvolume (VM|VMI) --volume-name=NAME [flags]',
    summary: 'Add a volume to a running VM (persisted in the VM spec) or to a VMI without a VM (until it stops).',
    flags: {
      ...common,
      'disk-name': { type: 'string', value: 'NAME', help: 'name used in the disk/volume section of the spec (default: the volume name)' },
      serial: { type: 'string', value: 'SERIAL', help: 'serial number of the disk in the guest (default: the disk name)' },
      cache: { type: 'string', value: 'MODE', help: 'cache mode: none, writethrough or writeback' },
      'disk-type': { type: 'string', value: 'TYPE', default: 'disk', help: 'disk or lun' },
      bus: { type: 'string', value: 'BUS', default: 'scsi', help: 'scsi or virtio (a lun: scsi only)' },
      persist: { type: 'boolean', help: '[deprecated] no effect: a VM\'s volumes are always persisted in its spec' },
    },
    args: ['VM|VMI'],
    examples: '  # Attach claim example-pvc to the running VM vm1, seen in the guest with serial 1234567890:\n  qvirt addvolume vm1 --volume-name=example-pvc --serial=1234567890\n  # As a virtio disk named data:\n  qvirt addvolume vm1 --volume-name=example-pvc --disk-name=data --bus=virtio',
  }, argv);
  if (!v) return 0;
  const volumeName = v.flags['volume-name'];
  if (!volumeName) throw new UsageError('--volume-name is required');
  return withCluster(v.flags, async (ctx) => {
    // virtctl: a DataVolume of that name, else a PersistentVolumeClaim (qvirt serves no DataVolumes).
    try {
      await ctx.client.get(Resources.persistentVolumeClaims, ctx.namespace, volumeName);
    } catch (err) {
      if (isNotFound(err)) throw new UserError(`error adding volume, Volume ${volumeName} is not a DataVolume or PersistentVolumeClaim in namespace "${ctx.namespace}"`);
      throw kubeError(err, { kind: 'PersistentVolumeClaim', name: volumeName, namespace: ctx.namespace }, ctx.server);
    }
    const opts = addVolumeOptions({ volumeName, diskName: v.flags['disk-name'], serial: v.flags.serial, cache: v.flags.cache, diskType: v.flags['disk-type'] ?? 'disk', bus: v.flags.bus ?? 'scsi', dataVolume: false });
    const name = v.args[0]!;
    const kind = await submit(ctx, name, { addVolumeOptions: opts }, v.flags['dry-run']);
    if (!v.flags['dry-run']) process.stdout.write(`Successfully submitted add volume request to ${kind} ${name} for volume ${volumeName}\n`);
    return 0;
  });
}

export async function removevolume(argv: string[]): Promise<number> {
  const v = parseVerb({
    use: 'qvirt removevolume (VM|VMI) --volume-name=NAME [flags]',
    summary: 'Remove a hotplugged volume from a running VM or VMI.',
    flags: { ...common, persist: { type: 'boolean', help: '[deprecated] no effect' } },
    args: ['VM|VMI'],
    examples: '  # Detach volume example-pvc from the running VM vm1:\n  qvirt removevolume vm1 --volume-name=example-pvc',
  }, argv);
  if (!v) return 0;
  const volumeName = v.flags['volume-name'];
  if (!volumeName) throw new UsageError('--volume-name is required');
  return withCluster(v.flags, async (ctx) => {
    const name = v.args[0]!;
    const kind = await submit(ctx, name, { removeVolumeOptions: { name: volumeName } }, v.flags['dry-run']);
    if (!v.flags['dry-run']) process.stdout.write(`Successfully submitted remove volume request to ${kind} ${name} for volume ${volumeName}\n`);
    return 0;
  });
}

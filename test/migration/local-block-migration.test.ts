// Block migration through the whole stack in the local mode with two nodes: a VMI whose disks live
// in its launcher pod (a containerDisk overlay and a cloud-init disk, KubeVirt's
// examples/vmi-migratable.yaml shape) migrates with its disks — QEMU → QEMU (the source QEMU mirrors the
// overlays into the target QEMU's NBD server on its pod's address, with the migration's TLS), and over the
// relay (both node agents open the second proxy, the disks' stream, KubeVirt's port 49153). The guest wrote a marker to its disk at boot and keeps writing
// numbered blocks, reading each previous one back from the disk (page cache dropped): on the target
// it still reads the marker and the block it wrote last on the source. A VMI whose only volume is a
// read-only CD-ROM stays a plain live migration (one proxy).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Resources } from '../../src/kube/resource.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { BLOCK_MIGRATION_PORT, MULTIFD_MIGRATION_PORT, DIRECT_MIGRATION_PORT, MIGRATION_TRANSPORT_ANNOTATION, TARGET_QEMU_BLOCK_MIGRATION_PORT, TARGET_QEMU_MIGRATION_PORT } from '../../src/api/migration.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { localNodeDirs } from '../../src/local/local-node.ts';
import { serialLog, vmiManifest, waitUntil, withCluster, type Cluster } from './local-cluster.ts';
import { blockPasses, blockPassesAcross } from './lib.ts';

const DISK_IMAGE = 'qvirt/blk-disk:latest';

// The guest: find the containerDisk by its serial, write a marker at sector 2048, then every 300 ms
// write block 4096+n, drop the page cache and read the marker and block 4096+n-1 back from the disk.
const USER_DATA = `#!/bin/sh
dev=
for d in /sys/block/*; do [ "$(cat $d/serial 2>/dev/null)" = BLKMIG ] && dev=/dev/\${d##*/}; done
out() { printf '\\n%s\\n' "$*" > /dev/console; }
[ -n "$dev" ] || { out "QVIRT-BLK-NODISK"; exit 1; }
echo "$(cat /proc/sys/kernel/random/boot_id | cut -c1-8)-mark" | dd of=$dev bs=512 seek=2048 conv=fsync 2>/dev/null
(
  n=0
  while :; do
    echo w$n | dd of=$dev bs=512 seek=$((4096+n)) conv=fsync 2>/dev/null
    echo 3 > /proc/sys/vm/drop_caches
    b=$(dd if=$dev bs=512 skip=2048 count=1 2>/dev/null | head -n 1)
    p=$(dd if=$dev bs=512 skip=$((4095+n)) count=1 2>/dev/null | head -n 1)
    out "QVIRT-BLK n=$n boot=$b prev=\${p:-none}"
    n=$((n+1))
    usleep 300000
  done
) </dev/null >/dev/null 2>&1 &
`;

function blkVmi(name: string, transport: 'direct' | 'relay'): VirtualMachineInstance {
  const vmi = vmiManifest(name, 'qvirt.dhcp=0');
  vmi.metadata = { ...vmi.metadata, annotations: { [MIGRATION_TRANSPORT_ANNOTATION]: transport } };
  vmi.spec.domain.devices.disks = [
    { name: 'scratch', serial: 'BLKMIG', disk: { bus: 'virtio' } },
    { name: 'cloudinit', disk: { bus: 'virtio' } },
  ];
  vmi.spec.volumes = [
    { name: 'scratch', containerDisk: { image: DISK_IMAGE } },
    { name: 'cloudinit', cloudInitNoCloud: { userData: USER_DATA } },
  ];
  return vmi;
}

/**
 * A VMI whose only disk is a read-only CD-ROM, through the relay (whose ports the test looks at; it
 * would go direct), with a TPM: the target's swtpm must take the state QEMU sends. It boots no
 * kernel (a TPM with kernelBoot's initrd under BIOS is refused): SeaBIOS finds nothing to boot.
 */
function cdromVmi(name: string): VirtualMachineInstance {
  const vmi = vmiManifest(name, 'qvirt.dhcp=0');
  vmi.metadata = { ...vmi.metadata, annotations: { [MIGRATION_TRANSPORT_ANNOTATION]: 'relay' } };
  delete vmi.spec.domain.firmware;
  vmi.spec.domain.devices.tpm = {};
  vmi.spec.domain.devices.disks = [{ name: 'media', cdrom: { bus: 'sata' } }];
  vmi.spec.volumes = [{ name: 'media', containerDisk: { image: DISK_IMAGE } }];
  return vmi;
}

const read = (f: string) => (f ? readFileSync(f, 'utf8') : '');

/** On a failure: the guest's last console lines and the migration lines of node `i`'s launcher logs. */
function diagnostics(c: Cluster, i: number, serial: string): string {
  const { podsDir } = localNodeDirs(c.dataDir, i, c.local.nodeNames[i]!);
  const out = [`target console tail:\n${serial.slice(-1200)}`];
  for (const pod of existsSync(podsDir) ? readdirSync(podsDir) : []) {
    const f = join(podsDir, pod, 'logs', 'compute', '0.log');
    if (!existsSync(f)) continue;
    out.push(`launcher ${pod}:\n${readFileSync(f, 'utf8').split('\n').filter((l) => /block migration|migrat|stderr|"level":"(warn|error)"|state changed/i.test(l)).slice(-40).join('\n')}`);
  }
  return out.join('\n');
}

async function running(c: Cluster, vmi: VirtualMachineInstance): Promise<VirtualMachineInstance> {
  await c.local.client.create(Resources.virtualMachineInstances, vmi);
  return waitUntil(`VMI ${vmi.metadata!.name} Running`, async () => {
    const v = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', vmi.metadata!.name!);
    return v.status?.phase === 'Running' ? v : undefined;
  }, 180_000);
}

async function migrate(c: Cluster, vmiName: string): Promise<{ mig: VirtualMachineInstanceMigration; vmi: VirtualMachineInstance }> {
  const name = `${vmiName}-mig`;
  await c.local.client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name, namespace: 'default' }, spec: { vmiName } });
  const mig = await waitUntil('migration final', async () => {
    const m = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', name);
    return m.status?.phase === 'Succeeded' || m.status?.phase === 'Failed' ? m : undefined;
  }, 240_000);
  return { mig, vmi: await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', vmiName) };
}

/** A containerDisk + cloud-init VMI block-migrates over `transport`; its disk's writes continue on the target. */
async function blockMigrates(c: Cluster, name: string, transport: 'direct' | 'relay'): Promise<void> {
  const vmi = await running(c, blkVmi(name, transport));
  const uid = vmi.metadata!.uid!;
  const srcIdx = c.local.nodeNames.indexOf(vmi.status!.nodeName!);
  const dstIdx = 1 - srcIdx;
  const srcLog = () => read(serialLog(c, srcIdx, uid));
  const dstLog = () => read(serialLog(c, dstIdx, uid));
  await waitUntil('the guest writes its disk', async () => (blockPasses(srcLog()).length >= 3 ? true : undefined), 180_000);
  assert.not.ok(srcLog().includes('QVIRT-BLK-NODISK'), 'the guest found its containerDisk');
  const mark = blockPasses(srcLog())[0]!.boot;
  assert.match(mark, /^[0-9a-f]{8}-mark$/);

  const { mig, vmi: after } = await migrate(c, name);
  if (mig.status?.phase !== 'Succeeded') console.log(`source ${diagnostics(c, srcIdx, srcLog())}\ntarget ${diagnostics(c, dstIdx, dstLog())}`);
  assert.is(mig.status?.phase, 'Succeeded', JSON.stringify(mig.status));
  const ms = after.status!.migrationState!;
  assert.is(after.status!.nodeName, c.local.nodeNames[dstIdx]);
  // The relay: the node agents' listeners under KubeVirt's keys (and, with socat, the multifd channels'
  // MULTIFD_MIGRATION_PORT); direct: the target QEMU's own migration and NBD ports under qvirt's.
  const expected = transport === 'relay' ? [DIRECT_MIGRATION_PORT, BLOCK_MIGRATION_PORT] : [TARGET_QEMU_MIGRATION_PORT, TARGET_QEMU_BLOCK_MIGRATION_PORT];
  assert.equal(Object.values(ms.targetDirectMigrationNodePorts ?? {}).filter((p) => p !== MULTIFD_MIGRATION_PORT).sort(), expected, `the target listened for the migration and for the disks (${transport})`);

  // Three passes: the first reads back the block written last on the source (a loaded host runs TCG slowly).
  await waitUntil('the guest writes on the target', async () => (blockPasses(dstLog()).length >= 3 ? true : undefined), 180_000)
    .catch((err: Error) => { console.log(diagnostics(c, dstIdx, dstLog())); throw err; });
  // The two logs as one text (blockPassesAcross): a line may begin on the source and end on the target.
  const { source: src, target: dst } = blockPassesAcross(srcLog(), dstLog());
  assert.equal([...src, ...dst].map((l) => l.n), [...src, ...dst].map((_, i) => i), `no pass lost or repeated: ${[...src, ...dst].map((l) => l.n).join(' ')}`);
  assert.not.ok(dstLog().includes('QVIRT-GUEST-BOOTED'), 'the guest did not boot again');
  const first = dst[0]!;
  assert.ok(first.n <= src.at(-1)!.n + 1, `the loop continues on the target (first ${first.n}, source's last ${src.at(-1)!.n})`);
  assert.ok(src.some((l) => l.n === first.n - 1), `block w${first.n - 1} was written on the source`);
  for (const l of [...src, ...dst]) {
    assert.is(l.boot, mark, `pass ${l.n} read the marker written at boot`);
    assert.is(l.prev, l.n === 0 ? 'none' : `w${l.n - 1}`, `pass ${l.n} read back the block of pass ${l.n - 1}`);
  }
  console.log(`    block migration (${transport}): ${src.length} passes on the source, ${dst.length} on the target, all read back from the disk`);
}

test('a containerDisk + cloud-init VMI block-migrates, QEMU → QEMU and over the relay: the guest\'s disk writes (at boot and during the migration) are on the target, no reboot; a read-only CD-ROM VMI stays a live migration, its TPM with it', async () => {
  await withCluster({}, async (c) => {
    // The local image store the cluster uses (withCluster keeps it beside the data dir).
    const store = new ImageStore(join(dirname(c.dataDir), 'store'));
    const raw = join(dirname(c.dataDir), 'blk-disk.img');
    execFileSync('qemu-img', ['create', '-q', '-f', 'raw', raw, '64M']);
    await store.importDisk(DISK_IMAGE, raw);

    await blockMigrates(c, 'blk-direct', 'direct');
    await blockMigrates(c, 'blk-relay', 'relay');

    // A read-only CD-ROM is shared as far as migration goes: one proxy, no disk copy.
    const plain = await running(c, cdromVmi('cdmover'));
    const plainSrc = plain.status!.nodeName!;
    const res = await migrate(c, 'cdmover');
    assert.is(res.mig.status?.phase, 'Succeeded', JSON.stringify(res.mig.status));
    assert.is.not(res.vmi.status!.nodeName, plainSrc);
    assert.equal(Object.values(res.vmi.status!.migrationState!.targetDirectMigrationNodePorts ?? {}).filter((p) => p !== MULTIFD_MIGRATION_PORT), [DIRECT_MIGRATION_PORT], 'a live migration: the migration stream only');
    // Its TPM went along: the target QEMU loaded the TPM's state into its swtpm (or the migration would
    // have failed), and one swtpm is left for the VM, the target's: the source's ended with its QEMU.
    await waitUntil('one swtpm for the VM', async () => {
      let out = '';
      try { out = execFileSync('pgrep', ['-af', `swtpm socket.*${plain.metadata!.uid}`], { encoding: 'utf8' }); } catch { /* none */ }
      const lines = out.trim().split('\n').filter(Boolean);
      return lines.length === 1 ? lines : undefined;
    }, 30_000);
  });
});

test.run();

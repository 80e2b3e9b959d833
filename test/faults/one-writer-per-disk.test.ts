// One writer per disk, in the local mode: two VMIs naming the same PersistentVolumeClaim. The first
// writes to the claim's disk and keeps running; the second's QEMU is refused the image's write lock
// and the second VMI says so in its Synchronized condition and a SyncFailed event — the volume, the
// claim, another VM holding it — instead of QEMU's -device JSON; the first VM's data stays whole,
// and once the first VM is gone the second starts and reads that data.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { startEnv, getVmi, serialLog, type Env } from '../virtctl/lib.ts';
import { guestVmi } from '../net/lib.ts';
import { waitFor } from '../lib/within.ts';
import { processGone, qemuOf } from './lib.ts';

let env!: Env;
test.before(async () => { env = await startEnv('qvw'); });
test.after(async () => { await env?.stop(); });

const DATA = 'QVIRT-DATA-FROM-HOLDER';
const HELD = /^SyncVirtualMachine: volume "hd" \(PersistentVolumeClaim "shared"\) is held by another VM: its image \S+ is locked by another QEMU process \(QEMU: Failed to get "write" lock\); a disk takes one writer at a time, so this VMI cannot start while the other VM runs$/;

/** The test guest with the claim `shared` as its second disk (vdb) and a user-data script. */
function withClaim(name: string, script: string): VirtualMachineInstance {
  const v = guestVmi(name, undefined, script);
  v.spec.volumes!.push({ name: 'hd', persistentVolumeClaim: { claimName: 'shared' } });
  v.spec.domain.devices.disks!.push({ name: 'hd', disk: { bus: 'virtio' } });
  return v;
}

const running = (name: string) => waitFor(`VMI ${name} Running`, async () => { const v = await getVmi(env, name); return v?.status?.phase === 'Running' ? v : undefined; }, 120_000, 200);

test('a second VMI on a claim another VM writes to is refused with the volume named; the first keeps running, its data whole', async () => {
  const { client } = env.local;
  await client.create(Resources.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'shared', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } } });
  await client.create(Resources.virtualMachineInstances, withClaim('holder', `printf '${DATA}' | dd of=/dev/vdb bs=512 conv=sync 2>/dev/null && sync && echo QVIRT-WROTE`));
  const holder = await running('holder');
  await waitFor('the holder\'s write to the claim', () => serialLog(env, holder.metadata!.uid!).includes('QVIRT-WROTE'), 120_000, 200);
  const [holderQemu] = await waitFor('the holder\'s QEMU', () => { const q = qemuOf('default', 'holder'); return q.length === 1 ? q : undefined; }, 10_000, 100);

  await client.create(Resources.virtualMachineInstances, withClaim('second', 'echo "QVIRT-READ $(head -c 22 /dev/vdb)"'));
  const refused = await waitFor('the second VMI refused the claim', async () => {
    const c = (await getVmi(env, 'second'))?.status?.conditions?.find((x) => x.type === 'Synchronized');
    return c?.status === 'False' && HELD.test(c.message ?? '') ? c : undefined;
  }, 120_000, 200);
  assert.match(refused.message ?? '', HELD);
  const events = await client.list<{ metadata?: object; reason?: string; message?: string; involvedObject?: { name?: string } }>(Resources.events, { namespace: 'default' });
  const syncFailed = events.items.filter((e) => e.involvedObject?.name === 'second' && e.reason === 'SyncFailed');
  assert.ok(syncFailed.length >= 1 && syncFailed.every((e) => HELD.test(e.message ?? '')), `SyncFailed events name the volume: ${JSON.stringify(syncFailed.map((e) => e.message))}`);
  assert.ok(syncFailed.length <= 2, `one message, not one event per retry: ${syncFailed.length} SyncFailed events`);
  assert.is((await getVmi(env, 'second'))?.status?.phase, 'Scheduled', 'the second VMI waits, it is not Running');

  // The holder is untouched: Running, the same QEMU, its data on the claim.
  assert.is((await getVmi(env, 'holder'))?.status?.phase, 'Running');
  assert.ok(!processGone(holderQemu!), 'the holder\'s QEMU still runs');
  assert.equal(qemuOf('default', 'holder'), [holderQemu]);
  const image = join(dirname(env.podsDir), 'pv', 'default_shared', 'disk.img');
  assert.is(readFileSync(image).subarray(0, DATA.length).toString(), DATA, 'the holder\'s write is on the claim');

  // The holder gone, the second VMI starts on the claim and reads what the holder wrote.
  await client.delete(Resources.virtualMachineInstances, 'default', 'holder');
  await waitFor('the holder\'s QEMU gone', () => processGone(holderQemu!), 60_000, 200);
  const released = Date.now();
  const second = await running('second');
  console.log(`the second VMI Running ${Date.now() - released} ms after the holder's QEMU ended (${syncFailed.length} SyncFailed event(s) while refused)`);
  const read = await waitFor('the second VM reading the claim', () => /QVIRT-READ (\S*)/.exec(serialLog(env, second.metadata!.uid!))?.[1], 120_000, 200);
  assert.is(read, DATA);
  assert.is(qemuOf('default', 'second').length, 1);
  await client.delete(Resources.virtualMachineInstances, 'default', 'second');
  await waitFor('no QEMU left for either VMI', () => qemuOf('default', 'second').length === 0 && qemuOf('default', 'holder').length === 0, 60_000, 200);
});

test.run();

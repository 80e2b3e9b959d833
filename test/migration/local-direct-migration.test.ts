// The direct transport through the whole stack (local mode, two nodes): the target node agent
// chooses it (its pods reach one another), the target QEMU listens itself and the source QEMU
// connects with QEMU's TLS on credentials the node agents issued for this migration — no relay
// process runs, the credentials sit 0600 in a 0700 directory of each pod while the migration runs
// and are gone when it ended; with disableTLS the same path goes plain.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import { TARGET_QEMU_MIGRATION_PORT } from '../../src/api/migration.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { TickReader } from './lib.ts';
import { runningVmi, serialLog, sleep, withCluster, type Cluster } from './local-cluster.ts';
import { entriesUnder } from '../lib/walk.ts';

/** The socat processes this process started (the node agents' relays run in it). */
function ourSocats(): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.includes('(socat)') && Number(rest[1]) === process.pid) n++;
    } catch { /* gone */ }
  }
  return n;
}

/** Every direct-migration credentials directory of `uid` under the local mode's data dir (once each: a pod's dir is reachable by two paths), with its files' modes. */
function credentialDirs(c: Cluster, uid: string): Map<string, { mode: number; files: Record<string, number> }> {
  const out = new Map<string, { mode: number; files: Record<string, number> }>();
  for (const { path: dir, entry } of entriesUnder(c.dataDir)) {
    if (!entry.isDirectory() || !dir.endsWith(`migrationproxy/${uid}-tls`)) continue;
    try {
      const files: Record<string, number> = {};
      for (const f of readdirSync(dir)) files[f] = statSync(join(dir, f)).mode & 0o777;
      const st = statSync(dir);
      out.set(`${st.dev}:${st.ino}`, { mode: st.mode & 0o777, files });
    } catch { /* removed meanwhile */ }
  }
  return out;
}

async function migrateDirect(name: string, cfg: { disableTLS?: boolean }): Promise<void> {
  // 8 MiB/s: the migration lasts long enough to look at it while it runs.
  await withCluster({ migrations: { bandwidthPerMigration: '8Mi', ...(cfg.disableTLS ? { disableTLS: true } : {}) } }, async (c) => {
    const vmi = await runningVmi(c, name, 'qvirt.tick=100');
    const uid = vmi.metadata!.uid!;
    const srcIdx = c.local.nodeNames.indexOf(vmi.status!.nodeName!);
    const dstIdx = 1 - srcIdx;
    const ticks = new TickReader([{ side: 'source', path: () => serialLog(c, srcIdx, uid) }, { side: 'target', path: () => serialLog(c, dstIdx, uid) }]);
    try {
      await ticks.waitFor('source', 3, 120_000);
      await c.local.client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: `${name}-mig`, namespace: 'default' }, spec: { vmiName: name } });
      let socats = 0;
      const seenDirs = new Map<string, { mode: number; files: Record<string, number> }>();
      let phase: string | undefined;
      const deadline = Date.now() + 240_000;
      while (Date.now() < deadline) {
        socats = Math.max(socats, ourSocats());
        for (const [d, v] of credentialDirs(c, uid)) if (Object.keys(v.files).length >= 3) seenDirs.set(d, v);
        const m = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', `${name}-mig`);
        phase = m.status?.phase;
        if (phase === 'Succeeded' || phase === 'Failed') break;
        await sleep(100);
      }
      assert.is(phase, 'Succeeded');
      const after = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', name);
      const ms = after.status!.migrationState!;
      assert.equal(Object.values(ms.targetDirectMigrationNodePorts ?? {}), [TARGET_QEMU_MIGRATION_PORT], 'the target published its QEMU\'s own port');
      assert.is(ms.targetNodeAddress, `127.0.0.${dstIdx + 1}`);
      assert.is(socats, 0, 'no relay process ran');
      assert.is(after.status!.nodeName, c.local.nodeNames[dstIdx]);
      if (cfg.disableTLS) {
        assert.is(seenDirs.size, 0, 'no credentials without TLS');
      } else {
        // One directory in each pod: the target's server and the source's client credentials.
        const kinds = [...seenDirs.values()].map((v) => Object.keys(v.files).sort().join(',')).sort();
        assert.equal(kinds, ['ca-cert.pem,client-cert.pem,client-key.pem', 'ca-cert.pem,server-cert.pem,server-key.pem']);
        for (const v of seenDirs.values()) {
          assert.is(v.mode, 0o700);
          for (const mode of Object.values(v.files)) assert.is(mode, 0o600);
        }
      }
      const last = ticks.of('source').at(-1)!;
      const first = (await ticks.waitFor('target', 3, 60_000))[0]!;
      assert.is(first.n, last.n + 1, 'the counter continues: no reboot');
      // The credentials are removed with the migration's end.
      const gone = Date.now() + 10_000;
      while (credentialDirs(c, uid).size > 0 && Date.now() < gone) await sleep(200);
      assert.equal([...credentialDirs(c, uid).keys()], [], 'no credentials left');
    } finally {
      ticks.stop();
    }
  });
}

test('direct with QEMU TLS: no relay, per-migration credentials 0600 in 0700 while it runs and removed after, the guest arrives without a reboot', async () => {
  await migrateDirect('direct', {});
});

test('direct with disableTLS: plain QEMU to QEMU, no credentials, no relay', async () => {
  await migrateDirect('direct-plain', { disableTLS: true });
});

test.run();

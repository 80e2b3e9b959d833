// migrations.disableTLS through the whole stack (local mode, two nodes): the controller copies the
// setting into the VMI's migrationState, both node agents read it there and relay plain TCP — the
// target's socat listeners are TCP-LISTEN, the source's channels TCP to the published port, no
// OPENSSL anywhere — and the guest arrives without a reboot. The VMI asks for the relay
// (qvirt.io/migration-transport): the local mode's pods reach one another, so it would go direct.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { Resources } from '../../src/kube/resource.ts';
import { MIGRATION_TRANSPORT_ANNOTATION } from '../../src/api/migration.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../src/api/types.ts';
import { TickReader } from './lib.ts';
import { runningVmi, serialLog, sleep, waitUntil, withCluster } from './local-cluster.ts';

/** The command lines of the socat processes this process started (the node agents run in it: their relays). */
function ourSocats(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (!stat.includes('(socat)') || Number(rest[1]) !== process.pid) continue;
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim());
    } catch { /* gone */ }
  }
  return out;
}

test('disableTLS: both node agents relay plain TCP, the migration succeeds, the guest did not reboot', async () => {
  // 8 MiB/s: the migration lasts long enough to see its relays.
  await withCluster({ migrations: { disableTLS: true, bandwidthPerMigration: '8Mi' } }, async (c) => {
    const vmi = await runningVmi(c, 'plain', 'qvirt.tick=100', { [MIGRATION_TRANSPORT_ANNOTATION]: 'relay' });
    const uid = vmi.metadata!.uid!;
    const srcIdx = c.local.nodeNames.indexOf(vmi.status!.nodeName!);
    const dstIdx = 1 - srcIdx;
    const ticks = new TickReader([{ side: 'source', path: () => serialLog(c, srcIdx, uid) }, { side: 'target', path: () => serialLog(c, dstIdx, uid) }]);
    try {
      await ticks.waitFor('source', 3, 120_000);
      await c.local.client.create(Resources.virtualMachineInstanceMigrations, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'plain-mig', namespace: 'default' }, spec: { vmiName: 'plain' } });
      // Every relay process seen while the migration runs.
      const seen = new Set<string>();
      let phase: string | undefined;
      const deadline = Date.now() + 240_000;
      while (Date.now() < deadline) {
        for (const cmd of ourSocats()) seen.add(cmd);
        const m = await c.local.client.get<VirtualMachineInstanceMigration>(Resources.virtualMachineInstanceMigrations, 'default', 'plain-mig');
        phase = m.status?.phase;
        if (phase === 'Succeeded' || phase === 'Failed') break;
        await sleep(100);
      }
      assert.is(phase, 'Succeeded');
      const after = await c.local.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', 'plain');
      const ms = after.status!.migrationState!;
      assert.is(ms.migrationConfiguration?.disableTLS, true, 'the controller handed the setting over in the migration state');
      const ports = Object.keys(ms.targetDirectMigrationNodePorts ?? {});
      const all = [...seen];
      const dst = `127.0.0.${dstIdx + 1}`;
      assert.ok(all.some((cmd) => cmd.includes(`TCP-LISTEN:0,bind=${dst}`)), `a plain target listener ran:\n${all.join('\n')}`);
      assert.ok(all.some((cmd) => ports.some((p) => cmd.includes(`FD:3 TCP:${dst}:${p},`))), `a plain source channel to a published port ran:\n${all.join('\n')}`);
      assert.equal(all.filter((cmd) => cmd.includes('OPENSSL')), [], 'no TLS relay');
      assert.is(after.status!.nodeName, c.local.nodeNames[dstIdx]);
      const last = ticks.of('source').at(-1)!;
      const first = (await ticks.waitFor('target', 3, 60_000))[0]!;
      assert.is(first.n, last.n + 1, 'the counter continues: no reboot');
      console.log(`    relay processes seen: ${all.length} (all plain TCP)`);
    } finally {
      ticks.stop();
    }
  });
});

test.run();

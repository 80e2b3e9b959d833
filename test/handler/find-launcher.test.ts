// Which launcher pod on this node is the VMI's (findLauncher): the one in status.activePods on
// this node; with several there (a VMI that migrated back to a node still lists its finished pod),
// the one whose launcher socket exists, as KubeVirt's FindSocketOnHost.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { findLauncher, launcherPathsForPod, LauncherNotFoundError } from '../../handler/launcher/sockets.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { tempDir } from '../lib/tmp.ts';

const t = tempDir('qfl');
const podsDir = t.path;
const vmi = (activePods: Record<string, string>): VirtualMachineInstance => ({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'v', namespace: 'ns', uid: 'vmi-1' }, spec: { domain: { devices: {} } }, status: { activePods } } as VirtualMachineInstance);
function socketOf(podUid: string): void {
  const s = launcherPathsForPod(podsDir, podUid, 'vmi-1').socket;
  mkdirSync(dirname(s), { recursive: true });
  writeFileSync(s, '');
}

test.after(() => t.cleanup());

const cases: Array<[string, Record<string, string>, string[], string | RegExp]> = [
  ['one pod here (its socket may not exist yet)', { p1: 'n1', p2: 'n2' }, [], 'p1'],
  ['none here', { p2: 'n2' }, [], /has no launcher pod on node n1/],
  ['two here, the finished one without a socket: the live one', { old: 'n1', mid: 'n2', now: 'n1' }, ['now'], 'now'],
  ['two here, neither has a socket yet: wait', { old2: 'n1', new2: 'n1' }, [], /2 launcher pods on node n1 \(old2, new2\) and 0 of them have a launcher socket/],
  ['two here, both with sockets: ambiguous', { a3: 'n1', b3: 'n1' }, ['a3', 'b3'], /and 2 of them have a launcher socket; expected one/],
];
for (const [name, active, sockets, want] of cases) {
  test(`findLauncher: ${name}`, () => {
    for (const p of sockets) socketOf(p);
    if (typeof want === 'string') assert.is(findLauncher(vmi(active), 'n1', podsDir).podUid, want);
    else assert.throws(() => findLauncher(vmi(active), 'n1', podsDir), (e: Error) => e instanceof LauncherNotFoundError && want.test(e.message));
  });
}

test.run();

// Recovery after a fault (issue 22): how long a runStrategy Always VM takes to be Running again after
// each process under it is killed, beside a plain start of the same VM in the same run — the
// median of ROUNDS (default 5) each. The local mode runs as a process of its own
// (test/faults/local-process.ts: the API server, controllers, node agent and pod runner in one
// process, as `qvirt local up`), so it can be killed as a whole and started again on its data dir.
//
//   start                 runStrategy Halted → Always, to the VMI Running (the baseline)
//   QEMU SIGKILL|SIGTERM  the kill → a new VMI Running (the old one Failed/Succeeded, the VM restarts it)
//   launcher SIGKILL|SIGTERM  the same for the VMI's launcher (the compute container's process)
//   local mode SIGKILL    the kill → started again → the same VMI Running, re-adopted: a pause
//                          through the new node agent answered (the guest never stopped)
//   local mode SIGTERM    the drain (the guest powered off) → started again → a new VMI Running
//
// The figures are recovery times, not targets: a fault costs its detection plus a fresh start, and the
// ratio says how far from a plain start that is. No target is set except for the kills under one VM
// (≤ 2× a plain start: detection must not cost more than the start itself).
//
//   node bench/faults.bench.ts         (root: the local mode's pod network)
//   QVIRT_BENCH_ROUNDS overrides the rounds.
import { Resources } from '../src/kube/resource.ts';
import { isNotFound, type KubeObject } from '../src/kube/client.ts';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import { localProcess, type LocalProcess } from '../test/faults/local-process.ts';
import { computePid, launcherPodOf, qemuOf } from '../test/faults/lib.ts';
import { waitFor } from '../test/lib/within.ts';
import { testGuestVm } from './test-guest-vm.ts';
import { median, report, saveResults } from './lib.ts';

const ROUNDS = Number(process.env.QVIRT_BENCH_ROUNDS ?? 5);
const NAME = 'recovering';

let lp!: LocalProcess;

async function vmi(): Promise<VirtualMachineInstance | undefined> {
  return lp.client.get<VirtualMachineInstance & KubeObject>(Resources.virtualMachineInstances, 'default', NAME).catch((err) => { if (isNotFound(err)) return undefined; throw err; });
}

/** Waits for the VM's VMI Running (with a uid not in `notUids`); returns its uid and when it was seen. */
async function runningAfter(notUids: readonly string[]): Promise<{ uid: string; at: number }> {
  const v = await waitFor(`VMI ${NAME} Running`, async () => { const x = await vmi().catch(() => undefined); return x?.status?.phase === 'Running' && !notUids.includes(x.metadata!.uid!) ? x : undefined; }, 180_000, 50);
  return { uid: v.metadata!.uid!, at: performance.now() };
}

/** The running VMI's launcher and its one QEMU. */
async function processes(uid: string): Promise<{ launcher: number; qemu: number }> {
  const pod = await waitFor('the launcher pod\'s compute pid', async () => { const p = await launcherPodOf(lp.client, 'default', uid); return computePid(p) ? p : undefined; }, 30_000, 50);
  const [qemu] = await waitFor('one QEMU for the VM', () => { const q = qemuOf('default', NAME); return q.length === 1 ? q : undefined; }, 30_000, 50);
  return { launcher: computePid(pod)!, qemu: qemu! };
}

const setRunStrategy = (runStrategy: string) => lp.client.patch(Resources.virtualMachines, 'default', NAME, [{ op: 'replace', path: '/spec/runStrategy', value: runStrategy }], 'json');

async function plainStart(): Promise<number> {
  await setRunStrategy('Halted');
  await waitFor('the VMI gone', async () => (await vmi()) === undefined && qemuOf('default', NAME).length === 0, 120_000, 50);
  const t0 = performance.now();
  await setRunStrategy('Always');
  return (await runningAfter([])).at - t0;
}

async function killUnderVm(target: 'qemu' | 'launcher', signal: NodeJS.Signals): Promise<number> {
  const before = await runningAfter([]);
  const p = await processes(before.uid);
  const t0 = performance.now();
  process.kill(p[target], signal);
  return (await runningAfter([before.uid])).at - t0;
}

async function killLocalMode(signal: 'SIGKILL' | 'SIGTERM'): Promise<number> {
  const before = await runningAfter([]);
  await processes(before.uid);
  const t0 = performance.now();
  await lp.kill(signal);
  await lp.start();
  if (signal === 'SIGTERM') return (await runningAfter([before.uid])).at - t0;
  // The guest kept running: the same VMI, answered for by the new node agent.
  await waitFor('a pause through the new node agent', async () => (await lp.qvirt('pause', 'vmi', NAME)).code === 0, 120_000, 100);
  const at = performance.now();
  await waitFor('unpause', async () => (await lp.qvirt('unpause', 'vmi', NAME)).code === 0, 60_000, 100);
  const after = await runningAfter([]);
  if (after.uid !== before.uid) throw new Error(`a SIGKILL of the local mode replaced the VMI (${before.uid} → ${after.uid}); the guest should have kept running`);
  return at - t0;
}

const samples: Record<string, number[]> = {};
const add = (k: string, ms: number) => { (samples[k] ??= []).push(ms); console.log(`  ${k.padEnd(24)} ${ms.toFixed(0)} ms`); };

try {
  lp = await localProcess('qvbf');
  await lp.start();
  await lp.client.create(Resources.virtualMachines, testGuestVm(NAME) as unknown as KubeObject);
  await runningAfter([]);
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`round ${round} of ${ROUNDS}`);
    add('start', await plainStart());
    add('QEMU SIGKILL', await killUnderVm('qemu', 'SIGKILL'));
    add('QEMU SIGTERM', await killUnderVm('qemu', 'SIGTERM'));
    add('launcher SIGKILL', await killUnderVm('launcher', 'SIGKILL'));
    add('launcher SIGTERM', await killUnderVm('launcher', 'SIGTERM'));
    add('local mode SIGKILL', await killLocalMode('SIGKILL'));
    add('local mode SIGTERM', await killLocalMode('SIGTERM'));
  }
  const start = median(samples.start!);
  for (const [k, xs] of Object.entries(samples)) {
    if (k === 'start') continue;
    const underVm = k.startsWith('QEMU') || k.startsWith('launcher');
    report({
      name: `recovery after ${k} (median of ${xs.length})`, value: median(xs), unit: 'ms', baseline: start, baselineName: 'start',
      ...(underVm ? { target: { maxRatio: 2 } } : {}),
      details: { min: Math.min(...xs), max: Math.max(...xs), startMin: Math.min(...samples.start!), startMax: Math.max(...samples.start!) },
    });
  }
  process.exitCode = saveResults('faults') ? 0 : 2;
} finally {
  await lp?.cleanup();
}

// The node agent's cost on a VMI start (issue 5's protocol): a VMI created as the VMI controller
// leaves it (Scheduled, activePods, launcher pod object) + its launcher "pod" started → the handler
// sees it, finds the launcher socket, materializes the container disk, Syncs, gets the domain
// event and writes phase Running. Median over RUNS VMIs (default 20, QVIRT_BENCH_RUNS overrides),
// as a ratio to the launcher-only start measured in the same run: the same spawn → launcher-sock →
// SyncVirtualMachine answered, driven by a direct client (container disk materialized first, as
// the handler does). Prints the median time of each step since the VMI was created.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { importTestGuest } from '../src/local/guest/guest.ts';
import { ImageStore, materializeContainerDisks } from '../src/local/image-store.ts';
import { ImageStoreContainerDisks } from '../src/local/image-store-container-disks.ts';
import { CmdClient } from '../src/proto/launcher-client.ts';
import { Resources } from '../src/kube/resource.ts';
import { EventRecorder } from '../src/kube/events.ts';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import { HandlerController, type StartStep } from '../handler/controller.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { NODE, createVmiWithLauncher, log, sleep, startCluster, vmiManifest, waitFor } from '../test/handler-integration/lib.ts';
import { launcherArgv } from '../src/local/launcher-command.ts';
import { median, report, saveResults } from './lib.ts';

const RUNS = Number(process.env.QVIRT_BENCH_RUNS ?? 20);
const STEPS: readonly StartStep[] = ['informer', 'launcherFound', 'syncSent', 'syncDone', 'domainRunning', 'statusRunning'];

const work = tempDir('qhb');
const store = new ImageStore(join(work.path, 'store'));
await importTestGuest(store);
const cluster = await startCluster();
const podsDir = join(work.path, 'pods');

/** key → step → ms since that VMI's creation started. */
const starts = new Map<string, number>();
const steps = new Map<string, Map<StartStep, number>>();
const onStartStep = (key: string, step: StartStep) => {
  const t0 = starts.get(key);
  const mine = steps.get(key);
  if (t0 === undefined || !mine || mine.has(step)) return;
  mine.set(step, performance.now() - t0);
};
const handler = new HandlerController({
  client: cluster.client, nodeName: NODE, podsDir, stateDir: join(work.path, 'state'), log, containerDiskSource: new ImageStoreContainerDisks(store),
  recorder: new EventRecorder(cluster.client, 'virt-handler', { host: NODE, log }), onStartStep,
});
await handler.start();

function qemuOf(pid: number | undefined): number | undefined {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return kids.find((p) => { try { return readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('qemu'); } catch { return false; } });
  } catch { return undefined; }
}

/** Ends a launcher and its QEMU at once: the benchmark measures starts, not shutdowns. */
async function killHard(child: ChildProcess): Promise<void> {
  const qemu = qemuOf(child.pid);
  if (child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
  if (qemu) { try { process.kill(qemu, 'SIGKILL'); } catch { /* gone */ } }
}

const launcherOnly: number[] = [];
const launcherSocket: number[] = [];
const viaHandler: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    // Baseline: the launcher alone, driven by a direct client.
    const root = join(work.path, `b${i}`);
    const uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const vmi = { ...vmiManifest(`base${i}`, 'x'), metadata: { name: `base${i}`, namespace: 'default', uid } } as VirtualMachineInstance;
    mkdirSync(join(root, 'var/run/kubevirt/sockets'), { recursive: true });
    const t0 = performance.now();
    await materializeContainerDisks({ volumes: vmi.spec.volumes, kernelBoot: vmi.spec.domain.firmware?.kernelBoot }, store, join(root, 'var/run/kubevirt/container-disks'));
    const child = spawn(process.execPath, [...launcherArgv(), '--name', vmi.metadata!.name!, '--uid', uid, '--namespace', 'default', '--root', root, '--allow-emulation', '--notify-socket', 'none'], { stdio: 'ignore' });
    const sock = join(root, 'var/run/kubevirt/sockets/launcher-sock');
    while (!existsSync(sock)) await sleep(2);
    launcherSocket.push(performance.now() - t0);
    const cmd = new CmdClient(sock, { timeoutMs: 60_000 });
    const r = await cmd.syncVirtualMachine(vmi);
    launcherOnly.push(performance.now() - t0);
    if (!r.success) throw new Error(r.message);
    cmd.close();
    await killHard(child);

    // Through the handler: from the VMI's creation to the handler's status write of phase Running.
    const name = `vm${i}`;
    const key = `default/${name}`;
    steps.set(key, new Map());
    starts.set(key, performance.now());
    const { launcher } = await createVmiWithLauncher(cluster.client, podsDir, name, work.path);
    await waitFor('Running written', () => steps.get(key)!.get('statusRunning'), 60_000);
    viaHandler.push(steps.get(key)!.get('statusRunning')!);
    await killHard(launcher.child);
    // As kubelet does once the pod is gone: its directories (and the stale launcher-sock) go.
    rmSync(join(podsDir, launcher.podUid), { recursive: true, force: true });
    await cluster.client.delete(Resources.virtualMachineInstances, 'default', name);
    await cluster.client.patch(Resources.virtualMachineInstances, 'default', name, { metadata: { finalizers: null } });
  }
} finally {
  await handler.stop();
  await cluster.close();
  work.cleanup();
}

console.log(`per-step median, ms since the VMI was created (${RUNS} VMIs):`);
for (const s of STEPS) {
  const xs = [...steps.values()].map((m) => m.get(s)).filter((x): x is number => x !== undefined);
  if (xs.length) console.log(`  ${s.padEnd(14)} ${median(xs).toFixed(0).padStart(6)} ms  (${xs.length} samples)`);
}
console.log(`launcher alone: launcher-sock after ${median(launcherSocket).toFixed(0)} ms, Sync answered after ${median(launcherOnly).toFixed(0)} ms`);
report({
  name: 'VMI Scheduled → Running via the handler, median', value: median(viaHandler), unit: 'ms', baseline: median(launcherOnly), baselineName: 'launcher alone',
  target: { maxRatio: 1.5 },
  details: { runs: RUNS, min: Math.min(...viaHandler), max: Math.max(...viaHandler), baselineMin: Math.min(...launcherOnly) },
});
saveResults('handler');

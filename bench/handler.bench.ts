// The node agent's cost on a VMI start: VMI created as the VMI controller leaves it (Scheduled,
// activePods) + its launcher started → the handler observes the launcher, materializes the
// container disk, Syncs, and writes phase Running; median over RUNS VMIs. Baseline in the same run:
// the launcher alone — spawn → launcher-sock → SyncVirtualMachine answered by a direct client.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { importTestGuest } from '../test/guest/guest.ts';
import { ImageStore, materializeContainerDisks } from '../src/local/image-store.ts';
import { CmdClient } from '../src/proto/cmd.ts';
import { Resources } from '../src/kube/resource.ts';
import { EventRecorder } from '../src/kube/events.ts';
import type { VirtualMachineInstance } from '../src/api/types.ts';
import { HandlerController } from '../handler/controller.ts';
import { tempDir } from '../test/lib/tmp.ts';
import { NODE, createVmiWithLauncher, log, sleep, startCluster, vmiManifest, waitFor } from '../test/handler-integration/lib.ts';
import { launcherArgv } from '../src/local/launcher-command.ts';
import { median, report, saveResults } from './lib.ts';

const RUNS = 4;
const work = tempDir('qhb');
const store = new ImageStore(join(work.path, 'store'));
await importTestGuest(store);
const cluster = await startCluster();
const podsDir = join(work.path, 'pods');
const handler = new HandlerController({ client: cluster.client, nodeName: NODE, podsDir, stateDir: join(work.path, 'state'), log, imageStore: store, recorder: new EventRecorder(cluster.client, 'virt-handler', { host: NODE, log }) });
await handler.start();

const launcherOnly: number[] = [];
const viaHandler: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    // Baseline: the launcher alone.
    const root = join(work.path, `b${i}`);
    const vmi = { ...vmiManifest(`base${i}`, 'x'), metadata: { name: `base${i}`, namespace: 'default', uid: `00000000-0000-4000-8000-00000000000${i}` } } as VirtualMachineInstance;
    mkdirSync(join(root, 'var/run/kubevirt/sockets'), { recursive: true });
    const t0 = performance.now();
    await materializeContainerDisks({ volumes: vmi.spec.volumes, kernelBoot: vmi.spec.domain.firmware?.kernelBoot }, store, join(root, 'var/run/kubevirt/container-disks'));
    const child = spawn(process.execPath, [...launcherArgv(), '--name', vmi.metadata!.name!, '--uid', vmi.metadata!.uid!, '--namespace', 'default', '--root', root, '--allow-emulation', '--notify-socket', 'none'], { stdio: 'ignore' });
    const sock = join(root, 'var/run/kubevirt/sockets/launcher-sock');
    while (!existsSync(sock)) await sleep(2);
    const cmd = new CmdClient(sock, { timeoutMs: 60_000 });
    const r = await cmd.syncVirtualMachine(vmi);
    launcherOnly.push(performance.now() - t0);
    if (!r.success) throw new Error(r.message);
    cmd.close();
    child.kill('SIGTERM');
    await new Promise((res) => child.once('exit', res));

    // Through the handler.
    const t1 = performance.now();
    const { launcher } = await createVmiWithLauncher(cluster.client, podsDir, `vm${i}`, work.path);
    await waitFor('Running', async () => (await cluster.client.get<VirtualMachineInstance>(Resources.virtualMachineInstances, 'default', `vm${i}`)).status?.phase === 'Running', 60_000);
    viaHandler.push(performance.now() - t1);
    await launcher.stop();
  }
} finally {
  await handler.stop();
  await cluster.close();
  work.cleanup();
}
report({ name: 'VMI Scheduled → Running via the handler, median', value: median(viaHandler), unit: 'ms', baseline: median(launcherOnly), baselineName: 'launcher alone', details: { runs: RUNS, min: Math.min(...viaHandler), baselineMin: Math.min(...launcherOnly) } });
saveResults('handler');

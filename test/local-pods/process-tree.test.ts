// A container's processes end with its main process (as a container's PID namespace ends with its
// init): the local pod runner SIGKILLs what is left of a container's process group when the main
// process dies — its own child, a re-adopted one, and one that died while no runner ran. The
// container is a shell (the runner's `nodeBinary`) that leaves a `sleep` in its group, as a
// launcher leaves its QEMU.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startPodRunner, type PodRunner } from '../../src/local/pod-runner/index.ts';
import type { Pod } from '../../src/local/pod-runner/pod.ts';
import { groupIsTheContainers, parseProcStat, readProcStat, type ProcStat } from '../../src/local/pod-runner/process-group.ts';
import { getPod, log, pidAlive, startEnv, waitFor, type Env } from './lib.ts';
import { within } from '../lib/within.ts';

const stat = (state: string, startTicks: string): ProcStat => ({ state, pgrp: 7, startTicks });
const groupCases: [string, ProcStat | undefined, string, boolean][] = [
  ['the pid is free: only the container\'s members can still have that group id', undefined, '100', true],
  ['the pid is free, start time unknown (an older state.json)', undefined, '', true],
  ['the main process is a zombie not yet reaped', stat('Z', '100'), '100', true],
  ['the pid went to another process (started later)', stat('S', '250'), '100', false],
  ['the pid is held and the start time is unknown: not ours to kill', stat('S', '250'), '', false],
];
for (const [name, holder, ticks, want] of groupCases) {
  test(`groupIsTheContainers: ${name}`, () => {
    assert.is(groupIsTheContainers(holder, ticks), want);
  });
}

test('parseProcStat: state, process group and start time, a command name with spaces and parentheses', () => {
  const fields = ['S', '1', '4242', '4242', '0', '-1', '4194560', '1', '0', '0', '0', '0', '0', '0', '0', '20', '0', '1', '0', '987654', '1000'];
  assert.equal(parseProcStat(`4242 (qemu (x) y) ${fields.join(' ')}\n`), { state: 'S', pgrp: 4242, startTicks: '987654' });
  assert.is(parseProcStat('garbage'), undefined);
  assert.is(parseProcStat('1 (x) S 1'), undefined);
});

/** Gone, or a zombie its new parent has not reaped yet. */
const gone = (pid: number) => { const st = readProcStat(pid); return st === undefined || st.state === 'Z'; };

const NODE = 'local';
let env: Env;
let runner: PodRunner | undefined;
let store: ImageStore;
let nodeBinary: string;
/** Every child a container left: killed at the end whatever the outcome, so no test leaves one behind. */
const children: number[] = [];

test.before(async () => {
  env = await startEnv();
  store = new ImageStore(join(env.dir, 'images'));
  await env.client.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { 'kubernetes.io/hostname': NODE } } });
  // The container's main process: leaves a child in its group (no job control in sh -c: same group)
  // and records the child's pid in its root.
  nodeBinary = join(env.dir, 'fake-node');
  writeFileSync(nodeBinary, '#!/bin/sh\nsleep 1000 &\necho $! > "$QVIRT_CONTAINER_ROOT/child.pid"\nwait\n');
  chmodSync(nodeBinary, 0o755);
  runner = await startRunner();
});

test.after(async () => {
  const pods = await env.client.list<Pod>(Resources.pods, {}).catch(() => ({ items: [] as Pod[] }));
  for (const p of pods.items) await env.client.delete(Resources.pods, p.metadata?.namespace, p.metadata?.name ?? '', { gracePeriodSeconds: 0 }).catch(() => undefined);
  await waitFor('pods gone', async () => (await env.client.list<Pod>(Resources.pods, {})).items.length === 0, 10_000).catch(() => undefined);
  await runner?.stop();
  for (const c of children) if (!gone(c)) { try { process.kill(c, 'SIGKILL'); } catch { /* gone */ } }
  await env.close();
});

const startRunner = () => startPodRunner({ client: env.client, nodeName: NODE, podsDir: env.podsDir, rootsDir: env.rootsDir, imageStore: store, log, nodeBinary, cpuWeights: false });

/** Starts a pod whose container leaves a child; its main and child pids once both run. */
async function podWithChild(name: string): Promise<{ main: number; child: number }> {
  await env.client.create(Resources.pods, {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { nodeName: NODE, restartPolicy: 'Never', terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'quay.io/qvirt/qvirt:v0.1.0', command: ['/usr/bin/qvirt', 'launcher'] }] },
  } as Pod);
  const p = await waitFor(`${name} Running`, async () => { const p = await getPod(env.client, name); return p.status?.phase === 'Running' && p; });
  const main = Number(p.status!.containerStatuses![0]!.containerID!.replace('local://', ''));
  const pidFile = join(env.podsDir, p.metadata!.uid!, 'root', 'main', 'child.pid');
  const child = await waitFor(`${name}'s child pid in ${pidFile}`, async () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8').trim()));
  children.push(child);
  assert.ok(pidAlive(main) && pidAlive(child), 'main and child run');
  return { main, child };
}

async function deletePod(name: string): Promise<void> {
  await env.client.delete(Resources.pods, 'default', name, { gracePeriodSeconds: 0 });
  await waitFor(`${name} gone`, async () => { try { await getPod(env.client, name); return false; } catch { return true; } });
}

test('main process SIGKILLed: its child goes with it, the pod Failed with 137', async () => {
  const { main, child } = await podWithChild('killed');
  process.kill(main, 'SIGKILL');
  await waitFor(`the child ${child} gone after its container's main process ${main} was SIGKILLed`, async () => gone(child), 5_000);
  const p = await waitFor('Failed', async () => { const p = await getPod(env.client, 'killed'); return p.status?.phase === 'Failed' && p; });
  const st = p.status!.containerStatuses![0]!.state;
  assert.ok('terminated' in st && st.terminated.exitCode === 137, JSON.stringify(st));
  await deletePod('killed');
});

test('a re-adopted container SIGKILLed: the next runner ends its child too', async () => {
  const { main, child } = await podWithChild('adopted');
  await runner!.stop();
  runner = await startRunner();
  process.kill(main, 'SIGKILL');
  await waitFor(`the child ${child} of the re-adopted container gone`, async () => gone(child), 5_000);
  await deletePod('adopted');
});

test('a container that died while no runner ran (the runner was SIGKILLed): the next runner ends its child at start', async () => {
  // The container must be the child of a runner that dies, not of this process: a runner of its own.
  await runner!.stop();
  runner = undefined;
  const other = spawn(process.execPath, [join(import.meta.dirname, 'runner-process.ts'), env.api.url, env.podsDir, env.rootsDir, join(env.dir, 'images'), nodeBinary], { stdio: ['ignore', 'pipe', 'inherit'] });
  const otherExited = new Promise<void>((r) => other.once('exit', () => r()));
  try {
    await within(new Promise<void>((resolve, reject) => {
      other.stdout.on('data', (d: Buffer) => { if (d.toString().includes('ready')) resolve(); });
      other.once('exit', (code) => reject(new Error(`the runner process exited (${code}) before it was ready`)));
    }), 30_000, 'the runner process to start');
    const { main, child } = await podWithChild('unwatched');
    other.kill('SIGKILL');
    await within(otherExited, 10_000, 'the runner process to die');
    process.kill(main, 'SIGKILL');
    await waitFor(`the main process ${main} gone`, async () => gone(main), 5_000);
    // Reaped by init (then the next runner finds no such process: its start-up path), or still a
    // zombie where init reaps slowly (then it re-adopts it and sees it dead): either ends the child.
    await waitFor(`the main process ${main} reaped`, async () => readProcStat(main) === undefined, 20_000).catch(() => undefined);
    assert.not.ok(gone(child), 'with no runner, nothing ended the child yet');
    runner = await startRunner();
    await waitFor(`the child ${child} gone once a runner ran again`, async () => gone(child), 10_000);
    await deletePod('unwatched');
  } finally {
    if (other.exitCode === null && other.signalCode === null) other.kill('SIGKILL');
    await within(otherExited, 10_000, 'the runner process to end');
    runner ??= await startRunner();
  }
});

test.run();

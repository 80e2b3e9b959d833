// The local mode's kubelet: runs the pods bound to this node as processes, in kubelet's pod
// directory layout (<podsDir>/<uid>/volumes/kubernetes.io~empty-dir/<name>/ ...), writes their status
// back (phase, conditions with readiness gates, container statuses), honours graceful deletion
// (SIGTERM, SIGKILL after the grace period, then deletes the pod with grace 0) and, with no
// scheduler in the local mode, binds unassigned pods whose nodeSelector/affinity match this node.
//
// Each container's processes run detached in their own process group (what is left of it is
// SIGKILLed when the main process ends, as a container's PID namespace goes with its init:
// process-group.ts) with stdout/stderr in files under <podDir>/logs/<container>/, collected into
// CRI logs (log-collector.ts) that the kubelet endpoint serves (kubelet-server.ts); <podDir>/state.json records pids so a restarted
// runner re-adopts running containers instead of starting them twice.
import { availableParallelism, setPriority } from 'node:os';
import { existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';
import type { Logger } from '../../log/logger.ts';
import { isConflict, isNotFound, type KubeClient, type KubeObject } from '../../kube/client.ts';
import { EventRecorder } from '../../kube/events.ts';
import { Informer } from '../../kube/informer.ts';
import { Resources } from '../../kube/resource.ts';
import { repositoryOf, type ImageStore } from '../image-store.ts';
import { containerCommand, translateArgs } from './command.ts';
import { BUILT_PASST_DIR, containerPath } from './image-tools.ts';
import { POD_NETNS_FILE } from '../../net/constants.ts';
import { POD_HOST_DEV_FILE } from '../../kube/pod-host-dev.ts';
import { cpuShares, niceForShares } from './cpu-weight.ts';
import { containerCpuConfig, milliCpu, podCpu, podCpuConfig } from './cgroup-config.ts';
import { CgroupManager, joiningCgroup } from './cgroup-manager.ts';
import { Spawner } from './spawner.ts';
import { killContainerGroup, readProcStat } from './process-group.ts';
import { EventReasons, PodReasons } from './constants.ts';
import { ImageManager } from './image-manager.ts';
import type { RegistryOptions } from '../image-pull.ts';
import type { Container, Pod } from './pod.ts';
import type { PodAttachment, PodNetwork } from './pod-network.ts';
import { antiAffinityReason, insufficientResourcesReason, isOurToSchedule, unschedulableReason } from './scheduler.ts';
import { isSidecar, planPod, podStatus, qosClass, type ContainerRuntime, type RuntimeState } from './status.ts';
import { startKubeletServer, type KubeletServer } from './kubelet-server.ts';
import { containerLogPaths, LogCollector } from './log-collector.ts';
import { buildContainerRoot, fieldRefValue, mountsOf, prepareVolumes, projectedObjects, refreshVolume, type PreparedVolume } from './volumes.ts';

export interface PodRunnerOptions {
  readonly client: KubeClient;
  readonly nodeName: string;
  /** kubelet's pods directory (default /var/lib/qvirt/pods). */
  readonly podsDir?: string;
  /** Short links to container roots, so in-container unix socket paths stay under 108 bytes (default /run/qvirt/r). */
  readonly rootsDir?: string;
  readonly imageStore: ImageStore;
  readonly log: Logger;
  /** The pod and host IP reported (no pod network locally; default 127.0.0.1). */
  readonly nodeIP?: string;
  /** Bind unassigned pods that fit this node (default true). */
  readonly schedule?: boolean;
  readonly serviceAccountToken?: string;
  readonly caCert?: string;
  /** The node binary containers run on (default: this process's). */
  readonly nodeBinary?: string;
  /**
   * Weigh pods by their CPU requests (default true): each pod in its own cgroup with kubelet's CPU
   * values and QoS hierarchy, this process (the local control plane) in a system-reserved share
   * (cgroup-manager.ts); where no cgroup can be written, containers at the nice value of their
   * request's cpu.shares (cpu-weight.ts).
   */
  readonly cpuWeights?: boolean;
  /** kubelet's --system-reserved cpu for the control plane's cgroup (default: one CPU, at most half the machine). */
  readonly systemReservedCpu?: string;
  /** Serve kubelet's endpoint (container logs) over HTTPS on host:port (0: any free port). */
  readonly kubelet?: { readonly host?: string; readonly port?: number; readonly tls: { readonly key: string; readonly cert: string; readonly ca: string } };
  /**
   * A pod network (pod-network.ts): each pod gets its own network namespace and address, its
   * processes run in that namespace, and its status carries the pod IP. Without it pods share the
   * host's network and report `nodeIP`.
   */
  readonly podNetwork?: PodNetwork;
  /** How registries are reached when a containerDisk image is pulled (CA directories, insecure registries). */
  readonly registries?: RegistryOptions;
}

export interface PodRunner {
  stop(): Promise<void>;
  /** Where a pod's directory is. */
  podDir(uid: string): string;
  /** The short path a container's root is reachable under (QVIRT_CONTAINER_ROOT). */
  containerRoot(uid: string, container: string): string | undefined;
  /** The kubelet endpoint's port (advertise it in the Node's status.daemonEndpoints), when served. */
  readonly kubeletPort: number | undefined;
}

interface Proc { pid: number; startTicks: string; poll?: NodeJS.Timeout }

interface PodRun {
  uid: string;
  pod: Pod;
  gone: boolean;
  rt: Map<string, ContainerRuntime>;
  procs: Map<string, Proc>;
  roots: Map<string, string>;
  /** Log collectors of running container instances, by `<container>#<instance>`. */
  logs: Map<string, LogCollector>;
  vols?: Map<string, PreparedVolume>;
  busy: boolean;
  again: boolean;
  retry?: NodeJS.Timeout;
  killTimer?: NodeJS.Timeout;
  /** Watches served container disks for their removal (endFinishedContainerDisks). */
  diskPoll?: NodeJS.Timeout;
  termSent: boolean;
  lastStatus?: string;
  net?: PodAttachment;
  /** The pod finished and its network was released (kubelet's sandbox teardown); `net` stays for its status. */
  netReleased?: boolean;
  /** The pod's CPU cgroup, once made. */
  cgroup?: string;
  /** The pod's cgroup in the vCPU tier (cgroup v1 only; cgroup-config.ts), once made. */
  vcpuCgroup?: string | undefined;
}

/** A pod whose containers are all done for good: kubelet tears its sandbox (and network) down. */
const finished = (spec: Pod['spec'], rt: Map<string, ContainerRuntime>) => { const ph = planPod(spec, rt).phase; return ph === 'Succeeded' || ph === 'Failed'; };

interface SavedState { containers: Record<string, { rt: ContainerRuntime; pid?: number; startTicks?: string }>; roots: Record<string, string> }

const nowIso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** The process start time (field 22 of /proc/<pid>/stat): tells a re-used pid from ours. */
function startTicks(pid: number): string | undefined {
  return readProcStat(pid)?.startTicks;
}

/** The process exists, is the one we started (same start time) and is not a zombie. */
function alive(p: Proc): boolean {
  const st = readProcStat(p.pid);
  return st !== undefined && st.startTicks === p.startTicks && st.state !== 'Z';
}

function killGroup(pid: number, sig: NodeJS.Signals): void {
  try { process.kill(-pid, sig); } catch { try { process.kill(pid, sig); } catch { /* gone */ } }
}

export async function startPodRunner(opts: PodRunnerOptions): Promise<PodRunner> {
  const { client, nodeName, imageStore, log } = opts;
  const podsDir = opts.podsDir ?? '/var/lib/qvirt/pods';
  const rootsDir = opts.rootsDir ?? '/run/qvirt/r';
  const ip = opts.nodeIP ?? '127.0.0.1';
  const nodeBin = opts.nodeBinary ?? process.execPath;
  // Container processes are started by a small spawner process, not forked from this one.
  const spawner = new Spawner();
  await mkdir(podsDir, { recursive: true });
  await mkdir(rootsDir, { recursive: true });
  if (!existsSync(join(BUILT_PASST_DIR, 'passt'))) log.warn({ expected: BUILT_PASST_DIR }, "no passt built by scripts/passt/build.sh: passt-bound VMs get this machine's passt (Debian 12's drops TCP to forwarded ports); run scripts/setup.sh");
  const runs = new Map<string, PodRun>();
  let stopped = false;
  const reservedMilli = opts.systemReservedCpu === undefined ? undefined : milliCpu(opts.systemReservedCpu);
  const cgroups = (opts.cpuWeights ?? true)
    ? CgroupManager.open({ podsDir, log, capacityMilli: availableParallelism() * 1000, ...(reservedMilli !== undefined ? { systemReservedMilli: reservedMilli } : {}) })
    : undefined;
  const kubelet = new EventRecorder(client, 'kubelet', { host: nodeName, log });
  const scheduler = new EventRecorder(client, 'default-scheduler', { log });
  // What imports and pulls of processes now gone left in the store's scratch space.
  await imageStore.removeStale().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'cleaning the image store\'s leftovers failed'));
  const images = new ImageManager({
    client, store: imageStore, log, registries: opts.registries,
    event: (pod, type, reason, message) => { void kubelet.record(pod, type, reason, message); },
    wake: (uid) => { const r = runs.get(uid); if (r && !r.gone) enqueue(r); },
  });
  const podDirOf = (uid: string) => join(podsDir, uid);
  const logKey = (name: string, instance: number) => `${name}#${instance}`;
  const collect = (r: PodRun, name: string, instance: number): LogCollector => {
    const c = new LogCollector(containerLogPaths(podDirOf(r.uid), name, instance), log).start();
    r.logs.set(logKey(name, instance), c);
    return c;
  };
  const finishLogs = (r: PodRun, name: string): void => {
    for (const [k, c] of r.logs) {
      if (!k.startsWith(`${name}#`)) continue;
      void c.finish().then(() => { if (r.logs.get(k) === c) r.logs.delete(k); });
    }
  };

  const bound = new Informer<Pod>(client, Resources.pods, { fieldSelector: `spec.nodeName=${nodeName}`, log, resyncMs: 30_000 });
  const podOf = (p: Pod) => p.metadata?.uid ?? '';
  const onPod = (p: Pod) => {
    const uid = podOf(p);
    if (!uid) return;
    let r = runs.get(uid);
    if (!r) { r = { uid, pod: p, gone: false, rt: new Map(), procs: new Map(), roots: new Map(), logs: new Map(), busy: false, again: false, termSent: false }; runs.set(uid, r); }
    r.pod = p;
    enqueue(r);
  };
  bound.on('add', onPod).on('update', (_o, n) => onPod(n)).on('delete', (p) => {
    const r = runs.get(podOf(p));
    if (r) { r.gone = true; enqueue(r); }
  });

  function enqueue(r: PodRun): void {
    if (stopped) return;
    if (r.busy) { r.again = true; return; }
    r.busy = true;
    void (async () => {
      do {
        r.again = false;
        try { await sync(r); } catch (err) {
          log.error({ err, pod: r.pod.metadata?.name, uid: r.uid }, 'pod sync failed');
          later(r, 1000);
        }
      } while (r.again && !stopped);
      r.busy = false;
    })();
  }

  function later(r: PodRun, ms: number): void {
    if (r.retry || stopped) return;
    r.retry = setTimeout(() => { r.retry = undefined; enqueue(r); }, ms);
  }

  async function saveState(r: PodRun): Promise<void> {
    const s: SavedState = { containers: {}, roots: Object.fromEntries(r.roots) };
    for (const [name, rt] of r.rt) {
      const p = r.procs.get(name);
      s.containers[name] = { rt, ...(p ? { pid: p.pid, startTicks: p.startTicks } : {}) };
    }
    await writeFile(join(podDirOf(r.uid), 'state.json'), JSON.stringify(s));
  }

  /** Re-adopts what a previous runner started for this pod. */
  async function restore(r: PodRun): Promise<void> {
    let s: SavedState;
    try { s = JSON.parse(await readFile(join(podDirOf(r.uid), 'state.json'), 'utf8')) as SavedState; } catch { return; }
    for (const [k, v] of Object.entries(s.roots ?? {})) r.roots.set(k, v);
    for (const [name, c] of Object.entries(s.containers)) {
      if (c.rt.state.kind === 'running' && c.pid !== undefined) {
        const p: Proc = { pid: c.pid, startTicks: c.startTicks ?? '' };
        if (startTicks(p.pid) === p.startTicks) {
          r.rt.set(name, c.rt);
          r.procs.set(name, p);
          watchAdopted(r, name, p, c.rt.state.startedAt);
          collect(r, name, c.rt.restartCount);
          log.info({ pod: r.pod.metadata?.name, container: name, pid: p.pid }, 're-adopted running container');
          continue;
        }
        // It ended while no runner watched it: what it left of its group goes now, and kubelet's
        // verdict for a container it cannot find.
        endGroup(r, name, p);
        r.rt.set(name, { ...c.rt, state: { kind: 'terminated', exitCode: 137, reason: PodReasons.ContainerStatusUnknown, message: 'The container could not be located when the pod was terminated', startedAt: c.rt.state.startedAt, finishedAt: nowIso() } });
        continue;
      }
      r.rt.set(name, c.rt);
    }
  }

  function exited(r: PodRun, name: string, code: number | null, signal: NodeJS.Signals | null): void {
    const prev = r.rt.get(name);
    const p = r.procs.get(name);
    if (p?.poll) clearInterval(p.poll);
    if (p) endGroup(r, name, p);
    r.procs.delete(name);
    finishLogs(r, name);
    const startedAt = prev?.state.kind === 'running' ? prev.state.startedAt : undefined;
    const exitCode = code ?? (signal ? 128 + (osSignal(signal)) : 0);
    r.rt.set(name, { restartCount: prev?.restartCount ?? 0, ...(prev?.containerID ? { containerID: prev.containerID } : {}), ...(prev?.lastTerminated ? { lastTerminated: prev.lastTerminated } : {}),
      state: { kind: 'terminated', exitCode, ...(signal ? { signal: osSignal(signal) } : {}), reason: exitCode === 0 ? PodReasons.Completed : PodReasons.Error, ...(startedAt ? { startedAt } : {}), finishedAt: nowIso() } });
    log.info({ pod: r.pod.metadata?.name, container: name, exitCode, signal }, 'container exited');
    enqueue(r);
  }

  /** The container's main process ended: nothing else of it runs on (a launcher's QEMU, passt...). */
  function endGroup(r: PodRun, name: string, p: Proc): void {
    if (killContainerGroup(p.pid, p.startTicks)) log.info({ pod: r.pod.metadata?.name, container: name, pgid: p.pid }, 'container ended: SIGKILL to what was left of its process group');
  }

  function watchAdopted(r: PodRun, name: string, p: Proc, _startedAt: string): void {
    p.poll = setInterval(() => {
      let ok = false;
      try { ok = alive(p); } catch { ok = false; }
      if (!ok) {
        clearInterval(p.poll);
        endGroup(r, name, p);
        finishLogs(r, name);
        // Not our child: the exit code is unknown (kubelet reports 137 / ContainerStatusUnknown too).
        const prev = r.rt.get(name);
        r.procs.delete(name);
        r.rt.set(name, { restartCount: prev?.restartCount ?? 0, state: { kind: 'terminated', exitCode: 137, reason: PodReasons.ContainerStatusUnknown, message: 'The container exited while the pod runner was not its parent: exit code unknown', ...(prev?.state.kind === 'running' ? { startedAt: prev.state.startedAt } : {}), finishedAt: nowIso() } });
        enqueue(r);
      }
    }, 250);
    p.poll.unref();
  }

  async function envOf(r: PodRun, c: Container, root: string): Promise<Record<string, string>> {
    const env: Record<string, string> = {
      PATH: containerPath(process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'),
      HOSTNAME: r.pod.spec.hostname ?? r.pod.metadata?.name ?? '',
      QVIRT_CONTAINER_ROOT: root,
    };
    for (const e of c.env ?? []) {
      if (e.value !== undefined) { env[e.name] = e.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n: string) => env[n] ?? m); continue; }
      const vf = e.valueFrom;
      if (vf?.fieldRef) {
        const v = fieldRefValue(r.pod, vf.fieldRef.fieldPath, r.net?.ip ?? ip);
        if (v === undefined) throw new Error(`container "${c.name}" env ${e.name}: fieldRef ${vf.fieldRef.fieldPath} is not supported`);
        env[e.name] = v;
      } else if (vf?.secretKeyRef || vf?.configMapKeyRef) {
        const ref = (vf.secretKeyRef ?? vf.configMapKeyRef)!;
        const isSecret = !!vf.secretKeyRef;
        try {
          const o = await client.get<KubeObject & { data?: Record<string, string> }>(isSecret ? Resources.secrets : Resources.configMaps, r.pod.metadata?.namespace, ref.name);
          const raw = o.data?.[ref.key];
          if (raw === undefined && !ref.optional) throw new Error(`couldn't find key ${ref.key} in ${isSecret ? 'Secret' : 'ConfigMap'} ${r.pod.metadata?.namespace}/${ref.name}`);
          if (raw !== undefined) env[e.name] = isSecret ? Buffer.from(raw, 'base64').toString('utf8') : raw;
        } catch (err) {
          if (isNotFound(err) && ref.optional) continue;
          throw err;
        }
      }
    }
    return env;
  }

  /** The short root link for a container, unique among this runner's pods (synchronous calls, as in volumes.ts). */
  function rootLink(r: PodRun, c: Container, real: string): string {
    const existing = r.roots.get(c.name);
    if (existing) return existing;
    const init = (r.pod.spec.initContainers ?? []).findIndex((x) => x.name === c.name);
    const tag = init >= 0 ? `i${init}` : `c${r.pod.spec.containers.findIndex((x) => x.name === c.name)}`;
    for (let n = 8; n <= 36; n += 4) {
      const link = join(rootsDir, `${r.uid.replace(/-/g, '').slice(0, n)}${tag}`);
      const st = lstatSync(link, { throwIfNoEntry: false });
      if (st && (!st.isSymbolicLink() || readlinkSync(link) !== real)) continue;
      if (!st) symlinkSync(real, link);
      r.roots.set(c.name, link);
      return link;
    }
    throw new Error(`no free short root link under ${rootsDir} for pod ${r.uid}`);
  }

  async function startContainer(r: PodRun, c: Container): Promise<void> {
    const prev = r.rt.get(c.name);
    const restartCount = prev && prev.state.kind === 'terminated' ? prev.restartCount + 1 : prev?.restartCount ?? 0;
    const lastTerminated = prev?.state.kind === 'terminated' ? prev.state : prev?.lastTerminated;
    let imageID: string | undefined;
    const set = (state: RuntimeState, containerID?: string) => r.rt.set(c.name, { state, restartCount, ...(lastTerminated ? { lastTerminated } : {}), ...(containerID ? { containerID } : {}), ...(imageID ? { imageID } : {}) });
    const cmd = containerCommand(c);
    const real = join(podDirOf(r.uid), 'root', c.name);
    await buildContainerRoot(real, r.pod, c, r.vols!, podDirOf(r.uid));
    const root = rootLink(r, c, real);
    if (cmd.kind === 'unsupported') {
      if (prev?.state.kind !== 'waiting') void kubelet.warning(r.pod, EventReasons.Failed, `Failed to pull image "${c.image ?? ''}": ${cmd.message}`);
      set({ kind: 'waiting', reason: PodReasons.ErrImagePull, message: cmd.message });
      return;
    }
    const t = nowIso();
    if (cmd.kind === 'noop') { set({ kind: 'terminated', exitCode: 0, reason: PodReasons.Completed, startedAt: t, finishedAt: t }, `local://noop/${r.uid}/${c.name}`); return; }
    if (cmd.kind === 'containerDisk') {
      // kubelet's image manager first: the image is pulled into the store (per imagePullPolicy) or waited for.
      const ready = await images.ensure(r.pod, c, cmd.image);
      if (!ready.ok) {
        set(ready.state);
        if (ready.retryMs !== undefined) later(r, ready.retryMs);
        return;
      }
      try {
        const dest = join(root, posix.normalize(`/${cmd.copyPath}`));
        if (basename(cmd.copyPath) === 'kernel-boot') {
          await mkdir(dest, { recursive: true });
          const info = await imageStore.require(cmd.image);
          for (const f of await filesUnder(info.rootfs)) await relink(f, join(dest, basename(f)));
        } else {
          await relink(await imageStore.containerDiskFile(cmd.image), `${dest}.img`);
        }
        const pulled = await imageStore.require(cmd.image);
        imageID = `${repositoryOf(pulled.ref)}@sha256:${pulled.digest}`;
        images.started(r.uid, c.name);
        set({ kind: 'running', startedAt: t }, `local://container-disk/${r.uid}/${c.name}`);
        void kubelet.normal(r.pod, EventReasons.Started, `Started container ${c.name}`);
      } catch (err) {
        if (prev?.state.kind !== 'waiting') void kubelet.warning(r.pod, EventReasons.Failed, `Failed to pull image "${cmd.image}": ${(err as Error).message}`);
        set({ kind: 'waiting', reason: PodReasons.ErrImagePull, message: (err as Error).message });
        later(r, 5000);
      }
      return;
    }
    let env: Record<string, string>;
    try { env = await envOf(r, c, root); } catch (err) {
      set({ kind: 'waiting', reason: PodReasons.CreateContainerConfigError, message: (err as Error).message });
      later(r, 2000);
      return;
    }
    const mountPaths = mountsOf(r.pod, c, r.vols!).map((m) => posix.normalize(m.mountPath));
    const argv = cmd.translatePaths ? [...cmd.argv.slice(0, 1), ...translateArgs(cmd.argv.slice(1), root, mountPaths)] : [...cmd.argv];
    const logPaths = containerLogPaths(podDirOf(r.uid), c.name, restartCount);
    LogCollector.prepare(logPaths);
    const cwd = c.workingDir ? join(root, posix.normalize(`/${c.workingDir}`)) : root;
    mkdirSync(cwd, { recursive: true });
    // In its container's cgroup before its program starts (as runc places a container's init before exec), then in the
    // pod's network namespace; sh and nsenter exec, so the pid stays the container's.
    // kubelet's layout: the pod's cgroup, the container's below it with the container's own weight and limit.
    let cgroup: { dir: string; files: Array<[file: string, value: string]> } | undefined;
    if (cgroups) {
      try { cgroup = cgroups.containerCgroup(podCgroup(r), c.name, containerCpuConfig(c)); } catch (err) { log.warn({ err: (err as Error).message, pod: r.pod.metadata?.name, container: c.name }, 'no cgroup for the container: it runs in the runner\'s'); }
    }
    // Where a launcher puts its guest's vCPU threads: below every pod's control threads (vcpu-priority.ts).
    if (cgroup && r.vcpuCgroup) env['QVIRT_VCPU_CGROUP'] = r.vcpuCgroup;
    const program = cmd.kind === 'exec' ? argv : [nodeBin, ...argv];
    const main = cgroup ? joiningCgroup(cgroup.dir, program, cgroup.files) : program;
    const [bin, ...args] = r.net ? ['nsenter', `--net=${r.net.netns}`, '--', ...main] : main;
    // Started by the spawner process, detached: the runner's process may exit while containers run on
    // (a kubelet restart), and the next runner re-adopts them.
    let pid: number;
    try {
      pid = await spawner.spawn({ file: bin!, args, cwd, env, stdout: logPaths.stdout, stderr: logPaths.stderr }, {
        exited: (code, signal) => exited(r, c.name, code, signal),
        lost: () => { const p = r.procs.get(c.name); if (!stopped && p?.pid === pid) watchAdopted(r, c.name, p, t); },
      });
    } catch (err) {
      log.error({ err: (err as Error).message, container: c.name }, 'container process error');
      set({ kind: 'terminated', exitCode: 128, reason: 'StartError', message: `could not start ${program[0]}`, finishedAt: t });
      return;
    }
    if (!cgroups && (opts.cpuWeights ?? true)) {
      const nice = niceForShares(cpuShares(c.resources?.requests?.cpu));
      try { setPriority(pid, nice); } catch (err) { log.debug({ err: (err as Error).message, pid, nice }, 'could not set the container\'s CPU weight'); }
    }
    r.procs.set(c.name, { pid, startTicks: startTicks(pid) ?? '' });
    set({ kind: 'running', startedAt: t }, `local://${pid}`);
    collect(r, c.name, restartCount);
    void kubelet.normal(r.pod, EventReasons.Started, `Started container ${c.name}`);
    log.info({ pod: r.pod.metadata?.name, container: c.name, pid, root }, 'started container');
  }

  /** The running containerDisk containers of a pod (no process) and the path each serves. */
  function servedContainerDisks(r: PodRun): { name: string; path: string }[] {
    const out: { name: string; path: string }[] = [];
    for (const c of r.pod.spec.containers) {
      if (r.rt.get(c.name)?.state.kind !== 'running' || r.procs.has(c.name)) continue;
      const cmd = containerCommand(c);
      if (cmd.kind !== 'containerDisk') continue;
      const dest = join(podDirOf(r.uid), 'root', c.name, posix.normalize(`/${cmd.copyPath}`));
      out.push({ name: c.name, path: basename(cmd.copyPath) === 'kernel-boot' ? dest : `${dest}.img` });
    }
    return out;
  }

  const exists = (p: string): Promise<boolean> => lstat(p).then(() => true, () => false);

  /**
   * KubeVirt's container-disk binary exits 0 once its copy path is gone (it looks every second;
   * virt-launcher removes the contents of its container-disk directory when it ends): a running
   * containerDisk container whose disk link (or kernel-boot directory) has disappeared is Completed.
   * While any is served, the pod is looked at every second.
   */
  async function endFinishedContainerDisks(r: PodRun): Promise<void> {
    for (const d of servedContainerDisks(r)) {
      if (await exists(d.path)) continue;
      const st = r.rt.get(d.name)!;
      log.info({ pod: r.pod.metadata?.name, container: d.name, path: d.path }, 'container disk removed: container completed');
      r.rt.set(d.name, { ...st, state: { kind: 'terminated', exitCode: 0, reason: PodReasons.Completed, ...(st.state.kind === 'running' ? { startedAt: st.state.startedAt } : {}), finishedAt: nowIso() } });
    }
    const served = servedContainerDisks(r);
    if (served.length === 0) { if (r.diskPoll) clearInterval(r.diskPoll); r.diskPoll = undefined; return; }
    if (r.diskPoll) return;
    r.diskPoll = setInterval(() => {
      void (async () => { for (const d of servedContainerDisks(r)) if (!(await exists(d.path))) { enqueue(r); return; } })();
    }, 1000);
    r.diskPoll.unref();
  }

  /** Stops a container: processes get `sig`; virtual containers end at once with exit 0. */
  function stopContainer(r: PodRun, name: string, sig: NodeJS.Signals): void {
    const p = r.procs.get(name);
    if (p) { killGroup(p.pid, sig); return; }
    const st = r.rt.get(name);
    if (st?.state.kind === 'running') r.rt.set(name, { ...st, state: { kind: 'terminated', exitCode: 0, reason: PodReasons.Completed, startedAt: st.state.startedAt, finishedAt: nowIso() } });
  }

  async function writeStatus(r: PodRun): Promise<void> {
    if (r.gone) return;
    const cur = bound.get(`${r.pod.metadata?.namespace}/${r.pod.metadata?.name}`) ?? r.pod;
    if (cur.metadata?.uid !== r.uid) return;
    // A finished pod keeps the addresses it had (also after a runner restart, when its network is gone).
    const kept = !r.net && opts.podNetwork && finished(cur.spec, r.rt) ? cur.status?.podIPs?.map((x) => x.ip) : undefined;
    const status = podStatus(cur.spec, r.rt, cur.status ?? {}, ip, nowIso(), r.net ? [r.net.ip, ...(r.net.ipv6 ? [r.net.ipv6.ip] : [])] : kept?.length ? kept : undefined);
    const { conditions: _c, ...rest } = status;
    const sig = JSON.stringify([rest, status.conditions?.map((c) => [c.type, c.status, c.reason, c.message])]);
    const curSig = JSON.stringify([(() => { const { conditions: _x, ...o } = (cur.status ?? {}); return o; })(), cur.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message])]);
    if (sig === curSig) return;
    try {
      await client.updateStatus(Resources.pods, { ...cur, status: { ...(cur.status ?? {}), ...status } });
    } catch (err) {
      if (isConflict(err)) { later(r, 100); return; }
      if (isNotFound(err)) return;
      throw err;
    }
  }

  /** The pod's cgroup (kubelet's pod<uid> below its QoS class) with its CPU values; the burstable level weighs every burstable pod here. */
  function podCgroup(r: PodRun): string {
    if (r.cgroup && existsSync(r.cgroup)) return r.cgroup;
    const burstable = [...runs.values()].filter((x) => !x.gone && qosClass(x.pod.spec) === 'Burstable').map((x) => podCpu(x.pod.spec).requestMilli);
    const cpu = podCpuConfig(r.pod.spec);
    r.cgroup = cgroups!.ensurePod(r.uid, qosClass(r.pod.spec), cpu, burstable);
    r.vcpuCgroup = cgroups!.ensureVcpuCgroup(r.uid, cpu);
    return r.cgroup;
  }

  async function teardown(r: PodRun): Promise<void> {
    if (r.retry) clearTimeout(r.retry);
    if (r.killTimer) clearTimeout(r.killTimer);
    if (r.diskPoll) clearInterval(r.diskPoll);
    for (const c of r.logs.values()) await c.finish();
    r.logs.clear();
    for (const link of r.roots.values()) await unlink(link).catch(() => undefined);
    if (opts.podNetwork) await opts.podNetwork.detach(r.uid);
    if (cgroups) await cgroups.removePod(r.uid);
    await rm(podDirOf(r.uid), { recursive: true, force: true });
    images.forget(r.uid);
    runs.delete(r.uid);
  }

  async function sync(r: PodRun): Promise<void> {
    const pod = r.pod;
    const m = pod.metadata ?? {};
    mkdirSync(podDirOf(r.uid), { recursive: true });
    if (r.rt.size === 0 && r.procs.size === 0) await restore(r);
    if (r.gone || m.deletionTimestamp) {
      // Graceful deletion: SIGTERM now, SIGKILL when the grace period is over.
      const live = [...r.procs.keys()];
      for (const name of r.rt.keys()) if (!r.procs.has(name)) stopContainer(r, name, 'SIGTERM');
      if (live.length && !r.termSent) {
        r.termSent = true;
        for (const name of live) stopContainer(r, name, 'SIGTERM');
        const deadline = m.deletionTimestamp ? Date.parse(m.deletionTimestamp) : Date.now();
        const graceMs = Math.max(0, r.gone ? 0 : deadline - Date.now());
        log.info({ pod: m.name, graceMs }, 'killing pod containers');
        if (!r.gone) for (const name of live) void kubelet.normal(pod, EventReasons.Killing, `Stopping container ${name}`);
        r.killTimer = setTimeout(() => { for (const name of r.procs.keys()) stopContainer(r, name, 'SIGKILL'); }, graceMs);
      }
      if (r.procs.size > 0) { await saveState(r); return; }
      if (!r.gone) {
        await writeStatus(r).catch(() => undefined);
        try {
          await client.delete(Resources.pods, m.namespace, m.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid: r.uid } });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
      }
      await teardown(r);
      return;
    }
    if (!r.vols) {
      try {
        r.vols = await prepareVolumes({ client, pod, podDir: podDirOf(r.uid), ip, ...(opts.serviceAccountToken !== undefined ? { serviceAccountToken: opts.serviceAccountToken } : {}), ...(opts.caCert !== undefined ? { caCert: opts.caCert } : {}) });
      } catch (err) {
        const message = (err as Error).message;
        for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) if (!r.rt.has(c.name)) r.rt.set(c.name, { restartCount: 0, state: { kind: 'waiting', reason: PodReasons.ContainerCreating, message } });
        log.warn({ pod: m.name, err: message }, 'volume setup failed, retrying');
        void kubelet.warning(pod, EventReasons.FailedMount, message);
        await writeStatus(r);
        for (const [k, v] of [...r.rt]) if (v.state.kind === 'waiting' && v.state.reason === PodReasons.ContainerCreating) r.rt.delete(k);
        later(r, 2000);
        return;
      }
      // Without a pod network every pod shares the host's: an empty netns file says so to the node
      // agent, which otherwise looks for the pod's processes in every /proc entry (a real node's way).
      if (!opts.podNetwork) await writeFile(join(podDirOf(r.uid), POD_NETNS_FILE), '');
      // The containers are processes in the host's mount namespace: their /dev is the host's, which
      // the node agent must not give to a launcher's user (nor scan /proc to find it).
      await writeFile(join(podDirOf(r.uid), POD_HOST_DEV_FILE), '');
    }
    if (opts.podNetwork && !r.net && !finished(pod.spec, r.rt)) {
      // The CNI ADD: before any container of the pod runs. Recorded in the pod directory for the
      // node agent, which sets up VM networking inside this namespace.
      r.net = await opts.podNetwork.attach(r.uid);
      await writeFile(join(podDirOf(r.uid), POD_NETNS_FILE), `${r.net.netns}\n`);
      log.info({ pod: m.name, ip: r.net.ip, ip6: r.net.ipv6?.ip, netns: r.net.netns }, 'pod network attached');
    }
    // Containers waiting on a missing image or config are retried on each sync.
    for (const [k, v] of [...r.rt]) if (v.state.kind === 'waiting') r.rt.delete(k);
    await endFinishedContainerDisks(r);
    for (let i = 0; i < 64; i++) {
      const plan = planPod(pod.spec, r.rt);
      if (plan.stopSidecars) {
        for (const c of pod.spec.initContainers ?? []) if (isSidecar(c) && r.rt.get(c.name)?.state.kind === 'running') stopContainer(r, c.name, 'SIGTERM');
        for (const c of pod.spec.containers) if (r.rt.get(c.name)?.state.kind === 'running' && !r.procs.has(c.name)) stopContainer(r, c.name, 'SIGTERM');
      }
      if (plan.start.length === 0) break;
      for (const name of plan.start) {
        const c = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((x) => x.name === name)!;
        try { await startContainer(r, c); } catch (err) {
          r.rt.set(name, { restartCount: 0, state: { kind: 'waiting', reason: PodReasons.CreateContainerConfigError, message: (err as Error).message } });
          later(r, 2000);
        }
      }
      // A container that ended at once (noop), or a native sidecar now running, lets the next init
      // container start in this sync instead of after the next status round trip.
      const sidecars = new Set((pod.spec.initContainers ?? []).filter(isSidecar).map((c) => c.name));
      if (!plan.start.some((n) => r.rt.get(n)?.state.kind === 'terminated' || (sidecars.has(n) && r.rt.get(n)?.state.kind === 'running'))) break;
    }
    await saveState(r);
    await writeStatus(r);
    if (opts.podNetwork && r.net && !r.netReleased && r.procs.size === 0 && finished(pod.spec, r.rt)) {
      // The CNI DEL of a finished pod (a completed job, a launcher pod whose containers all ended):
      // its address and namespace go now, not when the pod object is deleted.
      await opts.podNetwork.detach(r.uid);
      await rm(join(podDirOf(r.uid), POD_NETNS_FILE), { force: true });
      r.netReleased = true;
      log.info({ pod: m.name, ip: r.net.ip }, 'pod finished: pod network released');
    }
  }

  // kubelet's update of mounted Secrets and ConfigMaps: when one changes, the volumes of running
  // pods that project it are rewritten (kubelet does it on its next pod sync, within about a minute;
  // here at once).
  const projections = (['Secret', 'ConfigMap'] as const).map((kind) => {
    const inf = new Informer<KubeObject>(client, kind === 'Secret' ? Resources.secrets : Resources.configMaps, { log });
    const changed = (o: KubeObject) => {
      const ns = o.metadata?.namespace ?? 'default';
      const name = o.metadata?.name ?? '';
      for (const r of runs.values()) {
        if (r.gone || !r.vols || (r.pod.metadata?.namespace ?? 'default') !== ns) continue;
        for (const v of r.pod.spec.volumes ?? []) {
          const dir = r.vols.get(v.name)?.path;
          if (!dir || !projectedObjects(v, kind).includes(name)) continue;
          void refreshVolume({ client, pod: r.pod, podDir: podDirOf(r.uid), ip, ...(opts.serviceAccountToken !== undefined ? { serviceAccountToken: opts.serviceAccountToken } : {}), ...(opts.caCert !== undefined ? { caCert: opts.caCert } : {}) }, v, dir)
            .then((files) => { if (files.length) log.info({ pod: r.pod.metadata?.name, volume: v.name, [kind === 'Secret' ? 'secret' : 'configMap']: name, files }, 'volume refreshed'); })
            .catch((err: unknown) => log.warn({ pod: r.pod.metadata?.name, volume: v.name, err: (err as Error).message }, 'refreshing a volume failed'));
        }
      }
    };
    inf.on('update', (_o, n) => changed(n)).on('add', changed);
    return inf;
  });

  // The local scheduler: binds unassigned pods that fit this node.
  let pending: Informer<Pod> | undefined;
  if (opts.schedule ?? true) {
    pending = new Informer<Pod>(client, Resources.pods, { fieldSelector: 'spec.nodeName=', log, resyncMs: 5_000 });
    const trySchedule = async (p: Pod) => {
      if (stopped || !isOurToSchedule(p.spec) || p.metadata?.deletionTimestamp) return;
      const node = await client.get<{ metadata?: { labels?: Record<string, string> }; spec?: { unschedulable?: boolean }; status?: { allocatable?: Record<string, string> } }>(Resources.nodes, undefined, nodeName).catch(() => undefined);
      if (!node) return;
      const active = bound.list().filter((o) => o.status?.phase !== 'Succeeded' && o.status?.phase !== 'Failed');
      const here = active.map((o) => ({ namespace: o.metadata?.namespace ?? 'default', labels: o.metadata?.labels ?? {} }));
      const why = unschedulableReason(p.spec, { name: nodeName, labels: node.metadata?.labels ?? {}, unschedulable: node.spec?.unschedulable === true })
        ?? insufficientResourcesReason(p.spec, node.status?.allocatable ?? {}, active.map((o) => o.spec))
        ?? antiAffinityReason(p.spec, p.metadata?.namespace ?? 'default', here);
      const ns = p.metadata?.namespace;
      const name = p.metadata?.name ?? '';
      try {
        if (!why) {
          await client.request('POST', `/api/v1/namespaces/${encodeURIComponent(ns ?? 'default')}/pods/${encodeURIComponent(name)}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { apiVersion: 'v1', kind: 'Node', name: nodeName } } });
          log.info({ pod: name, node: nodeName }, 'bound pod to the local node');
          void scheduler.normal(p, EventReasons.Scheduled, `Successfully assigned ${ns ?? 'default'}/${name} to ${nodeName}`);
        } else {
          const conds = (p.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
          const prev = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
          if (prev?.status === 'False' && prev.message === why) return;
          void scheduler.warning(p, 'FailedScheduling', why);
          await client.updateStatus(Resources.pods, { ...p, status: { ...(p.status ?? {}), phase: 'Pending', conditions: [...conds, { type: 'PodScheduled', status: 'False', reason: PodReasons.Unschedulable, message: why, lastProbeTime: null, lastTransitionTime: nowIso() }] } });
        }
      } catch (err) {
        if (!isConflict(err) && !isNotFound(err)) log.warn({ err: (err as Error).message, pod: name }, 'scheduling failed');
      }
    };
    pending.on('add', (p) => void trySchedule(p)).on('update', (_o, p) => void trySchedule(p));
  }

  let kubeletServer: KubeletServer | undefined;
  if (opts.kubelet) {
    kubeletServer = await startKubeletServer({
      host: opts.kubelet.host ?? ip, port: opts.kubelet.port ?? 0, tls: opts.kubelet.tls, log: log.child({ part: 'kubelet-server' }),
      source: {
        find: (ns, name, container) => {
          const r = [...runs.values()].find((x) => !x.gone && x.pod.metadata?.namespace === ns && x.pod.metadata?.name === name);
          if (!r) return undefined;
          return {
            rt: r.rt.get(container),
            paths: (instance) => containerLogPaths(podDirOf(r.uid), container, instance),
            collector: (instance) => r.logs.get(logKey(container, instance)),
          };
        },
      },
    });
  }

  await bound.start();
  if (pending) await pending.start();
  for (const inf of projections) await inf.start();
  // Pod directories whose pod is gone (deleted while no runner ran): stop what runs there and remove them.
  for (const uid of await readdir(podsDir).catch(() => [] as string[])) {
    if (runs.has(uid) || !(await stat(join(podsDir, uid))).isDirectory()) continue;
    const r: PodRun = { uid, pod: { metadata: { uid }, spec: { containers: [] } }, gone: true, rt: new Map(), procs: new Map(), roots: new Map(), logs: new Map(), busy: false, again: false, termSent: false };
    runs.set(uid, r);
    enqueue(r);
  }
  if (cgroups) {
    // Cgroups of pods whose directory went while no runner ran, and trees of runners gone.
    for (const uid of cgroups.podUids()) if (!runs.has(uid)) void cgroups.removePod(uid, 0);
    for (const dir of cgroups.sweepAbandoned()) log.info({ cgroup: dir }, 'removed the CPU cgroups of a pod runner gone');
  }
  log.info({ nodeName, podsDir, rootsDir }, 'local pod runner started');

  return {
    podDir: podDirOf,
    containerRoot: (uid, c) => runs.get(uid)?.roots.get(c),
    kubeletPort: kubeletServer?.port,
    stop: async () => {
      stopped = true;
      await kubeletServer?.stop();
      bound.stop();
      pending?.stop();
      for (const inf of projections) inf.stop();
      // Containers keep running (a kubelet restart does not stop pods); the next runner re-adopts them.
      for (const r of runs.values()) {
        if (r.retry) clearTimeout(r.retry);
        if (r.killTimer) clearTimeout(r.killTimer);
        if (r.diskPoll) clearInterval(r.diskPoll);
        for (const p of r.procs.values()) if (p.poll) clearInterval(p.poll);
        for (const c of r.logs.values()) await c.stop();
      }
      for (let i = 0; i < 100 && [...runs.values()].some((r) => r.busy); i++) await new Promise((res) => setTimeout(res, 20));
      // Pulls do not outlive the runner (the next one pulls again what a pod still needs).
      await images.stop();
      if (opts.podNetwork && runs.size === 0) await opts.podNetwork.removeBridgeIfUnused().catch((err: Error) => log.warn({ err: err.message }, 'removing the pod bridge failed'));
      cgroups?.stop(runs.size > 0);
      spawner.stop();
      log.info({ nodeName }, 'local pod runner stopped');
    },
  };
}

function osSignal(sig: NodeJS.Signals): number {
  const map: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  return map[sig] ?? 0;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...await filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

async function relink(target: string, link: string): Promise<void> {
  const st = await lstat(link).catch(() => undefined);
  if (st) await unlink(link);
  await symlink(target, link);
}

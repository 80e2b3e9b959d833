// `qvirt run vmi.yaml`: boot a KubeVirt VMI (or VM) manifest on this machine with no Kubernetes,
// through the same launcher a cluster runs. Prints the phase changes; --console attaches the serial
// console (Ctrl-] detaches); Ctrl-C shuts the guest down gracefully (a second Ctrl-C kills it).
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { componentLogger } from '../log/logger.ts';
import { loadVmiManifest, ManifestError } from '../local/manifest.ts';
import { ImageStore } from '../local/image-store.ts';
import { SingleVm } from '../local/single-vm.ts';
import { attachConsole } from './console.ts';
import { runRegistryDir } from '../local/run-registry.ts';
import { featureGateHint, parseFeatureGates } from './feature-gate-hint.ts';
import { mergeClusterConfig } from '../api/cluster-config.ts';

const specs = {
  console: { type: 'boolean', short: 'c', help: 'attach the serial console (Ctrl-] detaches)' },
  'allow-emulation': { type: 'boolean', help: 'use software emulation (TCG) when KVM cannot run guests (KubeVirt useEmulation)' },
  namespace: { type: 'string', short: 'n', value: 'NS', help: 'namespace for a manifest that names none', default: 'default' },
  until: { type: 'string', value: 'REGEX', help: 'shut the guest down gracefully once its console prints a line matching REGEX' },
  timeout: { type: 'duration', value: 'DURATION', help: 'shut the guest down gracefully after this long' },
  'image-store': { type: 'string', value: 'DIR', help: 'the local image store (default: QVIRT_IMAGE_STORE, /var/lib/qvirt/images as root)' },
  'launcher-log': { type: 'string', value: 'FILE', help: 'write the launcher\'s log here (default: under the run directory; "-" for stderr)' },
  keep: { type: 'boolean', help: 'keep the run directory (disks, logs) after the VM ends' },
  'registry-certs-dir': { type: 'string', value: 'DIR', help: 'CA certificates for pulling images the VMI needs: DIR/HOST[:PORT]/ca.crt (/etc/containers/certs.d and the system CAs are used too)' },
  'insecure-registry': { type: 'strings', value: 'HOST[:PORT]', help: 'pull from this registry without verifying its TLS certificate (or over plain HTTP); repeatable' },
  'feature-gates': { type: 'string', value: 'G1,G2', help: 'KubeVirt feature gates to switch on (developerConfiguration.featureGates), e.g. HostDisk' },
} as const;

const ts = () => new Date().toISOString().slice(11, 23);

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  if (help) {
    process.stdout.write(usage('qvirt run [flags] MANIFEST.yaml', 'Boot a KubeVirt VirtualMachineInstance (or VirtualMachine) manifest on this machine, without Kubernetes.', specs));
    return 0;
  }
  if (args.length !== 1) throw new UsageError('qvirt run takes exactly one manifest file');
  let gates: string[];
  try { gates = parseFeatureGates(flags['feature-gates']); } catch (err) { throw new UsageError((err as Error).message); }
  let vmi;
  try {
    vmi = await loadVmiManifest(args[0]!, { namespace: flags.namespace, config: mergeClusterConfig({ developerConfiguration: { featureGates: gates } }) });
  } catch (err) {
    if (err instanceof ManifestError) {
      const hint = featureGateHint(err.errors, gates);
      process.stderr.write(`error: the manifest is invalid: ${err.message}\n${hint ? `${hint}\n` : ''}`);
      return 1;
    }
    throw err;
  }
  const meta = vmi.metadata!;
  const out = (line: string) => process.stdout.write(`[${ts()}] ${line}\n`);

  await mkdir('/tmp', { recursive: true });
  const root = await mkdtemp('/tmp/qvirt-');
  const launcherLog = flags['launcher-log'] === '-' ? 'inherit' : (flags['launcher-log'] ?? join(root, 'launcher.log'));
  const log = componentLogger('run', { level: process.env.QVIRT_LOG_LEVEL ? undefined : 'warn' });
  const vm = new SingleVm({
    vmi,
    root,
    allowEmulation: flags['allow-emulation'],
    imageStore: new ImageStore(flags['image-store']),
    log,
    launcherLog,
    cleanup: !flags.keep,
    registries: { ...(flags['registry-certs-dir'] ? { certsDir: flags['registry-certs-dir'] } : {}), insecure: flags['insecure-registry'] },
  });
  vm.on('phase', (phase, detail) => out(`VirtualMachineInstance ${meta.namespace}/${meta.name}: ${phase} (${detail})`));
  vm.on('event', (ev) => out(`event ${ev.type} ${ev.reason}: ${ev.message}`));

  // Let `qvirt qmp NAME` find this VM's launcher.
  const registry = join(runRegistryDir(), `${meta.namespace}_${meta.name}.json`);
  let interrupted = 0;
  const onSigint = () => {
    interrupted++;
    if (interrupted === 1) { out('shutting down gracefully (Ctrl-C again to kill)'); void vm.shutdown(); }
    else { out('killing'); void vm.client.killVirtualMachine(vmi).catch(() => vm.kill()); }
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);

  out(`starting VirtualMachineInstance ${meta.namespace}/${meta.name} (uid ${meta.uid}) in ${root}`);
  try {
    await vm.start();
  } catch (err) {
    out(`error: ${(err as Error).message}${launcherLog !== 'inherit' ? ` (launcher log: ${launcherLog})` : ''}`);
    await vm.kill();
    return 1;
  }
  await mkdir(runRegistryDir(), { recursive: true });
  await writeFile(registry, JSON.stringify({ namespace: meta.namespace, name: meta.name, uid: meta.uid, launcherSocket: vm.paths.launcherSocket, pid: process.pid }));

  if (flags.timeout) setTimeout(() => { out(`--timeout ${flags.timeout}s reached: shutting down`); void vm.shutdown(); }, flags.timeout * 1000).unref();
  const until = flags.until ? new RegExp(flags.until) : undefined;
  if (flags.console || until) {
    // Wait for QEMU to create the console socket.
    for (let i = 0; i < 500 && !vm.currentDomain && vm.currentPhase !== 'Failed'; i++) await new Promise((r) => setTimeout(r, 20));
    const interactive = flags.console && process.stdin.isTTY === true;
    let buffer = '';
    const sink = {
      write: (d: Buffer | string) => {
        if (flags.console) process.stdout.write(d);
        if (until) {
          buffer += d.toString();
          const lines = buffer.split(/\r?\n/);
          buffer = lines.pop() ?? '';
          if (lines.some((l) => until.test(l))) { out(`console matched /${flags.until}/: shutting down`); void vm.shutdown(); }
        }
        return true;
      },
    } as unknown as NodeJS.WritableStream;
    if (vm.currentPhase !== 'Failed') {
      if (interactive) out('console attached (Ctrl-] to detach)');
      try {
        const session = await attachConsole(vm.paths.serialSocket, { input: process.stdin, output: sink, interactive });
        void session.closed.then((why) => { if (why === 'detached') out('console detached; the VM keeps running (Ctrl-C to stop it)'); });
      } catch (err) {
        out(`warning: ${(err as Error).message}`);
      }
    }
  }
  const result = await vm.done;
  await rm(registry, { force: true });
  process.off('SIGINT', onSigint);
  process.off('SIGTERM', onSigint);
  out(`VirtualMachineInstance ${meta.namespace}/${meta.name} ended: ${result.phase}`);
  return result.phase === 'Succeeded' ? 0 : 1;
}

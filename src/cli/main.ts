// `qvirt`: one binary, many components, as KubeVirt ships virt-launcher, virt-handler, virt-controller
// and virtctl. Each subcommand is imported only when it runs, so the per-VM launcher never loads the
// Kubernetes client or anything else it does not use.
import { enableCompileCache } from 'node:module';
import { UsageError } from '../flags/flags.ts';
import { UserError } from '../kube/user-error.ts';
import { hoistGlobalFlags } from './global-flags.ts';

interface Command {
  readonly summary: string;
  readonly load: () => Promise<{ main: (argv: string[]) => Promise<number> }>;
}

const commands: Record<string, Command> = {
  launcher: { summary: 'run one VirtualMachineInstance on QEMU (virt-launcher; started by the launcher pod)', load: () => import('../../launcher/main.ts') },
  demo: { summary: 'boot qvirt\'s test guest from a KubeVirt manifest (what `npm start` runs)', load: () => import('./demo.ts') },
  image: { summary: 'import, list and remove images in the local image store (container disks without a registry)', load: () => import('./image.ts') },
  local: { summary: 'KubeVirt on this machine with no Kubernetes: `qvirt local up`', load: () => import('./local.ts') },
  run: { summary: 'boot a KubeVirt VMI or VM manifest on this machine, no Kubernetes needed', load: () => import('./run.ts') },
  qmp: { summary: 'QMP passthrough to a VM\'s QEMU for debugging (read-only unless --unsafe)', load: () => import('./qmp.ts') },
  handler: { summary: 'run the node agent (virt-handler): this node\'s VMIs through their launchers, node heartbeat', load: () => import('./handler.ts') },
  controller: { summary: 'run the cluster controllers (virt-controller) against a Kubernetes API, with leader election', load: () => import('./controller.ts') },
  apiserver: { summary: 'run the embedded Kubernetes-compatible API server with KubeVirt\'s CRDs applied', load: () => import('./apiserver.ts') },
  tail: { summary: 'follow a guest console log file (the guest-console-log container; KubeVirt\'s virt-tail)', load: () => import('./tail.ts') },
  start: { summary: 'start a VirtualMachine (virtctl start)', load: () => import('./vm-state.ts').then((m) => ({ main: m.start })) },
  stop: { summary: 'stop a VirtualMachine (virtctl stop)', load: () => import('./vm-state.ts').then((m) => ({ main: m.stop })) },
  'image-upload': { summary: 'upload a VM image to a DataVolume through CDI\'s upload proxy (virtctl image-upload)', load: () => import('./image-upload.ts') },
  'memory-dump': { summary: 'dump a VM\'s memory into a claim, or dissociate it (virtctl memory-dump get|remove)', load: () => import('./memory-dump.ts') },
  restart: { summary: 'restart a VirtualMachine (virtctl restart)', load: () => import('./vm-state.ts').then((m) => ({ main: m.restart })) },
  pause: { summary: 'pause a VirtualMachine or VirtualMachineInstance: `pause vm|vmi NAME` (virtctl pause)', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.pause })) },
  unpause: { summary: 'unpause a VirtualMachine or VirtualMachineInstance: `unpause vm|vmi NAME`', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.unpause })) },
  console: { summary: 'connect to a VMI\'s serial console through its node agent (Ctrl-] leaves)', load: () => import('./vm-console.ts') },
  vnc: { summary: 'a local VNC listener proxied to a VMI\'s display', load: () => import('./vnc.ts') },
  'soft-reboot': { summary: 'soft reboot a VMI (ACPI or the guest agent)', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.softReboot })) },
  reset: { summary: 'hard reset a VMI', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.reset })) },
  freeze: { summary: 'freeze a VMI\'s guest filesystems (guest agent)', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.freeze })) },
  unfreeze: { summary: 'thaw a VMI\'s guest filesystems', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.unfreeze })) },
  top: { summary: 'CPU, memory and disk I/O of running VMIs or VMs, like kubectl top: `top vmi|vm [NAME]`', load: () => import('./top.ts') },
  guestosinfo: { summary: 'the guest agent\'s OS information of a VMI', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.guestosinfo })) },
  userlist: { summary: 'the users logged in to a VMI\'s guest', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.userlist })) },
  fslist: { summary: 'the filesystems of a VMI\'s guest', load: () => import('./vmi-ops.ts').then((m) => ({ main: m.fslist })) },
  'evacuate-cancel': { summary: 'cancel the evacuation an eviction asked for: `evacuate-cancel vm|vmi NAME` (virtctl evacuate-cancel)', load: () => import('./evacuate-cancel.ts') },
  objectgraph: { summary: 'the objects a VM or VMI depends on: `objectgraph NAME [--vmi]` (virtctl objectgraph)', load: () => import('./object-graph.ts') },
  addvolume: { summary: 'add a volume to a running VM or VMI (virtctl addvolume)', load: () => import('./hotplug.ts').then((m) => ({ main: m.addvolume })) },
  removevolume: { summary: 'remove a hotplugged volume from a running VM or VMI (virtctl removevolume)', load: () => import('./hotplug.ts').then((m) => ({ main: m.removevolume })) },
  install: { summary: 'install qvirt on the current kubeconfig\'s cluster and wait until it is ready', load: () => import('./install.ts') },
  uninstall: { summary: 'remove what qvirt install created', load: () => import('./uninstall.ts') },
  migrate: { summary: 'live-migrate a VM to another node; --watch follows it (virtctl migrate)', load: () => import('./migrate.ts').then((m) => ({ main: m.migrate })) },
  'migrate-cancel': { summary: 'cancel a VM\'s running live migration (virtctl migrate-cancel)', load: () => import('./migrate.ts').then((m) => ({ main: m.migrateCancel })) },
  version: { summary: 'print qvirt\'s version and the QEMU it finds', load: () => import('./version.ts') },
  'port-forward': { summary: 'forward local TCP/UDP ports to a VM\'s guest through the API server (virtctl port-forward; --stdio for ssh)', load: () => import('./port-forward.ts') },
  ssh: { summary: 'open an SSH connection to a VM: the local ssh through `qvirt port-forward --stdio` (virtctl ssh)', load: () => import('./ssh.ts').then((m) => ({ main: m.ssh })) },
  scp: { summary: 'copy files from/to a VM: the local scp through `qvirt port-forward --stdio` (virtctl scp)', load: () => import('./ssh.ts').then((m) => ({ main: m.scp })) },
  expose: { summary: 'create a Service for a VM, VMI or VMI replica set (virtctl expose)', load: () => import('./expose.ts') },
  create: { summary: 'print a VirtualMachine, instance type or preference manifest: `create vm|instancetype|preference` (virtctl create)', load: () => import('./create.ts') },
};

function help(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const rows = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `qvirt — KubeVirt's virtual machines on QEMU, without libvirt.\n\nUsage: qvirt <command> [flags]\n\nCommands:\n${rows.join('\n')}\n\nRun 'qvirt <command> --help' for a command's flags.\n`;
}

async function run(argv: string[]): Promise<number> {
  argv = hoistGlobalFlags(argv);
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help());
    return name ? 0 : 2;
  }
  const cmd = commands[name];
  if (!cmd) {
    process.stderr.write(`qvirt: unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  const mod = await cmd.load();
  return mod.main(rest);
}

// V8's compile cache (Node's own, keyed by each module's source): a command's modules compile once
// per version of the sources instead of in every run, which is half of a short command's CPU
// (`qvirt version`: 0.88 → 0.40 s, RSS 98 → 64 MB). In QVIRT_COMPILE_CACHE as for the launcher,
// else Node's default (the temporary directory's node-compile-cache). The commands load below.
try { enableCompileCache(process.env.QVIRT_COMPILE_CACHE); } catch { /* a read-only or full disk: compile as before */ }

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (err) {
  if (err instanceof UserError) {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else if (err instanceof UsageError) {
    process.stderr.write(`qvirt: ${err.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`qvirt: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}

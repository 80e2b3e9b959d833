// `qvirt local up`: KubeVirt on this one machine, no Kubernetes, no libvirt. Runs in the
// foreground; Ctrl-C drains the node (guests shut down gracefully) and stops. State lives in the
// data dir, so the next `qvirt local up` finds every object as it was.
import { join } from 'node:path';
import { homedir } from 'node:os';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { componentLogger } from '../log/logger.ts';
import { ImageStore } from '../local/image-store.ts';
import { startLocalMode } from '../local/up.ts';
import { choosePodNetwork, probePodNetwork } from '../local/pod-network-choice.ts';
import { ensureDemoImage } from './demo.ts';
import { localUpRecordPath, removeLocalUpRecord, writeLocalUpRecord } from '../local/local-up-record.ts';

const specs = {
  'data-dir': { type: 'string', value: 'DIR', help: 'where the local mode keeps its state (default /var/lib/qvirt as root, else ~/.local/share/qvirt)' },
  port: { type: 'number', value: 'N', help: 'API server port on 127.0.0.1 (default 6443)', default: 6443 },
  'node-name': { type: 'string', value: 'NAME', help: 'this machine\'s Node name (default: the hostname)' },
  nodes: { type: 'number', value: 'N', help: 'how many local nodes (NAME, NAME-2, ... at 127.0.0.1, 127.0.0.2, ...): 2 lets VMs live-migrate', default: 1 },
  emulation: { type: 'string', value: 'auto|true|false', help: 'software emulation: auto = only where KVM cannot run guests', default: 'auto' },
  'image-store': { type: 'string', value: 'DIR', help: 'the local image store (default: QVIRT_IMAGE_STORE or /var/lib/qvirt/images as root)' },
  'pod-network': { type: 'boolean', help: 'require the pod network (the default where it can work: root, ip, nft, nsenter): each pod gets its own network namespace and addresses on bridge qvirt0 (10.244.0.0/24, fd00:10:244::/64), VMs get KubeVirt\'s masquerade/bridge/passt bindings, pods reach beyond the host through NAT', default: false },
  'no-pod-network': { type: 'boolean', help: 'no pod network: pods share the host\'s network, VMs use QEMU user-mode networking', default: false },
  'registry-certs-dir': { type: 'string', value: 'DIR', help: 'CA certificates for pulling containerDisk images: DIR/HOST[:PORT]/ca.crt (default DATA-DIR/certs.d; /etc/containers/certs.d and the system CAs are used too)' },
  'insecure-registry': { type: 'strings', value: 'HOST[:PORT]', help: 'pull from this registry without verifying its TLS certificate (or over plain HTTP); repeatable' },
  'demo-image': { type: 'boolean', help: 'import the test guest as qvirt/test-guest:latest (built once from Debian packages)', default: true },
} as const;

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(specs, argv);
  if (help || args[0] !== 'up') {
    process.stdout.write(usage('qvirt local up [flags]', 'Run KubeVirt on this machine: API server, controllers, node agent, pod runner. Ctrl-C stops it.', specs));
    return help ? 0 : 2;
  }
  if (!['auto', 'true', 'false'].includes(flags.emulation ?? 'auto')) throw new UsageError(`--emulation: "${flags.emulation}" is not auto, true or false`);
  const dataDir = flags['data-dir'] ?? (process.getuid?.() === 0 ? '/var/lib/qvirt' : join(homedir(), '.local/share/qvirt'));
  const log = componentLogger('local');
  const store = new ImageStore(flags['image-store']);
  if (flags['demo-image']) await ensureDemoImage(store);
  const emulation = flags.emulation === 'auto' ? 'auto' : flags.emulation === 'true';
  const nodes = flags.nodes ?? 1;
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 8) throw new UsageError(`--nodes: ${nodes} is not a whole number from 1 to 8`);
  let podNetwork;
  try { podNetwork = choosePodNetwork({ require: flags['pod-network'], optOut: flags['no-pod-network'] }, await probePodNetwork()); } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (!podNetwork.use && podNetwork.message) process.stderr.write(`${podNetwork.message}\n`);
  const local = await startLocalMode({ dataDir, port: flags.port, nodeName: flags['node-name'], nodes, emulation, imageStore: store, log, registries: { ...(flags['registry-certs-dir'] ? { certsDir: flags['registry-certs-dir'] } : {}), insecure: flags['insecure-registry'] }, ...(podNetwork.use ? { podNetwork: true } : {}) });
  // Where `qvirt start|stop|console|...` find this cluster without --kubeconfig.
  const recordPath = localUpRecordPath();
  try {
    writeLocalUpRecord(recordPath, { pid: process.pid, kubeconfig: local.kubeconfig, url: local.url, dataDir, nodeName: local.nodeName, startedAt: new Date().toISOString() });
  } catch (err) {
    log.warn({ err: (err as Error).message, path: recordPath }, 'cannot record the running local mode; qvirt verbs need --kubeconfig');
  }
  process.stdout.write([
    `qvirt local mode is up: API server ${local.url}, node${local.nodeNames.length > 1 ? 's' : ''} ${local.nodeNames.join(', ')}${local.useEmulation ? ' (software emulation)' : ''}${podNetwork.use ? ', pod network on qvirt0' : ''}`,
    `  export KUBECONFIG=${local.kubeconfig}`,
    '  kubectl apply -f examples/vm-demo.yaml && kubectl get vm,vmi,pods',
    'Ctrl-C stops it (guests are shut down gracefully; state is kept).',
    '',
  ].join('\n'));
  await new Promise<void>((resolve) => {
    const on = () => { process.off('SIGINT', on); process.off('SIGTERM', on); resolve(); };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
  process.stdout.write('stopping: draining the node...\n');
  removeLocalUpRecord(recordPath);
  await local.stop();
  process.stdout.write('stopped\n');
  return 0;
}

// A local pod runner in a process of its own, for tests that kill the runner (as a crashed
// `qvirt local up`) and start another: `node runner-process.ts <api url> <pods dir> <roots dir>
// <image store> <node binary>`. Prints "ready" once it runs.
import { KubeClient } from '../../src/kube/client.ts';
import { kubeConfigForServer } from '../../src/kube/kubeconfig.ts';
import { ImageStore } from '../../src/local/image-store.ts';
import { startPodRunner } from '../../src/local/pod-runner/index.ts';
import { log } from './lib.ts';

const [url, podsDir, rootsDir, images, nodeBinary] = process.argv.slice(2);
if (!url || !podsDir || !rootsDir || !images || !nodeBinary) throw new Error('usage: runner-process.ts <api url> <pods dir> <roots dir> <image store> <node binary>');
await startPodRunner({ client: new KubeClient(kubeConfigForServer(url)), nodeName: 'local', podsDir, rootsDir, imageStore: new ImageStore(images), log, nodeBinary, cpuWeights: false });
process.stdout.write('ready\n');

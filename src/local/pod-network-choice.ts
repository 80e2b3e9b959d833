// Whether `qvirt local up` gives pods their own network (src/local/pod-runner/pod-network.ts): by
// default wherever it can work — as root, with `ip` and `nft` on the PATH — so VMs are reachable
// from the host and from each other as in a cluster; otherwise the local mode falls back to QEMU
// user-mode networking and says why in one line. `--pod-network` insists (an error where it cannot
// work), `--no-pod-network` opts out. The decision is pure; probePodNetwork() looks at the host.
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

export interface PodNetworkProbe {
  readonly root: boolean;
  /** The tools the pod network runs, by whether they were found on the PATH. */
  readonly tools: Readonly<Record<'ip' | 'nft' | 'nsenter', boolean>>;
}

export interface PodNetworkFlags {
  /** `--pod-network`: required. */
  readonly require: boolean;
  /** `--no-pod-network`: off. */
  readonly optOut: boolean;
}

export type PodNetworkChoice =
  | { readonly use: true }
  | { readonly use: false; /** The one line to print (absent when the user opted out). */ readonly message?: string };

export class PodNetworkChoiceError extends Error {
  override name = 'PodNetworkChoiceError';
}

/** Why the pod network cannot work on this host (undefined: it can). */
export function podNetworkObstacle(p: PodNetworkProbe): string | undefined {
  if (!p.root) return 'not running as root (network namespaces, bridges and nftables need it)';
  const missing = (Object.keys(p.tools) as Array<keyof PodNetworkProbe['tools']>).filter((t) => !p.tools[t]);
  if (missing.length) return `${missing.join(', ')} not found on the PATH`;
  return undefined;
}

export function choosePodNetwork(f: PodNetworkFlags, p: PodNetworkProbe): PodNetworkChoice {
  if (f.require && f.optOut) throw new PodNetworkChoiceError('--pod-network and --no-pod-network: choose one');
  if (f.optOut) return { use: false };
  const obstacle = podNetworkObstacle(p);
  if (obstacle && f.require) throw new PodNetworkChoiceError(`--pod-network: ${obstacle}`);
  if (obstacle) return { use: false, message: `pod network off: ${obstacle}; VMs use QEMU user-mode networking (--no-pod-network silences this)` };
  return { use: true };
}

async function onPath(tool: string, path: string): Promise<boolean> {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    if (await access(join(dir, tool), constants.X_OK).then(() => true, () => false)) return true;
  }
  return false;
}

export async function probePodNetwork(env: NodeJS.ProcessEnv = process.env): Promise<PodNetworkProbe> {
  // The PATH the tools will be run with (node:child_process looks them up there).
  const path = env.PATH ?? '';
  const [ip, nft, nsenter] = await Promise.all([onPath('ip', path), onPath('nft', path), onPath('nsenter', path)]);
  return { root: process.getuid?.() === 0, tools: { ip, nft, nsenter } };
}

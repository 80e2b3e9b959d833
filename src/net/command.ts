// Running the host's network tools (`ip`, `nft`, `sysctl`), optionally inside a network namespace
// entered with `nsenter --net=<path>`. Failures become a NetworkCommandError naming the command
// line and what the tool printed. Everything that uses these is privileged: the node agent's pod
// network setup and the local pod runner's CNI part; never the launcher.
import { execFile } from 'node:child_process';

export class NetworkCommandError extends Error {
  override name = 'NetworkCommandError';
  readonly argv: readonly string[];
  readonly stderr: string;
  constructor(argv: readonly string[], stderr: string, code: number | string | undefined) {
    super(`${argv.join(' ')} failed (${code ?? 'no exit code'}): ${stderr.trim() || 'no output'}`);
    this.argv = argv;
    this.stderr = stderr;
  }
}

export interface RunOptions {
  /** A network namespace file (/run/netns/<name>, /proc/<pid>/ns/net) to run the command in. */
  readonly netns?: string | undefined;
  /** Text written to the command's stdin (nft -f -). */
  readonly input?: string;
}

/** argv that runs `cmd args` in `netns` (or directly). */
export function inNetns(netns: string | undefined, cmd: string, args: readonly string[]): string[] {
  return netns ? ['nsenter', `--net=${netns}`, '--', cmd, ...args] : [cmd, ...args];
}

export function run(cmd: string, args: readonly string[], o: RunOptions = {}): Promise<string> {
  const argv = inNetns(o.netns, cmd, args);
  return new Promise((resolve, reject) => {
    const child = execFile(argv[0]!, argv.slice(1), { timeout: 30_000, maxBuffer: 8 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new NetworkCommandError(argv, String(stderr || err.message), (err as NodeJS.ErrnoException).code ?? undefined));
      else resolve(String(stdout));
    });
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}

/** Like run, but "already exists" (EEXIST, `File exists`) counts as success: for idempotent setup. */
export async function runIdempotent(cmd: string, args: readonly string[], o: RunOptions = {}): Promise<void> {
  try { await run(cmd, args, o); } catch (err) {
    if (err instanceof NetworkCommandError && /File exists|already exists/i.test(err.stderr)) return;
    throw err;
  }
}

/** Like run, but a missing object (`Cannot find device`, `No such file`) counts as success: for teardown. */
export async function runIgnoringMissing(cmd: string, args: readonly string[], o: RunOptions = {}): Promise<void> {
  try { await run(cmd, args, o); } catch (err) {
    if (err instanceof NetworkCommandError && /Cannot find device|No such device|No such file|does not exist|not found/i.test(err.stderr)) return;
    throw err;
  }
}

/** One link as `ip -j addr show` reports it. */
export interface LinkInfo {
  readonly name: string;
  readonly mac: string;
  readonly mtu: number;
  readonly addresses: ReadonlyArray<{ family: 'inet' | 'inet6'; local: string; prefixlen: number; scope: string }>;
}

/** Parses `ip -j addr show` output (a JSON array of links). */
export function parseIpAddrJson(text: string): LinkInfo[] {
  let data: unknown;
  try { data = JSON.parse(text); } catch { throw new Error(`ip -j addr: output is not JSON: ${text.slice(0, 80)}`); }
  if (!Array.isArray(data)) throw new Error('ip -j addr: output is not a JSON array');
  return data.map((l: Record<string, unknown>) => ({
    name: String(l['ifname'] ?? ''),
    mac: String(l['address'] ?? ''),
    mtu: Number(l['mtu'] ?? 0),
    addresses: (Array.isArray(l['addr_info']) ? l['addr_info'] as Array<Record<string, unknown>> : [])
      .filter((a) => a['family'] === 'inet' || a['family'] === 'inet6')
      .map((a) => ({ family: a['family'] as 'inet' | 'inet6', local: String(a['local'] ?? ''), prefixlen: Number(a['prefixlen'] ?? 0), scope: String(a['scope'] ?? '') })),
  }));
}

/** The link `name` in `netns`, or undefined when it does not exist. */
export async function linkInfo(name: string, netns?: string): Promise<LinkInfo | undefined> {
  try {
    return parseIpAddrJson(await run('ip', ['-j', 'addr', 'show', 'dev', name], { netns }))[0];
  } catch (err) {
    if (err instanceof NetworkCommandError && /does not exist|Cannot find device/i.test(err.stderr)) return undefined;
    throw err;
  }
}

/** The IPv4 default gateway in `netns`, if any. */
export async function defaultGateway4(netns?: string): Promise<string | undefined> {
  const out = await run('ip', ['-j', '-4', 'route', 'show', 'default'], { netns });
  try {
    const routes = JSON.parse(out) as Array<{ gateway?: string }>;
    return routes.find((r) => r.gateway)?.gateway;
  } catch { return undefined; }
}

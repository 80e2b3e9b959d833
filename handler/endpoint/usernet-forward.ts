// Port-forwarding into a guest on QEMU user-mode networking (slirp), for the handler endpoint's
// `portforward`: the only way in from outside is a host forward, which QEMU adds and removes at
// run time with the HMP commands `hostfwd_add` / `hostfwd_remove` (no QMP equivalent exists in
// QEMU 7.2), reached through the launcher's audited QMP passthrough (`human-monitor-command`).
//
// One forward per connection, on 127.0.0.1 and a port the kernel picks (`tcp:127.0.0.1:0-:PORT`):
// `info usernet` tells which port that became. The forwards of one VMI are added one at a time, so
// the new HOST_FORWARD line is the one that was not there before. The guest address is slirp's
// default, its first DHCP lease (10.0.2.15). A TCP forward is removed as soon as slirp has
// accepted the handler's connection (established connections outlive their forward); a UDP
// forward lives as long as the session.
//
// Parsing and choosing are pure functions; UsernetForwards is the thin shell that runs HMP.
import type { PortForwardProtocol } from './routes.ts';

/** One socket line of `info usernet`: `  TCP[HOST_FORWARD]   3   127.0.0.1 35243   10.0.2.15  7  0  0`. */
export interface UsernetSocket {
  readonly protocol: string;
  /** `HOST_FORWARD`, a TCP state (`SYN_SENT`, `ESTABLISHED`...), or a UDP/ICMP timeout (`57 sec`). */
  readonly state: string;
  readonly srcAddr: string;
  readonly srcPort: number;
  readonly dstAddr: string;
  readonly dstPort: number;
}

/** One user-mode netdev (`Hub -1 (hostua-default):`) and its sockets. */
export interface UsernetStack {
  readonly netdev: string;
  readonly sockets: readonly UsernetSocket[];
}

export const HOST_FORWARD = 'HOST_FORWARD';
const HUB = /^Hub\s+-?\d+\s+\((.*)\):\s*$/;
const SOCKET = /^\s*([A-Z]+)\[([^\]]*)\]\s+-?\d+\s+(\S+)\s+(\d+)\s+(\S+)\s+(\d+)\s+\d+\s+\d+\s*$/;

/** `info usernet` → its stacks. Pure. */
export function parseUsernet(text: string): UsernetStack[] {
  const out: Array<{ netdev: string; sockets: UsernetSocket[] }> = [];
  for (const line of text.split(/\r?\n/)) {
    const hub = HUB.exec(line);
    if (hub) { out.push({ netdev: hub[1]!, sockets: [] }); continue; }
    const s = SOCKET.exec(line);
    if (s && out.length > 0) {
      out[out.length - 1]!.sockets.push({ protocol: s[1]!, state: s[2]!, srcAddr: s[3]!, srcPort: Number(s[4]), dstAddr: s[5]!, dstPort: Number(s[6]) });
    }
  }
  return out;
}

/**
 * The netdev of the VMI interface `interfaceName`: the stack named for it (the launcher names a
 * netdev `<prefix><interface name>`), else the first one (KubeVirt forwards to the first interface).
 * Undefined when QEMU has no user-mode netdev. Pure.
 */
export function netdevOf(stacks: readonly UsernetStack[], interfaceName: string | undefined): string | undefined {
  const named = interfaceName ? stacks.find((s) => s.netdev === interfaceName || s.netdev.endsWith(`-${interfaceName}`)) : undefined;
  return (named ?? stacks[0])?.netdev;
}

/** The `hostfwd_add` rule: 127.0.0.1, a port the kernel picks, the guest's port on slirp's default guest address. Pure. */
export function hostForwardRule(protocol: PortForwardProtocol, guestPort: number): string {
  return `${protocol}:127.0.0.1:0-:${guestPort}`;
}

const upper = (p: PortForwardProtocol) => p.toUpperCase();

/** The host port of the forward that `after` has and `before` had not, for `protocol` to `guestPort` on `netdev`. Pure. */
export function newHostForward(before: readonly UsernetStack[], after: readonly UsernetStack[], netdev: string, protocol: PortForwardProtocol, guestPort: number): number | undefined {
  const forwards = (stacks: readonly UsernetStack[]) => (stacks.find((s) => s.netdev === netdev)?.sockets ?? [])
    .filter((s) => s.state === HOST_FORWARD && s.protocol === upper(protocol) && s.srcAddr === '127.0.0.1');
  const old = new Set(forwards(before).map((s) => s.srcPort));
  return forwards(after).find((s) => s.dstPort === guestPort && !old.has(s.srcPort))?.srcPort;
}

/**
 * The state of the TCP connection slirp accepted on host port `hostPort` (slirp lists an accepted
 * connection with the listening address as its source), or undefined when there is none. Pure.
 */
export function acceptedState(stacks: readonly UsernetStack[], netdev: string, hostPort: number): string | undefined {
  return stacks.find((s) => s.netdev === netdev)?.sockets.find((s) => s.protocol === 'TCP' && s.state !== HOST_FORWARD && s.srcPort === hostPort)?.state;
}

/** Runs one HMP command line in the VMI's QEMU and returns what it printed. */
export type Hmp = (commandLine: string) => Promise<string>;

export interface HostForward {
  readonly netdev: string;
  readonly protocol: PortForwardProtocol;
  readonly hostPort: number;
  readonly guestPort: number;
}

export class UsernetForwardError extends Error {
  override name = 'UsernetForwardError';
}

export class UsernetForwards {
  /** Per VMI: the tail of its queue of forward additions. */
  private readonly queues = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier call for `key` has finished. */
  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(fn);
    const tail = next.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => { if (this.queues.get(key) === tail) this.queues.delete(key); });
    return next;
  }

  static async usernet(hmp: Hmp): Promise<UsernetStack[]> {
    return parseUsernet(await hmp('info usernet'));
  }

  /** Adds a forward from 127.0.0.1:<free port> to `guestPort` of the guest behind interface `interfaceName`. */
  add(vmiKey: string, hmp: Hmp, interfaceName: string | undefined, protocol: PortForwardProtocol, guestPort: number): Promise<HostForward> {
    return this.serial(vmiKey, async () => {
      const before = await UsernetForwards.usernet(hmp);
      const netdev = netdevOf(before, interfaceName);
      if (!netdev) throw new UsernetForwardError(`the VMI's QEMU has no user-mode network (info usernet lists no netdev) for interface ${interfaceName ?? '(first)'}`);
      const rule = hostForwardRule(protocol, guestPort);
      const said = (await hmp(`hostfwd_add ${netdev} ${rule}`)).trim();
      if (said) throw new UsernetForwardError(`hostfwd_add ${netdev} ${rule}: ${said}`);
      const hostPort = newHostForward(before, await UsernetForwards.usernet(hmp), netdev, protocol, guestPort);
      if (!hostPort) throw new UsernetForwardError(`hostfwd_add ${netdev} ${rule} succeeded but info usernet does not list the new forward`);
      return { netdev, protocol, hostPort, guestPort };
    });
  }

  /** Removes a forward (connections it already delivered stay). */
  static async remove(hmp: Hmp, f: HostForward): Promise<void> {
    const rule = `${f.protocol}:127.0.0.1:${f.hostPort}`;
    const said = (await hmp(`hostfwd_remove ${f.netdev} ${rule}`)).trim();
    if (said && !/^host forwarding rule for .* removed/i.test(said)) throw new UsernetForwardError(`hostfwd_remove ${f.netdev} ${rule}: ${said}`);
  }
}

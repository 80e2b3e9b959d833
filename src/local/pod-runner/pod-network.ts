// The local mode's pod network, as the CNI bridge plugin with host-local IPAM would set it up:
// a host bridge (`qvirt0`, the subnet's first address), and per pod a network namespace
// (`/run/netns/qvirt-<uid prefix>`) holding `eth0`, one end of a veth pair whose other end is a
// port of the bridge, with the pod's address and a default route via the bridge. Pods reach each
// other and the host through the bridge, and the host reaches every pod IP.
//
// Dual stack, as a dual-stack cluster's CNI: besides IPv4 the bridge and every pod get an address
// of an IPv6 ULA /64 (default fd00:10:244::/64; the pod's IPv6 has the same host number as its
// IPv4, so one lease covers both) and an IPv6 default route. A host without IPv6 gets IPv4 only.
//
// Traffic from the pods leaving the host is masqueraded (outbound-nat.ts, the CNI plugin's ipMasq).
//
// Addresses are leased as files `<stateDir>/<ip>` holding the pod uid (created with O_EXCL, so
// two runners never hand out one address). Setup is idempotent (a restarted runner, a retried
// sync); teardown deletes the namespace (which takes the veth pair with it) and the lease. The
// bridge is removed by `removeBridgeIfUnused` once no pod namespace is left.
import { access, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { linkInfo, run, runIdempotent, runIgnoringMissing } from '../../net/command.ts';
import { intToIpv4, ipv4ToInt, parseCidr4 } from '../../net/ipv4.ts';
import { nthAddress6 } from '../../net/ipv6.ts';
import { applyOutboundNat, removeOutboundNat } from './outbound-nat.ts';

export const POD_NETNS_PREFIX = 'qvirt-';
export const POD_INTERFACE = 'eth0';

export interface PodNetworkConfig {
  /** The host bridge (default qvirt0). */
  readonly bridge?: string;
  /** The pod subnet; the bridge gets its first address (default 10.244.0.0/24). */
  readonly subnet?: string;
  /** The pod IPv6 subnet (default fd00:10:244::/64); `false`: IPv4 only. */
  readonly subnet6?: string | false;
  /** Where address leases are kept (default /run/qvirt/cni). */
  readonly stateDir?: string;
  /** Masquerade pod traffic leaving the host (outbound-nat.ts; default true). */
  readonly outboundNat?: boolean;
}

export interface PodAttachment {
  /** The namespace's name (`ip netns`), and its file: what processes of the pod are started in. */
  readonly netnsName: string;
  readonly netns: string;
  readonly ip: string;
  readonly prefix: number;
  readonly gateway: string;
  /** The pod's IPv6 address, prefix and gateway (absent: IPv4 only). */
  readonly ipv6?: { readonly ip: string; readonly prefix: number; readonly gateway: string } | undefined;
  readonly mac: string;
}

/** Names derived from a pod uid: the namespace and the host end of the veth pair (≤ 15 bytes). */
export function podNetworkNames(uid: string): { netnsName: string; hostVeth: string } {
  const hex = uid.replace(/-/g, '').toLowerCase();
  return { netnsName: `${POD_NETNS_PREFIX}${hex.slice(0, 12)}`, hostVeth: `qv${hex.slice(0, 11)}` };
}

/** The lowest address of the subnet not in `taken` (skipping network, gateway and broadcast). */
export function nextFreeAddress(subnet: string, taken: ReadonlySet<string>): string | undefined {
  const { network, prefix } = parseCidr4(subnet);
  const size = 2 ** (32 - prefix);
  for (let i = 2; i < size - 1; i++) {
    const ip = intToIpv4(network + i);
    if (!taken.has(ip)) return ip;
  }
  return undefined;
}

/** The pod's IPv6 address: the IPv6 subnet's address with the same host number as `ip4` in `subnet4`. */
export function podAddress6(subnet6: string, subnet4: string, ip4: string): { address: string; prefix: number } {
  return nthAddress6(subnet6, ipv4ToInt(ip4) - parseCidr4(subnet4).network, 'subnet6');
}

const hasIpv6 = () => access('/proc/sys/net/ipv6').then(() => true, () => false);

export class PodNetwork {
  readonly bridge: string;
  readonly subnet: string;
  readonly stateDir: string;
  readonly gateway: string;
  readonly prefix: number;
  /** The IPv6 subnet and the bridge's address in it (absent: IPv4 only). */
  readonly subnet6: string | undefined;
  readonly gateway6: { readonly address: string; readonly prefix: number } | undefined;
  private ipv6: Promise<boolean> | undefined;
  private readonly outboundNat: boolean;
  private natApplied = false;

  constructor(c: PodNetworkConfig = {}) {
    this.bridge = c.bridge ?? 'qvirt0';
    this.subnet = c.subnet ?? '10.244.0.0/24';
    this.stateDir = c.stateDir ?? '/run/qvirt/cni';
    const { network, prefix } = parseCidr4(this.subnet);
    this.gateway = intToIpv4(network + 1);
    this.prefix = prefix;
    this.subnet6 = c.subnet6 === false ? undefined : c.subnet6 ?? 'fd00:10:244::/64';
    this.gateway6 = this.subnet6 ? nthAddress6(this.subnet6, 1, 'subnet6') : undefined;
    this.outboundNat = c.outboundNat ?? true;
  }

  /** Whether pods get IPv6 too: configured, and the host has IPv6. */
  dualStack(): Promise<boolean> {
    this.ipv6 ??= this.gateway6 ? hasIpv6() : Promise.resolve(false);
    return this.ipv6;
  }

  private async ensureBridge(): Promise<void> {
    await runIdempotent('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
    await run('ip', ['addr', 'replace', `${this.gateway}/${this.prefix}`, 'dev', this.bridge]);
    if (this.gateway6 && (await this.dualStack())) {
      await run('sysctl', ['-q', '-w', `net.ipv6.conf.${this.bridge}.disable_ipv6=0`]).catch(() => undefined);
      await run('ip', ['-6', 'addr', 'replace', `${this.gateway6.address}/${this.gateway6.prefix}`, 'dev', this.bridge, 'nodad']);
    }
    await run('ip', ['link', 'set', this.bridge, 'up']);
    if (this.outboundNat && !this.natApplied) {
      await applyOutboundNat({ bridge: this.bridge, subnet4: this.subnet, subnet6: (await this.dualStack()) ? this.subnet6 : undefined });
      this.natApplied = true;
    }
  }

  /** The pod's leased address: the one it already has, else the lowest free one. */
  private async lease(uid: string): Promise<string> {
    await mkdir(this.stateDir, { recursive: true });
    const taken = new Set<string>();
    for (const f of await readdir(this.stateDir)) {
      const owner = (await readFile(join(this.stateDir, f), 'utf8').catch(() => '')).trim();
      if (owner === uid) return f;
      taken.add(f);
    }
    for (;;) {
      const ip = nextFreeAddress(this.subnet, taken);
      if (!ip) throw new Error(`pod network ${this.subnet}: no free address for pod ${uid}`);
      try {
        await writeFile(join(this.stateDir, ip), uid, { flag: 'wx' });
        return ip;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        taken.add(ip);
      }
    }
  }

  /** Creates (or finds) the pod's namespace, veth pair and address. Idempotent. */
  async attach(uid: string): Promise<PodAttachment> {
    const { netnsName, hostVeth } = podNetworkNames(uid);
    const netns = `/run/netns/${netnsName}`;
    await this.ensureBridge();
    await runIdempotent('ip', ['netns', 'add', netnsName]);
    const ip = await this.lease(uid);
    if (!(await linkInfo(POD_INTERFACE, netns))) {
      await runIgnoringMissing('ip', ['link', 'del', hostVeth]);
      await run('ip', ['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', POD_INTERFACE, 'netns', netnsName]);
    }
    await run('ip', ['link', 'set', hostVeth, 'master', this.bridge, 'up']);
    await run('ip', ['addr', 'replace', `${ip}/${this.prefix}`, 'dev', POD_INTERFACE], { netns });
    await run('ip', ['link', 'set', 'lo', 'up'], { netns });
    await run('ip', ['link', 'set', POD_INTERFACE, 'up'], { netns });
    await run('ip', ['route', 'replace', 'default', 'via', this.gateway, 'dev', POD_INTERFACE], { netns });
    let ipv6: PodAttachment['ipv6'];
    if (this.subnet6 && this.gateway6 && (await this.dualStack())) {
      const a = podAddress6(this.subnet6, this.subnet, ip);
      await run('ip', ['-6', 'addr', 'replace', `${a.address}/${a.prefix}`, 'dev', POD_INTERFACE, 'nodad'], { netns });
      await run('ip', ['-6', 'route', 'replace', 'default', 'via', this.gateway6.address, 'dev', POD_INTERFACE], { netns });
      ipv6 = { ip: a.address, prefix: a.prefix, gateway: this.gateway6.address };
    }
    const link = await linkInfo(POD_INTERFACE, netns);
    return { netnsName, netns, ip, prefix: this.prefix, gateway: this.gateway, ...(ipv6 ? { ipv6 } : {}), mac: link?.mac ?? '' };
  }

  /** Removes the pod's namespace (and with it the veth pair and whatever the node agent built inside) and its lease. */
  async detach(uid: string): Promise<void> {
    const { netnsName, hostVeth } = podNetworkNames(uid);
    await runIgnoringMissing('ip', ['netns', 'del', netnsName]);
    await runIgnoringMissing('ip', ['link', 'del', hostVeth]);
    for (const f of await readdir(this.stateDir).catch(() => [] as string[])) {
      const owner = (await readFile(join(this.stateDir, f), 'utf8').catch(() => '')).trim();
      if (owner === uid) await rm(join(this.stateDir, f), { force: true });
    }
  }

  /** Deletes the bridge (and its outbound NAT) when no pod holds an address any more. */
  async removeBridgeIfUnused(): Promise<boolean> {
    const leases = await readdir(this.stateDir).catch(() => [] as string[]);
    if (leases.length > 0) return false;
    if (this.outboundNat) await removeOutboundNat(this.bridge);
    this.natApplied = false;
    await runIgnoringMissing('ip', ['link', 'del', this.bridge]);
    return true;
  }
}


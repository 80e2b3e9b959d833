// Sends the launcher's router advertisements on the masquerade bridge: at start, every
// `intervalSeconds`, and in answer to each Router Solicitation (a booting guest asks at once).
//
// Node has no raw sockets, and an RA must come from a raw ICMPv6 socket (link-local source, hop
// limit 255). The socket side is a small perl program (perl-base is Essential in Debian, so every
// Debian host has it; the launcher image does not ship perl) that sends the RA bytes it is given — the packet itself
// is built and tested in router-advert.ts — and exits when its stdin closes, i.e. with the
// launcher. A raw socket needs CAP_NET_RAW: a launcher without it (non-root, as KubeVirt's
// virt-launcher, and so in the launcher image, which has no perl either) sends no RAs, and the guest
// needs its IPv6 gateway configured — as in KubeVirt, which sends none.
import { spawn } from 'node:child_process';
import type { Logger } from '../../src/log/logger.ts';

const PERL = String.raw`
use strict; use warnings; use Socket qw(:DEFAULT inet_pton pack_sockaddr_in6 pack_ipv6_mreq IPPROTO_IPV6 IPV6_MULTICAST_HOPS IPV6_UNICAST_HOPS IPV6_MULTICAST_IF IPV6_JOIN_GROUP);
my ($ifname, $hex, $interval) = @ARGV;
my $ra = pack('H*', $hex);
socket(my $s, AF_INET6, SOCK_RAW, 58) or die "raw ICMPv6 socket: $!\n";
my $ifr = pack('Z16 x24', $ifname);
ioctl($s, 0x8933, $ifr) or die "no interface $ifname: $!\n"; # SIOCGIFINDEX (sysfs may show another namespace)
my $idx = unpack('x16 i', $ifr);
setsockopt($s, SOL_SOCKET, 25, pack('Z*', $ifname)) or die "SO_BINDTODEVICE $ifname: $!\n";
setsockopt($s, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, pack('i', 255)) or die "multicast hops: $!\n";
setsockopt($s, IPPROTO_IPV6, IPV6_UNICAST_HOPS, pack('i', 255)) or die "unicast hops: $!\n";
setsockopt($s, IPPROTO_IPV6, IPV6_MULTICAST_IF, pack('i', $idx)) or die "multicast interface: $!\n";
setsockopt($s, IPPROTO_IPV6, IPV6_JOIN_GROUP, pack_ipv6_mreq(inet_pton(AF_INET6, 'ff02::2'), $idx));
my $all = pack_sockaddr_in6(0, inet_pton(AF_INET6, 'ff02::1'), $idx);
$| = 1;
my ($sent, $rs) = (0, 0);
sub advertise { if (send($s, $ra, 0, $all)) { $sent++ } else { print "send: $!\n" } }
advertise(); print "ready\n";
my $next = time + $interval;
while (1) {
  my $rin = ''; vec($rin, fileno($s), 1) = 1; vec($rin, fileno(STDIN), 1) = 1;
  my $wait = $next - time; $wait = 0 if $wait < 0;
  my $n = select(my $rout = $rin, undef, undef, $wait);
  if ($n > 0 && vec($rout, fileno(STDIN), 1)) { my $buf; last if !sysread(STDIN, $buf, 64) }
  if ($n > 0 && vec($rout, fileno($s), 1)) {
    my $buf; recv($s, $buf, 1500, 0);
    if (length($buf) && ord($buf) == 133) { $rs++; advertise(); print "solicited $rs\n" }
  }
  if (time >= $next) { advertise(); $next = time + $interval }
}
`;

export interface RaSender {
  /** Resolves once the first RA went out (rejects when the sender could not start). */
  readonly ready: Promise<void>;
  /** Router solicitations answered so far. */
  solicited(): number;
  stop(): Promise<void>;
}

export function startRaSender(bridge: string, ra: Buffer, intervalSeconds: number, log: Logger): RaSender {
  const child = spawn('perl', ['-e', PERL, bridge, ra.toString('hex'), String(intervalSeconds)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let solicited = 0;
  let stderr = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('close', () => { exited = true; resolve(); }));
  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`router advertisements on ${bridge}: cannot run perl: ${err.message}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      for (const line of d.split('\n').filter(Boolean)) {
        if (line === 'ready') resolve();
        else if (line.startsWith('solicited ')) { solicited = Number(line.slice(10)); log.debug({ bridge, solicited }, 'router solicitation answered'); }
        else log.warn({ bridge, line }, 'router advertisement sender');
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => { stderr += d; });
    void exit.then(() => reject(new Error(`router advertisements on ${bridge}: ${stderr.trim() || `sender exited with ${child.exitCode}`}`)));
  });
  ready.catch(() => undefined);
  return {
    ready,
    solicited: () => solicited,
    stop: async () => {
      if (exited) return;
      child.stdin.end();
      const t = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exit;
      clearTimeout(t);
    },
  };
}

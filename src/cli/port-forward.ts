// `qvirt port-forward TYPE/NAME[/NAMESPACE] [PROTOCOL/]LOCALPORT[:TARGETPORT]...`: virtctl's
// port-forward (pkg/virtctl/portforward). Local TCP and UDP ports (on --address, 127.0.0.1 by
// default) each lead to a port of the VM's guest through the API server's
// subresources.kubevirt.io portforward websocket (subresource-stream.ts): one websocket per TCP
// connection, one per UDP client address. With --stdio, the one port is joined to stdin/stdout —
// what ssh's ProxyCommand runs (`qvirt ssh`, `qvirt scp`). It logs what virtctl logs, as virtctl
// does (JSON lines on stderr), and runs until SIGINT or SIGTERM.
import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { parseFlags, usage, UsageError } from '../flags/flags.ts';
import { UserError } from '../kube/user-error.ts';
import { clusterFlags, connect, type ClusterContext } from './kube-context.ts';
import { parsePorts, portForwardSubresource, type ForwardedPort } from './forwarded-port.ts';
import { openDatagramChannel, openSubresourceStream, openSubresourceWebSocket, webSocketDuplex, type DatagramChannel, type StreamTarget } from './subresource-stream.ts';
import { dottedHint, parseTarget, resourceOf, type VmTarget } from './vm-target.ts';
import { virtctlLogger } from './virtctl-log.ts';

const USE = 'qvirt port-forward TYPE/NAME[/NAMESPACE] [PROTOCOL/]LOCALPORT[:TARGETPORT]... [flags]';

const LONG = `Forward local ports to a virtualmachine or virtualmachineinstance.

The target argument supports the syntax type/name[/namespace] with /namespace as optional field.
Kind accepts any of vmi, vmis, vm, vms, virtualmachineinstance, virtualmachine, virtualmachineinstances, virtualmachines.
A dot is part of the name: the old type/name.namespace syntax is gone, as in virtctl 1.7 and later.

The port argument supports the syntax protocol/localPort:targetPort with protocol/ and :targetPort as optional fields.
Protocol supports TCP (default) and UDP. Local port 0 takes a free port (the log line names it).

Portforwards get established over the Kubernetes control-plane using websocket streams.
Usage can be restricted by the cluster administrator through the /portforward subresource.`;

const EXAMPLES = `  # Forward the local port 8080 to the vmi port:
  qvirt port-forward vmi/testvmi 8080

  # Forward the local port 8080 to the vmi port 9090:
  qvirt port-forward vmi/testvmi 8080:9090

  # Forward the local port 8080 to the vmi port 9090 as a UDP connection:
  qvirt port-forward vmi/testvmi/mynamespace udp/8080:9090

  # Forward the local port 8080 to the vm port
  qvirt port-forward vm/testvm 8080

  # Forward the local port 8080 to the vm port in mynamespace
  qvirt port-forward vm/testvm/mynamespace 8080

  # As ssh's ProxyCommand (what 'qvirt ssh' runs): the guest's port 22 on stdin/stdout
  ssh -o 'ProxyCommand=qvirt port-forward --stdio=true vmi/testvmi/mynamespace 22' user@testvmi

  # Note: qvirt port-forward sends all traffic over the Kubernetes API Server.
  # This means any traffic will add additional pressure to the control plane.
  # For continous traffic intensive connections, consider using a dedicated Kubernetes Service.`;

const flagSpecs = {
  address: { type: 'string', value: 'ADDR', default: '127.0.0.1', help: 'the address the local ports should be opened on' },
  stdio: { type: 'boolean', help: '--stdio=true: forward the tunnel to stdout/stdin; only works with a single port' },
  ...clusterFlags,
} as const;

type Log = ReturnType<typeof virtctlLogger>;

/** Adds the hint for a name with a dot to a not-found error. */
function withHint(err: unknown, target: VmTarget): unknown {
  if (err instanceof UserError && / not found in namespace /.test(err.message)) {
    const hint = dottedHint(target);
    if (hint) return new UserError(`${err.message}${hint}`, err.exitCode);
  }
  return err;
}

export async function main(argv: string[]): Promise<number> {
  const { flags, args, help } = parseFlags(flagSpecs, argv);
  if (help) {
    process.stdout.write(usage(USE, LONG, flagSpecs, `Examples:\n${EXAMPLES}`));
    return 0;
  }
  if (args.length < 2) throw new UsageError(`port-forward requires at least 2 arguments (TYPE/NAME[/NAMESPACE] and a port), received ${args.length}: usage: ${USE} (see --help)`);
  const target = parseTarget(args[0]!);
  const ports = parsePorts(args.slice(1));
  if (flags.stdio && ports.length !== 1) throw new UsageError(`only one port supported when forwarding to stdout (--stdio), got ${ports.length}: ${args.slice(1).join(' ')}`);
  const ctx = connect(flags);
  const namespace = target.namespace ?? ctx.namespace;
  try {
    if (flags.stdio) return await forwardStdio(ctx, target, namespace, ports[0]!);
    return await forwardPorts(ctx, target, namespace, ports, flags.address ?? '127.0.0.1');
  } catch (err) {
    throw withHint(err, target);
  } finally {
    await ctx.client.close();
  }
}

function streamTarget(target: VmTarget, namespace: string, port: ForwardedPort): StreamTarget {
  return { resource: resourceOf(target.kind), namespace, name: target.name, subresource: portForwardSubresource(port.remote, port.protocol) };
}

/** --stdio: stdin → the guest's port → stdout, until either side closes. */
async function forwardStdio(ctx: ClusterContext, target: VmTarget, namespace: string, port: ForwardedPort): Promise<number> {
  const stream = webSocketDuplex(await openSubresourceWebSocket(ctx, streamTarget(target, namespace, port)));
  const input = process.stdin;
  const broke = await new Promise<Error | undefined>((resolve) => {
    let done = false;
    const finish = (err?: Error) => { if (!done) { done = true; resolve(err); } };
    stream.on('data', (d: Buffer) => { if (!process.stdout.write(d)) { stream.pause(); process.stdout.once('drain', () => stream.resume()); } });
    stream.on('end', () => finish());
    stream.on('close', () => finish());
    stream.on('error', (err) => finish(err));
    process.stdout.on('error', (err) => finish(err));
    input.pipe(stream);
  });
  input.unpipe(stream);
  input.destroy();
  stream.destroy();
  if (broke && !/EPIPE|closed/i.test(broke.message)) throw new UserError(`the port-forward to ${target.kind}/${target.name}/${namespace} port ${port.remote}/${port.protocol} broke: ${broke.message}`);
  return 0;
}

/** `--address`: an IP, or a name resolved as Go's ResolveIPAddr does (IPv4 first). */
async function resolveAddress(address: string): Promise<string> {
  if (net.isIP(address)) return address;
  try {
    return (await lookup(address, { order: 'ipv4first' })).address;
  } catch (err) {
    throw new UserError(`--address: cannot resolve "${address}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; give an IP address such as 127.0.0.1 or 0.0.0.0`);
  }
}

function listenError(err: NodeJS.ErrnoException, ip: string, port: ForwardedPort): UserError {
  const where = `${ip}:${port.local} (${port.protocol})`;
  if (err.code === 'EADDRINUSE') return new UserError(`cannot listen on ${where}: the address is already in use; choose another local port (${port.protocol === 'udp' ? 'udp/' : ''}LOCALPORT:${port.remote}), or 0 for a free one`);
  if (err.code === 'EACCES') return new UserError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose a local port of 1024 or more, e.g. ${port.local + 10000 <= 65535 ? port.local + 10000 : 8080}:${port.remote}`);
  if (err.code === 'EADDRNOTAVAIL') return new UserError(`cannot listen on ${where}: no local interface has the address ${ip}; check --address`);
  return new UserError(`cannot listen on ${where}: ${err.code ?? err.message}`);
}

const closedConnection = (err: Error) => /ECONNRESET|EPIPE|closed|aborted/i.test(`${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}`);

/** Bytes both ways between a local TCP connection and the guest's port; either end closing ends the other. */
function splice(local: net.Socket, remote: Duplex, onError: (err: Error) => void): void {
  local.pipe(remote);
  remote.pipe(local);
  local.on('error', (err) => { if (!closedConnection(err)) onError(err); remote.destroy(); });
  remote.on('error', (err) => { if (!closedConnection(err)) onError(err); local.destroy(); });
  local.on('close', () => remote.destroy());
  remote.on('close', () => { if (!local.destroyed) local.end(); });
}

async function listenTcp(ctx: ClusterContext, target: VmTarget, namespace: string, port: ForwardedPort, ip: string, log: Log): Promise<{ close(): void; port: number }> {
  const sockets = new Set<net.Socket>();
  const st = streamTarget(target, namespace, port);
  let bound = port.local;
  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    log.info(`opening new tcp tunnel to ${port.remote}`);
    openSubresourceStream(ctx, st).then((remote) => {
      if (client.destroyed) { remote.destroy(); return; }
      log.info(`handling tcp connection for ${bound}`);
      splice(client, remote, (err) => log.error(`error handling connection for ${bound}: ${err.message}`));
      client.resume();
    }, (err: Error) => {
      log.error(`can't access ${target.kind}/${target.name}.${namespace}: ${(withHint(err, target) as Error).message}`);
      client.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, ip, port)));
    server.listen(port.local, ip, () => resolve());
  });
  bound = (server.address() as net.AddressInfo).port;
  server.on('error', (err) => log.error(`error accepting connection: ${err.message}`));
  return { port: bound, close: () => { server.close(); for (const s of sockets) s.destroy(); } };
}

interface UdpClient { channel?: DatagramChannel; readonly queue: Buffer[] }

const UDP_QUEUE = 64;

async function listenUdp(ctx: ClusterContext, target: VmTarget, namespace: string, port: ForwardedPort, ip: string, log: Log): Promise<{ close(): void; port: number }> {
  const st = streamTarget(target, namespace, port);
  const sock = dgram.createSocket(net.isIPv6(ip) ? 'udp6' : 'udp4');
  const clients = new Map<string, UdpClient>();
  let closing = false;
  sock.on('message', (msg, rinfo) => {
    const id = `${rinfo.address}:${rinfo.port}`;
    let c = clients.get(id);
    if (!c) {
      const fresh: UdpClient = { queue: [] };
      c = fresh;
      clients.set(id, fresh);
      log.info(`opening new udp tunnel to ${port.remote}`);
      openDatagramChannel(ctx, st).then((ch) => {
        if (closing) { ch.close(); return; }
        fresh.channel = ch;
        ch.on('datagram', (d) => sock.send(d, rinfo.port, rinfo.address, (err) => { if (err && !closing) log.error(`closing client: ${err.message}`); }));
        ch.on('close', (err) => {
          clients.delete(id);
          if (err && !closing) log.error(`closing client: ${err.message}`);
        });
        for (const d of fresh.queue.splice(0)) ch.send(d);
      }, (err: Error) => {
        log.error(`can't access ${target.kind}/${target.name}.${namespace}: ${(withHint(err, target) as Error).message}`);
        clients.delete(id);
      });
    }
    if (c.channel) c.channel.send(msg);
    else if (c.queue.length < UDP_QUEUE) c.queue.push(msg);
  });
  await new Promise<void>((resolve, reject) => {
    sock.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, ip, port)));
    sock.bind(port.local, ip, () => resolve());
  });
  sock.on('error', (err) => log.error(`${err.message}`));
  return {
    port: sock.address().port,
    close: () => {
      closing = true;
      for (const c of clients.values()) c.channel?.close();
      sock.close();
    },
  };
}

async function forwardPorts(ctx: ClusterContext, target: VmTarget, namespace: string, ports: readonly ForwardedPort[], address: string): Promise<number> {
  const ip = await resolveAddress(address);
  const log = virtctlLogger('portforward');
  const open: Array<{ close(): void }> = [];
  try {
    for (const p of ports) {
      const l = p.protocol === 'udp' ? await listenUdp(ctx, target, namespace, p, ip, log) : await listenTcp(ctx, target, namespace, p, ip, log);
      open.push(l);
      log.info(`forwarding ${p.protocol} ${ip}:${l.port} to ${p.remote}`);
    }
    await new Promise<void>((resolve) => {
      const on = () => { process.off('SIGINT', on); process.off('SIGTERM', on); resolve(); };
      process.on('SIGINT', on);
      process.on('SIGTERM', on);
    });
    return 0;
  } finally {
    for (const l of open) l.close();
  }
}

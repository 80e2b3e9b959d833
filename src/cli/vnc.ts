// `qvirt vnc VMI`: virtctl's VNC proxy. A local TCP listener (127.0.0.1 and a free port unless
// --address/--port say otherwise); every VNC client that connects gets its own upgraded stream to
// the VMI's VNC server through the node agent of the VMI's node. Without --proxy-only a VNC viewer
// (remote-viewer, vncviewer, or --vnc-path) is started on it and qvirt exits with it; with
// --proxy-only the port is printed as virtctl does (`{"port":N}`) and the proxy runs until Ctrl-C.
// `qvirt vnc screenshot` is vnc-screenshot.ts.
import net from 'node:net';
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { UsageError } from '../flags/flags.ts';
import { UserError } from '../kube/user-error.ts';
import { HandlerEndpoint } from '../kube/handler-endpoint.ts';
import { connect } from './kube-context.ts';
import { waitForRunningVmi } from './vm-console.ts';
import { parseVerb } from './verb.ts';

const VIEWERS: Record<string, string> = { 'remote-viewer': 'remote-viewer', tiger: 'vncviewer' };

function onPath(bin: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, bin);
    try { accessSync(p, constants.X_OK); return p; } catch { /* next */ }
  }
  return undefined;
}

/** The viewer to start: --vnc-path, else --vnc-type's binary, else the first of remote-viewer / vncviewer on PATH. */
export function findViewer(vncType: string | undefined, vncPath: string | undefined): string {
  if (vncPath) {
    try { accessSync(vncPath, constants.X_OK); } catch { throw new UserError(`--vnc-path: ${vncPath} is not an executable file`); }
    return vncPath;
  }
  if (vncType) {
    const bin = VIEWERS[vncType];
    if (!bin) throw new UsageError(`--vnc-type: "${vncType}" is not one of ${Object.keys(VIEWERS).join(', ')}`);
    const p = onPath(bin);
    if (!p) throw new UserError(`--vnc-type ${vncType}: ${bin} is not on PATH; install it, or use --proxy-only and connect any VNC viewer`);
    return p;
  }
  for (const bin of Object.values(VIEWERS)) { const p = onPath(bin); if (p) return p; }
  throw new UserError('no VNC viewer found (remote-viewer or vncviewer on PATH); install one, give --vnc-path, or use --proxy-only and connect any VNC viewer to the printed address');
}

export async function main(argv: string[]): Promise<number> {
  // virtctl's subcommand `vnc screenshot VMI -f FILE`; as with virtctl, the subcommand takes the word.
  if (argv[0] === 'screenshot') return (await import('./vnc-screenshot.ts')).main(argv.slice(1));
  const v = parseVerb({
    use: 'qvirt vnc (VMI) [--proxy-only] [--port N] [--address ADDR] [flags]\n       qvirt vnc screenshot (VMI) -f FILE',
    summary: 'Open a VNC connection to a virtual machine instance: a local listener proxied to the VM\'s display.',
    flags: {
      'proxy-only': { type: 'boolean', help: 'only run the proxy and print the port where VNC viewers can connect' },
      port: { type: 'number', value: 'N', default: 0, help: 'the local port (0: a free one)' },
      address: { type: 'string', value: 'ADDR', default: '127.0.0.1', help: 'the local address to listen on (only with --proxy-only)' },
      'vnc-type': { type: 'string', value: 'remote-viewer|tiger', help: 'the VNC viewer to start' },
      'vnc-path': { type: 'string', value: 'PATH', help: 'the VNC viewer executable to start' },
    },
    args: ['VMI'],
    examples: '  # Connect to \'testvmi\' with a VNC viewer:\n  qvirt vnc testvmi\n  # Only the proxy, for any VNC client:\n  qvirt vnc testvmi --proxy-only',
  }, argv);
  if (!v) return 0;
  const port = v.flags.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: must be 0..65535, got ${port}`);
  const proxyOnly = v.flags['proxy-only'];
  const address = proxyOnly ? (v.flags.address ?? '127.0.0.1') : '127.0.0.1';
  const viewer = proxyOnly ? undefined : findViewer(v.flags['vnc-type'], v.flags['vnc-path']);
  const name = v.args[0]!;
  const ctx = connect(v.flags);
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  try {
    const vmi = await waitForRunningVmi(ctx, name, 0, 'vnc');
    const ep = await HandlerEndpoint.forVmi(ctx, vmi);
    server = net.createServer((client) => {
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.pause();
      ep.stream('vnc').then((remote) => {
        client.pipe(remote);
        remote.pipe(client);
        client.resume();
        const end = () => { client.destroy(); remote.destroy(); };
        client.on('close', end);
        client.on('error', end);
        remote.on('close', end);
        remote.on('error', end);
      }, (err: Error) => {
        process.stderr.write(`Error: ${err.message}\n`);
        client.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', (err: NodeJS.ErrnoException) => reject(new UserError(`cannot listen on ${address}:${port}: ${err.code ?? err.message}${err.code === 'EADDRINUSE' ? '; choose another --port or 0 for a free one' : ''}`)));
      server!.listen(port, address, () => resolve());
    });
    const bound = (server.address() as net.AddressInfo).port;
    const host = address.includes(':') ? `[${address}]` : address;
    if (proxyOnly) process.stdout.write(`${JSON.stringify({ port: bound })}\n`);
    process.stdout.write(`vnc://${host}:${bound}\n`);
    if (viewer) {
      const child = spawn(viewer, [`vnc://${host}:${bound}`], { stdio: 'inherit' });
      const code = await new Promise<number>((resolve) => {
        child.once('error', (err) => { process.stderr.write(`Error: cannot start the VNC viewer ${viewer}: ${err.message}\n`); resolve(1); });
        child.once('exit', (c) => resolve(c ?? 1));
      });
      return code === 0 ? 0 : 1;
    }
    await new Promise<void>((resolve) => {
      const on = () => { process.off('SIGINT', on); process.off('SIGTERM', on); resolve(); };
      process.on('SIGINT', on);
      process.on('SIGTERM', on);
    });
    return 0;
  } finally {
    for (const s of sockets) s.destroy();
    server?.close();
    await ctx.client.close();
  }
}

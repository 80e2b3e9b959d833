// qvirt's port-forward, ssh, scp, expose, version and its kubectl-virt entry against the local mode
// with the test guest, which serves a TCP echo on 7777 and a UDP echo on 7: bytes both ways through
// `qvirt port-forward` (TCP — a line, a 1 MiB payload, two connections at once — and UDP,
// datagram boundaries kept), `--stdio`, a real ssh client carried by `qvirt ssh`'s ProxyCommand to
// the guest (its banner comes back through the echo), the ssh/scp command lines beside virtctl
// v1.9.0's, the Service `qvirt expose` creates beside virtctl's, the server version beside what
// virtctl prints, and the errors a user meets.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { Resources } from '../../src/kube/resource.ts';
import type { KubeObject } from '../../src/kube/client.ts';
import type { VirtualMachine } from '../../src/api/types.ts';
import { tcpEchoUserData, udpEchoUserData, UDP_ECHO_READY } from '../guest/udp-echo.ts';
import { guestVmi } from '../net/lib.ts';
import { virtctl } from '../lib/virtctl.ts';
import { tempDir } from '../lib/tmp.ts';
import { within } from '../lib/within.ts';
import { QVIRT, eventually, runningVmi, serialLog, startEnv, type Env } from './lib.ts';

let env!: Env;
const t = tempDir('qpfw');
test.before(async () => { env = await startEnv('qpf'); });
test.after(async () => { try { await env?.stop(); } finally { t.cleanup(); } });

const KUBECTL_VIRT = join(dirname(QVIRT), 'kubectl-virt');

interface Proc { readonly child: ChildProcess; out(): string; err(): string; readonly exit: Promise<number | null> }

/** `qvirt ARGS...` (or another program) as a long-running child with the local mode's kubeconfig; its own process group. */
function start(args: readonly string[], o: { bin?: string; env?: Record<string, string> } = {}): Proc {
  const child = spawn(o.bin ?? QVIRT, args, {
    env: { PATH: process.env.PATH ?? '', HOME: t.path, KUBECONFIG: env.local.kubeconfig, QVIRT_LOG_LEVEL: 'warn', ...o.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString('latin1'); });
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  const exit = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { child, out: () => out, err: () => err, exit };
}

/** Stops a child and everything it started (its process group), bounded. */
async function stop(p: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (p.child.exitCode === null && p.child.signalCode === null) {
    try { process.kill(-p.child.pid!, signal); } catch { /* gone */ }
  }
  const code = await within(p.exit, 20_000, `${p.child.spawnargs.join(' ')} to exit`).catch(() => { try { process.kill(-p.child.pid!, 'SIGKILL'); } catch { /* gone */ } return -1; });
  try { process.kill(-p.child.pid!, 'SIGKILL'); } catch { /* the group is gone */ }
  return code;
}

/** The local port a `forwarding PROTO ADDR:PORT to N` log line names. */
function forwardedPort(p: Proc, proto: 'tcp' | 'udp', remote: number): Promise<number> {
  return eventually(() => {
    const m = new RegExp(`"msg":"forwarding ${proto} 127\\.0\\.0\\.1:(\\d+) to ${remote}"`).exec(p.err());
    return m ? Number(m[1]) : undefined;
  }, 30_000, `qvirt port-forward listening for ${proto} ${remote} (stderr: ${p.err()})`);
}

/** Writes `payload` to a TCP connection to `port` and reads as many bytes back. */
function tcpEcho(port: number, payload: Buffer): Promise<Buffer> {
  return within(new Promise<Buffer>((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let got = 0;
    s.on('data', (d: Buffer) => { chunks.push(d); got += d.length; if (got >= payload.length) { s.destroy(); resolve(Buffer.concat(chunks)); } });
    s.on('error', reject);
    s.on('close', () => reject(new Error(`the connection closed after ${got} of ${payload.length} bytes`)));
    s.write(payload);
  }), 120_000, `the echo of ${payload.length} bytes through local port ${port}`);
}

/** Sends datagrams to `port` from one socket; resolves with what came back once every one did. */
function udpEcho(port: number, datagrams: readonly Buffer[]): Promise<Buffer[]> {
  const sock = dgram.createSocket('udp4');
  const back: Buffer[] = [];
  return within(new Promise<Buffer[]>((resolve) => {
    sock.on('message', (m) => { back.push(m); if (back.length === datagrams.length) resolve(back); });
    for (const d of datagrams) sock.send(d, port, '127.0.0.1');
  }), 30_000, `${datagrams.length} datagrams echoed through local udp port ${port}`).finally(() => sock.close());
}

test('the guest runs its echo servers', async () => {
  const vmi = guestVmi('pf', { masquerade: {} }, [tcpEchoUserData(7777), udpEchoUserData(7)].join('\n'));
  const vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'pf', namespace: 'default' }, spec: { runStrategy: 'Always', template: { metadata: { labels: { 'kubevirt.io/vm': 'pf' } }, spec: vmi.spec } } } as VirtualMachine;
  await env.local.client.create(Resources.virtualMachines, vm);
  const running = await runningVmi(env, 'pf', [], 240_000);
  await eventually(() => serialLog(env, running.metadata!.uid!).includes(UDP_ECHO_READY), 240_000, 'the guest\'s UDP echo server');
});

test('port-forward: TCP and UDP both ways, as virtctl logs it; SIGINT ends it', async () => {
  const pf = start(['port-forward', 'vmi/pf', '0:7777', 'udp/0:7']);
  try {
    const tcp = await forwardedPort(pf, 'tcp', 7777);
    const udp = await forwardedPort(pf, 'udp', 7);
    // The guest's echo comes up with the guest: retry the first line until it answers.
    const hello = await eventually(() => tcpEcho(tcp, Buffer.from('hello through qvirt port-forward\n')).catch(() => undefined), 120_000, 'the first echo');
    assert.is(hello.toString(), 'hello through qvirt port-forward\n');
    const big = randomBytes(1024 * 1024);
    const [a, b] = await Promise.all([tcpEcho(tcp, big), tcpEcho(tcp, Buffer.from('second connection at once\n'))]);
    assert.ok(a.equals(big), '1 MiB echoed unchanged');
    assert.is(b.toString(), 'second connection at once\n');
    const sent = [Buffer.from('one'), randomBytes(1200), Buffer.from('three')];
    const back = await udpEcho(udp, sent);
    for (const d of sent) assert.ok(back.some((x) => x.equals(d)), `the ${d.length}-byte datagram came back whole`);
    const lines = pf.err().trim().split('\n').map((l) => JSON.parse(l) as { component: string; level: string; msg: string });
    assert.ok(lines.every((l) => l.component === 'portforward'));
    const msgs = lines.map((l) => l.msg);
    assert.ok(msgs.includes('opening new tcp tunnel to 7777'), msgs.join('\n'));
    assert.ok(msgs.includes(`handling tcp connection for ${tcp}`), msgs.join('\n'));
    assert.ok(msgs.includes('opening new udp tunnel to 7'), msgs.join('\n'));
    assert.is(pf.out(), '', 'nothing on stdout');
  } finally {
    assert.is(await stop(pf, 'SIGINT'), 0);
  }
});

test('port-forward --stdio: the guest\'s port on stdin/stdout (vm/NAME/NAMESPACE, as ssh runs it)', async () => {
  const p = start(['port-forward', '--stdio=true', 'vm/pf/default', '7777']);
  try {
    p.child.stdin!.write('through stdio\n');
    await eventually(() => p.out().includes('through stdio\n'), 30_000, `the echo on stdout (stderr: ${p.err()})`);
    p.child.stdin!.end();
    assert.is(await within(p.exit, 20_000, 'port-forward --stdio to exit after stdin closed'), 0);
    assert.is(p.err(), '', 'nothing logged in --stdio mode');
  } finally {
    await stop(p);
  }
});

test('port-forward errors: a missing VMI, a dotted name, a closed guest port, a bad port, two ports with --stdio', async () => {
  let r = await env.qvirt('port-forward', '--stdio=true', 'vmi/nosuch', '22');
  assert.is(r.code, 1);
  assert.is(r.err, 'Error: VirtualMachineInstance "nosuch" not found in namespace "default"\n');
  r = await env.qvirt('port-forward', '--stdio=true', 'vm/pf.default', '22');
  assert.is(r.err, 'Error: VirtualMachine "pf.default" not found in namespace "default"; the old TYPE/NAME.NAMESPACE form is gone (a dot is part of the name): did you mean vm/pf/default?\n');
  r = await env.qvirt('port-forward', '--stdio=true', 'vmi/pf', '23');
  assert.is(r.code, 1);
  assert.match(r.err, /^Error: cannot open the portforward\/23\/tcp of VirtualMachineInstance "pf" in namespace "default": .*port 23/);
  r = await env.qvirt('port-forward', 'vmi/pf', 'sctp/80');
  assert.is(r.code, 2);
  assert.match(r.err, /unknown protocol: sctp/);
  r = await env.qvirt('port-forward', '--stdio', 'vmi/pf', '1', '2');
  assert.is(r.code, 2);
  assert.match(r.err, /only one port supported when forwarding to stdout/);
  r = await env.qvirt('port-forward', 'vmi/pf');
  assert.is(r.code, 2);
  r = await env.qvirt('port-forward', '--help');
  assert.is(r.code, 0);
  assert.match(r.out, /\[protocol\/\]localPort:targetPort|protocol\/localPort:targetPort/);

  // Listening for a VMI that is not there: each connection is closed and the reason logged (virtctl's line).
  const pf = start(['port-forward', 'vmi/nosuch', '0:80']);
  try {
    const port = await forwardedPort(pf, 'tcp', 80);
    const closed = await within(new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.on('close', () => resolve(true));
    }), 30_000, 'the connection to be closed');
    assert.ok(closed);
    await eventually(() => pf.err().includes('"level":"error","msg":"can\'t access vmi/nosuch.default: VirtualMachineInstance \\"nosuch\\" not found in namespace \\"default\\""'), 10_000, `the error logged (${pf.err()})`);
  } finally {
    assert.is(await stop(pf), 0);
  }
});

/** A stand-in for ssh/scp on PATH that prints its arguments, one per line. */
function fakeClients(): string {
  const dir = join(t.path, 'fake-bin');
  mkdirSync(dir, { recursive: true });
  for (const name of ['ssh', 'scp']) {
    writeFileSync(join(dir, name), '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n');
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

test('ssh and scp: the command lines virtctl v1.9.0 runs, with qvirt in the ProxyCommand', async () => {
  const fake = fakeClients();
  const path = `${fake}:${process.env.PATH ?? ''}`;
  const kc = env.local.kubeconfig;
  const cases: string[][] = [
    ['ssh', 'vmi/pf'],
    ['-n', 'other', 'ssh', 'root@vm/pf', '-i', '/k', '-p', '2222', '-t', '-o StrictHostKeyChecking=no', '-t', '-v', '-c', 'ls /'],
    ['scp', '-r', '--preserve', 'a.txt', 'vmi/pf/ns2:/tmp/b'],
    ['scp', '-l', 'bob', 'vmi/pf:/tmp/b', './c'],
  ];
  for (const args of cases) {
    const envs = { PATH: path, USER: 'jdoe' };
    const mine = start(['--kubeconfig', kc, ...args], { env: envs });
    const theirs = await virtctl(kc, args, { env: envs });
    assert.is(await within(mine.exit, 30_000, `qvirt ${args.join(' ')}`), 0, mine.err());
    assert.is(theirs.code, 0, theirs.err);
    const norm = (s: string) => s.replace(/^ProxyCommand=\S+ port-forward --stdio=true (--kubeconfig=\S+ )?/m, 'ProxyCommand=PROGRAM port-forward --stdio=true ');
    assert.is(norm(mine.out()), norm(theirs.out), `qvirt ${args.join(' ')}`);
    assert.match(mine.out(), new RegExp(`^ProxyCommand=${QVIRT.replace(/[.]/g, '\\.')} port-forward --stdio=true --kubeconfig=${kc.replace(/[.]/g, '\\.')} `, 'm'));
  }
  // As the kubectl plugin, kubectl-virt is what the ProxyCommand runs.
  const plugin = start(['virt', 'ssh', 'vmi/pf'], { bin: 'kubectl', env: { PATH: `${fake}:${dirname(QVIRT)}:${process.env.PATH ?? ''}`, USER: 'jdoe' } });
  assert.is(await within(plugin.exit, 30_000, 'kubectl virt ssh'), 0, plugin.err());
  assert.equal(plugin.out().split('\n'), ['-o', `ProxyCommand=${KUBECTL_VIRT} port-forward --stdio=true vmi/pf/default 22`, 'jdoe@vmi.pf.default', '']);

  const r = await env.qvirt('scp', 'a', 'b');
  assert.is(r.code, 2);
  assert.match(r.err, /none of the two provided locations seems to be a remote location: "a" to "b"/);
  // A PATH with what bin/qvirt itself needs, and no ssh.
  const bare = join(t.path, 'bare-bin');
  mkdirSync(bare, { recursive: true });
  for (const tool of ['bash', 'readlink', 'dirname']) symlinkSync(execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), join(bare, tool));
  const noSsh = start(['ssh', 'vmi/pf'], { env: { PATH: bare } });
  assert.is(await within(noSsh.exit, 30_000, 'qvirt ssh without ssh'), 1);
  assert.match(noSsh.err(), /exec: "ssh": executable file not found in \$PATH; install the OpenSSH client/);
});

test('ssh: a real ssh client reaches the guest through qvirt\'s ProxyCommand (its banner comes back from the echo)', async () => {
  const p = start(['ssh', '-p', '7777', '-l', 'nobody', '-t', '-v', '-t', '-o BatchMode=yes', '-t', '-o StrictHostKeyChecking=no', '-t', '-o UserKnownHostsFile=/dev/null', 'vmi/pf']);
  try {
    // The echo returns ssh's own identification string: the server ssh talks to through
    // `qvirt port-forward --stdio` is the guest's port 7777.
    await eventually(() => /debug1: Remote protocol version 2\.0, remote software version OpenSSH/.test(p.err()), 60_000, `ssh's banner back through the guest (stderr: ${p.err()})`);
    // No --kubeconfig given (KUBECONFIG is in the environment the ProxyCommand inherits): none added.
    assert.match(p.err(), /debug1: Executing proxy command: exec \S+\/bin\/qvirt port-forward --stdio=true vmi\/pf\/default 7777\r?\n/);
  } finally {
    await stop(p);
  }
});

test('expose: the Service virtctl creates, for a VM and a VMI; and the refusals', async () => {
  const pick = async (name: string) => {
    const s = await env.local.client.get<KubeObject & { spec?: unknown }>(Resources.services, 'default', name);
    return { owners: s.metadata?.ownerReferences, spec: s.spec };
  };
  const variants: string[][] = [
    ['vm', 'pf', '--port', '22'],
    ['vmi', 'pf', '--port', '80', '--target-port', 'http', '--type', 'nodeport', '--protocol', 'udp', '--port-name', 'web', '--ip-family', 'ipv4,ipv6', '--external-ip', '1.2.3.4', '--cluster-ip', 'None'],
    ['virtualmachine', 'pf', '--port', '8080', '--target-port', '80', '--type', 'LoadBalancer', '--ip-family-policy', 'SingleStack'],
  ];
  for (const [i, args] of variants.entries()) {
    const r = await env.qvirt('expose', ...args, '--name', `q${i}`);
    assert.is(r.code, 0, r.err);
    assert.is(r.out, `Service q${i} successfully created for ${args[0]} pf\n`);
    const v = await virtctl(env.local.kubeconfig, ['expose', ...args, '--name', `v${i}`]);
    assert.is(v.code, 0, v.err);
    assert.is(v.out, `Service v${i} successfully created for ${args[0]} pf\n`);
    assert.equal(await pick(`q${i}`), await pick(`v${i}`), `qvirt expose ${args.join(' ')} creates what virtctl creates`);
  }
  assert.equal((await pick('q0')).spec, { ports: [{ port: 22, protocol: 'TCP', targetPort: '' }], selector: { 'vmi.kubevirt.io/id': 'pf' }, type: 'ClusterIP' });

  let r = await env.qvirt('expose', 'vm', 'pf', '--name', 'q0', '--port', '22');
  assert.is(r.code, 1);
  assert.is(r.err, 'Error: service creation failed: services "q0" already exists; choose another --name, or delete it first (kubectl delete service q0 -n default)\n');
  r = await env.qvirt('expose', 'vm', 'pf', '--name', 'q9');
  assert.is(r.code, 1);
  assert.match(r.err, /couldn't find port via --port flag or introspection/);
  r = await env.qvirt('expose', 'vm', 'nosuch', '--name', 'q9', '--port', '1');
  assert.is(r.err, 'Error: VirtualMachine "nosuch" not found in namespace "default"\n');
  r = await env.qvirt('expose', 'vm', 'pf', '--port', '22');
  assert.is(r.code, 2);
  assert.match(r.err, /required flag\(s\) "name" not set/);
  r = await env.qvirt('expose', 'pod', 'pf', '--name', 'q9', '--port', '1');
  assert.is(r.code, 2);
  assert.match(r.err, /unsupported resource type: pod/);
});

test('version: the client, and the server\'s as virtctl prints it; kubectl virt answers too', async () => {
  const r = await env.qvirt('version');
  assert.is(r.code, 0, r.err);
  const v = await virtctl(env.local.kubeconfig, ['version']);
  const server = /^Server Version: .*$/m.exec(v.out)?.[0];
  assert.ok(server, v.out);
  assert.match(r.out, /^qvirt \d+\.\d+\.\d+\nnode v\d+/);
  assert.match(r.out, /\nClient Version: version\.Info\{GitVersion:"v\d+\.\d+\.\d+", .*Compiler:"node", Platform:"linux\/amd64"\}\n/);
  assert.ok(r.out.endsWith(`\n${server}\n`), `qvirt's Server Version line is virtctl's:\n${r.out}`);
  const c = await env.qvirt('version', '--client');
  assert.ok(!c.out.includes('Server Version'));
  const bad = await env.qvirt('version', '--kubeconfig', join(t.path, 'nosuch'));
  assert.is(bad.code, 1);

  const plugin = start(['virt', 'version'], { bin: 'kubectl', env: { PATH: `${dirname(QVIRT)}:${process.env.PATH ?? ''}` } });
  assert.is(await within(plugin.exit, 30_000, 'kubectl virt version'), 0, plugin.err());
  assert.ok(plugin.out().endsWith(`\n${server}\n`), plugin.out());
  const plugin2 = start(['virt', '-n', 'default', 'expose', 'vm', 'pf', '--name', 'via-kubectl', '--port', '80'], { bin: 'kubectl', env: { PATH: `${dirname(QVIRT)}:${process.env.PATH ?? ''}` } });
  assert.is(await within(plugin2.exit, 30_000, 'kubectl virt expose'), 0, plugin2.err());
  assert.is(plugin2.out(), 'Service via-kubectl successfully created for vm pf\n');
});

test.run();

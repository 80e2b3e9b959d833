// The native migration relay's pure parts: socat command lines (TLS with the handler CN check, plain
// TCP, IPv6, the multifd gate's retry, refused characters) and the meaning of socat's log lines.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSocatLine, SocatArgumentError, sourceChannelArgs, targetListenerArgs } from '../../handler/migration/socat-args.ts';
import { withParentDeathSignal as guarded } from '../../src/process/parent-death.ts';

const withParentDeathSignal = (setpriv: string | undefined, socat: string, args: string[]) => { const c = guarded({ setpriv, shell: undefined }, 1, socat, args); return { file: c.file, args: c.args }; };

const files = { ca: '/tmp/qvirt-relay-a/ca.crt', cert: '/tmp/qvirt-relay-a/tls.crt', key: '/tmp/qvirt-relay-a/tls.key', peerCommonName: 'kubevirt.io:system:node:virt-handler' };
const tlsOpts = 'cert=/tmp/qvirt-relay-a/tls.crt,key=/tmp/qvirt-relay-a/tls.key,cafile=/tmp/qvirt-relay-a/ca.crt,verify=1,commonname=kubevirt.io:system:node:virt-handler,min-version=TLS1.2';

test('targetListenerArgs: TLS or TCP, IPv4 or IPv6, gated or not', () => {
  const rows: [string, Parameters<typeof targetListenerArgs>[0], string, string][] = [
    ['TLS main', { address: '10.0.0.5', forwardTo: '/run/q/mig.sock', tls: files, gated: false },
      `OPENSSL-LISTEN:0,bind=10.0.0.5,reuseaddr,fork,backlog=128,nodelay,${tlsOpts}`, 'UNIX-CONNECT:/run/q/mig.sock'],
    ['TLS multifd (gated)', { address: '10.0.0.5', forwardTo: '/tmp/qvirt-relay-a/multifd.sock', tls: files, gated: true },
      `OPENSSL-LISTEN:0,bind=10.0.0.5,reuseaddr,fork,backlog=128,nodelay,${tlsOpts}`, 'UNIX-CONNECT:/tmp/qvirt-relay-a/multifd.sock,retry=60000,interval=0.001'],
    ['plain TCP', { address: '127.0.0.1', forwardTo: '/run/q/mig.sock', tls: undefined, gated: false },
      'TCP-LISTEN:0,bind=127.0.0.1,reuseaddr,fork,backlog=128,nodelay', 'UNIX-CONNECT:/run/q/mig.sock'],
    ['IPv6', { address: 'fd00::5', forwardTo: '/run/q/mig.sock', tls: undefined, gated: false },
      'TCP-LISTEN:0,bind=[fd00::5],pf=ip6,reuseaddr,fork,backlog=128,nodelay', 'UNIX-CONNECT:/run/q/mig.sock'],
  ];
  for (const [what, o, listen, forward] of rows) assert.equal(targetListenerArgs(o), ['-d', '-d', '-b', '1048576', listen, forward], what);
});

test('sourceChannelArgs: fd 3 to the target, TLS or TCP', () => {
  assert.equal(sourceChannelArgs({ host: '10.0.0.6', port: 40001, tls: files }), ['-d', '-d', '-b', '1048576', 'FD:3', `OPENSSL:10.0.0.6:40001,nodelay,${tlsOpts}`]);
  assert.equal(sourceChannelArgs({ host: 'fd00::6', port: 40001, tls: undefined }), ['-d', '-d', '-b', '1048576', 'FD:3', 'TCP:[fd00::6]:40001,nodelay']);
});

test('withParentDeathSignal: setpriv --pdeathsig KILL execs socat; without setpriv, socat itself', () => {
  assert.equal(withParentDeathSignal('/usr/bin/setpriv', '/usr/bin/socat', ['-d', 'FD:3', 'TCP:10.0.0.6:1']), { file: '/usr/bin/setpriv', args: ['--pdeathsig', 'KILL', '--', '/usr/bin/socat', '-d', 'FD:3', 'TCP:10.0.0.6:1'] });
  assert.equal(withParentDeathSignal(undefined, '/usr/bin/socat', ['-d', 'FD:3']), { file: '/usr/bin/socat', args: ['-d', 'FD:3'] });
});

test('arguments socat would parse differently are refused with the field named', () => {
  const rows: [string, () => unknown, string][] = [
    ['comma in a path', () => targetListenerArgs({ address: '10.0.0.5', forwardTo: '/run/a,b/mig.sock', tls: undefined, gated: false }), 'forward socket'],
    ['colon in a key path', () => targetListenerArgs({ address: '10.0.0.5', forwardTo: '/run/mig.sock', tls: { ...files, key: '/tmp/a:b' }, gated: false }), 'key path'],
    ['comma in the CN', () => sourceChannelArgs({ host: '10.0.0.6', port: 1, tls: { ...files, peerCommonName: 'a,verify=0' } }), 'peer common name'],
    ['a host name', () => sourceChannelArgs({ host: 'evil,fork', port: 1, tls: undefined }), 'target address'],
    ['a listen address with options', () => targetListenerArgs({ address: '0.0.0.0,fork', forwardTo: '/x', tls: undefined, gated: false }), 'listen address'],
    ['port 0', () => sourceChannelArgs({ host: '10.0.0.6', port: 0, tls: undefined }), 'target port 0'],
    ['port too big', () => sourceChannelArgs({ host: '10.0.0.6', port: 70000, tls: undefined }), 'target port 70000'],
  ];
  for (const [what, f, field] of rows) {
    try {
      f();
      assert.unreachable(what);
    } catch (err) {
      assert.instance(err, SocatArgumentError, what);
      assert.match((err as Error).message, field, what);
    }
  }
});

test('parseSocatLine: listening port, connects, transfer, refusals, errors', () => {
  const at = '2026/11/22 01:51:43 ';
  const rows: [string, ReturnType<typeof parseSocatLine>][] = [
    [`${at}socat[22944] N listening on AF=2 127.0.0.1:35029`, { kind: 'listening', pid: 22944, port: 35029 }],
    [`${at}socat[22944] N listening on AF=10 [0000:0000:0000:0000:0000:0000:0000:0001]:41000`, { kind: 'listening', pid: 22944, port: 41000 }],
    [`${at}socat[23080] N successfully connected from local address AF=1 "\\x131\\xB@U"`, { kind: 'connected', pid: 23080, to: 'unix' }],
    [`${at}socat[23078] N successfully connected from local address AF=2 127.0.0.1:35364`, { kind: 'connected', pid: 23078, to: 'tcp' }],
    [`${at}socat[23080] N starting data transfer loop with FDs [7,7] and [6,6]`, { kind: 'transfer', pid: 23080 }],
    [`${at}socat[12373] E certificate is valid but its commonName does not match hostname "kubevirt.io:system:node:virt-handler"`, { kind: 'rejected', pid: 12373, message: 'certificate is valid but its commonName does not match hostname "kubevirt.io:system:node:virt-handler"' }],
    [`${at}socat[1] E SSL_accept(): error:0A000086:SSL routines::certificate verify failed`, { kind: 'rejected', pid: 1, message: 'SSL_accept(): error:0A000086:SSL routines::certificate verify failed' }],
    [`${at}socat[2] E connect(6, AF=1 "/x", 4): Connection refused`, { kind: 'error', pid: 2, message: 'connect(6, AF=1 "/x", 4): Connection refused' }],
    [`${at}socat[2] N forked off child process 23080`, { kind: 'other' }],
    ['garbage', { kind: 'other' }],
  ];
  for (const [line, want] of rows) assert.equal(parseSocatLine(line), want, line);
});

test.run();

// The local ssh/scp command lines of `qvirt ssh`/`qvirt scp`: virtctl v1.9.0's (pkg/virtctl/ssh
// LocalClientCmd, BuildSSHTarget; pkg/virtctl/scp BuildSCPTarget, ParseTarget), plus what qvirt
// adds: the --kubeconfig it was given inside the ProxyCommand, -o UserKnownHostsFile for
// --known-hosts, shell quoting and ssh's '%' escape.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UsageError } from '../../src/flags/flags.ts';
import { defaultUsername, parseScpLocations, proxyCommandOption, scpArgs, shellWord, sshArgs, type SshOptions } from '../../src/cli/ssh-command.ts';

const P = { program: '/usr/local/bin/virtctl' };
const opts = (o: Partial<SshOptions> = {}): SshOptions => ({ port: 22, username: '', localSshOpts: [], ...o });
const t = { kind: 'vmi', name: 'testvmi', namespace: 'ns' };

const sshCases: Array<[string, Parameters<typeof sshArgs>, string[]]> = [
  // virtctl's own output for `virtctl ssh vmi/testvmi/ns` (USER unset).
  ['bare', [P, t, opts(), undefined], ['-o', 'ProxyCommand=/usr/local/bin/virtctl port-forward --stdio=true vmi/testvmi/ns 22', 'vmi.testvmi.ns']],
  // `virtctl -n foo ssh root@vm/vm1 -i /k -p 2222 -t "-o StrictHostKeyChecking=no" -t -v -c 'ls /'`
  ['all of virtctl\'s flags', [P, { kind: 'vm', name: 'vm1', namespace: 'foo' }, opts({ port: 2222, username: 'root', identityFile: '/k', localSshOpts: ['-o StrictHostKeyChecking=no', '-v'] }), 'ls /'],
    ['-o', 'ProxyCommand=/usr/local/bin/virtctl port-forward --stdio=true vm/vm1/foo 2222', '-o StrictHostKeyChecking=no', '-v', '-i', '/k', 'root@vm.vm1.foo', 'ls /']],
  ['--kubeconfig travels into the ProxyCommand', [{ program: '/opt/qvirt/bin/qvirt', kubeconfig: '/home/u/kc' }, t, opts({ username: 'jdoe' }), undefined],
    ['-o', 'ProxyCommand=/opt/qvirt/bin/qvirt port-forward --stdio=true --kubeconfig=/home/u/kc vmi/testvmi/ns 22', 'jdoe@vmi.testvmi.ns']],
  ['--known-hosts', [P, t, opts({ knownHosts: '/h/.ssh/kubevirt_known_hosts' }), undefined],
    ['-o', 'ProxyCommand=/usr/local/bin/virtctl port-forward --stdio=true vmi/testvmi/ns 22', '-o', 'UserKnownHostsFile=/h/.ssh/kubevirt_known_hosts', 'vmi.testvmi.ns']],
  ['a program path with a space and a %', [{ program: '/my tools/100%/qvirt' }, t, opts(), undefined],
    ['-o', "ProxyCommand='/my tools/100%%/qvirt' port-forward --stdio=true vmi/testvmi/ns 22", 'vmi.testvmi.ns']],
];
for (const [what, args, want] of sshCases) test(`sshArgs: ${what}`, () => assert.equal(sshArgs(...args), want));

test('scp: to and from the VM, -r and -p, the user from the location', () => {
  // `virtctl scp -r --preserve a.txt vmi/vm1/ns2:/tmp/b` (USER unset)
  let loc = parseScpLocations('a.txt', 'vmi/vm1/ns2:/tmp/b');
  assert.equal(loc, { local: 'a.txt', remote: { target: { kind: 'vmi', name: 'vm1', namespace: 'ns2' }, path: '/tmp/b' }, toRemote: true });
  assert.equal(scpArgs(P, { kind: 'vmi', name: 'vm1', namespace: 'ns2' }, opts(), { local: loc.local, remotePath: loc.remote.path, toRemote: true }, { recursive: true, preserve: true }),
    ['-o', 'ProxyCommand=/usr/local/bin/virtctl port-forward --stdio=true vmi/vm1/ns2 22', '-r', '-p', 'a.txt', 'vmi.vm1.ns2:/tmp/b']);
  // `virtctl scp -l bob vmi/vm1:/tmp/b ./c`
  loc = parseScpLocations('vmi/vm1:/tmp/b', './c');
  assert.is(loc.toRemote, false);
  assert.equal(scpArgs(P, { kind: 'vmi', name: 'vm1', namespace: 'default' }, opts({ username: 'bob' }), { local: './c', remotePath: '/tmp/b', toRemote: false }, { recursive: false, preserve: false }),
    ['-o', 'ProxyCommand=/usr/local/bin/virtctl port-forward --stdio=true vmi/vm1/default 22', 'bob@vmi.vm1.default:/tmp/b', './c']);
  loc = parseScpLocations('jdoe@vm/x:a:b', '.');
  assert.equal(loc.remote, { target: { kind: 'vm', name: 'x' }, username: 'jdoe', path: 'a:b' });
});

const scpBad: Array<[string, string, RegExp]> = [
  ['vmi/vm1:/tmp/b', 'vmi/x:c', /^copying from a remote location to another remote location is not supported: "vmi\/vm1:\/tmp\/b" to "vmi\/x:c"/],
  ['a', 'b', /^none of the two provided locations seems to be a remote location: "a" to "b"/],
  ['a', 'pod/x:c', /^unsupported resource type 'pod'/],
  ['a', '@vmi/x:c', /^expected username before '@'/],
];
for (const [src, dst, re] of scpBad) {
  test(`parseScpLocations(${src}, ${dst}) refused`, () => assert.throws(() => parseScpLocations(src, dst), (e: Error) => e instanceof UsageError && re.test(e.message)));
}

test('defaultUsername: $USER, $USERNAME, $LOGNAME, else none', () => {
  assert.is(defaultUsername({ USER: 'a', USERNAME: 'b', LOGNAME: 'c' }), 'a');
  assert.is(defaultUsername({ USER: '', USERNAME: 'b', LOGNAME: 'c' }), 'b');
  assert.is(defaultUsername({ LOGNAME: 'c' }), 'c');
  assert.is(defaultUsername({}), '');
});

test('shellWord and the ProxyCommand option', () => {
  assert.is(shellWord('/usr/bin/qvirt'), '/usr/bin/qvirt');
  assert.is(shellWord('--kubeconfig=/a b'), "'--kubeconfig=/a b'");
  assert.is(shellWord("it's"), "'it'\\''s'");
  assert.is(shellWord(''), "''");
  assert.is(proxyCommandOption({ program: 'kubectl-virt' }, 'vm', 'ns', 'n', 22), 'ProxyCommand=kubectl-virt port-forward --stdio=true vm/n/ns 22');
});

test.run();

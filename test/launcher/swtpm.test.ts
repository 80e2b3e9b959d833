// swtpm's command line (launcher/tpm/swtpm.ts), pure: a TPM 2.0 with its state and control socket
// where the plan says, ending with QEMU's connection; a path swtpm's option syntax cannot carry is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { swtpmArgs } from '../../launcher/tpm/swtpm.ts';

test('swtpmArgs: TPM 2.0, state and control socket 0600, --terminate, errors only', () => {
  assert.equal(swtpmArgs({ socket: '/run/p/uid/swtpm-sock', stateDir: '/run/p/uid/swtpm' }), [
    'socket', '--tpm2',
    '--tpmstate', 'dir=/run/p/uid/swtpm,mode=0600',
    '--ctrl', 'type=unixio,path=/run/p/uid/swtpm-sock,mode=0600',
    '--terminate',
    '--log', 'level=1',
  ]);
});

for (const [what, plan] of [
  ['a comma in the socket path', { socket: '/run/a,b/swtpm-sock', stateDir: '/run/p/swtpm' }],
  ['an equals sign in the state directory', { socket: '/run/p/swtpm-sock', stateDir: '/run/x=y/swtpm' }],
] as const) {
  test(`swtpmArgs refuses ${what}`, () => {
    assert.throws(() => swtpmArgs(plan), /swtpm's options cannot carry/);
  });
}

test.run();

// Global flags before the verb (`kubectl virt -n ns start vm`) move right after it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hoistGlobalFlags } from '../../src/cli/global-flags.ts';

const cases: Array<[string[], string[]]> = [
  [['start', 'vm1'], ['start', 'vm1']],
  [['-n', 'ns', 'start', 'vm1'], ['start', '-n', 'ns', 'vm1']],
  [['--kubeconfig', '/k', '--namespace=ns', 'ssh', 'vmi/x', '--', 'x'], ['ssh', '--kubeconfig', '/k', '--namespace=ns', 'vmi/x', '--', 'x']],
  [['--kubeconfig=/k', 'pause', 'vm', 'x'], ['pause', '--kubeconfig=/k', 'vm', 'x']],
  // Nothing to move, no verb after them, or another flag first: unchanged.
  [['--help'], ['--help']],
  [['-n', 'ns'], ['-n', 'ns']],
  [['-n'], ['-n']],
  [['-n', 'ns', '--help'], ['-n', 'ns', '--help']],
  [[], []],
];
for (const [argv, want] of cases) test(argv.join(' ') || '(none)', () => assert.equal(hoistGlobalFlags(argv), want));

test.run();

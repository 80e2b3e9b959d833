// The failure reason of a migration QEMU failed (launcher/migration/migration-error.ts): QEMU's
// error-desc, else what it wrote to stderr about it (QEMU 7.2 sets no error-desc when the target
// refuses the stream over the return path).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { migrationFailureReason } from '../../launcher/migration/migration-error.ts';

const cases: Array<[string, string | undefined, string, string]> = [
  ['error-desc wins', 'Unable to write to socket: Broken pipe', 'qemu-system-x86_64: something else', 'Unable to write to socket: Broken pipe'],
  ['error-desc trimmed', '  Connection reset by peer\n', '', 'Connection reset by peer'],
  ['the return path\'s refusal, from stderr', undefined, 'qemu-system-x86_64: RP: Sibling indicated error 1\n', 'QEMU reported the migration failed: qemu-system-x86_64: RP: Sibling indicated error 1'],
  ['an empty error-desc counts as none', '', 'qemu-system-x86_64: RP: Sibling indicated error 1', 'QEMU reported the migration failed: qemu-system-x86_64: RP: Sibling indicated error 1'],
  ['the last three lines, blank ones dropped', undefined, 'a\n\nb\nc\n  \nd\n', 'QEMU reported the migration failed: b; c; d'],
  ['nothing at all', undefined, '', 'QEMU reported the migration failed without a reason (the target\'s launcher log may have one)'],
  ['only blank lines', undefined, '\n \n', 'QEMU reported the migration failed without a reason (the target\'s launcher log may have one)'],
];
for (const [name, desc, stderr, want] of cases) {
  test(`migrationFailureReason: ${name}`, () => assert.is(migrationFailureReason(desc, stderr), want));
}

test.run();

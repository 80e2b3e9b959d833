// handler/status.ts pausedCondition: the VMI's Paused condition, which is also what the node agent's
// pause endpoint answers 409 "already paused" for (handler/endpoint/server.ts). A domain paused for
// any other reason (QEMU's -S start not yet continued, a migration) is not "already paused".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pausedCondition } from '../../handler/status.ts';
import type { Domain } from '../../src/api/domain/domain.ts';

const domain = (status: string, reason: string) => ({ Status: { Status: status, Reason: reason } }) as unknown as Domain;
const cases: Array<[string, Domain | undefined, string | undefined]> = [
  ['paused by its user', domain('Paused', 'User'), 'PausedByUser'],
  ['paused on an I/O error', domain('Paused', 'IOError'), 'PausedIOError'],
  ['paused while starting up (-S, not yet continued)', domain('Paused', 'StartingUp'), undefined],
  ['paused by a migration', domain('Paused', 'Migration'), undefined],
  ['running', domain('Running', 'Unknown'), undefined],
  ['no domain', undefined, undefined],
];
for (const [name, d, want] of cases) {
  test(`pausedCondition: ${name} → ${want ?? 'none'}`, () => {
    const c = pausedCondition(d);
    assert.is(c?.reason, want);
    if (want) assert.equal([c?.type, c?.status], ['Paused', 'True']);
  });
}

test.run();

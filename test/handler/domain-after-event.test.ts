// What a launcher's domain event leaves in the node agent's cache: a deletion keeps the state the
// domain ended in, so the VMI's phase is read from it (the ev-watchdog VMI went Failed, "crashed",
// after its guest powered off: the deletion, coalesced with Shutoff/Shutdown, had erased it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import type { Domain } from '../../src/api/domain/domain.ts';
import { domainAfterEvent } from '../../handler/launcher/domain-cache.ts';
import { phaseFromDomain } from '../../handler/phase-from-domain.ts';

const dom = (status: string, reason: string, deleted = false): Domain => decodeDomain(JSON.stringify({
  ObjectMeta: { name: 'v', namespace: 'ns', ...(deleted ? { deletionTimestamp: '2026-11-27T00:07:10Z' } : {}) },
  Spec: { Metadata: { KubeVirt: { UID: 'u1' } } },
  Status: { Status: status, Reason: reason },
}));

const table: [string, Domain | undefined, Domain, [string, string, boolean]][] = [
  ['a guest power-off, then the launcher\'s deletion: Shutoff/Shutdown stays', dom('Shutoff', 'Shutdown'), dom('NoState', 'NonExistent', true), ['Shutoff', 'Shutdown', true]],
  ['destroyed, then deleted: Shutoff/Destroyed stays', dom('Shutoff', 'Destroyed'), dom('NoState', 'NonExistent', true), ['Shutoff', 'Destroyed', true]],
  ['a crash, then deleted: Crashed/Panicked stays', dom('Crashed', 'Panicked'), dom('NoState', 'NonExistent', true), ['Crashed', 'Panicked', true]],
  ['a running domain deleted (its launcher went): no end state to keep', dom('Running', 'Unknown'), dom('NoState', 'NonExistent', true), ['NoState', 'NonExistent', true]],
  ['a deletion seen first: as it comes', undefined, dom('NoState', 'NonExistent', true), ['NoState', 'NonExistent', true]],
  ['a deletion that names its own end state: that one', dom('Shutoff', 'Shutdown'), dom('Shutoff', 'Destroyed', true), ['Shutoff', 'Destroyed', true]],
  ['not a deletion: the new state', dom('Shutoff', 'Shutdown'), dom('Running', 'Unknown'), ['Running', 'Unknown', false]],
];

for (const [name, previous, next, want] of table) {
  test(name, () => {
    const d = domainAfterEvent(previous, next);
    assert.equal([d.Status.Status, d.Status.Reason, d.ObjectMeta.deletionTimestamp !== undefined], want);
  });
}

test('the phase of a powered-off guest whose deletion came with it: Succeeded, not Failed', () => {
  const d = domainAfterEvent(dom('Shutoff', 'Shutdown'), dom('NoState', 'NonExistent', true));
  assert.equal(phaseFromDomain(d, { phase: 'Running', terminationGracePeriodSeconds: 0 }, 'unresponsive').phase, 'Succeeded');
});

test.run();

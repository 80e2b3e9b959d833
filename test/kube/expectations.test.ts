import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Expectations } from '../../src/kube/expectations.ts';

test('unknown keys are satisfied', () => {
  assert.ok(new Expectations().satisfied('ns/a'));
});

test('creations must be observed before the key is satisfied again', () => {
  const e = new Expectations();
  e.expectCreations('ns/rs', 2);
  assert.not.ok(e.satisfied('ns/rs'));
  e.creationObserved('ns/rs');
  assert.not.ok(e.satisfied('ns/rs'));
  e.creationObserved('ns/rs');
  assert.ok(e.satisfied('ns/rs'));
});

test('deletions likewise; a failed call lowers what is expected', () => {
  const e = new Expectations();
  e.expectDeletions('k', 3);
  e.deletionObserved('k');
  e.lowerExpectations('k', 0, 2);
  assert.ok(e.satisfied('k'));
});

test('expectations expire after five minutes', () => {
  let now = 1_000_000;
  const e = new Expectations(() => now);
  e.expectCreations('k', 1);
  now += 5 * 60 * 1000 - 1;
  assert.not.ok(e.satisfied('k'));
  now += 2;
  assert.ok(e.satisfied('k'));
});

test('delete forgets a key', () => {
  const e = new Expectations();
  e.expect('k', 1, 1);
  e.delete('k');
  assert.ok(e.satisfied('k'));
});

test.run();

// One way of wiring each thing (issue 21): the controllers' informers reach their queues only through
// controller/builder.ts (controller-runtime's For/Owns/Watches), apart from two reconcilers' own
// caches; the launcher takes QMP's events only through the client's subscriptions (one per concern:
// the domain's event loop, hotplug, migration, block jobs, the guest agent), never the client's
// event emitter.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, tsFiles } from './import-graph.ts';

const code = (f: string) => readFileSync(join(root, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

/** Informer handlers a reconciler keeps for its own cache, not to queue keys. */
const OWN_CACHES: Record<string, string> = {
  'controller/vmi/controller.ts': 'the index of launcher pods by VMI',
  'controller/migration/controller.ts': 'the hand-off bookkeeping of deleted migrations',
};

test('controllers wire informers to queues through the builder only', () => {
  const bad = tsFiles('controller')
    .filter((f) => f !== 'controller/builder.ts' && !(f in OWN_CACHES))
    .filter((f) => /\.on\(\s*'(add|update|delete)'/.test(code(f)));
  assert.equal(bad, [], `wire these through controllerFor(...).watches/owns/watchesMapped: ${bad.join(', ')}`);
  for (const [f, why] of Object.entries(OWN_CACHES)) assert.not.match(code(f), /\.on\(\s*'(add|update|delete)'[^;]*queue/, `${f} keeps ${why}; it must not queue keys from its handlers`);
});

test("the launcher takes QMP's events through subscriptions only", () => {
  const bad = tsFiles('launcher').filter((f) => /\.(on|once|off|addListener)\(\s*'event'/.test(code(f)));
  assert.equal(bad, [], `use qmp.subscribe() (launcher/supervise/qmp-connection.ts onQmpEvents) in ${bad.join(', ')}`);
});

test.run();

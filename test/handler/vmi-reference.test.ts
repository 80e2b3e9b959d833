// The VMI reference the node agent sends a launcher for a VMI it no longer has (deleted, migrated
// away) is one the launcher's Cmd server accepts — a bare metadata object was refused, so a
// migrated-away domain was never deleted and its launcher waited out the final-notify timeout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { vmiReference } from '../../handler/vmi-reference.ts';
import { parseVmi } from '../../launcher/server/cmd-server.ts';

test('vmiReference: name, namespace, uid, and a spec the launcher accepts', () => {
  const ref = vmiReference('ns1/vm1', 'uid-1');
  assert.equal([ref.metadata?.namespace, ref.metadata?.name, ref.metadata?.uid], ['ns1', 'vm1', 'uid-1']);
  const parsed = parseVmi({ vmiJson: Buffer.from(JSON.stringify(ref)) });
  assert.ok(parsed, 'the launcher parses it');
  assert.is(parsed!.metadata?.uid, 'uid-1');
  assert.is(parseVmi({ vmiJson: Buffer.from(JSON.stringify({ metadata: ref.metadata })) }), undefined, 'metadata alone is refused (why the spec is there)');
});

test.run();

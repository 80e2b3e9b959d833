import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { goJson } from '../../src/kube/client.ts';

test('goJson: the bytes Go writes (so a JSON patch test op matches what the API server stored), the same value', () => {
  const table: Array<[unknown, string]> = [
    [{ userData: '#!/bin/sh\ncat x 2>/dev/null && echo <ok>' }, '{"userData":"#!/bin/sh\\ncat x 2\\u003e/dev/null \\u0026\\u0026 echo \\u003cok\\u003e"}'],
    [['a\u2028b\u2029'], '["a\\u2028b\\u2029"]'],
    [{ n: 1, ok: true, s: 'plain' }, '{"n":1,"ok":true,"s":"plain"}'],
  ];
  for (const [value, want] of table) {
    assert.is(goJson(value), want);
    assert.equal(JSON.parse(goJson(value)), value);
  }
});

test.run();

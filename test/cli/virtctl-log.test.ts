// virtctl's JSON log lines (what scripts around `virtctl port-forward` wait for).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { virtctlLogLine, virtctlLogger } from '../../src/cli/virtctl-log.ts';

test('one JSON object per line: component, level, msg, timestamp', () => {
  assert.is(virtctlLogLine('portforward', 'info', 'forwarding tcp 127.0.0.1:8080 to 80', new Date(Date.UTC(2026, 10, 26, 14, 40, 27, 527))),
    '{"component":"portforward","level":"info","msg":"forwarding tcp 127.0.0.1:8080 to 80","timestamp":"2026-11-26T14:40:27.527Z"}\n');
  let out = '';
  virtctlLogger('portforward', { write: (s: string) => { out += s; } }).error('can\'t access vmi/x.ns: "quoted"');
  const j = JSON.parse(out) as Record<string, string>;
  assert.equal([j.component, j.level, j.msg], ['portforward', 'error', 'can\'t access vmi/x.ns: "quoted"']);
});

test.run();

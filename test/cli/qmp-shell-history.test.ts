// Where the shell's history lives, and a round trip through a real file (private: 0600 in 0700).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readShellHistory, shellHistoryPath, writeShellHistory, SHELL_HISTORY_SIZE } from '../../src/cli/qmp-shell-history.ts';
import { tempDir } from '../lib/tmp.ts';

const paths: [Record<string, string | undefined>, boolean, string][] = [
  [{ XDG_STATE_HOME: '/s' }, false, '/s/qvirt/qmp-history'],
  [{ XDG_STATE_HOME: '/s' }, true, '/s/qvirt/hmp-history'],
  [{}, false, '/home/u/.local/state/qvirt/qmp-history'],
  [{ XDG_STATE_HOME: '' }, true, '/home/u/.local/state/qvirt/hmp-history'],
  [{ XDG_STATE_HOME: 'relative/state' }, false, '/home/u/.local/state/qvirt/qmp-history'], // the XDG spec ignores relative paths
];
for (const [env, hmp, want] of paths) {
  test(`shellHistoryPath(${JSON.stringify(env)}, hmp=${hmp}) → ${want}`, () => assert.is(shellHistoryPath(env, '/home/u', hmp), want));
}

test('history round trip: oldest first in the file, newest first for readline, private, the last 1024', () => {
  const tmp = tempDir('qvh');
  try {
    const path = join(tmp.path, 'state', 'qvirt', 'qmp-history');
    assert.equal(readShellHistory(path), [], 'no file yet: no history');
    writeShellHistory(path, ['query-block flat=true', 'query-status']);
    assert.is(readFileSync(path, 'utf8'), 'query-status\nquery-block flat=true\n');
    assert.is(statSync(path).mode & 0o777, 0o600);
    assert.is(statSync(join(tmp.path, 'state', 'qvirt')).mode & 0o777, 0o700);
    assert.equal(readShellHistory(path), ['query-block flat=true', 'query-status']);

    writeFileSync(path, 'old\n', { mode: 0o644 });
    writeShellHistory(path, ['new']);
    assert.is(statSync(path).mode & 0o777, 0o600, 'an existing file becomes private');

    const many = Array.from({ length: SHELL_HISTORY_SIZE + 10 }, (_, i) => `cmd${i}`); // newest first
    writeShellHistory(path, many);
    const back = readShellHistory(path);
    assert.is(back.length, SHELL_HISTORY_SIZE);
    assert.is(back[0], 'cmd0');
    assert.is(back.at(-1), `cmd${SHELL_HISTORY_SIZE - 1}`);
  } finally {
    tmp.cleanup();
  }
});

test.run();

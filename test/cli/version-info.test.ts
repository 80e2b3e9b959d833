// version.Info as `virtctl version` prints it (Go's %#v), and the server's answer read into it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatVersionInfo, parseVersionInfo } from '../../src/cli/version-info.ts';
import { serverVersion } from '../../src/version/server-version.ts';

test('formats as virtctl v1.9.0 prints it', () => {
  // virtctl v1.9.0's own line, field for field.
  const virtctl = { gitVersion: 'v1.9.0', gitCommit: '79d34c1762169e5b0370ec491cef5ca12e6b504c', gitTreeState: 'clean', buildDate: '2026-11-26T11:02:54Z', goVersion: 'go1.26.11', compiler: 'gc', platform: 'linux/amd64' };
  assert.is(formatVersionInfo(virtctl), 'version.Info{GitVersion:"v1.9.0", GitCommit:"79d34c1762169e5b0370ec491cef5ca12e6b504c", GitTreeState:"clean", BuildDate:"2026-11-26T11:02:54Z", GoVersion:"go1.26.11", Compiler:"gc", Platform:"linux/amd64"}');
  assert.match(formatVersionInfo({ ...virtctl, gitCommit: 'a"b\\c\u0001' }), /GitCommit:"a\\"b\\\\c\\x01"/);
});

test('reads the server\'s answer; a missing field is "", another type is an error naming it', () => {
  const v = serverVersion('0.1.0', '');
  assert.equal(parseVersionInfo(JSON.parse(JSON.stringify(v))), v);
  assert.equal(parseVersionInfo({ gitVersion: 'v1' }), { gitVersion: 'v1', gitCommit: '', gitTreeState: '', buildDate: '', goVersion: '', compiler: '', platform: '' });
  assert.throws(() => parseVersionInfo({ gitVersion: 1 }), /field gitVersion is not a string: 1/);
  assert.throws(() => parseVersionInfo('ok'), /not a JSON object/);
  assert.throws(() => parseVersionInfo(null), /not a JSON object/);
});

test.run();

// The port arguments of port-forward, read as virtctl reads them (pkg/virtctl/portforward/ports.go
// parsePort), plus the checks virtctl leaves to listen(2).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UsageError } from '../../src/flags/flags.ts';
import { parsePort, parsePorts, portForwardSubresource } from '../../src/cli/forwarded-port.ts';

const ok: Array<[string, ReturnType<typeof parsePort>]> = [
  ['8080', { local: 8080, remote: 8080, protocol: 'tcp' }],
  ['8080:9090', { local: 8080, remote: 9090, protocol: 'tcp' }],
  ['udp/8080:9090', { local: 8080, remote: 9090, protocol: 'udp' }],
  ['tcp/22', { local: 22, remote: 22, protocol: 'tcp' }],
  ['UDP/53', { local: 53, remote: 53, protocol: 'udp' }],
  // strings.FieldsFunc drops empty fields; extra ones are ignored, as in virtctl.
  [':80', { local: 80, remote: 80, protocol: 'tcp' }],
  ['80::90', { local: 80, remote: 90, protocol: 'tcp' }],
  ['1:2:3', { local: 1, remote: 2, protocol: 'tcp' }],
  ['+80', { local: 80, remote: 80, protocol: 'tcp' }],
  ['0:22', { local: 0, remote: 22, protocol: 'tcp' }],
];
for (const [text, want] of ok) test(`parsePort(${text})`, () => assert.equal(parsePort(text), want));

const bad: Array<[string, RegExp]> = [
  ['abc', /^invalid local port "abc" in "abc": not a number/],
  ['80:x', /^invalid target port "x" in "80:x"/],
  ['tcp/', /^invalid port "tcp\/", missing local and\/or remote port/],
  ['', /missing local and\/or remote port/],
  [':', /missing local and\/or remote port/],
  ['sctp/1234', /^unknown protocol: sctp in "sctp\/1234": use tcp \(the default\) or udp/],
  ['70000', /^invalid local port 70000 in "70000": must be 0\.\.65535/],
  ['80:0', /^invalid target port 0 in "80:0": must be 1\.\.65535/],
  ['0', /local port 0 \(a free port\) needs a target port, e\.g\. 0:22/],
  ['-1', /^invalid local port -1/],
];
for (const [text, re] of bad) {
  test(`parsePort(${JSON.stringify(text)}) refused`, () => {
    assert.throws(() => parsePort(text), (e: Error) => e instanceof UsageError && re.test(e.message));
  });
}

test('parsePorts keeps the order; the subresource path names port and protocol', () => {
  assert.equal(parsePorts(['1', 'udp/2:3']).map((p) => portForwardSubresource(p.remote, p.protocol)), ['portforward/1/tcp', 'portforward/3/udp']);
});

test.run();

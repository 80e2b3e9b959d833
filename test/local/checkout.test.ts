// src/local/checkout.ts: the checkout found upward from a module's directory, from the sources and
// from a bundle alike.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { checkoutPath, findCheckout } from '../../src/local/checkout.ts';

const files: Record<string, string> = {
  '/repo/package.json': '{"name":"qvirt","version":"0.1.0"}',
  '/repo/node_modules/x/package.json': '{"name":"x"}',
  '/other/package.json': 'not json',
};
const read = (p: string) => files[p];

const cases: Array<[string, string, string | undefined]> = [
  ['a source module two levels down', '/repo/src/local', '/repo'],
  ['a bundle under dist/cli', '/repo/dist/cli', '/repo'],
  ['the checkout itself', '/repo', '/repo'],
  ['past another package.json of another name', '/repo/node_modules/x/lib', '/repo'],
  ['a package.json that is not JSON is passed over', '/other/a', undefined],
  ['no checkout above (an image\'s bundle)', '/usr/lib/qvirt', undefined],
];
for (const [name, start, want] of cases) test(name, () => assert.is(findCheckout(start, 'qvirt', read), want));

test('checkoutPath names files of this checkout', () => {
  const repo = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
  assert.is(checkoutPath(), repo);
  assert.is(checkoutPath('src/cli/main.ts'), `${repo}/src/cli/main.ts`);
});

test.run();

// The string formats the admitters check.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dns1123LabelErrors, isValidPortName, macAddressError } from '../../../src/api/validation/formats.ts';

test('syntax helpers: DNS labels, port names, MAC addresses', () => {
  assert.equal(dns1123LabelErrors('ok-name-1'), []);
  assert.equal(dns1123LabelErrors('a'.repeat(64)).length, 1);
  assert.equal(dns1123LabelErrors('-bad').length, 1);
  for (const good of ['http', 'ssh-22', 'a1']) assert.ok(isValidPortName(good), good);
  for (const bad of ['', '22', 'a--b', '-a', 'UPPER', 'abcdefghijklmnop']) assert.not.ok(isValidPortName(bad), bad);
  assert.is(macAddressError(''), undefined);
  assert.is(macAddressError('02:00:00:00:00:01'), undefined);
  assert.is(macAddressError('02-00-00-00-00-01'), undefined);
  assert.is(macAddressError('0200.0000.0001'), undefined);
  assert.is(macAddressError('02:00:00:00:00:01:02:03'), 'too long MAC address (02:00:00:00:00:01:02:03)');
  assert.is(macAddressError('02:00-00:00:00:01'), 'malformed MAC address (02:00-00:00:00:01)');
  assert.is(macAddressError('zz:00:00:00:00:01'), 'malformed MAC address (zz:00:00:00:00:01)');
});

test.run();

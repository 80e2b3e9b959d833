import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  QuantityError,
  addQuantity,
  canonicalQuantity,
  compareQuantity,
  formatQuantity,
  isIntegerQuantity,
  isQuantity,
  parseQuantity,
  quantityFromMilli,
  quantityFromValue,
  quantityMilliValue,
  quantityToNumber,
  quantityValue,
  subQuantity,
  QUANTITY_PATTERN,
} from '../../src/api/quantity.ts';

// [input, value (rounded up), milli value, canonical string]; canonical strings as apimachinery prints them.
const table: [string | number, bigint, bigint, string][] = [
  ['0', 0n, 0n, '0'],
  ['0Mi', 0n, 0n, '0'],
  ['1', 1n, 1000n, '1'],
  ['100m', 1n, 100n, '100m'],
  ['1500m', 2n, 1500n, '1500m'],
  ['1000m', 1n, 1000n, '1'],
  ['0.5', 1n, 500n, '500m'],
  ['1.5', 2n, 1500n, '1500m'],
  ['.5', 1n, 500n, '500m'],
  ['1.', 1n, 1000n, '1'],
  ['1000', 1000n, 1_000_000n, '1k'],
  ['1500', 1500n, 1_500_000n, '1500'],
  ['12000', 12000n, 12_000_000n, '12k'],
  ['1k', 1000n, 1_000_000n, '1k'],
  ['1M', 1_000_000n, 1_000_000_000n, '1M'],
  ['1024M', 1_024_000_000n, 1_024_000_000_000n, '1024M'],
  ['2G', 2_000_000_000n, 2_000_000_000_000n, '2G'],
  ['1T', 10n ** 12n, 10n ** 15n, '1T'],
  ['1P', 10n ** 15n, 10n ** 18n, '1P'],
  ['1E', 10n ** 18n, 10n ** 21n, '1E'],
  ['10E', 10n ** 19n, 10n ** 22n, '10E'],
  ['1n', 1n, 1n, '1n'],
  ['1u', 1n, 1n, '1u'],
  ['1Ki', 1024n, 1_024_000n, '1Ki'],
  ['1Mi', 1_048_576n, 1_048_576_000n, '1Mi'],
  ['128Mi', 134_217_728n, 134_217_728_000n, '128Mi'],
  ['1024Mi', 1_073_741_824n, 1_073_741_824_000n, '1Gi'],
  ['1.5Gi', 1_610_612_736n, 1_610_612_736_000n, '1536Mi'],
  ['0.5Gi', 536_870_912n, 536_870_912_000n, '512Mi'],
  ['0.5Ki', 512n, 512_000n, '512'],
  ['1.5Ki', 1536n, 1_536_000n, '1536'],
  ['1Ti', 1024n ** 4n, 1024n ** 4n * 1000n, '1Ti'],
  ['1Pi', 1024n ** 5n, 1024n ** 5n * 1000n, '1Pi'],
  ['1Ei', 1024n ** 6n, 1024n ** 6n * 1000n, '1Ei'],
  ['2048Ei', 2048n * 1024n ** 6n, 2048n * 1024n ** 6n * 1000n, '2048Ei'],
  ['1e3', 1000n, 1_000_000n, '1e3'],
  ['1E3', 1000n, 1_000_000n, '1e3'],
  ['1e4', 10_000n, 10_000_000n, '10e3'],
  ['1e0', 1n, 1000n, '1'],
  ['1e-3', 1n, 1n, '1e-3'],
  ['5e+2', 500n, 500_000n, '500'],
  ['-1', -1n, -1000n, '-1'],
  ['-100m', -1n, -100n, '-100m'],
  ['-2Gi', -2n * 1024n ** 3n, -2n * 1024n ** 3n * 1000n, '-2Gi'],
  ['+5', 5n, 5000n, '5'],
  [' 64Mi ', 67_108_864n, 67_108_864_000n, '64Mi'],
  // more precision than nano rounds up (away from zero)
  ['0.0000000001', 1n, 1n, '1n'],
  ['1.0000000001', 2n, 1001n, '1000000001n'],
  // numbers from JSON
  [1024, 1024n, 1_024_000n, '1024'],
  [0.25, 1n, 250n, '250m'],
  [2, 2n, 2000n, '2'],
];

for (const [input, value, milli, canonical] of table) {
  test(`quantity ${JSON.stringify(input)}: value ${value}, milli ${milli}, canonical ${canonical}`, () => {
    const q = parseQuantity(input);
    assert.is(quantityValue(q), value);
    assert.is(quantityMilliValue(q), milli);
    assert.is(formatQuantity(q), canonical);
    assert.is(canonicalQuantity(input), canonical);
    // canonical form is a fixed point and parses to the same value
    assert.is(canonicalQuantity(canonical), canonical);
    assert.is(parseQuantity(canonical).nanos, q.nanos);
    assert.ok(isQuantity(input));
  });
}

const invalid: [string, RegExp][] = [
  ['', /empty string/],
  ['abc', /expected <number><suffix>/],
  ['Mi', /expected <number><suffix>/],
  ['.', /expected <number><suffix>/],
  ['1Mb', /unknown suffix "Mb"/],
  ['1 Mi', /unknown suffix " Mi"/],
  ['1KI', /unknown suffix "KI"/],
  ['1K', /unknown suffix "K"/],
  ['1e', /unknown suffix "e"/],
  ['1e1.5', /unknown suffix "e1.5"/],
  ['--1', /expected <number><suffix>/],
  ['1e99999', /exponent 99999 out of range/],
  ['0x10', /unknown suffix "x10"/],
];

for (const [input, why] of invalid) {
  test(`quantity ${JSON.stringify(input)} is rejected with a message naming it`, () => {
    try {
      parseQuantity(input);
      assert.unreachable('should have thrown');
    } catch (e) {
      assert.instance(e, QuantityError);
      const err = e as QuantityError;
      assert.is(err.input, input.trim());
      assert.ok(err.message.includes(JSON.stringify(input.trim())), err.message);
      assert.match(err.message, why);
    }
    assert.not.ok(isQuantity(input));
  });
}

test('non-finite numbers and non-scalars are not quantities', () => {
  assert.throws(() => parseQuantity(Number.NaN), /not a finite number/);
  assert.throws(() => parseQuantity(Infinity), /not a finite number/);
  assert.not.ok(isQuantity({}));
  assert.not.ok(isQuantity(null));
  assert.not.ok(isQuantity(true));
});

test('the CRD pattern accepts exactly what the parser accepts on the table', () => {
  const re = new RegExp(QUANTITY_PATTERN);
  for (const [input] of table) {
    if (typeof input === 'string') assert.ok(re.test(input.trim()), input);
  }
  for (const bad of ['abc', '1Mb', '1 Mi', '1KI', '1K', '--1', '']) assert.not.ok(re.test(bad), bad);
});

test('compare orders across suffix families', () => {
  assert.is(compareQuantity('1Gi', '1G'), 1);
  assert.is(compareQuantity('1G', '1Gi'), -1);
  assert.is(compareQuantity('1024Mi', '1Gi'), 0);
  assert.is(compareQuantity('1000m', 1), 0);
  assert.is(compareQuantity('-1', '0'), -1);
  assert.is(compareQuantity('1e3', '1k'), 0);
});

test('add and sub keep the left format and are exact', () => {
  const s = addQuantity('128Mi', '288Mi');
  assert.is(formatQuantity(s), '416Mi');
  assert.is(formatQuantity(addQuantity('100m', '900m')), '1');
  assert.is(formatQuantity(addQuantity('1G', '1Gi')), '2073741824');
  assert.is(formatQuantity(subQuantity('1Gi', '512Mi')), '512Mi');
  assert.is(formatQuantity(subQuantity('1', '1500m')), '-500m');
});

test('integer checks and conversions', () => {
  assert.ok(isIntegerQuantity('1Gi'));
  assert.not.ok(isIntegerQuantity('100m'));
  assert.is(quantityToNumber('2Gi'), 2147483648);
  assert.throws(() => quantityToNumber('16Ei'), /does not fit a JavaScript number/);
  assert.is(formatQuantity(quantityFromValue(134217728)), '128Mi');
  assert.is(formatQuantity(quantityFromValue(1000n, 'DecimalSI')), '1k');
  assert.is(formatQuantity(quantityFromMilli(100)), '100m');
  assert.is(formatQuantity(quantityFromMilli(2000)), '2');
  assert.throws(() => quantityFromValue(0.5), /not a safe integer/);
});

test.run();

/**
 * Kubernetes `resource.Quantity`: parse, canonical format, compare, add.
 *
 * Grammar (apimachinery `quantity.go`):
 *   <quantity>  ::= <signedNumber><suffix>
 *   <number>    ::= <digits> | <digits>.<digits>? | .<digits>
 *   <suffix>    ::= Ki | Mi | Gi | Ti | Pi | Ei            (binary SI, powers of 1024)
 *                 | n | u | m | "" | k | M | G | T | P | E  (decimal SI)
 *                 | e<signedInt> | E<signedInt>            (decimal exponent)
 *
 * Values are held exactly as a signed count of nano-units (`bigint`), which is Kubernetes' own
 * precision: finer inputs are rounded up (away from zero), as apimachinery does. The format the
 * quantity was written in is kept so that formatting gives Kubernetes' canonical string
 * (`"1.5Gi"` → `"1536Mi"`, `"1000"` → `"1k"`, `"0.5"` → `"500m"`, `"1E3"` → `"1e3"`).
 */

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface ParsedQuantity {
  /** Exact value × 10⁹. */
  readonly nanos: bigint;
  /** The suffix family the quantity was written with; decides the canonical string. */
  readonly format: QuantityFormat;
}

/** A string that is not a Kubernetes quantity. The message names the string. */
export class QuantityError extends Error {
  readonly input: string;
  constructor(input: string, why: string) {
    super(`quantity ${JSON.stringify(input)} is invalid: ${why}`);
    this.name = 'QuantityError';
    this.input = input;
  }
}

const NANO = 1_000_000_000n;
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;
/** Decimal SI suffix → power of ten. */
const DECIMAL_SUFFIX_EXP: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const DECIMAL_EXP_SUFFIX: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(DECIMAL_SUFFIX_EXP).map(([s, e]) => [e, s]),
);
/** Exponents beyond this are refused rather than materialised as gigantic bigints. */
const MAX_EXPONENT = 1000;

const QUANTITY_RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(.*)$/;

/**
 * The pattern KubeVirt/Kubernetes CRD schemas use for `x-kubernetes-int-or-string` quantities.
 * Kept here so schema and parser agree.
 */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Divide rounding away from zero (Kubernetes rounds up lost precision). */
function divAwayFromZero(a: bigint, b: bigint): bigint {
  const q = a / b;
  return q * b === a ? q : a < 0n ? q - 1n : q + 1n;
}

/**
 * Parse a quantity as found in JSON/YAML (a string, or a plain number, which Kubernetes also accepts).
 * Throws `QuantityError` naming the input when it is not a quantity.
 */
export function parseQuantity(input: string | number): ParsedQuantity {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new QuantityError(String(input), 'not a finite number');
    text = String(input);
  } else {
    text = input.trim();
  }
  if (text === '') throw new QuantityError(text, 'empty string');
  const m = QUANTITY_RE.exec(text);
  if (!m) throw new QuantityError(text, 'expected <number><suffix>, e.g. "128Mi", "1.5", "100m" or "1e3"');
  const sign = m[1] === '-' ? -1n : 1n;
  const num = m[2] ?? '';
  const suffix = m[3] ?? '';
  const [intPart = '', fracPart = ''] = num.split('.');
  // value = digits × 10^(−fracLen) × scale
  const digits = BigInt((intPart + fracPart) || '0');
  let exp10 = -fracPart.length;
  let pow1024 = 0;
  let format: QuantityFormat;

  const binIdx = (BINARY_SUFFIXES as readonly string[]).indexOf(suffix);
  if (suffix !== '' && binIdx > 0) {
    format = 'BinarySI';
    pow1024 = binIdx;
  } else if (suffix in DECIMAL_SUFFIX_EXP) {
    format = 'DecimalSI';
    exp10 += DECIMAL_SUFFIX_EXP[suffix] ?? 0;
  } else if (/^[eE][+-]?\d+$/.test(suffix)) {
    format = 'DecimalExponent';
    const e = Number(suffix.slice(1));
    if (!Number.isSafeInteger(e) || Math.abs(e) > MAX_EXPONENT) {
      throw new QuantityError(text, `exponent ${suffix.slice(1)} out of range`);
    }
    exp10 += e;
  } else {
    throw new QuantityError(
      text,
      `unknown suffix ${JSON.stringify(suffix)} (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or e<exp>)`,
    );
  }

  let nanosAbs = digits * 1024n ** BigInt(pow1024);
  const shift = exp10 + 9;
  nanosAbs = shift >= 0 ? nanosAbs * pow10(shift) : divAwayFromZero(nanosAbs, pow10(-shift));
  const nanos = sign * nanosAbs;
  return { nanos, format: nanos === 0n && format === 'BinarySI' ? 'DecimalSI' : format };
}

/** True when `input` parses as a quantity. */
export function isQuantity(input: unknown): input is string | number {
  if (typeof input !== 'string' && typeof input !== 'number') return false;
  try {
    parseQuantity(input);
    return true;
  } catch {
    return false;
  }
}

function formatDecimal(nanos: bigint, exponentForm: boolean): string {
  if (nanos === 0n) return '0';
  const neg = nanos < 0n;
  let m = neg ? -nanos : nanos;
  let e = -9;
  while (m % 10n === 0n) {
    m /= 10n;
    e += 1;
  }
  let e3 = Math.floor(e / 3) * 3;
  if (!exponentForm && e3 > 18) e3 = 18;
  const mantissa = m * pow10(e - e3);
  const suffix = exponentForm ? (e3 === 0 ? '' : `e${e3}`) : (DECIMAL_EXP_SUFFIX[e3] ?? '');
  return `${neg ? '-' : ''}${mantissa}${suffix}`;
}

/**
 * Kubernetes' canonical string for a quantity (`Quantity.String()` after `CanonicalizeBytes`):
 * binary quantities use the largest power of 1024 that divides them exactly and fall back to
 * decimal SI when the value is fractional or below 1024 in magnitude.
 */
export function formatQuantity(q: ParsedQuantity): string {
  if (q.format === 'BinarySI') {
    const abs = q.nanos < 0n ? -q.nanos : q.nanos;
    if (abs % NANO === 0n && abs >= 1024n * NANO) {
      let v = abs / NANO;
      let i = 0;
      while (i < BINARY_SUFFIXES.length - 1 && v % 1024n === 0n) {
        v /= 1024n;
        i += 1;
      }
      return `${q.nanos < 0n ? '-' : ''}${v}${BINARY_SUFFIXES[i]}`;
    }
    return formatDecimal(q.nanos, false);
  }
  return formatDecimal(q.nanos, q.format === 'DecimalExponent');
}

/** Parse and re-format: the string Kubernetes would serialize for `input`. */
export function canonicalQuantity(input: string | number): string {
  return formatQuantity(parseQuantity(input));
}

/** `Quantity.Value()`: the integer value, rounded up (away from zero). E.g. bytes of a memory quantity. */
export function quantityValue(q: ParsedQuantity | string | number): bigint {
  const p = typeof q === 'object' ? q : parseQuantity(q);
  return divAwayFromZero(p.nanos, NANO);
}

/** `Quantity.MilliValue()`: value × 1000, rounded up. E.g. millicores of a CPU quantity. */
export function quantityMilliValue(q: ParsedQuantity | string | number): bigint {
  const p = typeof q === 'object' ? q : parseQuantity(q);
  return divAwayFromZero(p.nanos, 1_000_000n);
}

/** True when the quantity is a whole number (no rounding in `quantityValue`). */
export function isIntegerQuantity(q: ParsedQuantity | string | number): boolean {
  const p = typeof q === 'object' ? q : parseQuantity(q);
  return p.nanos % NANO === 0n;
}

/**
 * `quantityValue` as a JS number; throws when it does not fit exactly (above 2⁵³ − 1), naming the input.
 */
export function quantityToNumber(q: ParsedQuantity | string | number): number {
  const v = quantityValue(q);
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    const text = typeof q === 'object' ? formatQuantity(q) : String(q);
    throw new QuantityError(text, 'value does not fit a JavaScript number exactly');
  }
  return Number(v);
}

function asParsed(q: ParsedQuantity | string | number): ParsedQuantity {
  return typeof q === 'object' ? q : parseQuantity(q);
}

/** −1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantity(
  a: ParsedQuantity | string | number,
  b: ParsedQuantity | string | number,
): -1 | 0 | 1 {
  const x = asParsed(a).nanos;
  const y = asParsed(b).nanos;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** `a + b`, in `a`'s format (Kubernetes `Quantity.Add` keeps the receiver's format). */
export function addQuantity(a: ParsedQuantity | string | number, b: ParsedQuantity | string | number): ParsedQuantity {
  const x = asParsed(a);
  return { nanos: x.nanos + asParsed(b).nanos, format: x.format };
}

/** `a − b`, in `a`'s format. */
export function subQuantity(a: ParsedQuantity | string | number, b: ParsedQuantity | string | number): ParsedQuantity {
  const x = asParsed(a);
  return { nanos: x.nanos - asParsed(b).nanos, format: x.format };
}

/** A quantity of `value` whole units (e.g. bytes), in the given format. */
export function quantityFromValue(value: bigint | number, format: QuantityFormat = 'BinarySI'): ParsedQuantity {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new QuantityError(String(value), 'not a safe integer');
  }
  return { nanos: BigInt(value) * NANO, format };
}

/** A quantity of `milli` thousandths (e.g. millicores), decimal SI. */
export function quantityFromMilli(milli: bigint | number): ParsedQuantity {
  if (typeof milli === 'number' && !Number.isSafeInteger(milli)) {
    throw new QuantityError(String(milli), 'not a safe integer');
  }
  return { nanos: BigInt(milli) * 1_000_000n, format: 'DecimalSI' };
}

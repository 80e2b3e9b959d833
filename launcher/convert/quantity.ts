// Kubernetes resource.Quantity → integer, for the memory and CPU figures the converter needs.
// (A stop-gap until src/api exports a quantity parser; same grammar: binary Ki..Ei, decimal
// n/u/m/k/M/G/T/P/E, and decimal exponents 1e3.)
import { ConversionError } from './plan.ts';

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** The exact value of a quantity as a number (may be fractional), or a ConversionError naming `field`. */
export function parseQuantity(q: string | number, field: string): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E)?)$/.exec(q.trim());
  if (!m) throw new ConversionError(field, `"${q}" is not a valid quantity`);
  const base = Number(m[1]);
  if (m[2]) return base * (BINARY[m[2]] ?? 1);
  if (m[3]) return base * 10 ** Number(m[3].slice(1));
  return base * (DECIMAL[m[4] ?? ''] ?? 1);
}

/** Bytes of a memory quantity, rounded up like resource.Quantity.Value(). */
export function quantityBytes(q: string | number, field: string): number {
  const v = parseQuantity(q, field);
  if (v < 0) throw new ConversionError(field, `"${q}" must not be negative`);
  return Math.ceil(v);
}

/** resource.Quantity.Value() for CPU counts: rounded up to an integer. */
export function quantityCeil(q: string | number, field: string): number {
  return Math.ceil(parseQuantity(q, field));
}

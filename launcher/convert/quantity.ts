// Kubernetes resource.Quantity → numbers for the converter, on top of src/api/quantity.ts; a
// malformed quantity becomes a ConversionError naming the VMI field.
import { parseQuantity as parseApiQuantity, quantityValue } from '../../src/api/quantity.ts';
import { ConversionError } from './plan.ts';

function wrap<T>(q: string | number, field: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new ConversionError(field, `"${q}" is not a valid quantity: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The exact value of a quantity as a number (may be fractional: "100m" → 0.1). */
export function parseQuantity(q: string | number, field: string): number {
  return wrap(q, field, () => Number(parseApiQuantity(q).nanos) / 1e9);
}

/** resource.Quantity.Value(): rounded up to an integer (bytes of a memory quantity, CPUs). */
export function quantityCeil(q: string | number, field: string): number {
  const v = wrap(q, field, () => quantityValue(q));
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new ConversionError(field, `"${q}" is too large`);
  return Number(v);
}

/** Bytes of a memory quantity (Value(), never negative). */
export function quantityBytes(q: string | number, field: string): number {
  const v = quantityCeil(q, field);
  if (v < 0) throw new ConversionError(field, `"${q}" must not be negative`);
  return v;
}

/**
 * Quantities the way KubeVirt's Go webhooks write them back. A mutating webhook replaces `/spec`
 * with the re-marshalled Go struct, so every `resource.Quantity` in it comes out in canonical form
 * (`"1.5Gi"` → `"1536Mi"`, `"1000M"` → `"1G"`). This walks an object along its schema and does the
 * same to every quantity field.
 */
import { canonicalQuantity, isQuantity, parseQuantity } from './quantity.ts';
import type { Schema } from './schema/dsl.ts';

/** Returns `value` with every quantity field (per `schema`) in canonical form. Does not modify `value`. */
export function canonicalizeQuantities<T>(schema: Schema, value: T): T {
  return walk(schema, value, canonicalQuantity) as T;
}

/**
 * `value` with every quantity replaced by its exact numeric value (nano-units, as a string): two
 * objects that differ only in how quantities are spelled (`128Mi` / `134217728`) compare equal,
 * as Go's `equality.Semantic.DeepEqual` treats them.
 */
export function quantitiesByValue<T>(schema: Schema, value: T): T {
  return walk(schema, value, (q) => `${parseQuantity(q).nanos}n`) as T;
}

function walk(schema: Schema, value: unknown, fix: (q: string | number) => string): unknown {
  if (value === undefined || value === null) return value;
  switch (schema.type) {
    case 'quantity':
      return (typeof value === 'string' || typeof value === 'number') && isQuantity(value) ? fix(value) : value;
    case 'array':
      return Array.isArray(value) ? value.map((v) => walk(schema.items, v, fix)) : value;
    case 'map':
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(schema.values, v, fix)]));
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const child = schema.properties[k];
        out[k] = child ? walk(child, v, fix) : v;
      }
      return out;
    }
    default:
      return value;
  }
}

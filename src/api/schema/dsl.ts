/**
 * A small language for the structural schema of KubeVirt's objects. One description serves two
 * purposes:
 * - `src/api/parse.ts` walks it to turn decoded JSON/YAML into typed objects, naming the field path
 *   of every type error;
 * - `scripts/gen-crds.ts` turns it into the `openAPIV3Schema` (plus `x-kubernetes-validations` CEL
 *   rules) of the CRDs in `deploy/crds/`.
 *
 * `object<T>()(props, opts)` is typed against the TypeScript interface `T` from `types.ts`: the
 * properties must be exactly `keyof T` and `required` exactly T's required keys, so `tsc` fails when
 * the schema and the types drift apart.
 */

/** A CEL validation rule (`x-kubernetes-validations`). */
export interface CelRule {
  readonly rule: string;
  readonly message: string;
  /** JSONPath (relative to the node) the error is reported at. */
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

interface Base {
  readonly description?: string;
  readonly cel?: readonly CelRule[];
}

export interface StringSchema extends Base {
  readonly type: 'string';
  readonly enum?: readonly string[];
  readonly pattern?: string;
  readonly maxLength?: number;
  readonly minLength?: number;
  readonly format?: 'date-time' | 'byte';
}
export interface IntegerSchema extends Base {
  readonly type: 'integer';
  readonly format: 'int32' | 'int64';
  readonly minimum?: number;
  readonly maximum?: number;
}
export interface NumberSchema extends Base {
  readonly type: 'number';
}
export interface BooleanSchema extends Base {
  readonly type: 'boolean';
}
/** `resource.Quantity`: int-or-string matching the quantity pattern; parsed to its string form. */
export interface QuantitySchema extends Base {
  readonly type: 'quantity';
}
/** `intstr.IntOrString`. */
export interface IntOrStringSchema extends Base {
  readonly type: 'int-or-string';
}
export interface ArraySchema extends Base {
  readonly type: 'array';
  readonly items: Schema;
  readonly maxItems?: number;
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly listMapKeys?: readonly string[];
}
/** A JSON object with arbitrary keys and uniform values (`map[string]T`). */
export interface MapSchema extends Base {
  readonly type: 'map';
  readonly values: Schema;
  readonly maxProperties?: number;
}
export interface ObjectSchema extends Base {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, Schema>>;
  readonly required: readonly string[];
  /** `x-kubernetes-preserve-unknown-fields: true`: unknown fields are kept, not pruned. */
  readonly preserveUnknownFields?: boolean;
  readonly nullable?: boolean;
  /**
   * Emit this node in the CRD as an opaque `type: object` (plus `x-kubernetes-preserve-unknown-fields`
   * and `nullable` as set) instead of spelling out its properties — as KubeVirt's CRDs do for
   * embedded `metadata`. `parse.ts` still checks the properties.
   */
  readonly crdOpaque?: boolean;
}
/** Any JSON object, kept as is (`type: object` + `x-kubernetes-preserve-unknown-fields`). */
export interface OpaqueSchema extends Base {
  readonly type: 'opaque';
}

export type Schema =
  | StringSchema
  | IntegerSchema
  | NumberSchema
  | BooleanSchema
  | QuantitySchema
  | IntOrStringSchema
  | ArraySchema
  | MapSchema
  | ObjectSchema
  | OpaqueSchema;

// ------------------------------------------------------------------------------------------------
// Builders
// ------------------------------------------------------------------------------------------------

type Opts<S> = Omit<S, 'type'>;

export const str = (o: Opts<StringSchema> = {}): StringSchema => ({ type: 'string', ...o });
/** A string restricted to the given values. */
export const enumOf = <V extends string>(values: readonly V[], o: Omit<Opts<StringSchema>, 'enum'> = {}): StringSchema => ({
  type: 'string',
  enum: values,
  ...o,
});
export const time = (o: Opts<StringSchema> = {}): StringSchema => ({ type: 'string', format: 'date-time', ...o });
export const int32 = (o: Omit<Opts<IntegerSchema>, 'format'> = {}): IntegerSchema => ({ type: 'integer', format: 'int32', ...o });
export const int64 = (o: Omit<Opts<IntegerSchema>, 'format'> = {}): IntegerSchema => ({ type: 'integer', format: 'int64', ...o });
export const num = (o: Opts<NumberSchema> = {}): NumberSchema => ({ type: 'number', ...o });
export const bool = (o: Opts<BooleanSchema> = {}): BooleanSchema => ({ type: 'boolean', ...o });
export const quantity = (o: Opts<QuantitySchema> = {}): QuantitySchema => ({ type: 'quantity', ...o });
export const intOrString = (o: Opts<IntOrStringSchema> = {}): IntOrStringSchema => ({ type: 'int-or-string', ...o });
export const arr = (items: Schema, o: Omit<Opts<ArraySchema>, 'items'> = {}): ArraySchema => ({ type: 'array', items, ...o });
export const map = (values: Schema, o: Omit<Opts<MapSchema>, 'values'> = {}): MapSchema => ({ type: 'map', values, ...o });
export const stringMap = (o: Omit<Opts<MapSchema>, 'values'> = {}): MapSchema => map(str(), o);
export const opaque = (o: Opts<OpaqueSchema> = {}): OpaqueSchema => ({ type: 'opaque', ...o });

/** Keys of T that are not optional. */
export type RequiredKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? never : {} extends Pick<T, K> ? never : K }[keyof T] &
  string;

type Exact<Want, Got> = [Exclude<Want, Got>] extends [never] ? ([Exclude<Got, Want>] extends [never] ? unknown : { unexpected: Exclude<Got, Want> }) : { missing: Exclude<Want, Got> };

interface ObjectOpts<R> extends Omit<Opts<ObjectSchema>, 'properties' | 'required'> {
  readonly required?: R;
}

/**
 * An object schema checked against `T`: `props` must name every field of `T` (and nothing else), and
 * `required` must list exactly the required fields of `T`.
 * Usage: `object<Disk>()({ name: str(), ... }, { required: ['name'] })`.
 */
export function object<T>() {
  return <const R extends readonly RequiredKeys<T>[] = readonly []>(
    props: { readonly [K in keyof T & string]-?: Schema },
    ...opts: [RequiredKeys<T>] extends [never]
      ? [opts?: ObjectOpts<R>]
      : [opts: ObjectOpts<R> & Exact<RequiredKeys<T>, R[number]>]
  ): ObjectSchema => {
    const { required, ...rest } = (opts[0] ?? {}) as ObjectOpts<R>;
    return { type: 'object', properties: props as Record<string, Schema>, required: required ?? [], ...rest };
  };
}

/** An object schema not tied to a TypeScript interface (for shapes used only in the CRD). */
export function looseObject(
  properties: Readonly<Record<string, Schema>>,
  o: Omit<Opts<ObjectSchema>, 'properties' | 'required'> & { required?: readonly string[] } = {},
): ObjectSchema {
  return { type: 'object', properties, ...o, required: o.required ?? [] };
}

/** Same schema with more CEL rules appended. */
export function withRules<S extends Schema>(s: S, ...rules: CelRule[]): S {
  return { ...s, cel: [...(s.cel ?? []), ...rules] };
}

/** Same schema with a description. */
export function described<S extends Schema>(s: S, description: string): S {
  return { ...s, description };
}

/**
 * Decoded JSON/YAML → typed kubevirt.io/v1 objects, checked against the structural schema of
 * `./schema/` (the same one the CRDs are generated from).
 *
 * What is checked: JSON types of every known field (string, integer and its int32/int64 range,
 * boolean, object, array, map), enums, string patterns and lengths, quantities (parsed with
 * `quantity.ts`), required fields, and the object's `apiVersion`/`kind` when present. Every problem
 * is reported with its field path (`spec.domain.devices.disks[1].disk.bus: must be one of virtio,
 * sata, scsi, usb (got "ide")`); all problems are collected, not just the first.
 *
 * Unknown fields: treated as kube-apiserver treats them for a CRD with a structural schema — they
 * are **pruned** (dropped from the result) and reported in `pruned` (the API server's "unknown
 * field" warnings), except below nodes marked `x-kubernetes-preserve-unknown-fields` (e.g.
 * `spec.domain.clock`, template `metadata`, opaque pass-through shapes such as `affinity`), where
 * they are kept verbatim. `null` for an optional field means "unset" and is dropped, as the API
 * server does for non-nullable fields. Quantities given as JSON numbers become their string form.
 *
 * Semantic rules (names matching, one source per volume, ...) are the admitters' job (`validation/`).
 */
import { API_VERSION, DEPRECATED_VERSION, GROUP, Kind } from './constants.ts';
import { FieldErrors, FieldPath, describe, fieldError, type FieldError } from './field-error.ts';
import { parseQuantity } from './quantity.ts';
import type { Schema } from './schema/dsl.ts';
import { SchemaByKind } from './schema/objects.ts';
import type {
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceMigration,
  VirtualMachineInstanceReplicaSet,
} from './types.ts';

export interface ParseResult<T> {
  /** The typed object; present when there are no errors. */
  readonly value?: T;
  readonly errors: readonly FieldError[];
  /** Paths of unknown fields that were dropped. */
  readonly pruned: readonly string[];
}

interface Ctx {
  errors: FieldError[];
  pruned: string[];
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const patternCache = new Map<string, RegExp>();
function regex(p: string): RegExp {
  let r = patternCache.get(p);
  if (!r) {
    r = new RegExp(p, 'u');
    patternCache.set(p, r);
  }
  return r;
}

/** Walks `value` against `schema`; returns the cleaned value or `undefined` when it is unusable. */
function walk(schema: Schema, value: unknown, path: FieldPath, ctx: Ctx): unknown {
  switch (schema.type) {
    case 'string': {
      if (typeof value !== 'string') {
        ctx.errors.push(fieldError.typeInvalid(path, 'a string', value));
        return undefined;
      }
      if (schema.enum && !schema.enum.includes(value)) {
        ctx.errors.push(fieldError.notSupported(path, value, schema.enum.filter((v) => v !== '')));
      }
      if (schema.maxLength !== undefined && [...value].length > schema.maxLength) {
        ctx.errors.push(fieldError.tooLong(path, schema.maxLength));
      }
      if (schema.minLength !== undefined && [...value].length < schema.minLength) {
        ctx.errors.push(fieldError.invalid(path, `must have at least ${schema.minLength} characters`));
      }
      if (schema.pattern !== undefined && !regex(schema.pattern).test(value)) {
        ctx.errors.push(fieldError.invalid(path, `must match ${schema.pattern} (got ${JSON.stringify(value)})`));
      }
      return value;
    }
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        ctx.errors.push(fieldError.typeInvalid(path, 'an integer', value));
        return undefined;
      }
      if (schema.format === 'int32' && (value < INT32_MIN || value > INT32_MAX)) {
        ctx.errors.push(fieldError.invalid(path, `must fit in 32 bits (got ${value})`));
      } else if (!Number.isSafeInteger(value)) {
        ctx.errors.push(fieldError.invalid(path, `must be an integer below 2^53 (got ${value})`));
      }
      if (schema.minimum !== undefined && value < schema.minimum) {
        ctx.errors.push(fieldError.invalid(path, `must be greater than or equal to ${schema.minimum} (got ${value})`));
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        ctx.errors.push(fieldError.invalid(path, `must be less than or equal to ${schema.maximum} (got ${value})`));
      }
      return value;
    }
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        ctx.errors.push(fieldError.typeInvalid(path, 'a number', value));
        return undefined;
      }
      return value;
    }
    case 'boolean': {
      if (typeof value !== 'boolean') {
        ctx.errors.push(fieldError.typeInvalid(path, 'a boolean', value));
        return undefined;
      }
      return value;
    }
    case 'quantity': {
      if (typeof value !== 'string' && typeof value !== 'number') {
        ctx.errors.push(fieldError.typeInvalid(path, 'a quantity (string or number)', value));
        return undefined;
      }
      try {
        parseQuantity(value);
      } catch (e) {
        ctx.errors.push(fieldError.invalid(path, (e as Error).message));
        return undefined;
      }
      return typeof value === 'number' ? String(value) : value;
    }
    case 'int-or-string': {
      if (typeof value === 'string') return value;
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      ctx.errors.push(fieldError.typeInvalid(path, 'an integer or a string', value));
      return undefined;
    }
    case 'opaque': {
      if (!isPlainObject(value)) {
        ctx.errors.push(fieldError.typeInvalid(path, 'an object', value));
        return undefined;
      }
      return structuredClone(value);
    }
    case 'map': {
      if (!isPlainObject(value)) {
        ctx.errors.push(fieldError.typeInvalid(path, 'an object (map)', value));
        return undefined;
      }
      if (schema.maxProperties !== undefined && Object.keys(value).length > schema.maxProperties) {
        ctx.errors.push(fieldError.invalid(path, `must have at most ${schema.maxProperties} entries`));
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (v === null || v === undefined) continue;
        const r = walk(schema.values, v, path.key(k), ctx);
        if (r !== undefined) out[k] = r;
      }
      return out;
    }
    case 'array': {
      if (!Array.isArray(value)) {
        ctx.errors.push(fieldError.typeInvalid(path, 'an array', value));
        return undefined;
      }
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        ctx.errors.push(fieldError.tooMany(path, schema.maxItems));
      }
      const out: unknown[] = [];
      value.forEach((item, i) => {
        if (item === null || item === undefined) {
          ctx.errors.push(fieldError.typeInvalid(path.index(i), describeExpected(schema.items), item));
          return;
        }
        const r = walk(schema.items, item, path.index(i), ctx);
        if (r !== undefined) out.push(r);
      });
      return out;
    }
    case 'object': {
      if (!isPlainObject(value)) {
        ctx.errors.push(fieldError.typeInvalid(path, 'an object', value));
        return undefined;
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const child = schema.properties[k];
        if (child === undefined) {
          if (schema.preserveUnknownFields) out[k] = structuredClone(v);
          else ctx.pruned.push(path.child(k).toString());
          continue;
        }
        if (v === null || v === undefined) continue;
        const r = walk(child, v, path.child(k), ctx);
        if (r !== undefined) out[k] = r;
      }
      for (const req of schema.required) {
        if (value[req] === undefined || value[req] === null) {
          ctx.errors.push(fieldError.required(path.child(req)));
        }
      }
      return out;
    }
  }
}

function describeExpected(s: Schema): string {
  switch (s.type) {
    case 'string':
      return 'a string';
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'array':
      return 'an array';
    case 'quantity':
      return 'a quantity';
    case 'int-or-string':
      return 'an integer or a string';
    default:
      return 'an object';
  }
}

/** Checks `input` against any schema node; the generic engine behind the typed helpers below. */
export function parseWithSchema<T>(schema: Schema, input: unknown, root = ''): ParseResult<T> {
  const ctx: Ctx = { errors: [], pruned: [] };
  const value = walk(schema, input, FieldPath.root(root), ctx);
  return ctx.errors.length === 0 ? { value: value as T, errors: [], pruned: ctx.pruned } : { errors: ctx.errors, pruned: ctx.pruned };
}

function checkTypeMeta(kind: Kind, input: unknown, errors: FieldError[]): void {
  if (!isPlainObject(input)) return;
  const { apiVersion, kind: k } = input;
  if (apiVersion !== undefined && apiVersion !== API_VERSION && apiVersion !== `${GROUP}/${DEPRECATED_VERSION}`) {
    errors.push(fieldError.invalid('apiVersion', `must be ${API_VERSION} (got ${describe(apiVersion)})`));
  }
  if (k !== undefined && k !== kind) {
    errors.push(fieldError.invalid('kind', `must be ${kind} (got ${describe(k)})`));
  }
}

function parseKind<T>(kind: Kind, input: unknown): ParseResult<T> {
  const r = parseWithSchema<T>(SchemaByKind[kind], input);
  const extra: FieldError[] = [];
  checkTypeMeta(kind, input, extra);
  if (extra.length === 0) return r;
  return { errors: [...extra, ...r.errors], pruned: r.pruned };
}

export const parseVirtualMachineInstance = (input: unknown): ParseResult<VirtualMachineInstance> =>
  parseKind('VirtualMachineInstance', input);
export const parseVirtualMachine = (input: unknown): ParseResult<VirtualMachine> => parseKind('VirtualMachine', input);
export const parseVirtualMachineInstanceReplicaSet = (input: unknown): ParseResult<VirtualMachineInstanceReplicaSet> =>
  parseKind('VirtualMachineInstanceReplicaSet', input);
export const parseVirtualMachineInstanceMigration = (input: unknown): ParseResult<VirtualMachineInstanceMigration> =>
  parseKind('VirtualMachineInstanceMigration', input);

export type KubeVirtObject =
  | { readonly kind: 'VirtualMachineInstance'; readonly object: VirtualMachineInstance }
  | { readonly kind: 'VirtualMachine'; readonly object: VirtualMachine }
  | { readonly kind: 'VirtualMachineInstanceReplicaSet'; readonly object: VirtualMachineInstanceReplicaSet }
  | { readonly kind: 'VirtualMachineInstanceMigration'; readonly object: VirtualMachineInstanceMigration };

/**
 * Parse any of the four kinds, dispatching on `kind` (which must then be present and known).
 */
export function parseKubeVirtObject(input: unknown): ParseResult<KubeVirtObject> {
  const kind = isPlainObject(input) ? input.kind : undefined;
  if (typeof kind !== 'string' || !(Object.values(Kind) as string[]).includes(kind)) {
    return {
      errors: [fieldError.notSupported('kind', kind, Object.values(Kind))],
      pruned: [],
    };
  }
  const r = parseKind<unknown>(kind as Kind, input);
  if (!r.value) return { errors: r.errors, pruned: r.pruned };
  return { value: { kind, object: r.value } as KubeVirtObject, errors: [], pruned: r.pruned };
}

function orThrow<T>(what: string, r: ParseResult<T>): T {
  if (r.value === undefined) throw new FieldErrors(what, r.errors);
  return r.value;
}

function nameOf(input: unknown, kind: string): string {
  const md = isPlainObject(input) ? input.metadata : undefined;
  const name = isPlainObject(md) ? md.name ?? md.generateName : undefined;
  return typeof name === 'string' ? `${kind} ${JSON.stringify(name)}` : kind;
}

/** Like `parse*`, but returns the object or throws `FieldErrors` listing every problem. */
export const decodeVirtualMachineInstance = (input: unknown): VirtualMachineInstance =>
  orThrow(nameOf(input, 'VirtualMachineInstance'), parseVirtualMachineInstance(input));
export const decodeVirtualMachine = (input: unknown): VirtualMachine =>
  orThrow(nameOf(input, 'VirtualMachine'), parseVirtualMachine(input));
export const decodeVirtualMachineInstanceReplicaSet = (input: unknown): VirtualMachineInstanceReplicaSet =>
  orThrow(nameOf(input, 'VirtualMachineInstanceReplicaSet'), parseVirtualMachineInstanceReplicaSet(input));
export const decodeVirtualMachineInstanceMigration = (input: unknown): VirtualMachineInstanceMigration =>
  orThrow(nameOf(input, 'VirtualMachineInstanceMigration'), parseVirtualMachineInstanceMigration(input));
export const decodeKubeVirtObject = (input: unknown): KubeVirtObject =>
  orThrow(nameOf(input, 'object'), parseKubeVirtObject(input));

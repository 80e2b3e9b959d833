/**
 * Decoded JSON/YAML → typed instancetype.kubevirt.io/v1beta1 objects, checked against `./schema.ts`
 * as `../parse.ts` checks the kubevirt.io kinds (field paths, unknown fields pruned and reported).
 * Used where qvirt reads these objects from the API (informers, lookups, ControllerRevision data).
 */
import { describe, fieldError, FieldErrors, type FieldError } from '../field-error.ts';
import { parseWithSchema, type ParseResult } from '../parse.ts';
import { INSTANCETYPE_API_VERSION, type InstancetypeKind } from './constants.ts';
import { InstancetypeSchemaByKind } from './schema.ts';
import type { VirtualMachineClusterInstancetype, VirtualMachineClusterPreference, VirtualMachineInstancetype, VirtualMachinePreference } from './types.ts';

interface ByKind {
  VirtualMachineInstancetype: VirtualMachineInstancetype;
  VirtualMachineClusterInstancetype: VirtualMachineClusterInstancetype;
  VirtualMachinePreference: VirtualMachinePreference;
  VirtualMachineClusterPreference: VirtualMachineClusterPreference;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `input` as an object of `kind` (its apiVersion and kind, when present, must say so). */
export function parseInstancetypeObject<K extends InstancetypeKind>(kind: K, input: unknown): ParseResult<ByKind[K]> {
  const r = parseWithSchema<ByKind[K]>(InstancetypeSchemaByKind[kind], input);
  const extra: FieldError[] = [];
  if (isObj(input)) {
    if (input.apiVersion !== undefined && input.apiVersion !== INSTANCETYPE_API_VERSION) extra.push(fieldError.invalid('apiVersion', `must be ${INSTANCETYPE_API_VERSION} (got ${describe(input.apiVersion)})`));
    if (input.kind !== undefined && input.kind !== kind) extra.push(fieldError.invalid('kind', `must be ${kind} (got ${describe(input.kind)})`));
  }
  return extra.length ? { errors: [...extra, ...r.errors], pruned: r.pruned } : r;
}

/** Like `parseInstancetypeObject`, but returns the object or throws `FieldErrors`. */
export function decodeInstancetypeObject<K extends InstancetypeKind>(kind: K, input: unknown): ByKind[K] {
  const r = parseInstancetypeObject(kind, input);
  if (r.value === undefined) {
    const md = isObj(input) && isObj(input.metadata) ? input.metadata : undefined;
    throw new FieldErrors(typeof md?.name === 'string' ? `${kind} ${JSON.stringify(md.name)}` : kind, r.errors);
  }
  return r.value;
}

/**
 * CEL rules and limits layered onto the structural schema (filled in with the CRD generator step).
 */
import type { ObjectSchema } from './dsl.ts';
import type { Kind } from '../constants.ts';

export function withValidationRules(_kind: Kind, schema: ObjectSchema): ObjectSchema {
  return schema;
}

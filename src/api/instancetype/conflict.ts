/**
 * KubeVirt's `pkg/instancetype/conflict`: a field of the VM (or VMI) that an instance type also
 * sets. Each is refused as a FieldValueInvalid cause at its path with "VM field(s) <path> conflicts
 * with selected instance type" (or the conflict's own message); several join with ", ".
 */
import { FieldErrorType, type FieldError } from '../field-error.ts';
import { InstancetypeMessages } from './constants.ts';

export interface Conflict {
  /** The field path (`spec.template.spec.domain.cpu.sockets`). */
  readonly path: string;
  /** A message of its own (spread checks); else the conflict message. */
  readonly message?: string;
}

export const conflictAt = (base: string, ...names: string[]): Conflict => ({ path: [base, ...names].filter((p) => p !== '').join('.') });

/** `Conflicts.String()`: the paths joined with ", ". */
export const conflictPaths = (conflicts: readonly Conflict[]): string => conflicts.map((c) => c.path).join(', ');

/** `Conflict.Error()`. */
export const conflictMessage = (c: Conflict): string => c.message ?? InstancetypeMessages.conflicts(c.path);

/** `Conflicts.Error()`. */
export const conflictsMessage = (conflicts: readonly Conflict[]): string => InstancetypeMessages.conflicts(conflictPaths(conflicts));

/** `Conflicts.StatusCauses()`: one FieldValueInvalid cause per conflict, at its path. */
export function conflictCauses(conflicts: readonly Conflict[]): FieldError[] {
  return conflicts.map((c) => ({ type: FieldErrorType.Invalid, field: c.path, reason: conflictMessage(c) }));
}

/** Thrown where KubeVirt returns the Conflicts as an error (revision store, expand). */
export class ConflictsError extends Error {
  override name = 'ConflictsError';
  readonly conflicts: readonly Conflict[];
  constructor(conflicts: readonly Conflict[]) {
    super(conflictsMessage(conflicts));
    this.conflicts = conflicts;
  }
}

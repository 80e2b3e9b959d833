/**
 * KubeVirt's migration create admitter's spec rules (`migration-create-admitter.go`,
 * `ValidateVirtualMachineInstanceMigrationSpec`); the checks needing the live VMI and the other
 * migrations are the admission shell's (`src/admission/migration-create-admitter.ts`).
 */
import { FieldPath, fieldError, type FieldError } from '../field-error.ts';
import type { VirtualMachineInstanceMigration } from '../types.ts';

/** The VMIM create admitter's own checks (the VMI lookups happen in the controller). */
export function validateVirtualMachineInstanceMigration(m: VirtualMachineInstanceMigration): FieldError[] {
  const f = FieldPath.root('spec');
  if (!m.spec.vmiName) return [fieldError.required(f.child('vmiName'), 'vmiName is missing')];
  const errors: FieldError[] = [];
  if (m.spec.sendTo && m.spec.receive && m.spec.sendTo.migrationID !== m.spec.receive.migrationID) {
    errors.push(fieldError.invalid(f, `sendTo migrationID ${m.spec.sendTo.migrationID} does not match receive migrationID ${m.spec.receive.migrationID}`));
  }
  return errors;
}

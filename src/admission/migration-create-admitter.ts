/**
 * KubeVirt's VirtualMachineInstanceMigration create admitter (virt-api
 * `migration-create-admitter.go`), as a pure decision over what it looks up: the spec checks, the
 * priority reserved to virt-controller, the VMI (exists, not final, not `LiveMigratable=False`),
 * no other unfinished migration of it, and the decentralized-migration fields behind their
 * feature gate. The messages are KubeVirt's.
 */
import { FeatureGate, isFeatureGateEnabled, type ClusterConfig } from '../api/cluster-config.ts';
import { ConditionReason, GROUP, isFinalMigrationPhase, isFinalVMIPhase, Label, VMIConditionType } from '../api/constants.ts';
import { FieldErrorType } from '../api/field-error.ts';
import type { VirtualMachineInstance, VirtualMachineInstanceMigration } from '../api/types.ts';
import type { AdmissionAttributes, AdmissionDenial } from '../kube/admission.ts';

export const MIGRATION_CREATE_WEBHOOK = 'migration-create-validator.kubevirt.io';

/** What the webhook is registered for: CREATE of a VirtualMachineInstanceMigration. */
export const isMigrationCreate = (a: Pick<AdmissionAttributes, 'operation' | 'group' | 'resource' | 'subresource'>): boolean =>
  a.operation === 'CREATE' && a.group === GROUP && a.resource === 'virtualmachineinstancemigrations' && a.subresource === undefined;

export interface MigrationCreateInput {
  readonly migration: VirtualMachineInstanceMigration;
  /** The VMI `spec.vmiName` names in the migration's namespace, if it exists. */
  readonly vmi: VirtualMachineInstance | undefined;
  /** The namespace's migrations (the one being created is not among them). */
  readonly migrations: readonly VirtualMachineInstanceMigration[];
  /** Whether the request comes from virt-controller's service account. */
  readonly fromVirtController: boolean;
  readonly config: ClusterConfig;
}

/** `webhookutils.ToAdmissionResponse`: field causes → 422 Invalid, messages joined. */
function causesDenial(causes: { type: string; message: string; field?: string }[]): AdmissionDenial {
  return { code: 422, reason: 'Invalid', message: causes.map((c) => c.message).join(', '), causes: causes.map((c) => ({ reason: c.type, message: c.message, ...(c.field !== undefined ? { field: c.field } : {}) })) };
}

/** `webhookutils.ToAdmissionResponseError`: 400 with the error's text. */
const errorDenial = (message: string): AdmissionDenial => ({ code: 400, message });

const isDecentralized = (m: VirtualMachineInstanceMigration): boolean => m.spec.sendTo !== undefined || m.spec.receive !== undefined;

/** `isMigratable`: refused while `LiveMigratable` is False (non-migratable disks are fine for a decentralized migration). */
function notMigratableReason(vmi: VirtualMachineInstance, m: VirtualMachineInstanceMigration): string | undefined {
  for (const c of vmi.status?.conditions ?? []) {
    if (c.type !== VMIConditionType.LiveMigratable || c.status !== 'False') continue;
    if (c.reason === ConditionReason.DisksNotLiveMigratable && isDecentralized(m)) continue;
    return `Cannot migrate VMI, Reason: ${c.reason ?? ''}, Message: ${c.message ?? ''}`;
  }
  return undefined;
}

/** The migration a create review carries, in the request's namespace, with a spec (possibly empty). */
export function migrationUnderReview(a: Pick<AdmissionAttributes, 'object' | 'namespace'>): VirtualMachineInstanceMigration {
  const m = a.object as unknown as VirtualMachineInstanceMigration;
  return { ...m, metadata: { ...m.metadata, namespace: a.namespace }, spec: m.spec ?? {} };
}

/** The admitter's answer: undefined admits the migration. */
export function admitMigrationCreate(i: MigrationCreateInput): AdmissionDenial | undefined {
  const m = i.migration;
  const ns = m.metadata?.namespace ?? '';
  if (!m.spec.vmiName) return causesDenial([{ type: FieldErrorType.Required, message: 'vmiName is missing', field: 'spec.vmiName' }]);
  if (m.spec.priority !== undefined && !i.fromVirtController) {
    return causesDenial([{ type: FieldErrorType.Forbidden, message: 'Migration priority queue, only virt-controller is allowed to set priority field', field: 'spec.migrationPriority' }]);
  }
  const vmi = i.vmi;
  if (!vmi) return errorDenial(`the VMI "${ns}/${m.spec.vmiName}" does not exist`);
  if (isFinalVMIPhase(vmi.status?.phase)) return errorDenial('Cannot migrate VMI in finalized state.');
  const notMigratable = notMigratableReason(vmi, m);
  if (notMigratable) return errorDenial(notMigratable);
  // `ensureNoMigrationConflict` lists by the `kubevirt.io/vmi-name` label KubeVirt's mutator sets at
  // create; qvirt's migration controller sets it a moment later, so `spec.vmiName` counts too.
  const inFlight = i.migrations.find((x) => (x.metadata?.labels?.[Label.MigrationSelector] === m.spec.vmiName || x.spec.vmiName === m.spec.vmiName) && !isFinalMigrationPhase(x.status?.phase));
  if (inFlight) return errorDenial(`in-flight migration detected. Active migration job (${inFlight.metadata?.uid ?? ''}) is currently already in progress for VMI ${inFlight.spec.vmiName ?? m.spec.vmiName}.`);
  if (isDecentralized(m)) {
    if (!isFeatureGateEnabled(i.config, FeatureGate.DecentralizedLiveMigration)) {
      return causesDenial([{ type: FieldErrorType.NotSupported, message: `${FeatureGate.DecentralizedLiveMigration} feature gate is not enabled in kubevirt resource` }]);
    }
    if (m.spec.sendTo && m.spec.receive && m.spec.sendTo.migrationID !== m.spec.receive.migrationID) {
      return causesDenial([{ type: FieldErrorType.Invalid, message: `sendTo migrationID ${m.spec.sendTo.migrationID} does not match receive migrationID ${m.spec.receive.migrationID}` }]);
    }
  }
  return undefined;
}

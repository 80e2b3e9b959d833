// The VMI phase the node agent derives from what its launcher reports about the domain
// (virt-handler's calculateVmPhaseForStatusReason). Pure: the launcher's reachability is an input.
import type { Domain } from '../src/api/domain/domain.ts';
import { LifeCycle, Reason } from '../src/api/domain/lifecycle.ts';
import { MigrationMode, VMIPhase, isFinalVMIPhase } from '../src/api/constants.ts';

export interface VmiView {
  readonly phase: string;
  readonly terminationGracePeriodSeconds?: number | undefined;
  readonly isMigrationTarget?: boolean;
  readonly migrationFailed?: boolean;
  readonly migrationMode?: string | undefined;
}

/** Whether the launcher of a VMI without a domain has come up and answers. */
export type LauncherState = 'initializing' | 'unresponsive' | 'responsive';

export type PhaseDecision =
  | { readonly phase: string; readonly requeueAfterMs?: undefined }
  | { readonly phase: string; readonly requeueAfterMs: number };

/** KubeVirt's isACPIEnabled: a grace period (the VMI's, else the domain's) and ACPI in the domain's features. */
function acpiEnabled(vmi: VmiView, domain: Domain): boolean {
  const vmiGrace = vmi.terminationGracePeriodSeconds;
  const domainGrace = domain.Spec.Metadata.KubeVirt.GracePeriod?.DeletionGracePeriodSeconds ?? 0;
  const hasGrace = (vmiGrace !== undefined && vmiGrace > 0) || (vmiGrace === undefined && domainGrace > 0);
  return hasGrace && domain.Spec.Features?.ACPI != null;
}

export function phaseFromDomain(domain: Domain | undefined, vmi: VmiView, launcher: LauncherState): PhaseDecision {
  if (!domain) {
    if (vmi.isMigrationTarget && vmi.migrationFailed) return { phase: vmi.phase };
    if (vmi.phase === VMIPhase.Scheduled || vmi.phase === VMIPhase.Running) {
      if (launcher === 'initializing') return { phase: vmi.phase, requeueAfterMs: 1000 };
      if (launcher === 'unresponsive') return { phase: vmi.isMigrationTarget ? VMIPhase.WaitingForSync : VMIPhase.Failed };
      return { phase: vmi.phase };
    }
    return { phase: isFinalVMIPhase(vmi.phase) ? vmi.phase : VMIPhase.Scheduled };
  }
  switch (domain.Status.Status) {
    case LifeCycle.Shutoff:
    case LifeCycle.Crashed:
      switch (domain.Status.Reason) {
        case Reason.Crashed:
        case Reason.Panicked:
          return { phase: VMIPhase.Failed };
        case Reason.Destroyed:
          // With ACPI the guest was asked to shut down first: being destroyed means the grace period ran out.
          if (acpiEnabled(vmi, domain)) return { phase: VMIPhase.Failed };
          if (vmi.migrationFailed && vmi.migrationMode === MigrationMode.PostCopy) return { phase: VMIPhase.Failed };
          return { phase: VMIPhase.Succeeded };
        case Reason.Shutdown:
        case Reason.Saved:
        case Reason.FromSnapshot:
          return { phase: VMIPhase.Succeeded };
        default:
          return { phase: vmi.phase };
      }
    case LifeCycle.Paused:
      return { phase: domain.Status.Reason === Reason.PostcopyFailed ? VMIPhase.Failed : VMIPhase.Running };
    case LifeCycle.Running:
    case LifeCycle.Blocked:
    case LifeCycle.PMSuspended:
      return { phase: VMIPhase.Running };
    default:
      return { phase: vmi.phase };
  }
}

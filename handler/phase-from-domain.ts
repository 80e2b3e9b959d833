// The VMI phase the node agent derives from what its launcher reports about the domain
// (virt-handler's calculateVmPhaseForStatusReason). Pure: the launcher's reachability is an input.
import type { Domain } from '../src/api/domain/domain.ts';
import { LifeCycle, Reason } from '../src/api/domain/lifecycle.ts';

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

const FINAL = new Set(['Succeeded', 'Failed']);

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
    if (vmi.phase === 'Scheduled' || vmi.phase === 'Running') {
      if (launcher === 'initializing') return { phase: vmi.phase, requeueAfterMs: 1000 };
      if (launcher === 'unresponsive') return { phase: vmi.isMigrationTarget ? 'WaitingForSync' : 'Failed' };
      return { phase: vmi.phase };
    }
    return { phase: FINAL.has(vmi.phase) ? vmi.phase : 'Scheduled' };
  }
  switch (domain.Status.Status) {
    case LifeCycle.Shutoff:
    case LifeCycle.Crashed:
      switch (domain.Status.Reason) {
        case Reason.Crashed:
        case Reason.Panicked:
          return { phase: 'Failed' };
        case Reason.Destroyed:
          // With ACPI the guest was asked to shut down first: being destroyed means the grace period ran out.
          if (acpiEnabled(vmi, domain)) return { phase: 'Failed' };
          if (vmi.migrationFailed && vmi.migrationMode === 'PostCopy') return { phase: 'Failed' };
          return { phase: 'Succeeded' };
        case Reason.Shutdown:
        case Reason.Saved:
        case Reason.FromSnapshot:
          return { phase: 'Succeeded' };
        default:
          return { phase: vmi.phase };
      }
    case LifeCycle.Paused:
      return { phase: domain.Status.Reason === Reason.PostcopyFailed ? 'Failed' : 'Running' };
    case LifeCycle.Running:
    case LifeCycle.Blocked:
    case LifeCycle.PMSuspended:
      return { phase: 'Running' };
    default:
      return { phase: vmi.phase };
  }
}

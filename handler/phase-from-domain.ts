// The VMI phase the node agent derives from what its launcher reports about the domain
// (virt-handler's calculateVmPhaseForStatusReason). Pure: the launcher's reachability is an input.

/** What a launcher says about its domain, in KubeVirt's lifecycle and reason strings. */
export interface DomainView {
  readonly status: string;
  readonly reason: string;
  /** The domain has ACPI (KubeVirt: spec.features.acpi present). */
  readonly acpi: boolean;
  /** The grace period recorded in the domain's KubeVirt metadata, if any. */
  readonly gracePeriodSeconds?: number | undefined;
}

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

function acpiEnabled(vmi: VmiView, domain: DomainView): boolean {
  const vmiGrace = vmi.terminationGracePeriodSeconds;
  const hasGrace = (vmiGrace !== undefined && vmiGrace > 0) || (vmiGrace === undefined && (domain.gracePeriodSeconds ?? 0) > 0);
  return hasGrace && domain.acpi;
}

export function phaseFromDomain(domain: DomainView | undefined, vmi: VmiView, launcher: LauncherState): PhaseDecision {
  if (!domain) {
    if (vmi.isMigrationTarget && vmi.migrationFailed) return { phase: vmi.phase };
    if (vmi.phase === 'Scheduled' || vmi.phase === 'Running') {
      if (launcher === 'initializing') return { phase: vmi.phase, requeueAfterMs: 1000 };
      if (launcher === 'unresponsive') return { phase: vmi.isMigrationTarget ? 'WaitingForSync' : 'Failed' };
      return { phase: vmi.phase };
    }
    return { phase: FINAL.has(vmi.phase) ? vmi.phase : 'Scheduled' };
  }
  switch (domain.status) {
    case 'Shutoff':
    case 'Crashed':
      switch (domain.reason) {
        case 'Crashed':
        case 'Panicked':
          return { phase: 'Failed' };
        case 'Destroyed':
          // With ACPI the guest was asked to shut down first: being destroyed means the grace period ran out.
          if (acpiEnabled(vmi, domain)) return { phase: 'Failed' };
          if (vmi.migrationFailed && vmi.migrationMode === 'PostCopy') return { phase: 'Failed' };
          return { phase: 'Succeeded' };
        case 'Shutdown':
        case 'Saved':
        case 'FromSnapshot':
          return { phase: 'Succeeded' };
        default:
          return { phase: vmi.phase };
      }
    case 'Paused':
      return { phase: domain.reason === 'PostcopyFailed' ? 'Failed' : 'Running' };
    case 'Running':
    case 'Blocked':
    case 'PMSuspended':
      return { phase: 'Running' };
    default:
      return { phase: vmi.phase };
  }
}

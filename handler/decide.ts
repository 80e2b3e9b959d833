// virt-handler's sync decision matrix (pkg/virt-handler/vm.go, sync): from what the cluster wants
// (the VMI) and what the node has (the domain its launcher reports), the one action to take now.
// Pure; the controller shell carries the action out. Priority, as KubeVirt's: shutdown → force
// shutdown of an irrecoverable domain → delete → update.
import type { Domain } from '../src/api/domain/domain.ts';
import { LifeCycle, Reason } from '../src/api/domain/lifecycle.ts';
import { VMIPhase, isFinalVMIPhase } from '../src/api/constants.ts';

/** The parts of a VMI the matrix reads; `undefined` VMI means the object is gone. */
export interface DecideVmi {
  readonly phase: string;
  readonly deleting: boolean;
  /** When the VMI entered Scheduled (ms since epoch), from status.phaseTransitionTimestamps. */
  readonly scheduledAtMs?: number | undefined;
}

export type Decision =
  | { readonly action: 'shutdown' }
  | { readonly action: 'forceShutdown' }
  | { readonly action: 'delete' }
  | { readonly action: 'update' }
  | { readonly action: 'requeue'; readonly afterMs: number }
  | { readonly action: 'none' };

/** A Shutoff domain with no reason while the VMI was just scheduled: the launcher is still defining it. */
const STARTING_UP_WINDOW_MS = 5 * 60_000;

export function domainAlive(domain: Domain | undefined): boolean {
  return domain !== undefined && domain.Status.Status !== LifeCycle.Shutoff && domain.Status.Status !== LifeCycle.Crashed;
}

/**
 * The action for one VMI key. `phaseFromDomain` is what handler/phase-from-domain computes for this
 * domain; virt-handler updates (syncs the domain) only while that agrees with the VMI's phase.
 */
export function decide(vmi: DecideVmi | undefined, domain: Domain | undefined, phaseFromDomain: string | undefined, nowMs: number): Decision {
  // The launcher cannot be reached: nothing can be decided about its domain.
  if (domain?.Status.Status === LifeCycle.Unknown) return { action: 'none' };
  const alive = domainAlive(domain);
  const final = vmi !== undefined && isFinalVMIPhase(vmi.phase);

  let shouldShutdown = false;
  let shouldDelete = false;
  let shouldUpdate = false;
  let forceShutdown = false;

  const stopWanted = (domain?.Spec.Metadata.KubeVirt.GracePeriod?.MarkedForGracefulShutdown === true && vmi?.phase === VMIPhase.Running) || vmi === undefined || vmi.deleting;
  if (stopWanted) {
    if (alive) shouldShutdown = true;
    else shouldDelete = true;
  }
  if (final) shouldDelete = true;
  if (domain && !alive && vmi && !final) {
    const noReason = domain.Status.Reason === Reason.Unknown;
    if (domain.Status.Status === LifeCycle.Shutoff && noReason && vmi.phase === VMIPhase.Scheduled && vmi.scheduledAtMs !== undefined && nowMs - vmi.scheduledAtMs < STARTING_UP_WINDOW_MS) {
      if (!shouldShutdown && !shouldDelete) return { action: 'requeue', afterMs: 5000 };
    } else {
      shouldDelete = true;
    }
  }
  if (vmi && !final && !vmi.deleting && phaseFromDomain !== undefined && phaseFromDomain === vmi.phase) shouldUpdate = true;
  if (domain?.Status.Status === LifeCycle.Paused && domain.Status.Reason === Reason.PostcopyFailed) forceShutdown = true;

  if (shouldShutdown) return { action: 'shutdown' };
  if (forceShutdown) return { action: 'forceShutdown' };
  if (shouldDelete) return { action: 'delete' };
  if (shouldUpdate) return { action: 'update' };
  return { action: 'none' };
}

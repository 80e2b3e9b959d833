// The domain's QMP event loop (what libvirt's domain event callbacks are to KubeVirt's
// virt-launcher): one subscription to every event of one QEMU, handled in order — the pure
// domain-state transitions (launcher/domain/state.ts), the Kubernetes events they mean
// (launcher/domain/k8s-events.ts), and what the launcher does about a transition: a soft reboot's
// power-off becomes reset + cont, an ended domain stops QEMU (libvirt's on_poweroff/on_crash =
// destroy). The guest agent's channel, hotplug, migration and the block jobs take their own
// subscriptions for the events they wait for.
import type { Logger } from '../../src/log/logger.ts';
import type { GuestPanicInfo } from '../../src/api/domain/domain.ts';
import { INITIAL_EVENT_MEMORY, guestPanicInfo, k8sEventsFor, type EventMemory } from '../domain/k8s-events.ts';
import { isFinal, type DomainInput, type DomainState } from '../domain/state.ts';
import type { PlanDevice } from '../convert/plan.ts';
import type { QemuProcess } from './qemu-process.ts';
import { errorMessage, onQmpEvents, type QmpEventMessage, type QmpEventStream } from './qmp-connection.ts';

/** What the event loop needs of the domain manager. */
export interface DomainEventHost {
  readonly log: Logger;
  /** Feeds the state machine (publishing a changed lifecycle); returns the state before. */
  apply(input: DomainInput): DomainState;
  /** The state now. */
  readonly state: DomainState;
  /** The domain's guest devices now (which volume an IO error hit, the watchdog's alias). */
  devices(): readonly PlanDevice[];
  k8sEvent(type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export class DomainEventLoop {
  private readonly proc: QemuProcess;
  private readonly host: DomainEventHost;
  private readonly sub: QmpEventStream;
  private memory: EventMemory = INITIAL_EVENT_MEMORY;
  private panic: GuestPanicInfo | null = null;

  /** Subscribes to every event of `proc`'s QMP connection; the loop ends with the connection. */
  constructor(proc: QemuProcess, host: DomainEventHost) {
    this.proc = proc;
    this.host = host;
    this.sub = onQmpEvents(proc.qmp, undefined, (ev) => this.handle(ev), host.log);
  }

  /** The last guest panic's details (null before any). */
  get panicInfo(): GuestPanicInfo | null {
    return this.panic;
  }

  close(): void {
    this.sub.close();
  }

  private handle(ev: QmpEventMessage): void {
    const host = this.host;
    const data = ev.data ?? {};
    // Before the state publishes the panic: the domain it reports carries the panic's details.
    if (ev.event === 'GUEST_PANICKED') this.panic = guestPanicInfo(data.info);
    const prev = host.apply({ kind: 'qmp', event: ev.event, data });
    const next = host.state;
    const reported = k8sEventsFor(ev.event, data, host.devices(), this.memory, { softRebootRequested: prev.rebooting !== undefined, ...(ev.timestamp ? { atMs: ev.timestamp.seconds * 1000 + Math.floor(ev.timestamp.microseconds / 1000) } : {}) });
    this.memory = reported.memory;
    for (const e of reported.events) host.k8sEvent(e.type, e.reason, e.message);
    const proc = this.proc;
    if (ev.event === 'SHUTDOWN' && next.rebooting === 'resetting' && prev.rebooting !== 'resetting') {
      // Soft reboot via ACPI: the guest powered off; bring it back like libvirt's fake reboot.
      void (async () => {
        try {
          await proc.qmp.execute('system_reset');
          await proc.qmp.execute('cont');
          host.log.info('soft reboot: guest powered off, reset and continued');
        } catch (err) {
          host.log.error({ err: errorMessage(err) }, 'soft reboot: reset after power-off failed');
        }
      })();
    }
    if (isFinal(next) && !isFinal(prev) && !proc.hasExited) {
      // Guest power-off under -no-shutdown, or a panic: the domain has ended, QEMU goes too
      // (libvirt's on_poweroff/on_crash = destroy).
      host.log.info({ status: next.status, reason: next.reason }, 'domain ended: stopping QEMU');
      void proc.terminate().catch((err: unknown) => host.log.error({ err: errorMessage(err) }, 'stopping QEMU failed'));
    }
  }
}

// What the supervisor runs: the converter's LaunchPlan (the fields the supervisor reads, declared
// once in launcher/convert/plan.ts) and what was prepared around it to start and release it — the
// domain facts the handler sees, hooks before `cont` and after exit, the hotplug environment.
// launcher/launch-plan.ts makes one from a VMI; tests give just an argv.
import type { LaunchPlan } from '../convert/plan.ts';
import type { HotplugEnvironment } from './hotplug.ts';
import type { QmpConnection } from './qmp-connection.ts';

/** The LaunchPlan fields the supervisor reads; only argv (argv[0] may be the QEMU binary) is required. */
export type SupervisedPlan = Pick<LaunchPlan, 'argv'> &
  Partial<Pick<LaunchPlan, 'env' | 'qmpDebugSocket' | 'guestAgentSocket' | 'vncSocket' | 'pidFile' | 'startPaused' | 'setupCommands' | 'devices'>>;

export interface PreparedLaunch extends SupervisedPlan {
  /** The QEMU binary when argv[0] is not one. */
  binary?: string | undefined;
  /** The virtserialport id QEMU names in VSERPORT_CHANGE for the agent channel. Default `channel0`. */
  guestAgentChannelId?: string | undefined;
  /** Runs while QEMU is paused in prelaunch, after setupCommands, before `cont`. */
  preStart?: ((qmp: QmpConnection) => Promise<void>) | undefined;
  /** Facts for the domain the handler sees. */
  domain?: {
    uuid?: string | undefined;
    hypervisor?: string | undefined;
    memoryBytes?: number | undefined;
    acpi?: boolean | undefined;
    /** Extra api.DomainSpec sections (Go field names), e.g. Devices.Interfaces. */
    spec?: Record<string, unknown> | undefined;
  } | undefined;
  /** Runs after QEMU has exited (release disks, sockets...). */
  cleanup?: (() => Promise<void> | void) | undefined;
  /** What hotplug on the running domain needs (absent: SyncVirtualMachine changes nothing live). */
  hotplug?: HotplugEnvironment | undefined;
  /** DEVICE_DELETED wait before an unplug is reported as not acknowledged (default 10 s). */
  unplugAckTimeoutMs?: number | undefined;
  /** Where an access credential Secret is mounted (absent: no propagation through the agent). */
  accessCredentialDir?: ((secretName: string) => string) | undefined;
}

// KubeVirt's exact strings for the domain a launcher reports to its node agent
// (pkg/virt-launcher/virtwrap/api/schema.go). Both sides import them from here; never retype them.

/** Domain lifecycle (api.LifeCycle). Note `ShuttingDown` is libvirt's SHUTDOWN state. */
export const LifeCycle = {
  NoState: 'NoState',
  Running: 'Running',
  Blocked: 'Blocked',
  Paused: 'Paused',
  ShuttingDown: 'ShuttingDown',
  Shutoff: 'Shutoff',
  Crashed: 'Crashed',
  PMSuspended: 'PMSuspended',
  /** The launcher is unreachable (set by the handler, never by a launcher). */
  Unknown: 'Unknown',
} as const;
export type LifeCycle = (typeof LifeCycle)[keyof typeof LifeCycle];

/** Why the domain is in its state (api.StateChangeReason). */
export const Reason = {
  Unknown: 'Unknown',
  User: 'User',
  // Shutoff
  Shutdown: 'Shutdown',
  Destroyed: 'Destroyed',
  Migrated: 'Migrated',
  Crashed: 'Crashed',
  Panicked: 'Panicked',
  Saved: 'Saved',
  Failed: 'Failed',
  FromSnapshot: 'FromSnapshot',
  // NoState
  NonExistent: 'NonExistent',
  // Paused
  Migration: 'Migration',
  Save: 'Save',
  Dump: 'Dump',
  IOError: 'IOError',
  Watchdog: 'Watchdog',
  ShuttingDown: 'ShuttingDown',
  Snapshot: 'Snapshot',
  StartingUp: 'StartingUp',
  Postcopy: 'Postcopy',
  PostcopyFailed: 'PostcopyFailed',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/** api.Domain's TypeMeta, as KubeVirt's NewDomainReferenceFromName sets it. */
export const DOMAIN_KIND = 'Domain';
export const DOMAIN_API_VERSION = '1.2.2';

/** Guest filesystem freeze states (api.FSThawed / api.FSFrozen). */
export const FSFreezeStatus = { Thawed: 'thawed', Frozen: 'frozen' } as const;

/** The libvirt-style domain name of a VMI: `<namespace>_<name>`. */
export function domainName(namespace: string, name: string): string {
  return `${namespace}_${name}`;
}

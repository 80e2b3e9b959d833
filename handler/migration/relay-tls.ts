// Whether a migration's relay between the node agents uses TLS: KubeVirt's
// `migrations.disableTLS` (MigrationConfiguration; "usually a bad idea", default false).
//
// Both ends must agree: a TLS source cannot talk to a plain target, nor the reverse. KubeVirt's
// migration-proxy reads the setting from each handler's own view of the KubeVirt CR when it opens
// its end (pkg/virt-handler/migration-proxy StartTargetListener / StartSourceListener), so a
// configuration change between the target's listen and the source's dial makes them disagree and
// the migration fail. qvirt's node agents read it instead from the copy the migration controller
// put into the VMI's status.migrationState.migrationConfiguration at the hand-off (KubeVirt's
// resolved VMIMConfigurationOptions, which carry disableTLS): one value, fixed for the migration's
// life, that both ends read from the same object — and the node agents need no watch on the
// KubeVirt CR. A migration state without it (handed off without a configuration) uses TLS,
// KubeVirt's default.
import type { VirtualMachineInstanceMigrationState } from '../../src/api/types.ts';
import type { MigrationTls } from './tls.ts';

export type RelayTlsChoice =
  /** `tls` undefined: plain TCP (disableTLS). */
  | { readonly ok: true; readonly tls: MigrationTls | undefined }
  | { readonly ok: false; readonly reason: string };

/** The TLS material for this migration's relay, or why there is none to give. `agentTls`: this node agent's handler certificate, if it has one. */
export function relayTlsFor(ms: VirtualMachineInstanceMigrationState | undefined, agentTls: MigrationTls | undefined): RelayTlsChoice {
  if (ms?.migrationConfiguration?.disableTLS === true) return { ok: true, tls: undefined };
  if (agentTls) return { ok: true, tls: agentTls };
  return { ok: false, reason: 'status.migrationState.migrationConfiguration.disableTLS is not set, so the node agents relay the migration over TLS, but this node agent has no migration certificate' };
}

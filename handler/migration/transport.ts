// How a migration's stream goes from the source QEMU to the target QEMU, decided by the target
// node agent when it prepares the target (pure):
// - `direct`: the target QEMU listens on the target pod's own address and the source QEMU connects
//   to it, with QEMU's own TLS (tls-creds-x509, verify-peer) on credentials the node agents issue for
//   this one migration (direct-credentials.ts); multifd channels go the same way. No user-space copy.
// - `relay`: the node agents relay the stream (proxy.ts: pod socket → node agent → TLS → node agent
//   → pod socket), KubeVirt's design, for clusters where pods cannot reach one another.
// The choice: the VMI's `qvirt.io/migration-transport` annotation (`direct`, `relay`), else the node
// agent's setting (QVIRT_MIGRATION_TRANSPORT), else automatic — direct when the target pod has an
// IP (the Kubernetes network model: every pod reaches every pod IP), relay otherwise. A block
// migration goes direct too: the target QEMU also serves the disks over NBD on the pod's address
// (KubeVirt's block migration port), with the same TLS (the migration fault suite runs over both
// transports). A VMI with a passt interface (passt binds the pod's ports) takes the relay, so does
// a TLS migration whose node agent holds no CA key to issue the credentials.
import { MIGRATION_TRANSPORT_ANNOTATION, DIRECT_MIGRATION_PORT, type MigrationTransportSetting } from '../../src/api/migration.ts';

/** The environment variable holding a node agent's transport setting (`auto`, `direct`, `relay`; default `auto`). */
export const TRANSPORT_ENV = 'QVIRT_MIGRATION_TRANSPORT';

export type MigrationTransportChoice =
  /**
   * `address` and `port`: the target pod's own; undefined when the pod shares its node's network
   * (hostIP = podIP): then the node's migration address and a free port there.
   */
  | { readonly kind: 'direct'; readonly address: string | undefined; readonly port: number | undefined; readonly why: string }
  | { readonly kind: 'relay'; readonly why: string };

/** A setting's value, or undefined when it names no transport. */
export function parseTransportSetting(v: string | undefined): MigrationTransportSetting | undefined {
  return v === 'auto' || v === 'direct' || v === 'relay' ? v : undefined;
}

export function chooseMigrationTransport(o: {
  /** The VMI's annotations. */
  readonly annotations: Readonly<Record<string, string>> | undefined;
  /** The node agent's setting. */
  readonly setting: MigrationTransportSetting;
  /** The target pod's status (podIP, hostIP). */
  readonly targetPod: { readonly podIP?: string | undefined; readonly hostIP?: string | undefined } | undefined;
  /** The VMI has a passt interface: passt binds the pod's ports (all of them when none are listed), KubeVirt's 49152 among them. */
  readonly passt: boolean;
  /** The migration uses TLS (not disableTLS). */
  readonly tls: boolean;
  /** This node agent can issue the credentials (it holds the CA's key). */
  readonly canIssue: boolean;
}): MigrationTransportChoice {
  const annotated = parseTransportSetting(o.annotations?.[MIGRATION_TRANSPORT_ANNOTATION]);
  const setting = annotated !== undefined && annotated !== 'auto' ? annotated : o.setting;
  const source = annotated !== undefined && annotated !== 'auto' ? `annotation ${MIGRATION_TRANSPORT_ANNOTATION}` : `${TRANSPORT_ENV}=${o.setting}`;
  if (setting === 'relay') return { kind: 'relay', why: `${source} asks for the relay` };
  if (o.passt) return { kind: 'relay', why: 'a passt interface: passt holds the pod\'s ports' };
  if (o.tls && !o.canIssue) return { kind: 'relay', why: 'this node agent has no CA key to issue the migration credentials' };
  const ip = o.targetPod?.podIP;
  if (!ip) return { kind: 'relay', why: 'the target pod has no IP' };
  const shared = o.targetPod?.hostIP !== undefined && o.targetPod.hostIP === ip;
  const why = setting === 'direct' ? `${source} asks for direct` : 'the target pod has an IP';
  // A pod of its own network listens on KubeVirt's migration port; a pod on its node's network on a
  // free port of the node's address (which the node agent knows better than the pod's status).
  return shared ? { kind: 'direct', address: undefined, port: undefined, why } : { kind: 'direct', address: ip, port: DIRECT_MIGRATION_PORT, why };
}

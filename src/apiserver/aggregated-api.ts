// An API group the embedded server serves through another component in the same process, as
// kube-apiserver's aggregation layer serves an APIService's group through its backend: the server
// authenticates the caller, answers the group's discovery entry itself (`/apis` and `/apis/GROUP`)
// and hands every other request under `/apis/GROUP/` — websocket upgrades included — to the backend
// with the user it authenticated. The local mode serves KubeVirt's `subresources.kubevirt.io` so.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { User } from './auth.ts';
import type { APIResource } from '../api/kube.ts';

export interface AggregatedApi {
  readonly group: string;
  /** Served versions, the preferred first. */
  readonly versions: readonly string[];
  /** A version's APIResourceList entries (what the backend serves at `/apis/GROUP/VERSION`), for aggregated discovery. */
  resources(version: string): readonly APIResource[];
  handle(req: IncomingMessage, res: ServerResponse, user: User | undefined): Promise<void>;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, user: User | undefined): Promise<void>;
}

/** The group's entry in `/apis` (and, with kind APIGroup, the answer at `/apis/GROUP`). */
export function aggregatedGroupDoc(a: AggregatedApi): { name: string; versions: object[]; preferredVersion: object } {
  const vs = a.versions.map((v) => ({ groupVersion: `${a.group}/${v}`, version: v }));
  return { name: a.group, versions: vs, preferredVersion: vs[0]! };
}

/** The aggregated API a path belongs to, if any. Pure. */
export function aggregatedFor(apis: readonly AggregatedApi[], path: string): AggregatedApi | undefined {
  return apis.find((a) => path === `/apis/${a.group}` || path.startsWith(`/apis/${a.group}/`));
}

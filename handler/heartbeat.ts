// virt-handler's heartbeat (pkg/virt-handler/heartbeat): every minute a strategic-merge patch on
// this Node sets `kubevirt.io/schedulable: "true"`, the node labels launcher pods select on, and
// the `kubevirt.io/heartbeat` annotation (now, RFC 3339). On shutdown: schedulable "false", so
// virt-controller stops placing VMIs here.
import { Annotation, Label } from '../src/api/constants.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { Resources } from '../src/kube/resource.ts';
import type { Logger } from '../src/log/logger.ts';

/** The labels this node advertises for launcher pods' nodeSelectors. */
export const NODE_FEATURE_LABELS: Readonly<Record<string, string>> = { 'machine-type.node.kubevirt.io/q35': 'true' };
export const HEARTBEAT_INTERVAL_MS = 60_000;

export function heartbeatPatch(schedulable: boolean, now: Date): { metadata: { labels: Record<string, string>; annotations: Record<string, string> } } {
  return {
    metadata: {
      labels: { [Label.NodeSchedulable]: String(schedulable), ...(schedulable ? NODE_FEATURE_LABELS : {}) },
      annotations: { [Annotation.Heartbeat]: now.toISOString().replace(/\.\d+Z$/, 'Z') },
    },
  };
}

export class Heartbeat {
  private timer?: NodeJS.Timeout;
  private readonly client: KubeClient;
  private readonly nodeName: string;
  private readonly log: Logger;

  constructor(client: KubeClient, nodeName: string, log: Logger) {
    this.client = client;
    this.nodeName = nodeName;
    this.log = log;
  }

  async beat(schedulable = true): Promise<void> {
    await this.client.patch(Resources.nodes, undefined, this.nodeName, heartbeatPatch(schedulable, new Date()), 'strategic');
  }

  async start(intervalMs = HEARTBEAT_INTERVAL_MS): Promise<void> {
    await this.beat(true);
    const next = () => {
      // KubeVirt jitters the period by up to 1.2×.
      this.timer = setTimeout(() => {
        this.beat(true).catch((err: unknown) => this.log.warn({ node: this.nodeName, err: (err as Error).message }, 'heartbeat failed')).finally(next);
      }, intervalMs * (1 + Math.random() * 0.2));
      this.timer.unref();
    };
    next();
  }

  /** Stops beating and marks the node unschedulable. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined as unknown as NodeJS.Timeout;
    await this.beat(false).catch((err: unknown) => this.log.warn({ node: this.nodeName, err: (err as Error).message }, 'could not mark the node unschedulable'));
  }
}

// The CLI's way to a VMI's node agent, against a real API server: VMI → status.nodeName → the
// Node's endpoint and CA annotations → HTTPS verified with that CA. The errors a user meets when a
// link of that chain is missing or wrong name the node, the URL and what to check.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:net';
import { HANDLER_CA_ANNOTATION, HANDLER_ENDPOINT_ANNOTATION } from '../../src/api/constants.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { Resources } from '../../src/kube/resource.ts';
import { UserError } from '../../src/kube/user-error.ts';
import { HandlerEndpoint, getVmi, resolveHandler } from '../../src/kube/handler-endpoint.ts';
import { callVmi } from '../../src/cli/vmi-ops.ts';
import type { ClusterContext } from '../../src/cli/kube-context.ts';
import { startTestServer } from '../apiserver/lib.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, UserError, String(err));
    assert.match((err as Error).message, re);
    return;
  }
  assert.unreachable(`expected an error matching ${re}`);
}

test('the chain VMI → Node → endpoint, and its errors', async () => {
  const srv = await startTestServer({ tls: true });
  const client = new KubeClient(srv.kc);
  const ctx: ClusterContext = { client, namespace: 'default', source: { from: 'flag', path: srv.api.kubeconfigPath! }, server: srv.api.url };
  // A port that nothing listens on.
  const closed = await new Promise<number>((resolve) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)); }); });
  try {
    await rejects(getVmi(ctx, 'nope'), /^VirtualMachineInstance "nope" not found in namespace "default"$/);
    const vmi = { metadata: { name: 'v1', namespace: 'default' }, spec: { domain: { devices: {} } }, status: { phase: 'Scheduling' } } as VirtualMachineInstance;
    await rejects(resolveHandler(ctx, vmi), /"v1" in namespace "default" is not on a node yet \(phase Scheduling\)/);
    const on = { ...vmi, status: { phase: 'Running', nodeName: 'node-a' } } as VirtualMachineInstance;
    await rejects(resolveHandler(ctx, on), /^Node "node-a" not found$/);
    await client.create(Resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } });
    await rejects(resolveHandler(ctx, on), /node "node-a" does not publish a node agent endpoint \(annotation qvirt\.io\/handler-endpoint\); is the qvirt node agent/);
    const annotate = (a: Record<string, string>) => client.patch(Resources.nodes, undefined, 'node-a', { metadata: { annotations: a } });
    await annotate({ [HANDLER_ENDPOINT_ANNOTATION]: `http://127.0.0.1:${closed}` });
    await rejects(resolveHandler(ctx, on), /must be an https:\/\/ URL/);
    await annotate({ [HANDLER_ENDPOINT_ANNOTATION]: `https://127.0.0.1:${closed}`, [HANDLER_CA_ANNOTATION]: 'bm90IGEgY2VydA==' });
    await rejects(resolveHandler(ctx, on), /does not hold a base64 PEM CA certificate/);
    // Nothing listens there.
    await annotate({ [HANDLER_CA_ANNOTATION]: b64(srv.api.pki!.caCert) });
    await rejects(callVmi(ctx, on, 'pause', 'PUT', {}), new RegExp(`^cannot reach the node agent on node "node-a" at https://127\\.0\\.0\\.1:${closed}: ECONNREFUSED`));
    // An HTTPS server whose certificate the published CA did not sign (the API server's, with a CA of a different cluster).
    const other = await startTestServer({ tls: true });
    try {
      await annotate({ [HANDLER_ENDPOINT_ANNOTATION]: srv.api.url, [HANDLER_CA_ANNOTATION]: b64(other.api.pki!.caCert) });
      await rejects(callVmi(ctx, on, 'guestosinfo', 'GET'), /^cannot verify the node agent on node "node-a" at https:\/\/127\.0\.0\.1:\d+: .*certificate/);
    } finally {
      await other.close();
    }
    // The right CA: TLS succeeds and the server's own error answer is reported (an API server is not a node agent).
    await annotate({ [HANDLER_CA_ANNOTATION]: b64(srv.api.pki!.caCert) });
    await rejects(callVmi(ctx, on, 'guestosinfo', 'GET'), /^guestosinfo of VirtualMachineInstance "v1" in namespace "default" failed: /);
    await rejects((await HandlerEndpoint.forVmi(ctx, on)).stream('console'), /^console of VirtualMachineInstance "v1" in namespace "default" failed: /);
    // virt-api's checks come before any call.
    await rejects(callVmi(ctx, { ...on, status: { ...on.status, conditions: [{ type: 'Paused', status: 'True' }] } } as VirtualMachineInstance, 'pause', 'PUT', {}), /^cannot pause VirtualMachineInstance "v1" in namespace "default": VMI is already paused$/);
  } finally {
    await client.close();
    await srv.close();
  }
});

test.run();

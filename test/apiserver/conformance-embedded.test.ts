// The API conformance cases (test/cluster/conformance-cases.ts) against the embedded API server, with
// the same assertions the real kube-apiserver passes.
import { test } from 'uvu';
import { conformanceSuite, RUN_LABEL } from '../cluster/conformance-cases.ts';
import { startTestServer } from './lib.ts';

/** Events the server keeps for watches: small, so the suite can write past it. */
const HISTORY = 64;
const s = await startTestServer({ historySize: HISTORY });

conformanceSuite(test, {
  name: 'embedded',
  kc: s.kc,
  async expiredResourceVersion(ctx) {
    const path = `${ctx.configMaps}/history`;
    const c = await ctx.api.request('POST', ctx.configMaps, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'history', labels: { [RUN_LABEL]: ctx.run } } } });
    const before = String(c.body.metadata?.resourceVersion);
    for (let i = 0; i <= HISTORY; i++) await ctx.api.request('PATCH', path, { contentType: 'application/merge-patch+json', body: { data: { i: String(i) } } });
    return before;
  },
});
test.after(() => s.close());
test.run();

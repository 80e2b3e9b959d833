// API conformance: one set of cases, run against the real kube-apiserver (test/cluster/conformance-real.test.ts)
// and against qvirt's embedded API server (test/apiserver/conformance-embedded.test.ts) with the same
// assertions, so the embedded server cannot drift from the real one unnoticed.
//
// Everything a case touches is its own: a CRD in a group made for the run
// (widgets.<run>.conformance.qvirt.io: namespaced, status and scale subresources, CEL rules, printer
// columns), two namespaces conformance-<run>[-b], and ConfigMaps in them. Nothing of kubevirt.io is
// read or written. `after` removes all of it, finalizers first.
//
// Where the embedded server differs ON PURPOSE, the case says so in `differs` and asserts the
// behaviour that explains, through `ctx.which({ real, embedded })` (which refuses to answer for a
// case that declares no difference). There is no other way for a case to tell the servers apart.
import * as assert from 'uvu/assert';
import type { Test } from 'uvu';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ManagedFieldsEntry } from '../../src/api/kube.ts';
import { Resources, type ResourceType } from '../../src/kube/resource.ts';
import { ContentTypes, kubeHttp, TABLE_ACCEPT, type KObj, type KubeHttp, type Response, type Status, type StatusCause, type WatchEvent } from './conformance-client.ts';

export type ServerKind = 'real' | 'embedded';

export interface ConformanceTarget {
  readonly name: ServerKind;
  readonly kc: KubeConfig;
  /**
   * A resourceVersion the server no longer serves a watch from (made or found for `ctx`), or
   * undefined when it has expired none yet.
   */
  expiredResourceVersion(ctx: Ctx): Promise<string | undefined>;
}

export interface Ctx {
  readonly api: KubeHttp;
  readonly server: ServerKind;
  /** Random, per run: in the group, the namespaces and the `conformance.qvirt.io/run` label. */
  readonly run: string;
  readonly group: string;
  readonly ns: string;
  readonly ns2: string;
  /** widgets in `ns` */
  readonly widgets: string;
  /** The Widget resource (for watches). */
  readonly widgetType: ResourceType;
  /** configmaps in `ns` */
  readonly configMaps: string;
  /** The value for this server, for a case that declares how the servers differ. */
  which<T>(v: { real: T; embedded: T }): T;
  /** The target's expired resourceVersion (see ConformanceTarget). */
  expiredResourceVersion(): Promise<string | undefined>;
}

export interface ConformanceCase {
  readonly name: string;
  /** How a server differs from the other here on purpose, and why (shown when the case runs). */
  readonly differs?: { readonly embedded?: string; readonly real?: string };
  run(ctx: Ctx): Promise<void>;
}

export const RUN_LABEL = 'conformance.qvirt.io/run';
export const HOLD = 'conformance.qvirt.io/hold';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

// ------------------------------------------------------------------ helpers

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** The body of a 2xx answer as an object (fails with the Status otherwise). */
function ok(res: Response, what: string): KObj {
  if (res.code < 200 || res.code > 299) assert.unreachable(`${what}: expected success, got ${res.code}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The Status of a failed answer, checked for code and reason. */
function failure(res: Response, code: number, reason: string, what: string): Status {
  assert.is(res.code, code, `${what}: HTTP code (body ${JSON.stringify(res.body).slice(0, 600)})`);
  const st = res.body as unknown as Status;
  assert.is(st.kind, 'Status', `${what}: a Status`);
  assert.is(st.status, 'Failure', `${what}: status`);
  assert.is(st.code, code, `${what}: Status.code`);
  assert.is(st.reason, reason, `${what}: reason`);
  return st;
}

/** Causes in a stable order, duplicates dropped (kube-apiserver sometimes reports one twice). */
function causes(st: Status): StatusCause[] {
  const seen = new Set<string>();
  const out: StatusCause[] = [];
  for (const c of st.details?.causes ?? []) {
    const k = JSON.stringify([c.field, c.reason, c.message]);
    if (!seen.has(k)) { seen.add(k); out.push({ reason: c.reason, message: c.message, field: c.field }); }
  }
  return out.sort((a, b) => `${a.field}: ${a.message}`.localeCompare(`${b.field}: ${b.message}`));
}

const meta = (o: KObj): NonNullable<KObj['metadata']> => o.metadata ?? {};
const rvOf = (o: KObj): number => Number(meta(o).resourceVersion);
const names = (list: KObj): string[] => (list.items ?? []).map((i) => String(meta(i).name)).sort();

/** Apply entries and Update entries of managedFields, without times, by manager. */
function managers(o: KObj): { manager: string; operation: string; fields: unknown }[] {
  return (meta(o).managedFields ?? [])
    .filter((m: ManagedFieldsEntry) => m.subresource === undefined)
    .map((m: ManagedFieldsEntry) => ({ manager: m.manager ?? '', operation: m.operation ?? '', fields: m.fieldsV1 }))
    .sort((a, b) => a.manager.localeCompare(b.manager));
}

function widgetCrd(group: string, run: string): KObj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}`, labels: { [RUN_LABEL]: run } },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer', minimum: 0 },
                  minReplicas: { type: 'integer', minimum: 0 },
                  color: { type: 'string', maxLength: 32 },
                  size: { type: 'string', enum: ['S', 'M', 'L'] },
                  labels: { type: 'object', additionalProperties: { type: 'string' } },
                },
                'x-kubernetes-validations': [
                  { rule: '!has(self.minReplicas) || !has(self.replicas) || self.replicas >= self.minReplicas', message: 'replicas must not be below minReplicas', fieldPath: '.replicas', reason: 'FieldValueInvalid' },
                  { rule: '!has(oldSelf.color) || (has(self.color) && self.color == oldSelf.color)', message: 'color is immutable' },
                ],
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' }, selector: { type: 'string' } } },
            },
          },
        },
      }],
    },
  };
}

/** A one-version CRD of `plural` in the run's group with `spec`'s schema (for the acceptance cases). */
function crdWith(ctx: Ctx, plural: string, spec: Record<string, unknown>): KObj {
  const kind = plural[0]!.toUpperCase() + plural.slice(1, -1);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${ctx.group}`, labels: { [RUN_LABEL]: ctx.run } },
    spec: {
      group: ctx.group,
      scope: 'Namespaced',
      names: { plural, kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

const ACCEPTANCE_PLURALS = ['nonstructurals', 'badrules', 'undefinedfields', 'costlies'] as const;

function widget(ctx: Ctx, name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): KObj {
  return { apiVersion: `${ctx.group}/v1`, kind: 'Widget', metadata: { name, labels: { [RUN_LABEL]: ctx.run }, ...metadata }, spec };
}

function configMap(ctx: Ctx, name: string, data: Record<string, string> = {}, metadata: Record<string, unknown> = {}): KObj {
  const { labels, ...rest } = metadata as { labels?: Record<string, string> };
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { [RUN_LABEL]: ctx.run, ...(labels ?? {}) }, ...rest }, data };
}

const get = (ctx: Ctx, path: string): Promise<Response> => ctx.api.request('GET', path);
const create = async (ctx: Ctx, collection: string, obj: KObj): Promise<KObj> => ok(await ctx.api.request('POST', collection, { body: obj }), `create ${String(meta(obj).name)}`);
const mergePatch = (ctx: Ctx, path: string, body: unknown, query?: Record<string, string>): Promise<Response> => ctx.api.request('PATCH', path, { body, contentType: ContentTypes.merge, ...(query ? { query } : {}) });
const gone = async (ctx: Ctx, path: string): Promise<boolean> => (await get(ctx, path)).code === 404;

function ownerRef(o: KObj, blockOwnerDeletion: boolean): Record<string, unknown> {
  return { apiVersion: String(o.apiVersion ?? 'v1'), kind: String(o.kind ?? 'ConfigMap'), name: String(meta(o).name), uid: String(meta(o).uid), blockOwnerDeletion };
}

// ------------------------------------------------------------------ the cases

export const cases: readonly ConformanceCase[] = [
  {
    name: 'CRD: established, discovered with its status and scale subresources',
    async run(ctx) {
      const crd = ok(await get(ctx, `${CRD_PATH}/widgets.${ctx.group}`), 'get CRD');
      const conds = ((crd.status?.conditions ?? []) as { type: string; status: string }[]).filter((c) => c.status === 'True').map((c) => c.type).sort();
      assert.equal(conds, ['Established', 'NamesAccepted']);
      assert.equal(crd.status?.acceptedNames, { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' });
      assert.equal(crd.status?.storedVersions, ['v1']);
      const rl = ok(await get(ctx, `/apis/${ctx.group}/v1`), 'discovery');
      assert.is(rl.kind, 'APIResourceList');
      assert.is(rl.groupVersion, `${ctx.group}/v1`);
      const resources = (rl.resources ?? []) as { name: string; kind: string; namespaced: boolean; group?: string; version?: string; verbs: string[] }[];
      assert.equal(resources.map((r) => r.name).sort(), ['widgets', 'widgets/scale', 'widgets/status']);
      const byName = new Map(resources.map((r) => [r.name, r]));
      assert.equal([byName.get('widgets')?.kind, byName.get('widgets')?.namespaced], ['Widget', true]);
      assert.equal([...(byName.get('widgets')?.verbs ?? [])].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
      assert.equal([byName.get('widgets/scale')?.kind, byName.get('widgets/scale')?.group, byName.get('widgets/scale')?.version], ['Scale', 'autoscaling', 'v1']);
      assert.equal([...(byName.get('widgets/status')?.verbs ?? [])].sort(), ['get', 'patch', 'update']);
      const groups = ok(await get(ctx, '/apis'), 'group list');
      const g = ((groups.groups ?? []) as { name: string; preferredVersion: { groupVersion: string } }[]).find((x) => x.name === ctx.group);
      assert.is(g?.preferredVersion.groupVersion, `${ctx.group}/v1`);
    },
  },
  {
    name: 'aggregated discovery (apidiscovery.k8s.io/v2): every group in one document, a CRD with its subresources; plain JSON otherwise',
    async run(ctx) {
      const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
      type Item = { metadata: { name: string }; versions: Array<{ version: string; freshness?: string; resources: Array<{ resource: string; scope: string; singularResource: string; responseKind: { group: string; version: string; kind: string }; verbs: string[]; subresources?: Array<{ subresource: string; responseKind: { group: string; version: string; kind: string }; verbs: string[] }> }> }> };
      // The CRD was just made: the real server's discovery may take a moment to list it.
      let items: Item[] = [];
      for (let i = 0; i < 50; i++) {
        const res = await ctx.api.request('GET', '/apis', { accept });
        const body = ok(res, 'aggregated /apis');
        assert.is(String(res.headers['content-type']).replace(/\s/g, ''), 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
        assert.equal([body.kind, body.apiVersion], ['APIGroupDiscoveryList', 'apidiscovery.k8s.io/v2']);
        items = (body.items ?? []) as unknown as Item[];
        if (items.some((g) => g.metadata.name === ctx.group)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const mine = items.find((g) => g.metadata.name === ctx.group);
      assert.ok(mine, `${ctx.group} in aggregated /apis`);
      assert.equal(mine.versions.map((v) => [v.version, v.freshness]), [['v1', 'Current']]);
      const widgets = mine.versions[0]!.resources.find((r) => r.resource === 'widgets');
      assert.equal([widgets?.scope, widgets?.singularResource, widgets?.responseKind], ['Namespaced', 'widget', { group: ctx.group, version: 'v1', kind: 'Widget' }]);
      assert.equal([...(widgets?.verbs ?? [])].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
      const subs = new Map((widgets?.subresources ?? []).map((x) => [x.subresource, x]));
      assert.equal([...subs.keys()].sort(), ['scale', 'status']);
      assert.equal(subs.get('scale')?.responseKind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
      assert.equal([...(subs.get('status')?.verbs ?? [])].sort(), ['get', 'patch', 'update']);
      assert.ok(items.some((g) => g.metadata.name === 'apps'), 'apps in aggregated /apis');
      assert.not.ok(items.some((g) => g.metadata.name === ''), 'the core group is at /api, not /apis');
      const core = ok(await ctx.api.request('GET', '/api', { accept }), 'aggregated /api');
      const coreItems = (core.items ?? []) as unknown as Item[];
      assert.equal(coreItems.map((g) => [g.metadata.name ?? '', g.versions.map((v) => v.version)]), [['', ['v1']]]);
      const cms = coreItems[0]!.versions[0]!.resources.find((r) => r.resource === 'configmaps');
      // A built-in's kind names neither group nor version (kube-apiserver copies its legacy entry's).
      assert.equal([cms?.scope, cms?.responseKind], ['Namespaced', { group: '', version: '', kind: 'ConfigMap' }]);
      assert.equal(subs.get('status')?.responseKind, { group: ctx.group, version: 'v1', kind: 'Widget' });
      // The document's ETag: asked again with it, 304 and no body.
      const again = await ctx.api.request('GET', '/api', { accept });
      const etag = String(again.headers.etag ?? '');
      assert.match(etag, /^"[0-9A-F]{128}"$/);
      assert.match(String(again.headers.vary ?? ''), /Accept/);
      // Without the media type: the legacy documents.
      assert.is(ok(await get(ctx, '/apis'), 'legacy /apis').kind, 'APIGroupList');
    },
  },
  {
    name: 'CRD: printer columns in Table output (list and get)',
    async run(ctx) {
      await create(ctx, ctx.widgets, widget(ctx, 'printed', { replicas: 2 }));
      ok(await mergePatch(ctx, `${ctx.widgets}/printed/status`, { status: { phase: 'Ready' } }), 'status');
      const table = ok(await ctx.api.request('GET', ctx.widgets, { accept: TABLE_ACCEPT, query: { labelSelector: `${RUN_LABEL}=${ctx.run}`, fieldSelector: 'metadata.name=printed' } }), 'table');
      assert.equal([table.kind, table.apiVersion], ['Table', 'meta.k8s.io/v1']);
      const cols = (table.columnDefinitions ?? []) as { name: string; type: string; format: string; description: string; priority: number }[];
      assert.equal(cols.map((c) => [c.name, c.type, c.format, c.priority]), [['Name', 'string', 'name', 0], ['Replicas', 'integer', '', 0], ['Phase', 'string', '', 0], ['Age', 'date', '', 0]]);
      assert.match(cols[0]!.description, /^Name must be unique within a namespace/);
      const rows = (table.rows ?? []) as { cells: unknown[]; object: KObj }[];
      assert.is(rows.length, 1);
      assert.equal(rows[0]!.cells.slice(0, 3), ['printed', 2, 'Ready']);
      assert.match(String(rows[0]!.cells[3]), /^\d+s$/);
      assert.equal([rows[0]!.object.kind, rows[0]!.object.apiVersion, meta(rows[0]!.object).name], ['PartialObjectMetadata', 'meta.k8s.io/v1', 'printed']);
      const one = ok(await ctx.api.request('GET', `${ctx.widgets}/printed`, { accept: TABLE_ACCEPT }), 'table of one');
      assert.equal(((one.rows ?? []) as { cells: unknown[] }[]).map((r) => r.cells.slice(0, 3)), [['printed', 2, 'Ready']]);
    },
  },
  {
    name: 'CRD refused: a non-structural schema',
    async run(ctx) {
      const crd = crdWith(ctx, 'nonstructurals', { type: 'object', properties: { untyped: {}, list: { type: 'array' } } });
      const st = failure(await ctx.api.request('POST', CRD_PATH, { body: crd }), 422, 'Invalid', 'non-structural CRD');
      const at = 'spec.validation.openAPIV3Schema.properties[spec].properties';
      assert.equal(causes(st), [
        { reason: 'FieldValueRequired', message: 'Required value: must be specified', field: `${at}[list].items` },
        { reason: 'FieldValueRequired', message: 'Required value: must not be empty for specified object fields', field: `${at}[untyped].type` },
      ]);
      assert.is(st.message, `CustomResourceDefinition.apiextensions.k8s.io "nonstructurals.${ctx.group}" is invalid: [${at}[list].items: Required value: must be specified, ${at}[untyped].type: Required value: must not be empty for specified object fields]`);
      assert.is((await get(ctx, `${CRD_PATH}/nonstructurals.${ctx.group}`)).code, 404);
    },
  },
  {
    name: 'CRD refused: CEL rules that do not compile (syntax, undefined field)',
    async run(ctx) {
      const field = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule';
      const props = { replicas: { type: 'integer' } };
      for (const [plural, rule, why] of [['badrules', 'self.replicas >', /Syntax error/], ['undefinedfields', 'self.nosuch > 1', /undefined field 'nosuch'/]] as const) {
        const st = failure(await ctx.api.request('POST', CRD_PATH, { body: crdWith(ctx, plural, { type: 'object', properties: props, 'x-kubernetes-validations': [{ rule }] }) }), 422, 'Invalid', rule);
        const cs = causes(st);
        assert.equal(cs.map((c) => [c.field, c.reason]), [[field, 'FieldValueInvalid']], rule);
        assert.match(cs[0]!.message ?? '', /^Invalid value: .*: compilation failed: /s);
        assert.match(cs[0]!.message ?? '', why);
        assert.is((await get(ctx, `${CRD_PATH}/${plural}.${ctx.group}`)).code, 404);
      }
    },
  },
  {
    name: 'CRD refused: a rule over the cost budget (unbounded list of unbounded strings); bounded, accepted',
    async run(ctx) {
      const rule = "self.tags.all(t, t.contains('x'))";
      const unbounded = crdWith(ctx, 'costlies', { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } }, 'x-kubernetes-validations': [{ rule }] });
      const st = failure(await ctx.api.request('POST', CRD_PATH, { body: unbounded }), 422, 'Invalid', 'costly rule');
      const at = 'spec.validation.openAPIV3Schema';
      const hint = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
      assert.equal(causes(st), [
        { reason: 'FieldValueForbidden', message: `Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${hint}`, field: at },
        { reason: 'FieldValueForbidden', message: 'Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema', field: `${at}.properties[spec].x-kubernetes-validations[0].rule` },
        { reason: 'FieldValueForbidden', message: `Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${hint}`, field: `${at}.properties[spec].x-kubernetes-validations[0].rule` },
      ]);
      assert.is((await get(ctx, `${CRD_PATH}/costlies.${ctx.group}`)).code, 404);
      // The same rule over bounded items, and a cheap rule over the unbounded list, are within budget.
      const bounded = crdWith(ctx, 'costlies', { type: 'object', properties: { tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } } }, 'x-kubernetes-validations': [{ rule }] });
      ok(await ctx.api.request('POST', CRD_PATH, { body: bounded, query: { dryRun: 'All' } }), 'bounded rule');
      const cheap = crdWith(ctx, 'costlies', { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } }, 'x-kubernetes-validations': [{ rule: "self.tags.all(t, t == 'x')" }] });
      ok(await ctx.api.request('POST', CRD_PATH, { body: cheap, query: { dryRun: 'All' } }), 'cheap rule over an unbounded list');
    },
  },
  {
    name: 'CEL rules enforced: 422 with the rule\'s field, message and reason (create, update, transition, scale)',
    async run(ctx) {
      const bad = failure(await ctx.api.request('POST', ctx.widgets, { body: widget(ctx, 'celw', { replicas: 1, minReplicas: 2 }) }), 422, 'Invalid', 'create below minReplicas');
      assert.is(bad.message, `Widget.${ctx.group} "celw" is invalid: spec.replicas: Invalid value: replicas must not be below minReplicas`);
      assert.equal(bad.details, { name: 'celw', group: ctx.group, kind: 'Widget', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: replicas must not be below minReplicas', field: 'spec.replicas' }] });
      const w = await create(ctx, ctx.widgets, widget(ctx, 'celw', { replicas: 3, minReplicas: 2, color: 'red' }));
      const upd = failure(await ctx.api.request('PUT', `${ctx.widgets}/celw`, { body: { ...w, spec: { ...w.spec, color: 'blue' } } }), 422, 'Invalid', 'transition rule');
      assert.is(upd.message, `Widget.${ctx.group} "celw" is invalid: spec: Invalid value: color is immutable`);
      assert.equal(causes(upd), [{ reason: 'FieldValueInvalid', message: 'Invalid value: color is immutable', field: 'spec' }]);
      const scale = failure(await mergePatch(ctx, `${ctx.widgets}/celw/scale`, { spec: { replicas: 1 } }), 422, 'Invalid', 'scale below minReplicas');
      assert.is(scale.message, `Widget.${ctx.group} "celw" is invalid: spec.replicas: Invalid value: replicas must not be below minReplicas`);
      const schema = failure(await mergePatch(ctx, `${ctx.widgets}/celw`, { spec: { size: 'XL' } }), 422, 'Invalid', 'enum');
      assert.equal(causes(schema), [
        { reason: 'FieldValueInvalid', message: 'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation', field: '<nil>' },
        { reason: 'FieldValueNotSupported', message: 'Unsupported value: "XL": supported values: "S", "M", "L"', field: 'spec.size' },
      ], 'a schema error stops the rules');
      const now = ok(await get(ctx, `${ctx.widgets}/celw`), 'get');
      assert.equal(now.spec, { replicas: 3, minReplicas: 2, color: 'red' });
      assert.is(meta(now).resourceVersion, meta(w).resourceVersion, 'nothing was written');
    },
  },
  {
    name: 'status subresource: status only through /status; spec changes bump generation, status changes do not',
    async run(ctx) {
      const c = await create(ctx, ctx.widgets, { ...widget(ctx, 'stat', { replicas: 1 }), status: { phase: 'Created' } });
      assert.is(c.status, undefined, 'status on create is dropped');
      assert.is(meta(c).generation, 1);
      const put = ok(await ctx.api.request('PUT', `${ctx.widgets}/stat`, { body: { ...c, spec: { replicas: 2 }, status: { phase: 'Ignored' } } }), 'PUT');
      assert.equal([put.spec, put.status, meta(put).generation], [{ replicas: 2 }, undefined, 2]);
      const st = ok(await mergePatch(ctx, `${ctx.widgets}/stat/status`, { spec: { replicas: 9 }, status: { phase: 'Ready', replicas: 2 } }), 'status patch');
      assert.equal([st.spec, st.status, meta(st).generation], [{ replicas: 2 }, { phase: 'Ready', replicas: 2 }, 2]);
      assert.ok(rvOf(st) > rvOf(put));
      const stPut = ok(await ctx.api.request('PUT', `${ctx.widgets}/stat/status`, { body: { ...st, spec: { replicas: 7 }, status: { phase: 'Done' } } }), 'status PUT');
      assert.equal([stPut.spec, stPut.status, meta(stPut).generation], [{ replicas: 2 }, { phase: 'Done' }, 2]);
      const main = ok(await mergePatch(ctx, `${ctx.widgets}/stat`, { status: { phase: 'Nope' }, metadata: { labels: { extra: 'x' } } }), 'main patch');
      assert.equal([main.status, meta(main).generation, meta(main).labels?.extra], [{ phase: 'Done' }, 2, 'x'], 'metadata changes do not bump generation');
    },
  },
  {
    name: 'scale subresource: get, update and patch /scale',
    async run(ctx) {
      await create(ctx, ctx.widgets, widget(ctx, 'scaled', { replicas: 1 }));
      ok(await mergePatch(ctx, `${ctx.widgets}/scaled/status`, { status: { replicas: 1, selector: 'app=scaled' } }), 'status');
      const sc = ok(await get(ctx, `${ctx.widgets}/scaled/scale`), 'get scale');
      assert.equal([sc.kind, sc.apiVersion, meta(sc).name, meta(sc).namespace], ['Scale', 'autoscaling/v1', 'scaled', ctx.ns]);
      assert.equal([sc.spec, sc.status], [{ replicas: 1 }, { replicas: 1, selector: 'app=scaled' }]);
      const put = ok(await ctx.api.request('PUT', `${ctx.widgets}/scaled/scale`, { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: ctx.ns, resourceVersion: meta(sc).resourceVersion }, spec: { replicas: 5 } } }), 'put scale');
      assert.equal([put.kind, put.spec], ['Scale', { replicas: 5 }]);
      const w = ok(await get(ctx, `${ctx.widgets}/scaled`), 'get');
      assert.equal([w.spec?.replicas, meta(w).generation, meta(w).resourceVersion], [5, 2, meta(put).resourceVersion]);
      const stale = failure(await ctx.api.request('PUT', `${ctx.widgets}/scaled/scale`, { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: ctx.ns, resourceVersion: meta(sc).resourceVersion }, spec: { replicas: 6 } } }), 409, 'Conflict', 'stale scale');
      assert.is(stale.message, `Operation cannot be fulfilled on widgets.${ctx.group} "scaled": the object has been modified; please apply your changes to the latest version and try again`);
      const patched = ok(await mergePatch(ctx, `${ctx.widgets}/scaled/scale`, { spec: { replicas: 3 } }), 'patch scale');
      assert.equal(patched.spec, { replicas: 3 });
      const neg = failure(await ctx.api.request('PUT', `${ctx.widgets}/scaled/scale`, { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'scaled', namespace: ctx.ns }, spec: { replicas: -1 } } }), 422, 'Invalid', 'negative replicas');
      assert.is(neg.message, `Widget.${ctx.group} "scaled" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, .spec.replicas: Invalid value: -1: should be a non-negative integer]`);
      assert.equal(neg.details?.causes, [
        { reason: 'FieldValueInvalid', message: 'Invalid value: -1: spec.replicas in body should be greater than or equal to 0', field: 'spec.replicas' },
        { reason: 'FieldValueInvalid', message: 'Invalid value: -1: should be a non-negative integer', field: '.spec.replicas' },
      ]);
    },
  },
  {
    name: 'patch: JSON merge patch (maps merged, null removes)',
    async run(ctx) {
      await create(ctx, ctx.widgets, widget(ctx, 'merged', { replicas: 1, color: 'red', labels: { a: '1', b: '2' } }));
      const p = ok(await mergePatch(ctx, `${ctx.widgets}/merged`, { spec: { replicas: 2, labels: { b: null, c: '3' } } }), 'merge patch');
      assert.equal(p.spec, { replicas: 2, color: 'red', labels: { a: '1', c: '3' } });
      const cm = await create(ctx, ctx.configMaps, configMap(ctx, 'merged', { a: '1', b: '2' }));
      const q = ok(await mergePatch(ctx, `${ctx.configMaps}/merged`, { data: { a: null, z: '26' }, metadata: { annotations: { note: 'x' } } }), 'merge patch cm');
      assert.equal([q.data, meta(q).annotations], [{ b: '2', z: '26' }, { note: 'x' }]);
      const stale = failure(await mergePatch(ctx, `${ctx.configMaps}/merged`, { metadata: { resourceVersion: meta(cm).resourceVersion }, data: { y: '1' } }), 409, 'Conflict', 'patch with a stale resourceVersion');
      assert.is(stale.message, 'Operation cannot be fulfilled on configmaps "merged": the object has been modified; please apply your changes to the latest version and try again');
    },
  },
  {
    name: 'patch: JSON patch, and a failed test op is 422 with nothing written',
    async run(ctx) {
      const w = await create(ctx, ctx.widgets, widget(ctx, 'jsonpatched', { replicas: 1, labels: { a: '1' } }));
      const p = ok(await ctx.api.request('PATCH', `${ctx.widgets}/jsonpatched`, { contentType: ContentTypes.json, body: [
        { op: 'test', path: '/spec/replicas', value: 1 },
        { op: 'replace', path: '/spec/replicas', value: 4 },
        { op: 'add', path: '/spec/labels/b', value: '2' },
        { op: 'remove', path: '/spec/labels/a' },
      ] }), 'json patch');
      assert.equal(p.spec, { replicas: 4, labels: { b: '2' } });
      const st = failure(await ctx.api.request('PATCH', `${ctx.widgets}/jsonpatched`, { contentType: ContentTypes.json, body: [
        { op: 'test', path: '/spec/replicas', value: 99 },
        { op: 'replace', path: '/spec/replicas', value: 5 },
      ] }), 422, 'Invalid', 'failed test op');
      assert.is(st.message, 'the server rejected our request due to an error in our request');
      const missing = failure(await ctx.api.request('PATCH', `${ctx.widgets}/jsonpatched`, { contentType: ContentTypes.json, body: [{ op: 'replace', path: '/spec/nosuch/x', value: 1 }] }), 422, 'Invalid', 'replace at a missing path');
      assert.is(missing.message, 'the server rejected our request due to an error in our request');
      const now = ok(await get(ctx, `${ctx.widgets}/jsonpatched`), 'get');
      assert.equal([now.spec, meta(now).resourceVersion], [{ replicas: 4, labels: { b: '2' } }, meta(p).resourceVersion]);
      assert.ok(rvOf(p) > rvOf(w));
    },
  },
  {
    name: 'patch: strategic merge on a ConfigMap (merged finalizers list, $deleteFromPrimitiveList); refused for custom resources',
    async run(ctx) {
      await create(ctx, ctx.configMaps, configMap(ctx, 'strategic', { a: '1' }, { finalizers: [HOLD] }));
      const smp = (body: unknown): Promise<Response> => ctx.api.request('PATCH', `${ctx.configMaps}/strategic`, { contentType: ContentTypes.strategic, body });
      const p = ok(await smp({ metadata: { finalizers: [`${HOLD}-2`] }, data: { b: '2' } }), 'smp');
      assert.equal([meta(p).finalizers, p.data], [[`${HOLD}-2`, HOLD], { a: '1', b: '2' }], 'finalizers merge (a merge patch would replace them), the patch\'s items first');
      const q = ok(await smp({ metadata: { [`$deleteFromPrimitiveList/finalizers`]: [HOLD] }, data: { a: null } }), 'smp delete');
      assert.equal([meta(q).finalizers, q.data], [[`${HOLD}-2`], { b: '2' }]);
      const r = ok(await mergePatch(ctx, `${ctx.configMaps}/strategic`, { metadata: { finalizers: null } }), 'drop finalizers');
      assert.is(meta(r).finalizers, undefined);
      await create(ctx, ctx.widgets, widget(ctx, 'strategic'));
      const st = failure(await ctx.api.request('PATCH', `${ctx.widgets}/strategic`, { contentType: ContentTypes.strategic, body: { spec: { replicas: 1 } } }), 415, 'UnsupportedMediaType', 'smp on a custom resource');
      assert.is(st.message, 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    },
  },
  {
    name: 'server-side apply: field managers, 409 conflict with another manager, force',
    async run(ctx) {
      const path = `${ctx.configMaps}/applied`;
      const apply = (manager: string, data: Record<string, string>, force = false): Promise<Response> =>
        ctx.api.request('PATCH', path, { contentType: ContentTypes.apply, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied' }, data }, query: { fieldManager: manager, ...(force ? { force: true } : {}) } });
      const created = await apply('alice', { a: '1', b: '2' });
      assert.is(created.code, 201, 'apply creates');
      assert.equal(managers(created.body), [{ manager: 'alice', operation: 'Apply', fields: { 'f:data': { 'f:a': {}, 'f:b': {} } } }]);
      const same = ok(await apply('bob', { a: '1' }), 'apply of the same value');
      assert.equal(managers(same).map((m) => [m.manager, m.fields]), [['alice', { 'f:data': { 'f:a': {}, 'f:b': {} } }], ['bob', { 'f:data': { 'f:a': {} } }]], 'same value: shared');
      const conflict = failure(await apply('bob', { a: '9', c: '3' }), 409, 'Conflict', 'conflicting apply');
      assert.is(conflict.message, 'Apply failed with 1 conflict: conflict with "alice": .data.a');
      assert.equal(conflict.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' }]);
      const forced = ok(await apply('bob', { a: '9', c: '3' }, true), 'forced apply');
      assert.equal(forced.data, { a: '9', b: '2', c: '3' });
      assert.equal(managers(forced), [
        { manager: 'alice', operation: 'Apply', fields: { 'f:data': { 'f:b': {} } } },
        { manager: 'bob', operation: 'Apply', fields: { 'f:data': { 'f:a': {}, 'f:c': {} } } },
      ]);
      const dropped = ok(await apply('bob', { c: '3' }), 'bob stops applying a');
      assert.equal(dropped.data, { b: '2', c: '3' }, 'a field no manager owns any more is removed');
      const upd = ok(await mergePatch(ctx, path, { data: { b: 'x' } }, { fieldManager: 'carol' }), 'update by carol');
      assert.equal(managers(upd), [
        { manager: 'bob', operation: 'Apply', fields: { 'f:data': { 'f:c': {} } } },
        { manager: 'carol', operation: 'Update', fields: { 'f:data': { 'f:b': {} } } },
      ], 'an update takes the fields it changes');
      const conflict2 = failure(await apply('alice', { b: '2' }), 409, 'Conflict', 'apply over an update');
      assert.is(conflict2.message, 'Apply failed with 1 conflict: conflict with "carol" using v1: .data.b');
      assert.equal(conflict2.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "carol" using v1', field: '.data.b' }]);
      const two = failure(await apply('dave', { b: 'y', c: 'y' }), 409, 'Conflict', 'two conflicts');
      assert.is(two.message, 'Apply failed with 2 conflicts: conflicts with "bob":\n- .data.c\nconflicts with "carol" using v1:\n- .data.b');
      const w = await ctx.api.request('PATCH', `${ctx.widgets}/applied`, { contentType: ContentTypes.apply, body: { apiVersion: `${ctx.group}/v1`, kind: 'Widget', metadata: { name: 'applied' }, spec: { replicas: 2 } }, query: { fieldManager: 'alice' } });
      assert.is(w.code, 201);
      assert.equal(managers(w.body), [{ manager: 'alice', operation: 'Apply', fields: { 'f:spec': { 'f:replicas': {} } } }]);
      const noManager = failure(await ctx.api.request('PATCH', `${ctx.widgets}/applied`, { contentType: ContentTypes.apply, body: { apiVersion: `${ctx.group}/v1`, kind: 'Widget', metadata: { name: 'applied' } } }), 422, 'Invalid', 'apply without fieldManager');
      assert.is(noManager.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
      assert.equal(noManager.details, { group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }] });
    },
  },
  {
    name: 'server-side apply over an object created without a fieldManager',
    differs: {
      embedded: 'records an updater in managedFields only once an object has managers (someone applied it) or the request names its fieldManager; kube-apiserver records every write (its User-Agent names the manager), which here would about double what each watch event carries. So an apply over a plain create conflicts with nobody',
    },
    async run(ctx) {
      const path = `${ctx.configMaps}/created-then-applied`;
      await create(ctx, ctx.configMaps, configMap(ctx, 'created-then-applied', { a: '1' }));
      const created = ok(await get(ctx, path), 'get');
      assert.equal(managers(created), ctx.which({
        real: [{ manager: 'qvirt-conformance', operation: 'Update', fields: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, [`f:${RUN_LABEL}`]: {} } } } }],
        embedded: [],
      }));
      const applied = await ctx.api.request('PATCH', path, { contentType: ContentTypes.apply, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'created-then-applied' }, data: { a: '2' } }, query: { fieldManager: 'alice' } });
      assert.equal([applied.code, applied.code === 409 ? (applied.body as unknown as Status).message : applied.body.data], ctx.which<[number, unknown]>({
        real: [409, 'Apply failed with 1 conflict: conflict with "qvirt-conformance" using v1: .data.a'],
        embedded: [200, { a: '2' }],
      }));
      // Named, the creator is recorded on both.
      await ctx.api.request('POST', ctx.configMaps, { body: configMap(ctx, 'created-by-erin', { a: '1' }), query: { fieldManager: 'erin' } });
      const conflict = failure(await ctx.api.request('PATCH', `${ctx.configMaps}/created-by-erin`, { contentType: ContentTypes.apply, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'created-by-erin' }, data: { a: '2' } }, query: { fieldManager: 'alice' } }), 409, 'Conflict', 'apply over a named creator');
      assert.is(conflict.message, 'Apply failed with 1 conflict: conflict with "erin" using v1: .data.a');
    },
  },
  {
    name: 'watch from a resourceVersion: later events in order (ADDED, MODIFIED, DELETED), then a bookmark',
    differs: {
      real: 'kube-apiserver sends a bookmark at its own discretion (its watch cache\'s timer, about 2 s before the watch ends, and allowWatchBookmarks is a request, not a promise): a loaded machine saw a 4 s watch end without one. When it sends one, it is checked as the embedded server\'s',
    },
    async run(ctx) {
      const sel = `${RUN_LABEL}=${ctx.run},case=watch`;
      const from = ok(await ctx.api.request('GET', ctx.configMaps, { query: { labelSelector: sel } }), 'list');
      const watching = ctx.api.watch(Resources.configMaps, { namespace: ctx.ns, resourceVersion: meta(from).resourceVersion, labelSelector: sel, allowWatchBookmarks: true, timeoutSeconds: 4 }, { ms: 15_000 });
      const c = await create(ctx, ctx.configMaps, configMap(ctx, 'watched', { a: '1' }, { labels: { case: 'watch' } }));
      const m = ok(await mergePatch(ctx, `${ctx.configMaps}/watched`, { data: { a: '2' } }), 'patch');
      await create(ctx, ctx.configMaps, configMap(ctx, 'unwatched', {}, { labels: { case: 'other' } }));
      ok(await ctx.api.request('DELETE', `${ctx.configMaps}/watched`), 'delete');
      const w = await watching;
      assert.is(w.code, 200);
      assert.ok(w.endedByServer, 'the server ends the watch after timeoutSeconds');
      const events = w.events.filter((e) => e.type !== 'BOOKMARK');
      assert.equal(events.map((e) => [e.type, meta(e.object).name]), [['ADDED', 'watched'], ['MODIFIED', 'watched'], ['DELETED', 'watched']]);
      assert.equal(events.map((e) => e.object.data), [{ a: '1' }, { a: '2' }, { a: '2' }]);
      const rvs = events.map((e) => rvOf(e.object));
      assert.equal(rvs.slice(0, 2), [rvOf(c), rvOf(m)]);
      assert.ok(rvs[0]! > rvOf(from) && rvs[1]! > rvs[0]! && rvs[2]! > rvs[1]!, `increasing resourceVersions ${rvs.join(' ')}`);
      assert.is(events[0]!.object.kind, 'ConfigMap');
      const bookmarks = w.events.filter((e) => e.type === 'BOOKMARK');
      if (ctx.which({ real: false, embedded: true })) assert.ok(bookmarks.length >= 1, 'allowWatchBookmarks: a bookmark before the watch ends');
      const last = bookmarks[bookmarks.length - 1];
      if (last) {
        assert.equal([last.object.kind, last.object.apiVersion], ['ConfigMap', 'v1']);
        assert.ok(rvOf(last.object) >= rvs[2]!, 'the bookmark is not behind the events sent before it');
        assert.ok(w.events.indexOf(last) > w.events.indexOf(events[2]!), 'the bookmark comes after the events');
      }
      // Without allowWatchBookmarks: none.
      const plain = await ctx.api.watch(Resources.configMaps, { namespace: ctx.ns, resourceVersion: String(rvs[2]), labelSelector: sel, timeoutSeconds: 1 }, { ms: 10_000 });
      assert.equal(plain.events.map((e) => e.type), []);
      // One object, by field selector, from the resourceVersion of its creation.
      const x = await create(ctx, ctx.widgets, widget(ctx, 'watched-one'));
      await create(ctx, ctx.widgets, widget(ctx, 'watched-other'));
      ok(await mergePatch(ctx, `${ctx.widgets}/watched-one`, { spec: { replicas: 1 } }), 'patch widget');
      const one = await ctx.api.watch(ctx.widgetType, { namespace: ctx.ns, resourceVersion: meta(x).resourceVersion, fieldSelector: 'metadata.name=watched-one' }, { ms: 10_000, until: (evs) => evs.length >= 1 });
      assert.equal(one.events.map((e) => [e.type, meta(e.object).name, e.object.spec]), [['MODIFIED', 'watched-one', { replicas: 1 }]]);
    },
  },
  {
    name: 'watch and list from an expired resourceVersion: 410 Expired',
    differs: {
      embedded: 'keeps the last historySize events (20 000 by default; this suite starts it with a small history and writes past it) in memory, where kube-apiserver keeps what etcd has not compacted (every 5 minutes by default)',
      real: 'a watch is served by the watch cache, which expires a resourceVersion minutes before etcd compacts it (a young cluster may have expired none: then an old one replays the events after it, in order); an exact list reads etcd, so at a resourceVersion only the cache has expired it still succeeds',
    },
    async run(ctx) {
      const expired = await ctx.expiredResourceVersion();
      const sel = `${RUN_LABEL}=${ctx.run}`;
      if (expired === undefined) {
        assert.is(ctx.which({ real: true, embedded: false }), true, 'the embedded server can always be made to expire a resourceVersion');
        const w = await ctx.api.watch(Resources.configMaps, { namespace: ctx.ns, resourceVersion: '1', labelSelector: sel, timeoutSeconds: 1 }, { ms: 10_000 });
        const rvs = w.events.map((e) => rvOf(e.object));
        assert.equal(w.events.filter((e) => e.type === 'ERROR'), []);
        assert.ok(rvs.every((rv, i) => rv > 1 && (i === 0 || rv > rvs[i - 1]!)), `replayed in order: ${rvs.join(' ')}`);
        console.log(`    (${ctx.server}: no resourceVersion is expired yet; the 410 was not observable)`);
        return;
      }
      const w = await ctx.api.watch(Resources.configMaps, { namespace: ctx.ns, resourceVersion: expired, labelSelector: sel }, { ms: 10_000 });
      assert.is(w.code, 200, 'a watch answers 200 and reports the expiry as an ERROR event');
      assert.equal(w.events.map((e) => e.type), ['ERROR']);
      const st = w.events[0]!.object as unknown as Status;
      assert.equal([st.kind, st.code, st.reason, st.status], ['Status', 410, 'Expired', 'Failure']);
      assert.match(st.message ?? '', /^(too old resource version: \d+ \(\d+\)|The resourceVersion for the provided watch is too old\.)$/);
      const list = await ctx.api.request('GET', ctx.configMaps, { query: { resourceVersion: expired, resourceVersionMatch: 'Exact', labelSelector: sel } });
      assert.ok(ctx.which({ real: [410, 200], embedded: [410] }).includes(list.code), `exact list at an expired resourceVersion: ${list.code}`);
      if (list.code === 200) assert.is(meta(list.body).resourceVersion, expired, 'a list as of exactly that resourceVersion');
      else assert.match(failure(list, 410, 'Expired', 'exact list').message ?? '', /^(too old resource version: \d+ \(\d+\)|The resourceVersion for the provided list is too old\.)$/);
    },
  },
  {
    name: 'list with labelSelector and fieldSelector (metadata.name, metadata.namespace)',
    async run(ctx) {
      const run = `${RUN_LABEL}=${ctx.run}`;
      await create(ctx, ctx.configMaps, configMap(ctx, 'sel-a', {}, { labels: { tier: 'front' } }));
      await create(ctx, ctx.configMaps, configMap(ctx, 'sel-b', {}, { labels: { tier: 'back' } }));
      await create(ctx, ctx.configMaps, configMap(ctx, 'sel-c'));
      await create(ctx, `/api/v1/namespaces/${ctx.ns2}/configmaps`, configMap(ctx, 'sel-d', {}, { labels: { tier: 'front' } }));
      const list = async (path: string, query: Record<string, string>): Promise<string[]> => names(ok(await ctx.api.request('GET', path, { query }), `list ${JSON.stringify(query)}`)).filter((n) => n.startsWith('sel-'));
      assert.equal(await list(ctx.configMaps, { labelSelector: `${run},tier=front` }), ['sel-a']);
      assert.equal(await list(ctx.configMaps, { labelSelector: `${run},tier in (front,back)` }), ['sel-a', 'sel-b']);
      assert.equal(await list(ctx.configMaps, { labelSelector: `${run},!tier` }), ['sel-c']);
      assert.equal(await list(ctx.configMaps, { labelSelector: `${run},tier!=front` }), ['sel-b', 'sel-c']);
      assert.equal(await list(ctx.configMaps, { fieldSelector: 'metadata.name=sel-b' }), ['sel-b']);
      assert.equal(await list(ctx.configMaps, { labelSelector: run, fieldSelector: 'metadata.name!=sel-b' }), ['sel-a', 'sel-c']);
      assert.equal(await list('/api/v1/configmaps', { labelSelector: `${run},tier=front` }), ['sel-a', 'sel-d']);
      assert.equal(await list('/api/v1/configmaps', { labelSelector: `${run},tier=front`, fieldSelector: `metadata.namespace=${ctx.ns2}` }), ['sel-d']);
      assert.equal(await list('/api/v1/configmaps', { fieldSelector: `metadata.namespace=${ctx.ns},metadata.name=sel-a` }), ['sel-a']);
      await create(ctx, ctx.widgets, widget(ctx, 'sel-w', {}, { labels: { [RUN_LABEL]: ctx.run, tier: 'front' } }));
      assert.equal(await list(ctx.widgets, { labelSelector: 'tier=front', fieldSelector: 'metadata.name=sel-w' }), ['sel-w']);
      assert.equal(await list(`/apis/${ctx.group}/v1/widgets`, { fieldSelector: `metadata.namespace=${ctx.ns2}` }), []);
      const cmField = failure(await ctx.api.request('GET', ctx.configMaps, { query: { fieldSelector: 'data.a=1' } }), 400, 'BadRequest', 'unknown configmap field');
      assert.is(cmField.message, '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"');
      const crField = failure(await ctx.api.request('GET', ctx.widgets, { query: { fieldSelector: 'spec.color=red' } }), 400, 'BadRequest', 'unknown widget field');
      assert.is(crField.message, 'field label not supported: spec.color');
      const badLabel = failure(await ctx.api.request('GET', ctx.configMaps, { query: { labelSelector: 'tier in (front' } }), 400, 'BadRequest', 'bad label selector');
      assert.match(badLabel.message ?? '', /^unable to parse requirement: /);
    },
  },
  {
    name: 'optimistic concurrency: stale resourceVersion is 409; custom resources need one on update',
    async run(ctx) {
      const c = await create(ctx, ctx.configMaps, configMap(ctx, 'occ', { a: '1' }));
      const fresh = ok(await ctx.api.request('PUT', `${ctx.configMaps}/occ`, { body: { ...c, data: { a: '2' } } }), 'update');
      assert.ok(rvOf(fresh) > rvOf(c));
      const stale = failure(await ctx.api.request('PUT', `${ctx.configMaps}/occ`, { body: { ...c, data: { a: '3' } } }), 409, 'Conflict', 'stale update');
      assert.is(stale.message, 'Operation cannot be fulfilled on configmaps "occ": the object has been modified; please apply your changes to the latest version and try again');
      assert.equal(stale.details, { name: 'occ', kind: 'configmaps' });
      const { resourceVersion: _rv, ...noRv } = meta(c);
      const unconditional = ok(await ctx.api.request('PUT', `${ctx.configMaps}/occ`, { body: { ...c, metadata: noRv, data: { a: '4' } } }), 'update without resourceVersion');
      assert.equal(unconditional.data, { a: '4' });
      const pre = failure(await ctx.api.request('DELETE', `${ctx.configMaps}/occ`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: meta(c).resourceVersion } } }), 409, 'Conflict', 'delete precondition');
      assert.is(pre.message, `Operation cannot be fulfilled on ConfigMap "occ": the ResourceVersion in the precondition (${meta(c).resourceVersion}) does not match the ResourceVersion in record (${meta(unconditional).resourceVersion}). The object might have been modified`);
      assert.equal(pre.details, { name: 'occ', kind: 'ConfigMap' });
      const uid = failure(await ctx.api.request('DELETE', `${ctx.configMaps}/occ`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'not-the-uid' } } }), 409, 'Conflict', 'delete uid precondition');
      assert.is(uid.message, `Operation cannot be fulfilled on ConfigMap "occ": the UID in the precondition (not-the-uid) does not match the UID in record (${meta(c).uid}). The object might have been deleted and then recreated`);
      const exists = failure(await ctx.api.request('POST', ctx.configMaps, { body: configMap(ctx, 'occ') }), 409, 'AlreadyExists', 'create twice');
      assert.is(exists.message, 'configmaps "occ" already exists');
      const w = await create(ctx, ctx.widgets, widget(ctx, 'occ', { replicas: 1 }));
      const { resourceVersion: _wrv, ...wNoRv } = meta(w);
      const need = failure(await ctx.api.request('PUT', `${ctx.widgets}/occ`, { body: { ...w, metadata: wNoRv, spec: { replicas: 2 } } }), 422, 'Invalid', 'custom resource update without resourceVersion');
      assert.is(need.message, `widgets.${ctx.group} "occ" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`);
      assert.equal(need.details, { name: 'occ', group: ctx.group, kind: 'widgets', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be specified for an update', field: 'metadata.resourceVersion' }] });
      ok(await ctx.api.request('PUT', `${ctx.widgets}/occ`, { body: { ...w, spec: { replicas: 2 } } }), 'update widget');
      const wStale = failure(await ctx.api.request('PUT', `${ctx.widgets}/occ`, { body: { ...w, spec: { replicas: 3 } } }), 409, 'Conflict', 'stale widget update');
      assert.is(wStale.message, `Operation cannot be fulfilled on widgets.${ctx.group} "occ": the object has been modified; please apply your changes to the latest version and try again`);
      assert.equal(wStale.details, { name: 'occ', group: ctx.group, kind: 'widgets' });
      const wPre = failure(await ctx.api.request('DELETE', `${ctx.widgets}/occ`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: meta(w).resourceVersion } } }), 409, 'Conflict', 'widget delete precondition');
      assert.match(wPre.message ?? '', new RegExp(`^Operation cannot be fulfilled on Widget\\.${ctx.group.replace(/\./g, '\\.')} "occ": the ResourceVersion in the precondition \\(${meta(w).resourceVersion}\\) does not match`));
      assert.equal(wPre.details, { name: 'occ', group: ctx.group, kind: 'Widget' });
    },
  },
  {
    name: 'delete: 200 with a Status when gone at once, 200 with the object when finalizers hold it',
    async run(ctx) {
      const c = await create(ctx, ctx.configMaps, configMap(ctx, 'deleted'));
      const d = ok(await ctx.api.request('DELETE', `${ctx.configMaps}/deleted`), 'delete configmap');
      assert.equal(d, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'deleted', kind: 'configmaps', uid: meta(c).uid } });
      const w = await create(ctx, ctx.widgets, widget(ctx, 'deleted'));
      const e = await ctx.api.request('DELETE', `${ctx.widgets}/deleted`);
      assert.equal([e.code, e.body], [200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'deleted', group: ctx.group, kind: 'widgets', uid: meta(w).uid } }]);
      const nf = failure(await ctx.api.request('DELETE', `${ctx.widgets}/deleted`), 404, 'NotFound', 'delete twice');
      assert.is(nf.message, `widgets.${ctx.group} "deleted" not found`);
    },
  },
  {
    name: 'finalizers: delete sets deletionTimestamp and the object stays until they are removed',
    async run(ctx) {
      const w = await create(ctx, ctx.widgets, widget(ctx, 'finalized', { replicas: 1 }, { finalizers: [HOLD] }));
      const d = await ctx.api.request('DELETE', `${ctx.widgets}/finalized`);
      assert.is(d.code, 200, 'not 202: that is only for orphanDependents=false');
      assert.equal([d.body.kind, meta(d.body).name, meta(d.body).finalizers, meta(d.body).deletionGracePeriodSeconds, meta(d.body).generation], ['Widget', 'finalized', [HOLD], 0, 2]);
      assert.match(String(meta(d.body).deletionTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const again = await ctx.api.request('DELETE', `${ctx.widgets}/finalized`);
      assert.equal([again.code, meta(again.body).resourceVersion], [200, meta(d.body).resourceVersion], 'deleting again changes nothing');
      const held = ok(await get(ctx, `${ctx.widgets}/finalized`), 'still there');
      assert.is(meta(held).deletionTimestamp, meta(d.body).deletionTimestamp);
      const add = failure(await mergePatch(ctx, `${ctx.widgets}/finalized`, { metadata: { finalizers: [HOLD, 'conformance.qvirt.io/late'] } }), 422, 'Invalid', 'new finalizer while deleting');
      assert.equal(causes(add), [{ reason: 'FieldValueForbidden', message: 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"conformance.qvirt.io/late"}', field: 'metadata.finalizers' }]);
      const spec = ok(await mergePatch(ctx, `${ctx.widgets}/finalized`, { spec: { replicas: 2 } }), 'spec change while deleting');
      assert.equal([spec.spec, meta(spec).generation], [{ replicas: 2 }, 3]);
      const last = ok(await mergePatch(ctx, `${ctx.widgets}/finalized`, { metadata: { finalizers: null } }), 'remove the finalizer');
      assert.is(meta(last).uid, meta(w).uid);
      assert.ok(await gone(ctx, `${ctx.widgets}/finalized`), 'gone once no finalizer holds it');
    },
  },
  {
    name: 'garbage collection: background deletion removes the dependents',
    async run(ctx) {
      const owner = await create(ctx, ctx.configMaps, configMap(ctx, 'bg-owner'));
      const other = await create(ctx, ctx.configMaps, configMap(ctx, 'bg-other-owner'));
      await create(ctx, ctx.configMaps, configMap(ctx, 'bg-dep1', {}, { ownerReferences: [ownerRef(owner, false)] }));
      await create(ctx, ctx.configMaps, configMap(ctx, 'bg-dep2', {}, { ownerReferences: [ownerRef(owner, true)] }));
      await create(ctx, ctx.configMaps, configMap(ctx, 'bg-shared', {}, { ownerReferences: [ownerRef(owner, false), ownerRef(other, false)] }));
      const d = ok(await ctx.api.request('DELETE', `${ctx.configMaps}/bg-owner`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' } }), 'delete owner');
      assert.equal([d.kind, d.status], ['Status', 'Success'], 'the owner goes at once');
      await eventually('background dependents deleted', async () => (await gone(ctx, `${ctx.configMaps}/bg-dep1`)) && (await gone(ctx, `${ctx.configMaps}/bg-dep2`)));
      const shared = await eventually('the reference to the deleted owner dropped', async () => {
        const s = ok(await get(ctx, `${ctx.configMaps}/bg-shared`), 'shared dependent');
        return (meta(s).ownerReferences ?? []).length === 1 ? s : undefined;
      });
      assert.equal((meta(shared).ownerReferences ?? []).map((r) => r.name), ['bg-other-owner'], 'a dependent with another owner stays');
      assert.is(meta(shared).deletionTimestamp, undefined);
    },
  },
  {
    name: 'garbage collection: foreground deletion keeps the owner (foregroundDeletion) until its dependents are gone',
    async run(ctx) {
      const owner = await create(ctx, ctx.configMaps, configMap(ctx, 'fg-owner'));
      await create(ctx, ctx.configMaps, configMap(ctx, 'fg-held', {}, { ownerReferences: [ownerRef(owner, true)], finalizers: [HOLD] }));
      await create(ctx, ctx.configMaps, configMap(ctx, 'fg-free', {}, { ownerReferences: [ownerRef(owner, true)] }));
      const d = await ctx.api.request('DELETE', `${ctx.configMaps}/fg-owner`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground' } });
      assert.is(d.code, 200);
      assert.equal([d.body.kind, meta(d.body).finalizers], ['ConfigMap', ['foregroundDeletion']]);
      assert.ok(meta(d.body).deletionTimestamp);
      await eventually('the free dependent deleted', () => gone(ctx, `${ctx.configMaps}/fg-free`));
      const held = await eventually('the held dependent being deleted', async () => {
        const h = ok(await get(ctx, `${ctx.configMaps}/fg-held`), 'held dependent');
        return meta(h).deletionTimestamp ? h : undefined;
      });
      assert.equal(meta(held).finalizers, [HOLD], 'a dependent without dependents of its own is deleted in the background');
      await sleep(500);
      const waiting = ok(await get(ctx, `${ctx.configMaps}/fg-owner`), 'owner waits');
      assert.equal(meta(waiting).finalizers, ['foregroundDeletion']);
      ok(await mergePatch(ctx, `${ctx.configMaps}/fg-held`, { metadata: { finalizers: null } }), 'release the held dependent');
      await eventually('the owner gone after its dependents', async () => (await gone(ctx, `${ctx.configMaps}/fg-held`)) && (await gone(ctx, `${ctx.configMaps}/fg-owner`)));
    },
  },
  {
    name: 'names: RBAC objects take any path segment (kubevirt.io:edit), ConfigMaps a DNS subdomain',
    async run(ctx) {
      const roles = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ctx.ns}/roles`;
      const role = ok(await ctx.api.request('POST', roles, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'conformance:reader', labels: { [RUN_LABEL]: ctx.run } }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] } }), 'a Role named with a colon');
      assert.is(meta(role).name, 'conformance:reader');
      const bad = failure(await ctx.api.request('POST', ctx.configMaps, { body: configMap(ctx, 'conformance:reader') }), 422, 'Invalid', 'a ConfigMap named with a colon');
      assert.equal(bad.details?.causes?.map((c) => c.field), ['metadata.name']);
      failure(await ctx.api.request('POST', roles, { body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'a/b' }, rules: [] } }), 422, 'Invalid', 'a Role named with a slash');
    },
  },
];

// ------------------------------------------------------------------ the suite

/** Deletes the run's CRDs and namespaces, after releasing whatever HOLD still holds. */
async function cleanup(api: KubeHttp, group: string, namespaces: readonly string[]): Promise<void> {
  for (const ns of namespaces) {
    for (const path of [`/api/v1/namespaces/${ns}/configmaps`, `/apis/${group}/v1/namespaces/${ns}/widgets`]) {
      const list = await api.request('GET', path);
      for (const o of list.code === 200 ? list.body.items ?? [] : []) {
        if ((meta(o).finalizers ?? []).length) await api.request('PATCH', `${path}/${String(meta(o).name)}`, { contentType: ContentTypes.merge, body: { metadata: { finalizers: null } } });
      }
    }
  }
  for (const plural of ['widgets', ...ACCEPTANCE_PLURALS]) await api.request('DELETE', `${CRD_PATH}/${plural}.${group}`);
  for (const ns of namespaces) await api.request('DELETE', `/api/v1/namespaces/${ns}`);
}

/** Runs killed before their `after` leave their CRDs and namespaces: removed once they are this old. */
const STALE_RUN_MS = 15 * 60_000;

async function sweepStaleRuns(api: KubeHttp): Promise<void> {
  const old = (o: KObj): boolean => Date.now() - Date.parse(String((o.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp)) > STALE_RUN_MS;
  const nsList = await api.request('GET', '/api/v1/namespaces', { query: { labelSelector: RUN_LABEL } });
  const crdList = await api.request('GET', CRD_PATH, { query: { labelSelector: RUN_LABEL } });
  const runs = new Set<string>();
  for (const o of [...(nsList.body.items ?? []), ...(crdList.body.items ?? [])]) if (old(o)) runs.add(String(meta(o).labels?.[RUN_LABEL]));
  for (const run of runs) if (/^[a-z0-9]+$/.test(run)) await cleanup(api, `${run}.conformance.qvirt.io`, [`conformance-${run}`, `conformance-${run}-b`]);
}

/**
 * Registers the cases on `test` against `target`: `before` creates the run's namespaces and the
 * Widget CRD (and waits until it is served), `after` removes them.
 */
export function conformanceSuite(test: Test, target: ConformanceTarget): void {
  const run = Math.random().toString(36).slice(2, 8).replace(/^[0-9]/, 'r');
  const group = `${run}.conformance.qvirt.io`;
  const ns = `conformance-${run}`;
  const ns2 = `conformance-${run}-b`;
  let api: KubeHttp | undefined;
  const ctxFor = (c: ConformanceCase): Ctx => {
    const ctx: Ctx = {
      api: api!,
      server: target.name,
      run,
      group,
      ns,
      ns2,
      widgets: `/apis/${group}/v1/namespaces/${ns}/widgets`,
      widgetType: { group, version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true },
      configMaps: `/api/v1/namespaces/${ns}/configmaps`,
      which<T>(v: { real: T; embedded: T }): T {
        if (!c.differs) throw new Error(`case "${c.name}" asks which server it runs on but declares no difference (differs)`);
        return v[target.name];
      },
      expiredResourceVersion: () => target.expiredResourceVersion(ctx),
    };
    return ctx;
  };

  test.before(async () => {
    api = await kubeHttp(target.kc);
    await sweepStaleRuns(api);
    for (const name of [ns, ns2]) ok(await api.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [RUN_LABEL]: run } } } }), `namespace ${name}`);
    ok(await api.request('POST', CRD_PATH, { body: widgetCrd(group, run) }), 'Widget CRD');
    const a = api;
    await eventually('the Widget CRD established and served', async () => {
      const crd = await a.request('GET', `${CRD_PATH}/widgets.${group}`);
      const established = ((crd.body.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === 'Established' && c.status === 'True');
      return established && (await a.request('GET', `/apis/${group}/v1/namespaces/${ns}/widgets`)).code === 200;
    }, 30_000);
  });

  test.after(async () => {
    if (!api) return;
    try {
      await cleanup(api, group, [ns, ns2]);
    } finally {
      api.close();
    }
  });

  for (const c of cases) {
    test(c.name, async () => {
      const note = c.differs?.[target.name];
      if (note) console.log(`    differs (${target.name}): ${note}`);
      await c.run(ctxFor(c));
    });
  }
}

/** For a real cluster: resourceVersion 1 when the server reports it expired, else undefined. */
export async function probeExpiredResourceVersion(ctx: Ctx): Promise<string | undefined> {
  const w = await ctx.api.watch(Resources.configMaps, { namespace: ctx.ns, resourceVersion: '1', labelSelector: `${RUN_LABEL}=none`, timeoutSeconds: 1 }, { ms: 10_000, until: (evs: readonly WatchEvent[]) => evs.length > 0 });
  const first = w.events[0];
  return first?.type === 'ERROR' && (first.object as unknown as Status).code === 410 ? '1' : undefined;
}

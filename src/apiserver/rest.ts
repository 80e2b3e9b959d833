// The REST verbs on stored objects, as kube-apiserver's generic registry implements them:
// create (generateName, uid, creationTimestamp, resourceVersion, generation, dryRun), get, list
// (selectors, resourceVersion, limit/continue), update with optimistic concurrency, the status and
// scale subresources, the four patch types, and delete (preconditions, propagation policy,
// finalizers, deletionTimestamp, graceful pod deletion). Everything here is synchronous on the
// in-memory store, so a request is atomic; HTTP framing lives in server.ts.
//
// Pod deletion (there is no kubelet): DELETE sets deletionTimestamp (now + grace) and
// deletionGracePeriodSeconds (from the request, else spec.terminationGracePeriodSeconds, else 30);
// the pod is removed when a kubelet-like actor deletes it with gracePeriodSeconds=0, or at once
// when it is not bound to a node (no spec.nodeName) or is in a final phase (Succeeded/Failed),
// including when a terminating pod's status reaches a final phase. Finalizers still hold it.
import { randomUUID } from 'node:crypto';
import {
  ApiError, alreadyExists, badRequest, CauseTypes, conflict, expired, forbidden, invalid, notFound, staleUpdate, StatusReasons,
  type FieldError, type GroupResource,
} from './errors.ts';
import { applyOwnership, entriesOf, managerOfUserAgent, updateOwnership } from './managed-fields.ts';
import { applyMerge, deepEqual, jsonPatch, mergePatch, PatchError, PatchTypes, strategicMergePatch, type Json, type PatchType } from './patch.ts';
import { apiVersionFor, storageVersion, type Registry, type ResourceDef, type ScaleSubresource } from './resources.ts';
import { runValidatingAdmission } from './admission.ts';
import type { AdmissionApi, AdmissionAttributes, ValidatingAdmissionPlugin } from '../kube/admission.ts';
import type { User } from './auth.ts';
import { FieldSelectorError, matchesFields, parseFieldSelector, type FieldRequirement } from './field-selector.ts';
import { InvalidLabelSelectorError, parseLabelSelector, selectorMatches, type Selector } from '../api/label-selector.ts';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE, QUALIFIED_NAME } from '../api/validation/formats.ts';
import { applyDefaults, prune, validate } from './schema-validation.ts';
import { admitPodPriority, defaultPriorityClass, validatePriorityClass } from './priority.ts';
import { metaOf, nameOf, namespaceOf, type Obj, type Store } from './store.ts';

export const Finalizers = {
  orphan: 'orphan',
  foregroundDeletion: 'foregroundDeletion',
  namespaceKubernetes: 'kubernetes',
  crdCleanup: 'customresourcecleanup.apiextensions.k8s.io',
} as const;

/** Marks (transiently, never stored) metadata whose managedFields server-side apply computed. */
const APPLIED = '\u0000applied';

/** Server-side apply computed `patched`'s managedFields (see managed-fields.ts); marks it for `write`. */
function applied(patched: Mutable, current: Obj | undefined, config: Mutable, opts: WriteOptions & { force?: boolean }, apiVersion: string): void {
  applyOwnership(patched, current, config, opts.fieldManager ?? '', apiVersion, opts.force ?? false, now());
  (patched.metadata as Mutable)[APPLIED] = true;
}

/** A failed delete precondition: kube-apiserver names the kind here (`ConfigMap`, `Widget.group`), not the resource. */
const preconditionFailed = (r: ResourceDef, name: string, why: string): ApiError =>
  new ApiError(409, StatusReasons.Conflict, `Operation cannot be fulfilled on ${r.group ? `${r.kind}.${r.group}` : r.kind} "${name}": ${why}`, { name, ...(r.group ? { group: r.group } : {}), kind: r.kind });

/**
 * A patch that cannot be applied: malformed, 400 with the reason; one that does not apply to the
 * object (a failed `test`, a missing path), 422 with kube-apiserver's generic message — it keeps the
 * reason to itself (NewGenericServerResponse).
 */
const patchFailed = (e: PatchError): ApiError =>
  e.code === 400 ? badRequest(e.message) : new ApiError(422, StatusReasons.Invalid, 'the server rejected our request due to an error in our request', {});

/** Go's `%#v` of a []string, as kube-apiserver's finalizer message prints one. */
const goStrings = (xs: readonly string[]): string => `[]string{${xs.map((x) => JSON.stringify(x)).join(', ')}}`;

/** Namespaces kube-apiserver refuses to delete. */
export const PROTECTED_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

export interface DeleteOptions {
  propagationPolicy?: PropagationPolicy | undefined;
  gracePeriodSeconds?: number | undefined;
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
  orphanDependents?: boolean | undefined;
  dryRun?: boolean | undefined;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** Server-side apply computed managedFields itself (create through apply). */
  keepManagedFields?: boolean;
  /** `fieldValidation=Strict|Warn|Ignore`: what to do with fields the schema prunes. */
  fieldValidation?: string | undefined;
  /** Warnings to return in `Warning` headers. */
  warnings?: string[];
  /** An API request (validating admission runs), and who sent it. */
  request?: { user: User | undefined };
  /** The request's `fieldManager`. */
  fieldManager?: string | undefined;
  /** The request's User-Agent (names the updater where no fieldManager does). */
  userAgent?: string | undefined;
}

const updater = (opts: WriteOptions): string => opts.fieldManager ?? managerOfUserAgent(opts.userAgent);

export interface ListOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continueToken?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
}

export interface ListResult {
  items: Obj[];
  resourceVersion: string;
  continueToken: string | undefined;
  remainingItemCount: number | undefined;
}

export interface ParsedSelectors {
  labels: Selector;
  fields: FieldRequirement[];
}

type Mutable = Record<string, unknown>;
const isObj = (v: unknown): v is Mutable => typeof v === 'object' && v !== null && !Array.isArray(v);

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export const gr = (r: ResourceDef): GroupResource => ({ group: r.group, resource: r.plural });

/** Pods are removed at once when nothing runs them: unbound, or finished. */
export function podRemovableNow(pod: Obj): boolean {
  const spec = (pod.spec ?? {}) as Obj;
  const phase = ((pod.status ?? {}) as Obj).phase;
  return !spec.nodeName || phase === 'Succeeded' || phase === 'Failed';
}

export function parseSelectors(r: ResourceDef, labelSelector: string | undefined, fieldSelector: string | undefined): ParsedSelectors {
  try {
    const labels = parseLabelSelector(labelSelector ?? '');
    const fields = fieldSelector ? parseFieldSelector(fieldSelector) : [];
    for (const f of fields) {
      if (r.fieldGetter({}, f.field) !== undefined) continue;
      if (r.builtin && !r.fieldLabels?.length) throw new FieldSelectorError(`"${f.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`);
      throw new FieldSelectorError(`field label not supported: ${f.field}`);
    }
    return { labels, fields };
  } catch (e) {
    if (e instanceof FieldSelectorError || e instanceof InvalidLabelSelectorError) throw badRequest(e.message);
    throw e;
  }
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}
function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof t.rv === 'number' && typeof t.start === 'string') return { rv: t.rv, start: t.start };
  } catch { /* below */ }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

const TOO_OLD_CONTINUE = 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function getPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const p of path.replace(/^\./, '').split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}
function setPath(obj: Mutable, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    if (!isObj(cur[p])) cur[p] = {};
    cur = cur[p] as Mutable;
  }
  cur[parts[parts.length - 1]!] = value;
}

/** Whether a change counts as a new generation: spec (status subresource) or anything but metadata. */
function generationChanged(r: ResourceDef, prev: Obj, next: Obj): boolean {
  if (r.statusSubresource) return !deepEqual(prev.spec, next.spec);
  const strip = (o: Obj): Obj => {
    const { metadata: _m, ...rest } = o;
    return rest;
  };
  return !deepEqual(strip(prev), strip(next));
}

const tracksGeneration = (r: ResourceDef): boolean => !r.builtin || r.group === 'apps' || r.plural === 'customresourcedefinitions';

/** Hooks the server installs for resources with side effects (CRDs register resources). */
export interface ResourceHooks {
  /** Checks and completes an object before it is written; throws ApiError to refuse. */
  beforeWrite?(r: ResourceDef, obj: Mutable, prev: Obj | undefined): void;
  /** After a write or removal reached the store. */
  afterWrite?(r: ResourceDef, obj: Obj, type: 'ADDED' | 'MODIFIED' | 'DELETED'): void;
}

export class Rest {
  readonly store: Store;
  readonly registry: Registry;
  hooks: ResourceHooks = {};
  /** Validating admission plugins (the operator's webhooks), run on API requests. */
  admission: readonly ValidatingAdmissionPlugin[] = [];

  constructor(store: Store, registry: Registry) {
    this.store = store;
    this.registry = registry;
  }

  /** Runs the validating admission plugins that match `a`; a denial is thrown as the request's error. */
  admit(a: AdmissionAttributes, warnings?: string[]): void {
    if (!this.admission.length) return;
    const w = runValidatingAdmission(this.admission, a, this.admissionApi);
    warnings?.push(...w);
  }

  /** What admission plugins may read and patch. */
  readonly admissionApi: AdmissionApi = {
    get: (group, resource, namespace, name) => {
      const r = this.registry.get(group, resource);
      return r ? this.store.get(this.key(r), r.namespaced ? namespace : '', name) : undefined;
    },
    list: (group, resource, namespace, labelSelector) => {
      const r = this.registry.get(group, resource);
      return r ? this.list(r, namespace, { labelSelector }).items : [];
    },
    jsonPatch: (group, resource, namespace, name, ops, opts) => {
      const r = this.registry.get(group, resource);
      if (!r) throw notFound({ group, resource }, name);
      return this.patch(r, storageVersion(r), namespace, name, PatchTypes.json, ops, opts.subresource === 'status' ? 'status' : 'main', { dryRun: opts.dryRun ?? false }).obj;
    },
  };

  key(r: ResourceDef): string {
    return `${r.group}/${r.plural}`;
  }

  get(r: ResourceDef, ns: string, name: string): Obj {
    const o = this.store.get(this.key(r), r.namespaced ? ns : '', name);
    if (!o) throw notFound(gr(r), name);
    return o;
  }

  list(r: ResourceDef, ns: string | undefined, opts: ListOptions): ListResult {
    const sel = parseSelectors(r, opts.labelSelector, opts.fieldSelector);
    const resource = this.key(r);
    let rv = this.store.resourceVersion;
    let start = '';
    let source: Obj[] | undefined;
    if (opts.continueToken) {
      const t = decodeContinue(opts.continueToken);
      rv = t.rv;
      start = t.start;
      source = this.store.listAt(resource, rv, ns);
      if (!source) throw expired(TOO_OLD_CONTINUE);
    } else if (opts.resourceVersion && opts.resourceVersionMatch === 'Exact') {
      rv = Number(opts.resourceVersion);
      if (!Number.isInteger(rv) || rv < 0) throw badRequest(`resourceVersion: Invalid value: "${opts.resourceVersion}": must be a valid resource version`);
      source = this.store.listAt(resource, rv, ns);
      if (!source) throw expired(`too old resource version: ${rv} (${this.store.oldestResourceVersion + 1})`);
    } else {
      source = this.store.list(resource, ns);
    }
    const matching = source.filter((o) => {
      const k = `${namespaceOf(o)}/${nameOf(o)}`;
      if (start && k <= start) return false;
      if (!selectorMatches(sel.labels, metaOf(o).labels as Record<string, string> | undefined)) return false;
      if (sel.fields.length && !matchesFields(sel.fields, o, r.fieldGetter)) return false;
      return true;
    });
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    if (limit && matching.length > limit) {
      const items = matching.slice(0, limit);
      const last = items[items.length - 1]!;
      return {
        items,
        resourceVersion: String(rv),
        continueToken: encodeContinue(rv, `${namespaceOf(last)}/${nameOf(last)}`),
        remainingItemCount: sel.labels.requirements.length || sel.fields.length ? undefined : matching.length - limit,
      };
    }
    return { items: matching, resourceVersion: String(rv), continueToken: undefined, remainingItemCount: undefined };
  }

  private checkNamespace(r: ResourceDef, ns: string, name: string): void {
    if (!r.namespaced) return;
    const nsObj = this.store.get('/namespaces', '', ns);
    if (!nsObj) throw notFound({ group: '', resource: 'namespaces' }, ns);
    if (metaOf(nsObj).deletionTimestamp)
      throw forbidden(gr(r), name, `unable to create new content in namespace ${ns} because it is being terminated`);
  }

  private checkTypeMeta(r: ResourceDef, version: string, body: Mutable): void {
    const expected = apiVersionFor(r.group, version);
    if (body.apiVersion === undefined && body.kind === undefined && r.builtin) return;
    if (body.kind === undefined || body.kind === '') throw badRequest(`Object 'Kind' is missing in '${JSON.stringify(body).slice(0, 200)}'`);
    if (body.kind !== r.kind) throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${r.kind})`);
    if (body.apiVersion !== expected) throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`);
  }

  private validateMeta(r: ResourceDef, obj: Mutable, errs: FieldError[]): void {
    const m = metaOf(obj);
    const name = String(m.name ?? '');
    const pattern = r.plural === 'namespaces' ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
    const max = r.plural === 'namespaces' ? 63 : 253;
    // Custom resources and RBAC objects (ValidateRBACName: path segments, so `kubevirt.io:edit`) take any path segment.
    if (!r.builtin || r.group === 'rbac.authorization.k8s.io') {
      if (name === '.' || name === '..' || /[/%]/.test(name)) errs.push({ type: CauseTypes.FieldValueInvalid, field: 'metadata.name', value: name, detail: `may not be '.' or '..' and may not contain '/' or '%'` });
    } else if (name.length > max || !pattern.test(name)) {
      errs.push({ type: CauseTypes.FieldValueInvalid, field: 'metadata.name', value: name, detail: r.plural === 'namespaces'
        ? `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
        : `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` });
    }
    const labels = m.labels;
    if (labels !== undefined && labels !== null) {
      if (!isObj(labels)) errs.push({ type: CauseTypes.FieldValueTypeInvalid, field: 'metadata.labels', value: labels, detail: 'must be a map of strings' });
      else for (const [k, v] of Object.entries(labels)) {
        if (!QUALIFIED_NAME.test(k) || k.length > 316) errs.push({ type: CauseTypes.FieldValueInvalid, field: 'metadata.labels', value: k, detail: `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
        if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) errs.push({ type: CauseTypes.FieldValueInvalid, field: `metadata.labels`, value: v, detail: `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
      }
    }
    const ann = m.annotations;
    if (ann !== undefined && ann !== null && (!isObj(ann) || Object.values(ann).some((v) => typeof v !== 'string')))
      errs.push({ type: CauseTypes.FieldValueTypeInvalid, field: 'metadata.annotations', value: ann, detail: 'must be a map of strings' });
    const fins = m.finalizers;
    if (fins !== undefined && fins !== null && (!Array.isArray(fins) || fins.some((f) => typeof f !== 'string')))
      errs.push({ type: CauseTypes.FieldValueTypeInvalid, field: 'metadata.finalizers', value: fins, detail: 'must be a list of strings' });
    const owners = m.ownerReferences;
    if (Array.isArray(owners)) owners.forEach((o, i) => {
      for (const f of ['apiVersion', 'kind', 'name', 'uid']) if (!isObj(o) || typeof o[f] !== 'string' || o[f] === '')
        errs.push({ type: CauseTypes.FieldValueRequired, field: `metadata.ownerReferences[${i}].${f}` });
    });
  }

  /** Prunes, defaults and validates a custom resource against the schema of `version`. */
  private schemaCheck(r: ResourceDef, version: string, obj: Mutable, prev: Obj | undefined, errs: FieldError[], opts: WriteOptions): void {
    if (r.builtin) return;
    const schema = r.schemas.get(version) ?? r.schemas.get(storageVersion(r));
    if (!schema) return;
    const before = opts.fieldValidation && opts.fieldValidation !== 'Ignore' ? JSON.stringify(obj) : undefined;
    const dropped: string[] = [];
    if (before !== undefined) collectUnknown(obj, schema.schema, '', dropped, true);
    prune(obj, schema.schema, true);
    applyDefaults(obj, schema.schema);
    if (dropped.length) {
      if (opts.fieldValidation === 'Strict') throw badRequest(`${r.kind} in version "${version}" cannot be handled as a ${r.kind}: strict decoding error: ${dropped.map((d) => `unknown field "${d}"`).join(', ')}`);
      opts.warnings?.push(...dropped.map((d) => `unknown field "${d}"`));
    }
    errs.push(...validate(obj, schema, prev, r.scale ? scalePathErrors(r.scale, obj) : []));
  }

  private finishInvalid(r: ResourceDef, name: string, errs: FieldError[]): void {
    if (errs.length) throw invalid(r.kind, r.group, name, errs);
  }

  private nextRv(): string {
    return String(this.store.nextResourceVersion());
  }

  create(r: ResourceDef, version: string, ns: string, body: unknown, opts: WriteOptions = {}): Obj {
    if (!isObj(body)) throw badRequest('the request body must be a JSON object');
    // The body is the caller's to give away (parsed from the request): it becomes the stored object.
    const obj = body;
    this.checkTypeMeta(r, version, obj);
    if (!isObj(obj.metadata)) obj.metadata = {};
    const m = obj.metadata as Mutable;
    if (r.namespaced) {
      if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== ns)
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      m.namespace = ns;
    } else delete m.namespace;
    if (!m.name && typeof m.generateName === 'string' && m.generateName !== '') {
      let n: string;
      do {
        n = m.generateName + Array.from({ length: 5 }, () => GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)]).join('');
      } while (this.store.get(this.key(r), r.namespaced ? ns : '', n));
      m.name = n;
    }
    const name = typeof m.name === 'string' ? m.name : '';
    if (!name) throw invalid(r.kind, r.group, '', [{ type: CauseTypes.FieldValueRequired, field: 'metadata.name', detail: 'name or generateName is required' }]);
    if (r.namespaced) this.checkNamespace(r, ns, name);
    obj.apiVersion = apiVersionFor(r.group, storageVersion(r));
    obj.kind = r.kind;
    m.uid = randomUUID();
    m.creationTimestamp = now();
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.selfLink;
    if (!opts.keepManagedFields) delete m.managedFields;
    delete m[APPLIED];
    if (tracksGeneration(r)) m.generation = 1;
    else delete m.generation;
    if (r.statusSubresource && !r.builtin) delete obj.status;
    applyBuiltinDefaults(r, obj);
    mergeStringData(r, obj);
    const errs: FieldError[] = [];
    this.validateMeta(r, obj, errs);
    this.schemaCheck(r, version, obj, undefined, errs, opts);
    if (r.builtin && r.group === 'scheduling.k8s.io' && r.plural === 'priorityclasses') {
      defaultPriorityClass(obj);
      for (const e of validatePriorityClass(obj)) errs.push({ type: CauseTypes.FieldValueInvalid, field: e.field, value: e.value, detail: e.detail });
    }
    this.finishInvalid(r, name, errs);
    // kube-apiserver's Priority admission: a new pod's priority from its PriorityClass.
    if (r.builtin && r.group === '' && r.plural === 'pods') admitPodPriority(obj, this.store.list('scheduling.k8s.io/priorityclasses'));
    if (!opts.keepManagedFields && this.tracksUpdates(undefined, opts)) updateOwnership(undefined, obj, updater(opts), apiVersionFor(r.group, version), undefined, now());
    this.hooks.beforeWrite?.(r, obj, undefined);
    if (this.store.get(this.key(r), r.namespaced ? ns : '', name)) throw alreadyExists(gr(r), name);
    if (opts.request) {
      this.admit({ operation: 'CREATE', group: r.group, version, resource: r.plural, subresource: undefined, namespace: r.namespaced ? ns : '', name, object: obj as Obj, oldObject: undefined, dryRun: opts.dryRun ?? false, user: opts.request.user }, opts.warnings);
    }
    m.resourceVersion = this.nextRv();
    const stored = canonical(obj);
    if (opts.dryRun) return stored;
    this.store.create(this.key(r), stored);
    this.hooks.afterWrite?.(r, stored, 'ADDED');
    return stored;
  }

  /**
   * Writes `next` over `prev`: keeps what clients may not change, checks the resourceVersion
   * precondition, bumps generation, validates, and removes the object instead when it is being
   * deleted and nothing holds it any more. Returns the stored object (or `prev` for a no-op).
   */
  private write(r: ResourceDef, version: string, prev: Obj, next: Mutable, sub: 'main' | 'status', opts: WriteOptions, requireRv: boolean): Obj {
    const pm = metaOf(prev);
    if (!isObj(next.metadata)) next.metadata = {};
    const m = next.metadata as Mutable;
    const name = String(pm.name);
    if (m.name !== undefined && m.name !== pm.name) throw badRequest(`the name of the object (${String(m.name)}) does not match the name on the URL (${name})`);
    if (r.namespaced && m.namespace !== undefined && m.namespace !== '' && m.namespace !== pm.namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    if (m.resourceVersion !== undefined && m.resourceVersion !== '' && m.resourceVersion !== null) {
      if (String(m.resourceVersion) !== String(pm.resourceVersion)) throw staleUpdate(gr(r), name);
    } else if (requireRv && !r.builtin) {
      // Named by resource, not kind, unlike other validation errors (the custom resource strategy's own check).
      throw invalid(r.plural, r.group, name, [{ type: CauseTypes.FieldValueInvalid, field: 'metadata.resourceVersion', value: 0, detail: 'must be specified for an update' }]);
    }
    let obj: Mutable;
    if (sub === 'status') {
      obj = { ...structuredClone(prev) };
      if (next.status === undefined) delete obj.status;
      else obj.status = structuredClone(next.status);
    } else {
      obj = next;
      if (r.statusSubresource) {
        if (prev.status === undefined) delete obj.status;
        else obj.status = r.builtin ? prev.status : structuredClone(prev.status);
      }
    }
    const om = obj.metadata as Mutable;
    for (const k of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
      if (pm[k] === undefined) delete om[k];
      else om[k] = pm[k];
    }
    delete om.selfLink;
    // managedFields: server-side apply computed them (applied()); other writes start from the stored ones.
    const byApply = isObj(next.metadata) && (next.metadata as Mutable)[APPLIED] === true;
    if (!byApply) {
      if (pm.managedFields === undefined) delete om.managedFields;
      else om.managedFields = pm.managedFields;
    }
    delete om[APPLIED];
    obj.apiVersion = apiVersionFor(r.group, storageVersion(r));
    obj.kind = r.kind;
    om.resourceVersion = pm.resourceVersion;
    const errs: FieldError[] = [];
    if (pm.deletionTimestamp) {
      const before = new Set((pm.finalizers as string[] | undefined) ?? []);
      const added = ((om.finalizers as string[] | undefined) ?? []).filter((f) => !before.has(f));
      if (added.length) errs.push({ type: CauseTypes.FieldValueForbidden, field: 'metadata.finalizers', detail: `no new finalizers can be added if the object is being deleted, found new finalizers ${goStrings(added)}` });
    }
    if (Array.isArray(om.finalizers) && om.finalizers.length === 0) delete om.finalizers;
    if (r.group === '' && r.plural === 'pods' && sub === 'main') {
      const change = podSpecChange(prev.spec, obj.spec);
      if (change) errs.push({ type: CauseTypes.FieldValueForbidden, field: 'spec', detail: `${POD_UPDATE_FORBIDDEN} (${change})` });
    }
    mergeStringData(r, obj);
    this.validateMeta(r, obj, errs);
    this.schemaCheck(r, version, obj, prev, errs, opts);
    this.finishInvalid(r, name, errs);
    if (tracksGeneration(r) && generationChanged(r, prev, obj)) om.generation = Number(pm.generation ?? 0) + 1;
    if (!byApply && this.tracksUpdates(prev, opts)) updateOwnership(prev, obj, updater(opts), apiVersionFor(r.group, version), sub === 'status' ? 'status' : undefined, now());
    this.hooks.beforeWrite?.(r, obj, prev);
    if (opts.request) {
      this.admit({ operation: 'UPDATE', group: r.group, version, resource: r.plural, subresource: sub === 'status' ? 'status' : undefined, namespace: r.namespaced ? String(pm.namespace ?? '') : '', name, object: obj as Obj, oldObject: prev, dryRun: opts.dryRun ?? false, user: opts.request.user }, opts.warnings);
    }
    if (deepEqual(prev, obj) && !this.removable(r, obj)) return prev;
    om.resourceVersion = this.nextRv();
    const stored = canonical(obj);
    if (opts.dryRun) return stored;
    if (this.removable(r, stored)) return this.removeNow(r, stored);
    this.store.update(this.key(r), stored);
    this.hooks.afterWrite?.(r, stored, 'MODIFIED');
    return stored;
  }

  /**
   * Whether an API write records its updater in managedFields: kube-apiserver always does; this
   * server only once the object has managers (someone applied it) or the request names its
   * fieldManager — an entry for every write would about double what each watch event carries.
   */
  private tracksUpdates(prev: Obj | undefined, opts: WriteOptions): boolean {
    return opts.request !== undefined && (opts.fieldManager !== undefined || (prev !== undefined && entriesOf(prev).length > 0));
  }

  /** An object being deleted goes once no finalizer holds it (and, for pods, nothing runs it). */
  private removable(r: ResourceDef, obj: Obj): boolean {
    const m = metaOf(obj);
    if (!m.deletionTimestamp) return false;
    if (Array.isArray(m.finalizers) && m.finalizers.length > 0) return false;
    if (r.group === '' && r.plural === 'namespaces') {
      const f = ((obj.spec ?? {}) as Obj).finalizers;
      return !(Array.isArray(f) && f.length > 0);
    }
    if (r.group === 'apiextensions.k8s.io' && r.plural === 'customresourcedefinitions') return false;
    if (r.group === '' && r.plural === 'pods') return m.deletionGracePeriodSeconds === 0 || podRemovableNow(obj);
    return true;
  }

  private removeNow(r: ResourceDef, obj: Mutable): Obj {
    const m = obj.metadata as Mutable;
    m.resourceVersion = this.nextRv();
    this.store.remove(this.key(r), obj);
    this.hooks.afterWrite?.(r, obj, 'DELETED');
    return obj;
  }

  update(r: ResourceDef, version: string, ns: string, name: string, body: unknown, sub: 'main' | 'status', opts: WriteOptions = {}): Obj {
    if (!isObj(body)) throw badRequest('the request body must be a JSON object');
    const prev = this.get(r, ns, name);
    const next = body;
    this.checkTypeMeta(r, version, next);
    return this.write(r, version, prev, next, sub, opts, true);
  }

  patch(r: ResourceDef, version: string, ns: string, name: string, type: PatchType, patch: unknown, sub: 'main' | 'status', opts: WriteOptions & { force?: boolean } = {}): { obj: Obj; created: boolean } {
    const current = this.store.get(this.key(r), r.namespaced ? ns : '', name);
    if (!current) {
      if (type === PatchTypes.apply && sub === 'main') {
        if (!isObj(patch)) throw badRequest('the apply configuration must be an object');
        const body = structuredClone(patch);
        if (!isObj(body.metadata)) body.metadata = {};
        (body.metadata as Mutable).name ??= name;
        applied(body, undefined, patch, opts, apiVersionFor(r.group, version));
        return { obj: this.create(r, version, ns, body, { ...opts, keepManagedFields: true }), created: true };
      }
      throw notFound(gr(r), name);
    }
    const servedAs = { ...current, apiVersion: apiVersionFor(r.group, version) } as Json;
    let patched: Json;
    try {
      switch (type) {
        case PatchTypes.merge: patched = mergePatch(servedAs, patch as Json); break;
        case PatchTypes.json: patched = jsonPatch(servedAs, patch); break;
        case PatchTypes.strategic:
          if (!r.builtin) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
          patched = strategicMergePatch(servedAs, patch as Json);
          break;
        case PatchTypes.apply: {
          if (!isObj(patch)) throw badRequest('the apply configuration must be an object');
          this.checkTypeMeta(r, version, patch);
          patched = r.builtin ? strategicMergePatch(servedAs, patch as Json, true) : applyMerge(servedAs, patch as Json);
          if (isObj(patched)) applied(patched as Mutable, current, patch, opts, apiVersionFor(r.group, version));
          break;
        }
      }
    } catch (e) {
      if (e instanceof PatchError) throw patchFailed(e);
      throw e;
    }
    if (!isObj(patched)) throw badRequest('the patch did not produce an object');
    const pm = (patched.metadata ?? {}) as Mutable;
    // A patch carries a resourceVersion precondition only when it sets one itself.
    if (pm.resourceVersion === undefined || pm.resourceVersion === null) pm.resourceVersion = metaOf(current).resourceVersion;
    return { obj: this.write(r, version, current, patched, sub, opts, false), created: false };
  }

  // ------------------------------------------------------------------ binding

  /**
   * pods/binding, what a scheduler calls: sets spec.nodeName of an unbound pod and its PodScheduled
   * condition. Returns the Status kube-apiserver answers (201 Success).
   */
  bindPod(ns: string, name: string, body: unknown, opts: WriteOptions = {}): Obj {
    const r = this.registry.get('', 'pods')!;
    const b = (isObj(body) ? body : {}) as Mutable;
    const target = (isObj(b.target) ? b.target : {}) as Mutable;
    const node = typeof target.name === 'string' ? target.name : '';
    const bindingName = String(((b.metadata ?? {}) as Mutable).name ?? name);
    if (bindingName !== name) throw badRequest(`the name of the object (${bindingName}) does not match the name on the URL (${name})`);
    if (!node) throw invalid('Binding', '', name, [{ type: CauseTypes.FieldValueRequired, field: 'target.name' }]);
    if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') throw invalid('Binding', '', name, [{ type: CauseTypes.FieldValueNotSupported, field: 'target.kind', value: target.kind, detail: 'supported values: "Node"' }]);
    const prev = this.get(r, ns, name);
    const spec = (prev.spec ?? {}) as Obj;
    if (metaOf(prev).deletionTimestamp) throw conflict({ group: '', resource: 'pods/binding' }, name, `pod ${name} is being deleted, cannot be assigned to a host`);
    if (spec.nodeName) throw conflict({ group: '', resource: 'pods/binding' }, name, `pod ${name} is already assigned to node "${String(spec.nodeName)}"`);
    const next: Mutable = { ...structuredClone(prev) };
    (next.spec as Mutable).nodeName = node;
    const status = (next.status ?? (next.status = {})) as Mutable;
    const conds = (Array.isArray(status.conditions) ? status.conditions : []).filter((c) => !(isObj(c) && c.type === 'PodScheduled'));
    status.conditions = [...conds, { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now() }];
    const pm = metaOf(prev);
    const m = next.metadata as Mutable;
    m.resourceVersion = this.nextRv();
    if (!opts.dryRun) {
      const stored = canonical(next);
      this.store.update(this.key(r), stored);
      this.hooks.afterWrite?.(r, stored, 'MODIFIED');
    }
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201, details: { name: String(pm.name), kind: 'pods' } };
  }

  // ------------------------------------------------------------------ scale

  scaleOf(r: ResourceDef, obj: Obj): Obj {
    const sc = r.scale!;
    const m = metaOf(obj);
    const status: Mutable = { replicas: Number(getPath(obj, sc.statusReplicasPath) ?? 0) };
    if (sc.labelSelectorPath) {
      const sel = getPath(obj, sc.labelSelectorPath);
      if (typeof sel === 'string') status.selector = sel;
    }
    const meta: Mutable = { name: m.name, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
    if (m.namespace) meta.namespace = m.namespace;
    return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: meta, spec: { replicas: Number(getPath(obj, sc.specReplicasPath) ?? 0) }, status };
  }

  getScale(r: ResourceDef, ns: string, name: string): Obj {
    return this.scaleOf(r, this.get(r, ns, name));
  }

  /** Writes a Scale (after PUT, or a patch applied to the current Scale) back into the object. */
  updateScale(r: ResourceDef, ns: string, name: string, scale: unknown, opts: WriteOptions = {}): Obj {
    if (!isObj(scale)) throw badRequest('the request body must be a Scale object');
    const prev = this.get(r, ns, name);
    const sm = (scale.metadata ?? {}) as Mutable;
    if (sm.resourceVersion && String(sm.resourceVersion) !== String(metaOf(prev).resourceVersion)) throw staleUpdate(gr(r), name);
    const replicas = (scale.spec as Mutable | undefined)?.replicas;
    // Built-in kinds check the Scale; a custom resource checks itself (its schema and scale paths).
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || (replicas < 0 && r.builtin))
      throw invalid('Scale', 'autoscaling', name, [{ type: CauseTypes.FieldValueInvalid, field: 'spec.replicas', value: replicas ?? null, detail: 'must be greater than or equal to 0' }]);
    const next = structuredClone(prev) as Mutable;
    setPath(next, r.scale!.specReplicasPath, replicas);
    const saved = this.write(r, storageVersion(r), prev, next, 'main', opts, false);
    return this.scaleOf(r, saved);
  }

  patchScale(r: ResourceDef, ns: string, name: string, type: PatchType, patch: unknown, opts: WriteOptions = {}): Obj {
    const current = this.getScale(r, ns, name) as Json;
    let patched: Json;
    try {
      patched = type === PatchTypes.json ? jsonPatch(current, patch) : type === PatchTypes.strategic ? strategicMergePatch(current, patch as Json) : mergePatch(current, patch as Json);
    } catch (e) {
      if (e instanceof PatchError) throw patchFailed(e);
      throw e;
    }
    return this.updateScale(r, ns, name, patched, opts);
  }

  // ------------------------------------------------------------------ delete

  /** Deletes an object; `deleted` says whether it is gone now or only marked (202). */
  delete(r: ResourceDef, ns: string, name: string, opts: DeleteOptions = {}): { obj: Obj; deleted: boolean } {
    const prev = this.get(r, ns, name);
    const pm = metaOf(prev);
    if (r.group === '' && r.plural === 'namespaces' && PROTECTED_NAMESPACES.has(name)) throw forbidden(gr(r), name, 'this namespace may not be deleted');
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== pm.uid) throw preconditionFailed(r, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(pm.uid)}). The object might have been deleted and then recreated`);
    if (pre?.resourceVersion && pre.resourceVersion !== pm.resourceVersion)
      throw preconditionFailed(r, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(pm.resourceVersion)}). The object might have been modified`);
    const policy: PropagationPolicy = opts.propagationPolicy ?? (opts.orphanDependents === true ? 'Orphan' : 'Background');
    if (!['Foreground', 'Background', 'Orphan'].includes(policy))
      throw invalid('DeleteOptions', '', '', [{ type: CauseTypes.FieldValueNotSupported, field: 'propagationPolicy', value: policy, detail: 'supported values: "Foreground", "Background", "Orphan"' }]);
    const next: Mutable = { ...prev, metadata: { ...pm } };
    const m = next.metadata as Mutable;
    const fins = new Set<string>((m.finalizers as string[] | undefined) ?? []);
    if (policy === 'Orphan') { fins.add(Finalizers.orphan); fins.delete(Finalizers.foregroundDeletion); }
    if (policy === 'Foreground') { fins.add(Finalizers.foregroundDeletion); fins.delete(Finalizers.orphan); }
    if (r.group === '' && r.plural === 'namespaces' && !pm.deletionTimestamp) {
      // The namespace lifecycle controller empties it, then drops spec.finalizers and removes it.
      next.status = { ...((next.status ?? {}) as Mutable), phase: 'Terminating' };
    }
    const isPod = r.group === '' && r.plural === 'pods';
    let grace = 0;
    if (isPod) {
      grace = opts.gracePeriodSeconds ?? Number(((prev.spec ?? {}) as Obj).terminationGracePeriodSeconds ?? 30);
      if (podRemovableNow(prev)) grace = 0;
      if (pm.deletionTimestamp && typeof pm.deletionGracePeriodSeconds === 'number') grace = Math.min(grace, pm.deletionGracePeriodSeconds);
    }
    const holdsNamespace = r.group === '' && r.plural === 'namespaces';
    const isCrd = r.group === 'apiextensions.k8s.io' && r.plural === 'customresourcedefinitions';
    if (fins.size) m.finalizers = [...fins];
    else delete m.finalizers;
    if (!pm.deletionTimestamp) {
      m.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
      m.deletionGracePeriodSeconds = grace;
      if (tracksGeneration(r)) m.generation = Number(pm.generation ?? 0) + 1;
    } else if (isPod && grace < Number(pm.deletionGracePeriodSeconds)) {
      m.deletionGracePeriodSeconds = grace;
      m.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    }
    const immediate = fins.size === 0 && grace === 0 && !holdsNamespace && !isCrd;
    if (opts.dryRun) return { obj: next, deleted: immediate };
    if (immediate) return { obj: this.removeNow(r, next), deleted: true };
    if (deepEqual(prev, next)) return { obj: prev, deleted: false };
    m.resourceVersion = this.nextRv();
    const stored = canonical(next);
    this.store.update(this.key(r), stored);
    this.hooks.afterWrite?.(r, stored, 'MODIFIED');
    return { obj: stored, deleted: false };
  }

  /** Finalizing step of namespaces and CRDs (and any object once its holders are gone): remove it now. */
  finalizeRemove(r: ResourceDef, obj: Obj): Obj {
    return this.removeNow(r, structuredClone(obj) as Mutable);
  }

  /**
   * An internal update (garbage collector, namespace lifecycle): `change` edits a copy of the current
   * object; nothing is written when it returns false or the object is gone.
   */
  mutate(r: ResourceDef, ns: string, name: string, change: (o: Mutable) => boolean): Obj | undefined {
    const cur = this.store.get(this.key(r), r.namespaced ? ns : '', name);
    if (!cur) return undefined;
    const next = structuredClone(cur) as Mutable;
    if (!change(next)) return cur;
    return this.write(r, storageVersion(r), cur, next, 'main', {}, false);
  }

  deleteCollection(r: ResourceDef, ns: string | undefined, list: ListOptions, opts: DeleteOptions): Obj[] {
    const { items } = this.list(r, ns, { labelSelector: list.labelSelector, fieldSelector: list.fieldSelector });
    const out: Obj[] = [];
    for (const o of items) {
      try {
        out.push(this.delete(r, namespaceOf(o), nameOf(o), opts).obj);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    return out;
  }
}

export const POD_UPDATE_FORBIDDEN = 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * What a pod update changes beyond what kube-apiserver allows (images, activeDeadlineSeconds,
 * added tolerations, terminationGracePeriodSeconds from negative to 1), as a short description;
 * undefined when the update is allowed. Binding to a node goes through pods/binding.
 */
export function podSpecChange(prev: unknown, next: unknown): string | undefined {
  const p = (isObj(prev) ? prev : {}) as Mutable;
  const n = (isObj(next) ? next : {}) as Mutable;
  const strip = (spec: Mutable, images: Mutable): Mutable => {
    const out: Mutable = { ...spec };
    delete out.activeDeadlineSeconds;
    delete out.tolerations;
    if (typeof images.terminationGracePeriodSeconds === 'number' && images.terminationGracePeriodSeconds < 0 && out.terminationGracePeriodSeconds === 1) out.terminationGracePeriodSeconds = images.terminationGracePeriodSeconds;
    for (const k of ['containers', 'initContainers']) {
      if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map((c) => (isObj(c) ? { ...c, image: undefined } : c));
    }
    return out;
  };
  if (!deepEqual(strip(p, p), strip(n, p))) {
    const keys = [...new Set([...Object.keys(p), ...Object.keys(n)])].filter((k) => !['activeDeadlineSeconds', 'tolerations'].includes(k) && !deepEqual(strip(p, p)[k], strip(n, p)[k]));
    return `spec.${keys.join(', spec.')} changed`;
  }
  const pt = Array.isArray(p.tolerations) ? p.tolerations : [];
  const nt = Array.isArray(n.tolerations) ? n.tolerations : [];
  if (!pt.every((t) => nt.some((u) => deepEqual(t, u)))) return 'existing spec.tolerations removed or changed';
  return undefined;
}

/** apiVersion, kind and metadata first, as kube-apiserver serializes objects. */
function canonical(obj: Mutable): Mutable {
  const { apiVersion, kind, metadata, ...rest } = obj;
  return { apiVersion, kind, metadata, ...rest };
}

/** Go's type name of a JSON value, as an unstructured accessor error shows it. */
function goTypeName(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'string' || typeof v === 'boolean') return typeof v === 'string' ? 'string' : 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  return v === null ? '<nil>' : 'map[string]interface {}';
}

/** Go's `%v` of a JSON value (strings bare). */
const goValue = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * A custom resource's scale paths, as kube-apiserver checks them on every write: the replicas are
 * non-negative integers where set, the label selector a string (fields named by the JSON path).
 */
function scalePathErrors(sc: ScaleSubresource, obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  for (const path of [sc.specReplicasPath, sc.statusReplicasPath]) {
    const v = getPath(obj, path);
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v)) errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: 0, detail: `${path} accessor error: ${goValue(v)} is of the type ${goTypeName(v)}, expected int64` });
    else if (v < 0) errs.push({ type: CauseTypes.FieldValueInvalid, field: path, value: v, detail: 'should be a non-negative integer' });
  }
  const sel = sc.labelSelectorPath ? getPath(obj, sc.labelSelectorPath) : undefined;
  if (sc.labelSelectorPath && sel !== undefined && typeof sel !== 'string')
    errs.push({ type: CauseTypes.FieldValueInvalid, field: sc.labelSelectorPath, value: '', detail: `${sc.labelSelectorPath} accessor error: ${goValue(sel)} is of the type ${goTypeName(sel)}, expected string` });
  return errs;
}

/** Records (without changing anything) the fields `prune` would drop, as dotted paths. */
function collectUnknown(value: unknown, s: import('./schema-validation.ts').Schema | undefined, path: string, out: string[], root: boolean): void {
  if (!s || !isObj(value) || s['x-kubernetes-preserve-unknown-fields'] || s['x-kubernetes-int-or-string']) {
    if (s && Array.isArray(value) && s.items) value.forEach((x, i) => collectUnknown(x, s.items, `${path}[${i}]`, out, false));
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if ((root || s['x-kubernetes-embedded-resource']) && k === 'metadata') continue;
    const ps = s.properties?.[k] ?? (isObj(s.additionalProperties) ? (s.additionalProperties as import('./schema-validation.ts').Schema) : undefined);
    const p = path ? `${path}.${k}` : k;
    if (ps) collectUnknown(v, ps, p, out, false);
    else if ((root || s['x-kubernetes-embedded-resource']) && ['apiVersion', 'kind', 'metadata'].includes(k)) continue;
    else if (s.additionalProperties !== true) out.push(p);
  }
}

/**
 * A Secret's `stringData` is write-only: kube-apiserver's conversion merges each key into `data`
 * (base64, over a `data` key of the same name) on every write and never stores it. Without this a
 * Secret written with stringData (kubectl's usual manifest) reached pods with no content.
 */
function mergeStringData(r: ResourceDef, obj: Mutable): void {
  if (!r.builtin || r.group !== '' || r.plural !== 'secrets' || obj.stringData === undefined) return;
  if (isObj(obj.stringData)) {
    // A new map: a patched object may share its `data` with the stored one.
    const data: Mutable = { ...(isObj(obj.data) ? obj.data : {}) };
    for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

/** Defaults kube-apiserver fills in on create for the built-in kinds qvirt reads back. */
function applyBuiltinDefaults(r: ResourceDef, obj: Mutable): void {
  if (!r.builtin) return;
  const key = `${r.group}/${r.plural}`;
  if (key === '/pods') {
    const spec = (isObj(obj.spec) ? obj.spec : (obj.spec = {})) as Mutable;
    spec.restartPolicy ??= 'Always';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.schedulerName ??= 'default-scheduler';
    spec.securityContext ??= {};
    spec.enableServiceLinks ??= true;
    spec.serviceAccountName ??= 'default';
    spec.serviceAccount ??= spec.serviceAccountName;
    const containers = [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])];
    for (const c of containers.filter(isObj)) {
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      if (c.imagePullPolicy === undefined && typeof c.image === 'string') {
        const tag = c.image.includes('@') ? 'digest' : (/:([^/:]+)$/.exec(c.image)?.[1] ?? 'latest');
        c.imagePullPolicy = tag === 'latest' ? 'Always' : 'IfNotPresent';
      }
      c.resources ??= {};
    }
    obj.status = { phase: 'Pending', qosClass: qosClass(spec) };
  } else if (key === '/namespaces') {
    const m = obj.metadata as Mutable;
    m.labels = { ...((m.labels ?? {}) as Mutable), 'kubernetes.io/metadata.name': m.name };
    obj.spec = { finalizers: [Finalizers.namespaceKubernetes] };
    obj.status = { phase: 'Active' };
  } else if (key === '/persistentvolumeclaims') {
    obj.status = { phase: 'Pending' };
    const spec = (isObj(obj.spec) ? obj.spec : (obj.spec = {})) as Mutable;
    spec.volumeMode ??= 'Filesystem';
  } else if (key === '/secrets') {
    obj.type ??= 'Opaque';
  } else if (key === '/serviceaccounts' || key === '/configmaps' || key === '/nodes') {
    // stored as given
  }
}

function qosClass(spec: Mutable): string {
  const cs = (Array.isArray(spec.containers) ? spec.containers : []).filter(isObj);
  let any = false;
  let guaranteed = cs.length > 0;
  for (const c of cs) {
    const res = (c.resources ?? {}) as Mutable;
    const req = (res.requests ?? {}) as Mutable;
    const lim = (res.limits ?? {}) as Mutable;
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const k of ['cpu', 'memory']) {
      if (lim[k] === undefined || (req[k] !== undefined && req[k] !== lim[k])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

// CustomResourceDefinitions: checking a CRD when it is created or updated, turning it into the
// resource it defines (served versions, scope, names, subresources, printer columns, schemas with
// compiled CEL rules), and the status kube-apiserver writes (acceptedNames, NamesAccepted and
// Established conditions, storedVersions).
import { celStaticErrors, structuralErrors } from './crd-schema.ts';
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../api/validation/formats.ts';
import { CauseTypes, type FieldError } from './errors.ts';
import { deepEqual } from './patch.ts';
import { fieldGetterFor, type PrinterColumn, type ResourceDef, type ScaleSubresource, ALL_VERBS } from './resources.ts';
import { compileSchema, type CompiledSchema, type Schema } from './schema-validation.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);


export interface CrdParse {
  def: ResourceDef | undefined;
  errors: FieldError[];
}

/** Checks a CRD and builds the resource it defines; errors are field errors under `spec`. */
export function resourceFromCrd(crd: Obj): CrdParse {
  const errors: FieldError[] = [];
  const spec = isObj(crd.spec) ? crd.spec : {};
  const name = str((crd.metadata as Obj | undefined)?.name) ?? '';
  const group = str(spec.group) ?? '';
  const names = isObj(spec.names) ? spec.names : {};
  const plural = str(names.plural) ?? '';
  const kind = str(names.kind) ?? '';
  const scope = str(spec.scope);
  if (!group) errors.push({ type: CauseTypes.FieldValueRequired, field: 'spec.group' });
  else if (!DNS1123_SUBDOMAIN.test(group) || !group.includes('.')) errors.push({ type: CauseTypes.FieldValueInvalid, field: 'spec.group', value: group, detail: 'should be a domain with at least one dot' });
  if (!plural) errors.push({ type: CauseTypes.FieldValueRequired, field: 'spec.names.plural' });
  else if (!DNS1123_LABEL.test(plural)) errors.push({ type: CauseTypes.FieldValueInvalid, field: 'spec.names.plural', value: plural, detail: 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\'' });
  if (!kind) errors.push({ type: CauseTypes.FieldValueRequired, field: 'spec.names.kind' });
  if (name && plural && group && name !== `${plural}.${group}`) errors.push({ type: CauseTypes.FieldValueInvalid, field: 'metadata.name', value: name, detail: `must be spec.names.plural+"."+spec.group` });
  if (scope !== 'Namespaced' && scope !== 'Cluster') errors.push({ type: CauseTypes.FieldValueNotSupported, field: 'spec.scope', value: scope ?? '', detail: 'supported values: "Cluster", "Namespaced"' });
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObj) : [];
  if (versions.length === 0) errors.push({ type: CauseTypes.FieldValueRequired, field: 'spec.versions', detail: 'must have exactly one version marked as storage version' });
  const storage = versions.filter((v) => v.storage === true);
  if (versions.length && storage.length !== 1) errors.push({ type: CauseTypes.FieldValueInvalid, field: 'spec.versions', value: versions.length, hasValue: false, detail: 'must have exactly one version marked as storage version' });

  // One schema for every version is reported as kube-apiserver keeps it then: spec.validation.
  const schemaOf = (v: Obj): Schema | undefined => (isObj(v.schema) && isObj(v.schema.openAPIV3Schema) ? (v.schema.openAPIV3Schema as Schema) : undefined);
  const sharedSchema = versions.length > 0 && versions.every((v) => deepEqual(schemaOf(v), schemaOf(versions[0]!)));
  const columns = new Map<string, PrinterColumn[]>();
  const schemas = new Map<string, CompiledSchema>();
  let statusSub = false;
  let scale: ScaleSubresource | undefined;
  const served: string[] = [];
  const deprecations = new Map<string, string>();
  versions.forEach((v, i) => {
    const vname = str(v.name) ?? '';
    const at = `spec.versions[${i}]`;
    if (!vname) errors.push({ type: CauseTypes.FieldValueRequired, field: `${at}.name` });
    if (v.served === true) served.push(vname);
    // apiextensions-apiserver's wording when the version gives none.
    if (v.deprecated === true) deprecations.set(vname, str(v.deprecationWarning) ?? `${group}/${vname} ${kind} is deprecated`);
    const subs = isObj(v.subresources) ? v.subresources : {};
    if (isObj(subs.status)) statusSub = true;
    if (isObj(subs.scale)) {
      const sc = subs.scale;
      const specPath = str(sc.specReplicasPath);
      const statusPath = str(sc.statusReplicasPath);
      if (!specPath?.startsWith('.spec.')) errors.push({ type: CauseTypes.FieldValueInvalid, field: `${at}.subresources.scale.specReplicasPath`, value: specPath ?? '', detail: 'should be a json path under .spec' });
      if (!statusPath?.startsWith('.status.')) errors.push({ type: CauseTypes.FieldValueInvalid, field: `${at}.subresources.scale.statusReplicasPath`, value: statusPath ?? '', detail: 'should be a json path under .status' });
      scale = { specReplicasPath: specPath ?? '.spec.replicas', statusReplicasPath: statusPath ?? '.status.replicas' };
      const sel = str(sc.labelSelectorPath);
      if (sel) scale.labelSelectorPath = sel;
    }
    const cols = Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns.filter(isObj) : [];
    columns.set(vname, cols.map((c, j) => {
      const col: PrinterColumn = { name: str(c.name) ?? '', type: str(c.type) ?? 'string', jsonPath: str(c.jsonPath) ?? '' };
      if (!col.name) errors.push({ type: CauseTypes.FieldValueRequired, field: `${at}.additionalPrinterColumns[${j}].name` });
      if (!col.jsonPath) errors.push({ type: CauseTypes.FieldValueRequired, field: `${at}.additionalPrinterColumns[${j}].jsonPath` });
      if (!['integer', 'number', 'string', 'boolean', 'date'].includes(col.type))
        errors.push({ type: CauseTypes.FieldValueNotSupported, field: `${at}.additionalPrinterColumns[${j}].type`, value: col.type, detail: 'supported values: "boolean", "date", "integer", "number", "string"' });
      if (str(c.format)) col.format = str(c.format)!;
      if (str(c.description)) col.description = str(c.description)!;
      if (typeof c.priority === 'number') col.priority = c.priority;
      return col;
    }));
    const schema = schemaOf(v);
    if (!schema) {
      errors.push({ type: CauseTypes.FieldValueRequired, field: `${at}.schema.openAPIV3Schema`, detail: 'schemas are required' });
    } else {
      const prefix = sharedSchema ? 'spec.validation.openAPIV3Schema' : `${at}.schema.openAPIV3Schema`;
      const { compiled, errors: celErrors } = compileSchema(schema, prefix);
      if (!sharedSchema || i === 0) {
        // As kube-apiserver: the rules are looked at only in a structural schema, their static checks once they compile.
        const structural = structuralErrors(schema, prefix);
        errors.push(...(structural.length ? structural : celErrors.length ? celErrors : celStaticErrors(schema, prefix)));
      }
      schemas.set(vname, compiled);
    }
  });
  if (errors.length) return { def: undefined, errors };
  const storageName = str(storage[0]!.name)!;
  const versionOrder = [storageName, ...served.filter((v) => v !== storageName)];
  const def: ResourceDef = {
    group,
    versions: versionOrder,
    plural,
    singular: str(names.singular) ?? kind.toLowerCase(),
    kind,
    listKind: str(names.listKind) ?? `${kind}List`,
    namespaced: scope === 'Namespaced',
    shortNames: Array.isArray(names.shortNames) ? names.shortNames.filter((s): s is string => typeof s === 'string') : [],
    categories: Array.isArray(names.categories) ? names.categories.filter((s): s is string => typeof s === 'string') : [],
    statusSubresource: statusSub,
    scale,
    builtin: false,
    columns,
    schemas,
    ...(deprecations.size ? { deprecations } : {}),
    fieldGetter: fieldGetterFor([]),
    verbs: ALL_VERBS,
  };
  return { def, errors: [] };
}

/** The status kube-apiserver maintains for an accepted CRD. */
export function crdStatus(crd: Obj, now: string): Obj {
  const spec = (crd.spec ?? {}) as Obj;
  const names = (spec.names ?? {}) as Obj;
  const versions = Array.isArray(spec.versions) ? (spec.versions as Obj[]) : [];
  const storage = versions.find((v) => v.storage === true)?.name;
  const old = isObj(crd.status) ? crd.status : {};
  const stored = Array.isArray(old.storedVersions) ? [...(old.storedVersions as string[])] : [];
  if (typeof storage === 'string' && !stored.includes(storage)) stored.push(storage);
  const accepted: Obj = { plural: names.plural, kind: names.kind, listKind: names.listKind ?? `${String(names.kind)}List`, singular: names.singular ?? String(names.kind).toLowerCase() };
  if (names.shortNames) accepted.shortNames = names.shortNames;
  if (names.categories) accepted.categories = names.categories;
  const prevConds = Array.isArray(old.conditions) ? (old.conditions as Obj[]) : [];
  const cond = (type: string, reason: string, message: string): Obj => {
    const p = prevConds.find((c) => c.type === type && c.status === 'True');
    return { type, status: 'True', lastTransitionTime: p?.lastTransitionTime ?? now, reason, message };
  };
  return {
    acceptedNames: accepted,
    conditions: [cond('NamesAccepted', 'NoConflicts', 'no conflicts found'), cond('Established', 'InitialNamesAccepted', 'the initial names have been accepted')],
    storedVersions: stored,
  };
}

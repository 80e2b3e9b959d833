/**
 * Schema (./dsl.ts) → structural OpenAPI v3 as `apiextensions.k8s.io/v1` CRDs carry it.
 */
import { QUANTITY_PATTERN } from '../quantity.ts';
import type { Schema } from './dsl.ts';

export type JSONSchemaProps = { [key: string]: unknown };

function common(s: Schema, out: JSONSchemaProps): JSONSchemaProps {
  if (s.description) out.description = s.description;
  // A rule's `reason` and `fieldPath` are known to API servers from Kubernetes 1.28 on (messageExpression
  // from 1.27); an older one refuses the whole CRD ("unknown field"). Every server qvirt supports knows
  // them (MIN_KUBERNETES in src/deploy/kubernetes-versions.ts: 1.32), so they are kept; supporting an
  // older Kubernetes would mean dropping them here (test/api/crd-cel-cost.test.ts checks the fields).
  if (s.cel?.length) {
    out['x-kubernetes-validations'] = s.cel.map((r) => ({
      rule: r.rule,
      message: r.message,
      ...(r.fieldPath ? { fieldPath: r.fieldPath } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
    }));
  }
  return out;
}

/** The `openAPIV3Schema` node for `s`. */
export function toOpenAPI(s: Schema): JSONSchemaProps {
  switch (s.type) {
    case 'string': {
      const o: JSONSchemaProps = { type: 'string' };
      if (s.enum) o.enum = [...s.enum];
      if (s.format) o.format = s.format;
      if (s.pattern !== undefined) o.pattern = s.pattern;
      if (s.maxLength !== undefined) o.maxLength = s.maxLength;
      if (s.minLength !== undefined) o.minLength = s.minLength;
      return common(s, o);
    }
    case 'integer': {
      const o: JSONSchemaProps = { type: 'integer', format: s.format };
      if (s.minimum !== undefined) o.minimum = s.minimum;
      if (s.maximum !== undefined) o.maximum = s.maximum;
      return common(s, o);
    }
    case 'number':
      return common(s, { type: 'number' });
    case 'boolean':
      return common(s, { type: 'boolean' });
    case 'quantity':
      return common(s, {
        anyOf: [{ type: 'integer' }, { type: 'string' }],
        pattern: QUANTITY_PATTERN,
        'x-kubernetes-int-or-string': true,
      });
    case 'int-or-string':
      return common(s, { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
    case 'opaque':
      return common(s, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    case 'map': {
      const o: JSONSchemaProps = { type: 'object', additionalProperties: toOpenAPI(s.values) };
      if (s.maxProperties !== undefined) o.maxProperties = s.maxProperties;
      return common(s, o);
    }
    case 'array': {
      const o: JSONSchemaProps = { type: 'array', items: toOpenAPI(s.items) };
      if (s.maxItems !== undefined) o.maxItems = s.maxItems;
      if (s.listType) o['x-kubernetes-list-type'] = s.listType;
      if (s.listMapKeys) o['x-kubernetes-list-map-keys'] = [...s.listMapKeys];
      return common(s, o);
    }
    case 'object': {
      const o: JSONSchemaProps = { type: 'object' };
      if (s.nullable) o.nullable = true;
      if (s.crdOpaque) {
        if (s.preserveUnknownFields) o['x-kubernetes-preserve-unknown-fields'] = true;
        return common(s, o);
      }
      const props = Object.entries(s.properties);
      if (props.length) o.properties = Object.fromEntries(props.map(([k, v]) => [k, toOpenAPI(v)]));
      if (s.required.length) o.required = [...s.required];
      if (s.preserveUnknownFields) o['x-kubernetes-preserve-unknown-fields'] = true;
      return common(s, o);
    }
  }
}

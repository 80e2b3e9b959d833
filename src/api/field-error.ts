/**
 * Field errors in the shape of Kubernetes' `field.Error` / KubeVirt's `metav1.StatusCause`:
 * which field (a path such as `spec.domain.devices.disks[0].name`), what kind of problem, and why.
 * Parsing and validation return all errors they find, never just the first.
 */

/** `field.ErrorType` values, in Kubernetes' own words (`CauseType`). */
export const FieldErrorType = {
  Required: 'FieldValueRequired',
  NotFound: 'FieldValueNotFound',
  Invalid: 'FieldValueInvalid',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  Forbidden: 'FieldValueForbidden',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
  TypeInvalid: 'FieldValueTypeInvalid',
} as const;
export type FieldErrorType = (typeof FieldErrorType)[keyof typeof FieldErrorType];

export interface FieldError {
  /** Path from the object root, e.g. `spec.domain.devices.disks[1].disk.bus`. */
  readonly field: string;
  readonly type: FieldErrorType;
  /** Human-readable reason, without the field (it is in `field`). */
  readonly reason: string;
}

/** `<field>: <reason>`, the way the errors print. */
export function formatFieldError(e: FieldError): string {
  return e.field ? `${e.field}: ${e.reason}` : e.reason;
}

/** Thrown by the `decode*`/`assert*` helpers when an object has field errors; carries all of them. */
export class FieldErrors extends Error {
  readonly errors: readonly FieldError[];
  constructor(what: string, errors: readonly FieldError[]) {
    super(`${what} is invalid: ${errors.map(formatFieldError).join('; ')}`);
    this.name = 'FieldErrors';
    this.errors = errors;
  }
}

/** An immutable path builder: `root.child('spec').child('disks').index(1)` → `spec.disks[1]`. */
export class FieldPath {
  readonly #text: string;
  private constructor(text: string) {
    this.#text = text;
  }
  static root(name = ''): FieldPath {
    return new FieldPath(name);
  }
  child(name: string): FieldPath {
    return new FieldPath(this.#text === '' ? name : `${this.#text}.${name}`);
  }
  index(i: number): FieldPath {
    return new FieldPath(`${this.#text}[${i}]`);
  }
  key(k: string): FieldPath {
    return new FieldPath(`${this.#text}[${k}]`);
  }
  toString(): string {
    return this.#text;
  }
}

type PathLike = FieldPath | string;
const text = (p: PathLike) => (typeof p === 'string' ? p : p.toString());

export const fieldError = {
  required(path: PathLike, reason = 'Required value'): FieldError {
    return { field: text(path), type: FieldErrorType.Required, reason };
  },
  invalid(path: PathLike, reason: string): FieldError {
    return { field: text(path), type: FieldErrorType.Invalid, reason };
  },
  notSupported(path: PathLike, value: unknown, supported: readonly string[]): FieldError {
    return {
      field: text(path),
      type: FieldErrorType.NotSupported,
      reason: `must be one of ${supported.join(', ')} (got ${JSON.stringify(value)})`,
    };
  },
  duplicate(path: PathLike, value: unknown): FieldError {
    return { field: text(path), type: FieldErrorType.Duplicate, reason: `duplicate value ${JSON.stringify(value)}` };
  },
  forbidden(path: PathLike, reason: string): FieldError {
    return { field: text(path), type: FieldErrorType.Forbidden, reason };
  },
  tooLong(path: PathLike, max: number): FieldError {
    return { field: text(path), type: FieldErrorType.TooLong, reason: `must have at most ${max} characters` };
  },
  tooMany(path: PathLike, max: number): FieldError {
    return { field: text(path), type: FieldErrorType.TooMany, reason: `must have at most ${max} items` };
  },
  typeInvalid(path: PathLike, expected: string, got: unknown): FieldError {
    return {
      field: text(path),
      type: FieldErrorType.TypeInvalid,
      reason: `must be ${expected} (got ${describe(got)})`,
    };
  },
};

/** A short description of a JSON value's type for error messages. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
    case 'number':
      return `number ${v}`;
    case 'boolean':
      return `boolean ${v}`;
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

// The errors virt-api answers with: a Kubernetes `Status` (apimachinery's StatusError) whose
// message reads as apimachinery builds it (`errors.NewConflict`, `NewNotFound`, ...), so virtctl and
// kubectl print exactly what they print against KubeVirt.

/** A group-qualified resource as apimachinery prints it: `virtualmachineinstance.kubevirt.io`. */
export const KubeVirtResource = {
  VirtualMachine: 'virtualmachine',
  VirtualMachineInstance: 'virtualmachineinstance',
  /** virt-api names claims in KubeVirt's group too: `v1.Resource("persistentvolumeclaim")`. */
  PersistentVolumeClaim: 'persistentvolumeclaim',
} as const;
export type KubeVirtResource = (typeof KubeVirtResource)[keyof typeof KubeVirtResource];

const qualified = (r: KubeVirtResource) => `${r}.kubevirt.io`;

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  readonly kind?: string;
  readonly causes?: readonly { readonly message: string }[];
}

export class StatusError extends Error {
  override name = 'StatusError';
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  /** The `Status` object virt-api writes (writeError: kind Status, apiVersion v1). */
  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason,
      ...(this.details ? { details: this.details } : {}), code: this.code,
    };
  }
}

const details = (r: KubeVirtResource, name: string): StatusDetails => ({ name, group: 'kubevirt.io', kind: r });

export const conflict = (r: KubeVirtResource, name: string, why: string) =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`, details(r, name));
export const notFound = (r: KubeVirtResource, name: string) =>
  new StatusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, details(r, name));
export const forbidden = (r: KubeVirtResource, name: string, why: string) =>
  new StatusError(403, 'Forbidden', `${qualified(r)} "${name}" is forbidden: ${why}`, details(r, name));
export const badRequest = (message: string, causes?: readonly string[]) =>
  new StatusError(400, 'BadRequest', message, causes?.length ? { causes: causes.map((m) => ({ message: m })) } : undefined);
export const internalError = (why: string) => new StatusError(500, 'InternalError', `Internal error occurred: ${why}`, { });
export const methodNotAllowed = (method: string, path: string) => new StatusError(405, 'MethodNotAllowed', `${method} is not supported on ${path}`);
export const pathNotFound = (path: string) => new StatusError(404, 'NotFound', `the server could not find the requested resource (${path})`);
export const notImplemented = (what: string) => new StatusError(501, 'NotImplemented', what);
export const unauthorized = (why: string) => new StatusError(401, 'Unauthorized', why);
export const forbiddenRequest = (message: string) => new StatusError(403, 'Forbidden', message);

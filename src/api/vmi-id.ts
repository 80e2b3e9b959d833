// The VMI id a launcher pod is labelled with (`vmi.kubevirt.io/id`), KubeVirt's
// pkg/apimachinery CalculateVirtualMachineInstanceID: the controller labels the pod with it and
// `virtctl expose` selects the pod by it.
import { createHash } from 'node:crypto';

/** `CalculateVirtualMachineInstanceID`: the name if ≤ 63 characters, else a 54-char prefix + `-` + 8 hex of SHA-1. */
export function virtualMachineInstanceID(name: string): string {
  if (name.length <= 63) return name;
  const hash = createHash('sha1').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, 63 - 8 - 1)}-${hash}`;
}

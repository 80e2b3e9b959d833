// Shared by the admitter rule tests: the cluster configuration KubeVirt's own tests run with (the
// HostDisk gate on), a deterministic defaulting environment, errors as they print, and the two
// example objects the tables mutate.
import { mergeClusterConfig, type PartialClusterConfig } from '../../../src/api/cluster-config.ts';
import { defaultNewVirtualMachineInstance } from '../../../src/api/defaults.ts';
import { formatFieldError, type FieldError } from '../../../src/api/field-error.ts';
import { decodeKubeVirtObject, decodeVirtualMachine } from '../../../src/api/parse.ts';
import type { VirtualMachineInstance } from '../../../src/api/types.ts';
import { validateVirtualMachineInstance } from '../../../src/api/validation/vmi-create.ts';
import { validateVirtualMachine } from '../../../src/api/validation/vms.ts';
import { loadExample } from '../fixtures.ts';

const GATES = { developerConfiguration: { featureGates: ['HostDisk'] } };
export const config = (c: PartialClusterConfig = {}) => mergeClusterConfig({ ...GATES, ...c });
export const env = () => {
  let n = 0;
  return { config: config(), now: () => new Date('2026-01-01T00:00:00Z'), randomUUID: () => `00000000-0000-4000-8000-${String(n++).padStart(12, '0')}` };
};
export const fmt = (errs: FieldError[]) => errs.map(formatFieldError);

/** A defaulted vmi-nocloud (containerdisk, cloudinitdisk, emptydisk; bridge on the pod network), then `mutate`. */
export function vmiErrors(mutate: (v: any) => void, c: PartialClusterConfig = {}, opts: { sa?: boolean } = {}): string[] {
  const base = defaultNewVirtualMachineInstance(decodeKubeVirtObject(loadExample('vmi-nocloud.yaml')).object as VirtualMachineInstance, env());
  const v: any = structuredClone(base);
  mutate(v);
  return fmt(validateVirtualMachineInstance(v, { config: config(c), isKubeVirtServiceAccount: opts.sa }));
}

export function vm(mutate: (v: any) => void = () => {}) {
  const v: any = loadExample('vm-cirros.yaml');
  mutate(v);
  return validateVirtualMachine(decodeVirtualMachine(v), { config: config() });
}

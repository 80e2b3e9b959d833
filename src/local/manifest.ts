// Reading a KubeVirt manifest from a file for a machine without Kubernetes: what kubectl, the API
// server's schema check and KubeVirt's webhooks would do before a VMI reaches a node. A
// VirtualMachine is accepted too: its VMI is made from the template as the VM controller makes it,
// sized and defaulted by the instance type and preference it names — found in the same file, as
// there is no cluster to hold them.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import yaml from 'js-yaml';
import { defaultClusterConfig, type ClusterConfig } from '../api/cluster-config.ts';
import { defaultNewVirtualMachine, defaultNewVirtualMachineInstance } from '../api/defaults.ts';
import { formatFieldError, type FieldError } from '../api/field-error.ts';
import { parseVirtualMachine, parseVirtualMachineInstance } from '../api/parse.ts';
import type { VirtualMachineInstance } from '../api/types.ts';
import { validateVirtualMachineInstance } from '../api/validation/vmi-create.ts';
import { validateVirtualMachine } from '../api/validation/vms.ts';
import { setupVMIFromVM } from '../../controller/vm/vmi-from-vm.ts';
import { setDefaultNetworkInterface } from '../api/defaults.ts';
import { applyToNewVMI } from '../api/instancetype/apply.ts';
import { InstancetypeKind, InstancetypeResources } from '../api/instancetype/constants.ts';
import { findInstancetypeSpec, findPreferenceSpec, InstancetypeFindError, sourceFromFetched, type InstancetypeSource } from '../api/instancetype/find.ts';
import { parseInstancetypeObject } from '../api/instancetype/parse.ts';
import { applyAutoAttachPreferences } from '../api/instancetype/preference.ts';
import { admitInstancetypes, validateMatchers } from '../api/instancetype/vm-webhook.ts';

export class ManifestError extends Error {
  override name = 'ManifestError';
  readonly errors: readonly string[];
  constructor(file: string, errors: readonly string[]) {
    super(`${file}: ${errors.length === 1 ? errors[0] : `\n  ${errors.join('\n  ')}`}`);
    this.errors = errors;
  }
}

const fmt = (errs: readonly FieldError[]) => errs.map(formatFieldError);

/** The instance types, preferences and ControllerRevisions among the file's documents. */
function instancetypeSourceOf(docs: readonly unknown[], namespace: string): InstancetypeSource {
  const fetched = new Map<string, unknown>();
  for (const d of docs) {
    const kind = (d as { kind?: unknown }).kind;
    const name = (d as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== 'string') continue;
    const k = Object.values(InstancetypeKind).find((x) => x === kind);
    if (k) {
      const r = parseInstancetypeObject(k, d);
      if (!r.value) continue;
      const cluster = InstancetypeResources[k].scope === 'Cluster';
      fetched.set(`${InstancetypeResources[k].plural}/${cluster ? '' : namespace}/${name}`, r.value);
    } else if (kind === 'ControllerRevision') {
      fetched.set(`controllerrevisions/${namespace}/${name}`, d);
    }
  }
  return sourceFromFetched(fetched);
}

/**
 * Loads the first VirtualMachineInstance (or VirtualMachine) in a YAML/JSON file, defaulted and
 * validated as KubeVirt's webhooks would, with a uid and namespace as the API server would give.
 */
export async function loadVmiManifest(file: string, opts: { config?: ClusterConfig; namespace?: string } = {}): Promise<VirtualMachineInstance> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ManifestError(file, [`cannot read the file: ${(err as Error).message}`]);
  }
  let docs: unknown[];
  try {
    docs = yaml.loadAll(text).filter((d) => d !== null && d !== undefined);
  } catch (err) {
    throw new ManifestError(file, [`not valid YAML: ${(err as Error).message}`]);
  }
  const doc = docs.find((d) => {
    const kind = (d as { kind?: unknown }).kind;
    return kind === 'VirtualMachineInstance' || kind === 'VirtualMachine';
  }) as { kind: string } | undefined;
  if (!doc) throw new ManifestError(file, ['no VirtualMachineInstance or VirtualMachine in the file (kind: VirtualMachineInstance, apiVersion: kubevirt.io/v1)']);
  const config = opts.config ?? defaultClusterConfig();
  const env = { config, now: () => new Date(), randomUUID };

  let vmi: VirtualMachineInstance;
  if (doc.kind === 'VirtualMachine') {
    const parsed = parseVirtualMachine(doc);
    if (!parsed.value) throw new ManifestError(file, fmt(parsed.errors));
    const vm = defaultNewVirtualMachine(parsed.value, env);
    vm.metadata ??= {};
    vm.metadata.namespace ??= opts.namespace ?? 'default';
    vm.metadata.uid ??= randomUUID();
    const matchers = validateMatchers(vm);
    if (matchers.length) throw new ManifestError(file, fmt(matchers));
    const source = instancetypeSourceOf(docs, vm.metadata.namespace);
    let instancetype;
    let preference;
    try {
      instancetype = findInstancetypeSpec(vm, source);
      preference = findPreferenceSpec(vm, source);
    } catch (err) {
      if (!(err instanceof InstancetypeFindError)) throw err;
      throw new ManifestError(file, [`${err.message} (without a cluster, the instance type and preference a VirtualMachine names are read from the same file)`]);
    }
    const it = admitInstancetypes(vm, instancetype, preference, config);
    if (it.errors.length) throw new ManifestError(file, fmt(it.errors));
    const v = validateVirtualMachine(it.vm, { config });
    if (v.errors.length) throw new ManifestError(file, fmt(v.errors));
    vmi = setupVMIFromVM(vm);
    if (instancetype || preference) {
      // As the VM controller starts it: the preference's autoattach flags, the default interface, then both applied.
      if (preference) applyAutoAttachPreferences(preference, vmi.spec);
      try {
        setDefaultNetworkInterface(config, vmi.spec);
        applyToNewVMI(vm, vmi, instancetype, preference);
      } catch (err) {
        throw new ManifestError(file, [(err as Error).message]);
      }
    }
  } else {
    const parsed = parseVirtualMachineInstance(doc);
    if (!parsed.value) throw new ManifestError(file, fmt(parsed.errors));
    vmi = parsed.value;
  }
  vmi.metadata ??= {};
  if (!vmi.metadata.name) throw new ManifestError(file, ['metadata.name: Required value']);
  vmi.metadata.namespace ??= opts.namespace ?? 'default';
  // The mutating webhook runs before the validating one.
  let defaulted: VirtualMachineInstance;
  try {
    defaulted = defaultNewVirtualMachineInstance(vmi, env);
  } catch (err) {
    throw new ManifestError(file, [(err as Error).message]);
  }
  const errs = validateVirtualMachineInstance(defaulted, { config });
  if (errs.length) throw new ManifestError(file, fmt(errs));
  defaulted.metadata!.uid ??= randomUUID();
  defaulted.metadata!.creationTimestamp ??= new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return defaulted;
}

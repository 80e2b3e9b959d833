/**
 * `inferFromVolume` (`pkg/instancetype/infer`): a matcher that names a volume instead of an object
 * takes its name and kind from the `instancetype.kubevirt.io/default-{instancetype,preference}[-kind]`
 * labels of what the volume comes from — its PersistentVolumeClaim, or its DataVolume (a template of
 * the VM's, or the object; a DataVolume gone is looked up as the claim of its name), through the
 * DataVolume's source claim, snapshot or DataSource. A volume of another type, a missing label or an
 * unsupported source is an *ignorable* failure: with `inferFromVolumeFailurePolicy: Ignore` the
 * matcher is dropped; anything else (no such volume, a claim not found) refuses. With Ignore and a
 * successful inference of the instance type, the template's `domain.memory` is dropped (KubeVirt's
 * rule: the instance type sizes the VM). KubeVirt does this in its VM mutating webhook; qvirt's VM
 * controller does it (no mutating webhooks) and writes the matchers into the VM.
 *
 * The reads go through an asynchronous `InferSource` (a missing object is `undefined`).
 */
import type { VirtualMachine } from '../types.ts';
import { DefaultLabels, InstancetypeMessages as M } from './constants.ts';

interface Labelled { metadata?: { labels?: Record<string, string> } }
/** The CDI DataVolumeSpec fields inference reads. */
interface DataVolumeSpec {
  source?: { pvc?: { name?: string; namespace?: string }; snapshot?: { name?: string; namespace?: string } };
  sourceRef?: { kind?: string; name?: string; namespace?: string };
}
interface DataVolume extends Labelled { spec?: DataVolumeSpec }
interface DataSource extends Labelled { spec?: { source?: { pvc?: { name?: string; namespace?: string }; snapshot?: { name?: string; namespace?: string } } } }

export interface InferSource {
  persistentVolumeClaim(namespace: string, name: string): Promise<Labelled | undefined>;
  dataVolume(namespace: string, name: string): Promise<DataVolume | undefined>;
  dataSource(namespace: string, name: string): Promise<DataSource | undefined>;
  volumeSnapshot(namespace: string, name: string): Promise<Labelled | undefined>;
}

/** An inference that failed; `ignorable` failures give way to `inferFromVolumeFailurePolicy: Ignore`. */
export class InferenceError extends Error {
  override name = 'InferenceError';
  readonly ignorable: boolean;
  constructor(message: string, ignorable: boolean) {
    super(message);
    this.ignorable = ignorable;
  }
}

type Which = 'instancetype' | 'preference';
const LABELS = {
  instancetype: { name: DefaultLabels.Instancetype, kind: DefaultLabels.InstancetypeKind },
  preference: { name: DefaultLabels.Preference, kind: DefaultLabels.PreferenceKind },
} as const;

/** The API's NotFound text for the core objects inference reads. */
const notFound = (resource: string, name: string) => `${resource} "${name}" not found`;

class Inferrer {
  readonly #labels: (typeof LABELS)[Which];
  readonly #source: InferSource;
  constructor(which: Which, source: InferSource) {
    this.#labels = LABELS[which];
    this.#source = source;
  }

  fromLabels(labels: Record<string, string> | undefined): { name: string; kind: string } {
    const name = labels?.[this.#labels.name];
    if (name === undefined) throw new InferenceError(M.missingLabel(this.#labels.name), true);
    return { name, kind: labels?.[this.#labels.kind] ?? '' };
  }

  async fromPVC(name: string, namespace: string) {
    const pvc = await this.#source.persistentVolumeClaim(namespace, name);
    if (!pvc) throw new InferenceError(notFound('persistentvolumeclaims', name), false);
    return this.fromLabels(pvc.metadata?.labels);
  }

  async fromSnapshot(name: string, namespace: string) {
    const s = await this.#source.volumeSnapshot(namespace, name);
    if (!s) throw new InferenceError(notFound(`volumesnapshots.snapshot.storage.k8s.io`, name), false);
    return this.fromLabels(s.metadata?.labels);
  }

  async fromDataSource(name: string, namespace: string) {
    const ds = await this.#source.dataSource(namespace, name);
    if (!ds) throw new InferenceError(notFound('datasources.cdi.kubevirt.io', name), false);
    try {
      return this.fromLabels(ds.metadata?.labels);
    } catch {
      const src = ds.spec?.source;
      if (src?.pvc) return this.fromPVC(src.pvc.name ?? '', src.pvc.namespace ?? '');
      if (src?.snapshot) return this.fromSnapshot(src.snapshot.name ?? '', src.snapshot.namespace ?? '');
      throw new InferenceError(M.missingDataSourceSource, true);
    }
  }

  async fromDataVolumeSpec(spec: DataVolumeSpec | undefined, vmNamespace: string) {
    if (spec?.source?.pvc) return this.fromPVC(spec.source.pvc.name ?? '', spec.source.pvc.namespace ?? '');
    if (spec?.source?.snapshot) return this.fromSnapshot(spec.source.snapshot.name ?? '', spec.source.snapshot.namespace ?? '');
    if (spec?.sourceRef) {
      if (spec.sourceRef.kind === 'DataSource') return this.fromDataSource(spec.sourceRef.name ?? '', spec.sourceRef.namespace ?? vmNamespace);
      throw new InferenceError(M.unsupportedDataVolumeSourceRef(spec.sourceRef.kind ?? ''), true);
    }
    throw new InferenceError(M.unsupportedDataVolumeSource, true);
  }

  async fromDataVolume(vm: VirtualMachine, name: string) {
    const ns = vm.metadata?.namespace ?? '';
    const template = vm.spec.dataVolumeTemplates?.find((t) => t.metadata?.name === name);
    if (template) return this.fromDataVolumeSpec(template.spec as DataVolumeSpec, ns);
    const dv = await this.#source.dataVolume(ns, name);
    // A garbage-collected DataVolume: its claim has its name.
    if (!dv) return this.fromPVC(name, ns);
    try {
      return this.fromLabels(dv.metadata?.labels);
    } catch {
      return this.fromDataVolumeSpec(dv.spec, ns);
    }
  }

  async fromVolumes(vm: VirtualMachine, volumeName: string) {
    const v = vm.spec.template.spec?.volumes?.find((x) => x.name === volumeName);
    if (!v) throw new InferenceError(M.volumeNotFound(volumeName), false);
    if (v.persistentVolumeClaim) return this.fromPVC(v.persistentVolumeClaim.claimName, vm.metadata?.namespace ?? '');
    if (v.dataVolume) return this.fromDataVolume(vm, v.dataVolume.name);
    throw new InferenceError(M.unsupportedVolumeType(volumeName), true);
  }
}

/** Whether the VM has a matcher inference would rewrite. */
export const needsInference = (vm: VirtualMachine): boolean => !!vm.spec.instancetype?.inferFromVolume || !!vm.spec.preference?.inferFromVolume;

/**
 * `infer.handler.Infer`: the VM with its inferring matchers replaced by `{name, kind}` (or dropped
 * under the Ignore policy). Returns a new object; throws `InferenceError` where KubeVirt refuses.
 */
export async function inferMatchers(vm: VirtualMachine, source: InferSource): Promise<VirtualMachine> {
  const out = structuredClone(vm);
  const it = out.spec.instancetype;
  if (it?.inferFromVolume) {
    const ignore = it.inferFromVolumeFailurePolicy === 'Ignore';
    try {
      const found = await new Inferrer('instancetype', source).fromVolumes(out, it.inferFromVolume);
      if (ignore && out.spec.template.spec) delete out.spec.template.spec.domain.memory;
      out.spec.instancetype = { name: found.name, ...(found.kind ? { kind: found.kind } : {}) };
    } catch (err) {
      if (!(err instanceof InferenceError) || !err.ignorable || !ignore) throw err;
      delete out.spec.instancetype;
    }
  }
  const pref = out.spec.preference;
  if (pref?.inferFromVolume) {
    const ignore = pref.inferFromVolumeFailurePolicy === 'Ignore';
    try {
      const found = await new Inferrer('preference', source).fromVolumes(out, pref.inferFromVolume);
      out.spec.preference = { name: found.name, ...(found.kind ? { kind: found.kind } : {}) };
    } catch (err) {
      if (!(err instanceof InferenceError) || !err.ignorable || !ignore) throw err;
      delete out.spec.preference;
    }
  }
  return out;
}

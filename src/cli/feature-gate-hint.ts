// What `qvirt run` says when a manifest needs a KubeVirt feature gate: the gates the validation
// errors name, and the flag that switches them on. Pure.

const GATE = /\b([A-Z][A-Za-z0-9]+) feature gate is not enabled|'([A-Za-z0-9]+)' feature gate is not enabled/g;

/** The feature gates named in validation errors, in order, once each. */
export function gatesNamed(errors: readonly string[]): string[] {
  const out: string[] = [];
  for (const e of errors) for (const m of e.matchAll(GATE)) { const g = m[1] ?? m[2]!; if (!out.includes(g)) out.push(g); }
  return out;
}

/** A hint line for those gates, or '' when none is named. */
export function featureGateHint(errors: readonly string[], already: readonly string[]): string {
  const gates = [...already, ...gatesNamed(errors).filter((g) => !already.includes(g))];
  if (gates.length === already.length) return '';
  return `hint: switch the feature gate on with --feature-gates ${gates.join(',')} (on a cluster: the KubeVirt CR's spec.configuration.developerConfiguration.featureGates)`;
}

/** `--feature-gates A,B` → ['A', 'B'], refusing what is not a gate name. */
export function parseFeatureGates(text: string | undefined): string[] {
  if (!text) return [];
  const gates = text.split(',').map((g) => g.trim()).filter(Boolean);
  const bad = gates.find((g) => !/^[A-Za-z][A-Za-z0-9]*$/.test(g));
  if (bad) throw new Error(`--feature-gates: "${bad}" is not a feature gate name (e.g. HostDisk,Snapshot)`);
  return gates;
}

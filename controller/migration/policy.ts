// virt-controller's MigrationPolicy selection and application (watch/migration/migrationpolicy.go,
// migration.go resolveMigrationConfig): the policy whose selectors match the VMI's and its
// namespace's labels and name the most of them wins, and its set fields override the cluster's
// migration configuration for that migration only.
import type { VMIMConfigurationOptions } from '../../src/api/types.ts';
import type { MigrationPolicy, MigrationPolicySpec } from '../../src/api/migrations/types.ts';

interface MatchScore {
  readonly vmiLabels: number;
  readonly nsLabels: number;
}

const greaterThan = (a: MatchScore, b: MatchScore): boolean => {
  const ta = a.vmiLabels + a.nsLabels;
  const tb = b.vmiLabels + b.nsLabels;
  return ta === tb ? a.vmiLabels > b.vmiLabels : ta > tb;
};
const equals = (a: MatchScore, b: MatchScore): boolean => a.vmiLabels === b.vmiLabels && a.nsLabels === b.nsLabels;

/**
 * `countMatchingLabels`: whether the policy matches and how many of its labels did. A policy without
 * `selectors` matches nothing; every key of a selector must be on the labels with the same value.
 * As KubeVirt: a VMI without labels has neither selector checked (its namespace's neither), and an
 * empty selector matches with score 0.
 */
export function policyMatchScore(policy: MigrationPolicy, vmiLabels: Readonly<Record<string, string>> | undefined, nsLabels: Readonly<Record<string, string>> | undefined): MatchScore | undefined {
  const sel = policy.spec?.selectors;
  if (!sel) return undefined;
  const count = (selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>> | undefined): number | undefined => {
    let n = 0;
    for (const [k, v] of Object.entries(selector)) {
      if (labels?.[k] !== v) return undefined;
      n++;
    }
    return n;
  };
  let vmi = 0;
  let ns = 0;
  if (sel.virtualMachineInstanceSelector && vmiLabels) {
    const c = count(sel.virtualMachineInstanceSelector, vmiLabels);
    if (c === undefined) return undefined;
    vmi = c;
  }
  // KubeVirt checks the namespace selector only when the VMI has labels (it tests vmiLabels != nil).
  if (sel.namespaceSelector && vmiLabels) {
    const c = count(sel.namespaceSelector, nsLabels);
    if (c === undefined) return undefined;
    ns = c;
  }
  return { vmiLabels: vmi, nsLabels: ns };
}

/**
 * `matchPolicy`: the policy for a VMI — the matching one with the most matching labels (VMI and
 * namespace labels together; on a tie, more VMI labels wins), then the lexicographically first name.
 */
export function matchMigrationPolicy(policies: readonly MigrationPolicy[], vmiLabels: Readonly<Record<string, string>> | undefined, nsLabels: Readonly<Record<string, string>> | undefined): MigrationPolicy | undefined {
  let best: MatchScore = { vmiLabels: 0, nsLabels: 0 };
  let matching: MigrationPolicy[] = [];
  for (const p of policies) {
    const score = policyMatchScore(p, vmiLabels, nsLabels);
    if (!score) continue;
    if (greaterThan(score, best)) { best = score; matching = [p]; }
    else if (equals(score, best)) matching.push(p);
  }
  let chosen: MigrationPolicy | undefined;
  for (const p of matching) if (!chosen || (p.metadata?.name ?? '') < (chosen.metadata?.name ?? '')) chosen = p;
  return chosen;
}

/**
 * `applyMigrationPolicySpec`: the policy's set fields over the cluster's configuration (a copy). A
 * policy that sets allowPostCopy but not allowWorkloadDisruption lets the latter follow the former.
 */
export function applyMigrationPolicySpec(base: VMIMConfigurationOptions, spec: MigrationPolicySpec): VMIMConfigurationOptions {
  const out: VMIMConfigurationOptions = structuredClone(base);
  if (spec.allowWorkloadDisruption === undefined && spec.allowPostCopy !== undefined) out.allowWorkloadDisruption = spec.allowPostCopy;
  if (spec.allowAutoConverge !== undefined) out.allowAutoConverge = spec.allowAutoConverge;
  if (spec.bandwidthPerMigration !== undefined) out.bandwidthPerMigration = spec.bandwidthPerMigration;
  if (spec.completionTimeoutPerGiB !== undefined) out.completionTimeoutPerGiB = spec.completionTimeoutPerGiB;
  if (spec.maxDowntimeMs !== undefined) out.maxDowntimeMs = spec.maxDowntimeMs;
  if (spec.allowPostCopy !== undefined) out.allowPostCopy = spec.allowPostCopy;
  if (spec.allowWorkloadDisruption !== undefined) out.allowWorkloadDisruption = spec.allowWorkloadDisruption;
  const x = spec.experimental;
  if (x) {
    const e = { ...(out.experimental ?? {}) };
    if (x.stallDetector) e.stallDetector = { ...(e.stallDetector ?? {}), ...definedOnly(x.stallDetector) };
    if (x.downtimeTuning) e.downtimeTuning = { ...(e.downtimeTuning ?? {}), ...definedOnly(x.downtimeTuning) };
    if (x.compression !== undefined) e.compression = x.compression;
    out.experimental = e;
  }
  return out;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** `resolveMigrationConfig`: the effective configuration for this VMI's migration and the policy that shaped it. */
export function resolveMigrationConfiguration(
  base: VMIMConfigurationOptions,
  policies: readonly MigrationPolicy[],
  vmiLabels: Readonly<Record<string, string>> | undefined,
  nsLabels: Readonly<Record<string, string>> | undefined,
): { configuration: VMIMConfigurationOptions; policy?: MigrationPolicy } {
  const policy = matchMigrationPolicy(policies, vmiLabels, nsLabels);
  return policy ? { configuration: applyMigrationPolicySpec(base, policy.spec), policy } : { configuration: structuredClone(base) };
}

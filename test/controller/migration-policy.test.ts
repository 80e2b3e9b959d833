// MigrationPolicy selection and application (KubeVirt's watch/migration/migrationpolicy.go), and
// virt-api's MigrationPolicy admitter, as tables.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyMigrationPolicySpec, matchMigrationPolicy, policyMatchScore, resolveMigrationConfiguration } from '../../controller/migration/policy.ts';
import { admitMigrationPolicy } from '../../src/admission/migrationpolicy-admitter.ts';
import { defaultClusterConfig, type ClusterConfig } from '../../src/api/cluster-config.ts';
import type { MigrationPolicy, Selectors } from '../../src/api/migrations/types.ts';

const policy = (name: string, selectors: Selectors | undefined, spec: Omit<MigrationPolicy['spec'], 'selectors'> = {}): MigrationPolicy => ({
  apiVersion: 'migrations.kubevirt.io/v1alpha1',
  kind: 'MigrationPolicy',
  metadata: { name },
  spec: { ...(selectors ? { selectors } : {}), ...spec },
});

type L = Record<string, string> | undefined;
const MATCH_CASES: [string, MigrationPolicy[], L, L, string | undefined][] = [
  ['no policies', [], { a: '1' }, {}, undefined],
  ['a policy without selectors matches nothing', [policy('p', undefined)], { a: '1' }, {}, undefined],
  ['empty selectors match every labelled VMI', [policy('p', {})], { a: '1' }, {}, 'p'],
  ['a VMI label matches', [policy('p', { virtualMachineInstanceSelector: { a: '1' } })], { a: '1', b: '2' }, {}, 'p'],
  ['a VMI label with another value does not', [policy('p', { virtualMachineInstanceSelector: { a: '2' } })], { a: '1' }, {}, undefined],
  ['every selector label must match', [policy('p', { virtualMachineInstanceSelector: { a: '1', b: '3' } })], { a: '1', b: '2' }, {}, undefined],
  ['a namespace label matches', [policy('p', { namespaceSelector: { team: 'x' } })], { a: '1' }, { team: 'x' }, 'p'],
  ['VMI and namespace selectors must both match', [policy('p', { namespaceSelector: { team: 'x' }, virtualMachineInstanceSelector: { a: '1' } })], { a: '1' }, { team: 'y' }, undefined],
  ['more matching labels win', [
    policy('a-one', { virtualMachineInstanceSelector: { a: '1' } }),
    policy('z-two', { virtualMachineInstanceSelector: { a: '1', b: '2' } }),
  ], { a: '1', b: '2' }, {}, 'z-two'],
  ['VMI and namespace labels count together', [
    policy('a-vmi', { virtualMachineInstanceSelector: { a: '1' } }),
    policy('z-both', { virtualMachineInstanceSelector: { a: '1' }, namespaceSelector: { team: 'x' } }),
  ], { a: '1' }, { team: 'x' }, 'z-both'],
  ['same total: more VMI labels win', [
    policy('a-ns', { namespaceSelector: { team: 'x', env: 'prod' } }),
    policy('z-vmi', { virtualMachineInstanceSelector: { a: '1', b: '2' } }),
  ], { a: '1', b: '2' }, { team: 'x', env: 'prod' }, 'z-vmi'],
  ['a tie goes to the first name', [
    policy('charlie', { virtualMachineInstanceSelector: { a: '1' } }),
    policy('alpha', { virtualMachineInstanceSelector: { b: '2' } }),
    policy('bravo', { virtualMachineInstanceSelector: { a: '1' } }),
  ], { a: '1', b: '2' }, {}, 'alpha'],
  ['a non-matching policy with more labels does not count', [
    policy('b-match', { virtualMachineInstanceSelector: { a: '1' } }),
    policy('a-miss', { virtualMachineInstanceSelector: { a: '1', b: '9', c: '3' } }),
  ], { a: '1', b: '2', c: '3' }, {}, 'b-match'],
  // KubeVirt checks no selector of a VMI that has no labels at all (its `vmiLabels != nil` test).
  ['a VMI without labels matches any policy with selectors, score 0', [
    policy('b', { virtualMachineInstanceSelector: { a: '1' } }),
    policy('a', { namespaceSelector: { team: 'x' } }),
  ], undefined, { team: 'y' }, 'a'],
];

for (const [name, policies, vmiLabels, nsLabels, want] of MATCH_CASES) {
  test(`matchMigrationPolicy: ${name}`, () => {
    assert.is(matchMigrationPolicy(policies, vmiLabels, nsLabels)?.metadata?.name, want);
    // Order does not matter.
    assert.is(matchMigrationPolicy([...policies].reverse(), vmiLabels, nsLabels)?.metadata?.name, want);
  });
}

test('policyMatchScore counts VMI and namespace labels apart', () => {
  assert.equal(policyMatchScore(policy('p', { virtualMachineInstanceSelector: { a: '1' }, namespaceSelector: { t: 'x', e: 'p' } }), { a: '1' }, { t: 'x', e: 'p', o: 'z' }), { vmiLabels: 1, nsLabels: 2 });
});

const BASE = {
  allowAutoConverge: false,
  bandwidthPerMigration: '0Mi',
  completionTimeoutPerGiB: 150,
  allowPostCopy: false,
  allowWorkloadDisruption: false,
  progressTimeout: 150,
  parallelMigrationsPerCluster: 5,
};

const APPLY_CASES: [string, MigrationPolicy['spec'], Partial<typeof BASE> & Record<string, unknown>][] = [
  ['nothing set: the cluster configuration', {}, {}],
  ['bandwidth and completion timeout', { bandwidthPerMigration: '64Mi', completionTimeoutPerGiB: 10 }, { bandwidthPerMigration: '64Mi', completionTimeoutPerGiB: 10 }],
  ['allowPostCopy alone: allowWorkloadDisruption follows it', { allowPostCopy: true }, { allowPostCopy: true, allowWorkloadDisruption: true }],
  ['allowPostCopy with allowWorkloadDisruption: each its own', { allowPostCopy: true, allowWorkloadDisruption: false }, { allowPostCopy: true, allowWorkloadDisruption: false }],
  ['auto-converge and max downtime', { allowAutoConverge: true, maxDowntimeMs: 300 }, { allowAutoConverge: true, maxDowntimeMs: 300 }],
  ['experimental options merged', { experimental: { compression: 'zstd' } }, { experimental: { compression: 'zstd' } }],
];

for (const [name, spec, changes] of APPLY_CASES) {
  test(`applyMigrationPolicySpec: ${name}`, () => {
    const base = structuredClone(BASE);
    assert.equal(applyMigrationPolicySpec(base, spec), { ...BASE, ...changes });
    assert.equal(base, BASE, 'the cluster configuration is not changed');
  });
}

test('resolveMigrationConfiguration: the policy and what it made of the cluster configuration', () => {
  const r = resolveMigrationConfiguration(BASE, [policy('fast', { virtualMachineInstanceSelector: { tier: 'gold' } }, { bandwidthPerMigration: '1Gi' })], { tier: 'gold' }, {});
  assert.is(r.policy?.metadata?.name, 'fast');
  assert.is(r.configuration.bandwidthPerMigration, '1Gi');
  const none = resolveMigrationConfiguration(BASE, [], { tier: 'gold' }, {});
  assert.is(none.policy, undefined);
  assert.equal(none.configuration, BASE);
});

const withGates = (...gates: string[]): ClusterConfig => {
  const c = defaultClusterConfig();
  return { ...c, developerConfiguration: { ...c.developerConfiguration, featureGates: gates } };
};
const mp = (spec: Record<string, unknown>) => ({ apiVersion: 'migrations.kubevirt.io/v1alpha1', kind: 'MigrationPolicy', metadata: { name: 'p' }, spec: { selectors: {}, ...spec } });

const ADMIT_CASES: [string, Record<string, unknown>, ClusterConfig, string | undefined, Record<string, unknown>?][] = [
  ['a plain policy', { allowPostCopy: true, bandwidthPerMigration: '64Mi', completionTimeoutPerGiB: 10 }, withGates(), undefined],
  ['negative completion timeout', { completionTimeoutPerGiB: -1 }, withGates(), 'spec.completionTimeoutPerGiB: must not be negative'],
  ['negative bandwidth', { bandwidthPerMigration: '-1Mi' }, withGates(), 'spec.bandwidthPerMigration: must not be negative'],
  ['maxDowntimeMs without its gates', { maxDowntimeMs: 100 }, withGates(), 'maxDowntimeMs cannot be modified without enabling the MigrationStallDetection or MigrationDowntimeTuning feature gate'],
  ['maxDowntimeMs with MigrationDowntimeTuning', { maxDowntimeMs: 100 }, withGates('MigrationDowntimeTuning'), undefined],
  ['maxDowntimeMs unchanged on update needs no gate', { maxDowntimeMs: 100 }, withGates(), undefined, { maxDowntimeMs: 100 }],
  ['stallDetector and downtimeTuning together', { experimental: { stallDetector: {}, downtimeTuning: {} } }, withGates('MigrationStallDetection', 'MigrationDowntimeTuning'), 'experimental.stallDetector and experimental.downtimeTuning are mutually exclusive; the stall detection path manages its own downtime schedule'],
  ['a field of the wrong type', { allowPostCopy: 'yes' }, withGates(), 'spec.allowPostCopy'],
];

for (const [name, spec, config, want, oldSpec] of ADMIT_CASES) {
  test(`admitMigrationPolicy: ${name}`, () => {
    const r = admitMigrationPolicy(mp(spec), config, oldSpec ? mp(oldSpec) : undefined);
    if (want === undefined) assert.is(r, undefined);
    else {
      assert.ok(r && 'message' in r && r.message.includes(want), `${JSON.stringify(r)} should say ${want}`);
      assert.is((r as { code?: number }).code, 422);
    }
  });
}

test.run();

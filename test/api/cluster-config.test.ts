import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  FeatureGate,
  cpuModelFor,
  defaultClusterConfig,
  isFeatureGateEnabled,
  machineTypeFor,
  mergeClusterConfig,
  rootEnabled,
  decodeClusterConfig,
} from '../../src/api/cluster-config.ts';
import { formatFieldError } from '../../src/api/field-error.ts';

test('KubeVirt defaults', () => {
  const c = defaultClusterConfig();
  assert.is(c.developerConfiguration.useEmulation, false);
  assert.is(c.developerConfiguration.memoryOvercommit, 100);
  assert.is(c.developerConfiguration.cpuAllocationRatio, 10);
  assert.is(c.cpuRequest, '100m');
  assert.is(c.evictionStrategy, 'None');
  assert.is(c.network.defaultNetworkInterface, 'bridge');
  assert.is(c.network.permitBridgeInterfaceOnPodNetwork, true);
  assert.equal(c.migrations, {
    parallelMigrationsPerCluster: 5,
    parallelOutboundMigrationsPerNode: 2,
    nodeDrainTaintKey: 'kubevirt.io/drain',
    bandwidthPerMigration: '0Mi',
    progressTimeout: 150,
    completionTimeoutPerGiB: 150,
    maxDowntimeMs: 900,
    utilityVolumesTimeout: 150,
    unsafeMigrationOverride: false,
    allowAutoConverge: false,
    allowPostCopy: false,
  });
  assert.is(c.additionalGuestMemoryOverheadRatio, undefined);
  assert.equal(c.supportContainerResources, []);
  assert.is(c.vmRolloutStrategy, 'LiveUpdate');
  assert.is(c.liveUpdateConfiguration.maxHotplugRatio, 4);
  assert.is(machineTypeFor(c, 'amd64'), 'q35');
  assert.is(machineTypeFor(c, 'arm64'), 'virt');
  assert.is(machineTypeFor(c, 's390x'), 's390-ccw-virtio');
  assert.is(cpuModelFor(c), 'host-model');
  assert.not.ok(rootEnabled(c));
});

test('merge: objects merge field by field, lists replace, maps merge', () => {
  const c = mergeClusterConfig({
    developerConfiguration: { useEmulation: true, featureGates: ['Root', 'HostDisk'], nodeSelectors: { a: 'b' } },
    migrations: { allowPostCopy: true, bandwidthPerMigration: '64Mi', disableTLS: true },
    network: { defaultNetworkInterface: 'masquerade' },
    cpuModel: 'Haswell',
    machineType: 'pc-q35-7.2',
    additionalGuestMemoryOverheadRatio: '1.5',
    supportContainerResources: [{ type: 'hotplug-disk', resources: { requests: { cpu: '10m' } } }],
  });
  assert.is(c.developerConfiguration.useEmulation, true);
  assert.is(c.developerConfiguration.memoryOvercommit, 100, 'untouched sibling keeps its default');
  assert.equal(c.developerConfiguration.featureGates, ['Root', 'HostDisk']);
  assert.equal(c.developerConfiguration.nodeSelectors, { a: 'b' });
  assert.is(c.migrations.allowPostCopy, true);
  assert.is(c.migrations.bandwidthPerMigration, '64Mi');
  assert.is(c.migrations.disableTLS, true);
  assert.is(c.migrations.progressTimeout, 150);
  assert.is(c.network.defaultNetworkInterface, 'masquerade');
  assert.is(c.network.permitBridgeInterfaceOnPodNetwork, true);
  assert.is(cpuModelFor(c), 'Haswell');
  assert.is(machineTypeFor(c, 'amd64'), 'pc-q35-7.2');
  assert.is(c.additionalGuestMemoryOverheadRatio, '1.5');
  assert.is(c.supportContainerResources.length, 1);
  assert.ok(rootEnabled(c));
  assert.ok(isFeatureGateEnabled(c, FeatureGate.HostDisk));
});

test('merge: Go omitempty — zero values of non-pointer fields do not override; pointer fields do', () => {
  const c = mergeClusterConfig({
    developerConfiguration: { memoryOvercommit: 0, cpuAllocationRatio: 0 },
    migrations: { parallelMigrationsPerCluster: 0, allowAutoConverge: false },
    cpuModel: '',
  });
  assert.is(c.developerConfiguration.memoryOvercommit, 100);
  assert.is(c.developerConfiguration.cpuAllocationRatio, 10);
  assert.is(c.migrations.parallelMigrationsPerCluster, 0, '*uint32 in KubeVirt: 0 is an explicit value');
  assert.is(cpuModelFor(c), 'host-model');
});

test('merge: nulls and absent keep defaults; inputs are not modified; results are independent', () => {
  const input = { developerConfiguration: { featureGates: ['Root'] }, migrations: null };
  const snapshot = structuredClone(input);
  const a = mergeClusterConfig(input);
  const b = mergeClusterConfig(input);
  assert.equal(input, snapshot);
  assert.is(a.migrations.parallelMigrationsPerCluster, 5);
  a.developerConfiguration.featureGates.push('X');
  assert.equal(b.developerConfiguration.featureGates, ['Root']);
  assert.equal(mergeClusterConfig(undefined), defaultClusterConfig());
});

test('disabledFeatureGates win over featureGates', () => {
  const c = mergeClusterConfig({ developerConfiguration: { featureGates: ['Root'], disabledFeatureGates: ['Root'] } });
  assert.not.ok(rootEnabled(c));
});

test('default architecture and arch-specific machine types', () => {
  const c = mergeClusterConfig({ architectureConfiguration: { arm64: { machineType: 'virt-7.2' } } }, 'arm64');
  assert.is(c.architectureConfiguration.defaultArchitecture, 'arm64');
  assert.is(machineTypeFor(c, 'arm64'), 'virt-7.2');
  assert.is(c.architectureConfiguration.arm64.ovmfPath, '/usr/share/AAVMF');
});

test('decode: a KubeVirt CR configuration, typed, merged over defaults; unknown keys ignored and listed', () => {
  const r = decodeClusterConfig({
    developerConfiguration: { useEmulation: true, featureGates: ['HostDisk'], diskVerification: { memoryLimit: '2G' } },
    migrations: { bandwidthPerMigration: '64Mi', allowPostCopy: true },
    network: { defaultNetworkInterface: 'masquerade' },
    permittedHostDevices: { pciHostDevices: [] },
  });
  assert.equal(r.errors, []);
  assert.equal([...r.ignored].sort(), ['configuration.developerConfiguration.diskVerification', 'configuration.permittedHostDevices']);
  assert.is(r.config?.developerConfiguration.useEmulation, true);
  assert.is(r.config?.migrations.bandwidthPerMigration, '64Mi');
  assert.is(r.config?.migrations.progressTimeout, 150);
  assert.is(r.config?.network.defaultNetworkInterface, 'masquerade');
  assert.equal(decodeClusterConfig(undefined).config, defaultClusterConfig());
});

test('decode: type errors name the field; all of them are reported', () => {
  const r = decodeClusterConfig({
    migrations: { allowPostCopy: 'yes', bandwidthPerMigration: '64 MB' },
    network: { defaultNetworkInterface: 'tap' },
    developerConfiguration: { featureGates: 'Root' },
    additionalGuestMemoryOverheadRatio: 'x1.5',
  });
  assert.is(r.config, undefined);
  assert.equal(r.errors.map(formatFieldError).sort(), [
    'configuration.additionalGuestMemoryOverheadRatio: must match ^[0-9]+(\\.[0-9]+)?$ (got "x1.5")',
    'configuration.developerConfiguration.featureGates: must be an array (got string "Root")',
    'configuration.migrations.allowPostCopy: must be a boolean (got string "yes")',
    'configuration.migrations.bandwidthPerMigration: quantity "64 MB" is invalid: unknown suffix " MB" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or e<exp>)',
    'configuration.network.defaultNetworkInterface: must be one of bridge, masquerade, slirp (got "tap")',
  ]);
});

test.run();

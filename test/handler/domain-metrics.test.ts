// The node agent's metrics from a launcher's stats.DomainStats and a VMI object, against KubeVirt's
// collectors (pkg/monitoring/metrics/virt-handler/domainstats, virt-controller/vmistats_collector.go):
// names, units, labels; and the scraper's bounds (busy launcher skipped, deadline, refusals).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseDomainStats, DomainStatsParseError } from '../../handler/metrics/domain-stats.ts';
import { domainMetrics, FamilyBuilder, vcpuState, vmiLabelName } from '../../handler/metrics/domain-metrics.ts';
import { isEvictable, vmiInfoLabels, vmiMetrics } from '../../src/metrics/vmi-info.ts';
import { DomainStatsScraper, type StatsSource } from '../../handler/metrics/scrape.ts';
import { formatExposition } from '../../src/metrics/exposition.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const vmi = (extra: Record<string, unknown> = {}): VirtualMachineInstance => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
  metadata: { name: 'vm1', namespace: 'ns1', uid: 'u1', labels: { 'kubevirt.io/vm': 'vm1', 'app.example.com/tier-name': 'web' }, annotations: { 'vm.kubevirt.io/os': 'linux' } },
  spec: { domain: { devices: {} } },
  status: { nodeName: 'node1', phase: 'Running' },
  ...extra,
}) as unknown as VirtualMachineInstance;

const STATS = {
  Name: 'ns1_vm1', UUID: 'x',
  Cpu: { TimeSet: true, Time: 3_000_000_000, UserSet: true, User: 2_000_000_000, SystemSet: true, System: 1_000_000_000 },
  Memory: { RSSSet: true, RSS: 1000, ActualBalloonSet: true, ActualBalloon: 196608, TotalSet: true, Total: 196608, AvailableSet: true, Available: 190000, UsableSet: true, Usable: 150000, UnusedSet: true, Unused: 140000, CachedSet: false, Cached: 0, MajorFaultSet: true, MajorFault: 7, MinorFaultSet: true, MinorFault: 900, SwapInSet: true, SwapIn: 0, SwapOutSet: false, SwapOut: 0 },
  Vcpu: [{ StateSet: true, State: 1, TimeSet: true, Time: 1_500_000_000, WaitSet: false, Wait: 0, DelaySet: true, Delay: 250_000_000 }, { StateSet: true, State: 2, TimeSet: true, Time: 500_000_000, DelaySet: false, Delay: 0 }],
  Net: [{ NameSet: true, Name: 'tap0', AliasSet: true, Alias: 'default', RxBytesSet: true, RxBytes: 100, TxBytesSet: true, TxBytes: 200, RxPktsSet: true, RxPkts: 1, TxPktsSet: true, TxPkts: 2, RxErrsSet: true, RxErrs: 0, TxErrsSet: true, TxErrs: 0, RxDropSet: true, RxDrop: 3, TxDropSet: true, TxDrop: 4 }, { NameSet: false, Name: '' }],
  Block: [{ NameSet: true, Name: 'ua-rootdisk', Alias: 'rootdisk', RdReqsSet: true, RdReqs: 10, RdBytesSet: true, RdBytes: 4096, RdTimesSet: true, RdTimes: 2_000_000, WrReqsSet: true, WrReqs: 1, WrBytesSet: true, WrBytes: 512, WrTimesSet: true, WrTimes: 1_000_000, FlReqsSet: true, FlReqs: 5, FlTimesSet: true, FlTimes: 3_000_000 }],
  MigrateDomainJobInfo: { DataTotalSet: true, DataTotal: 1000, DataRemainingSet: true, DataRemaining: 400, DataProcessedSet: true, DataProcessed: 600, MemoryBpsSet: true, MemoryBps: 125, MemDirtyRateSet: false, MemDirtyRate: 0 },
};

const lines = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('#'));
const L = 'name="vm1",namespace="ns1",node="node1",kubernetes_vmi_label_kubevirt_io_vm="vm1",kubernetes_vmi_label_app_example_com_tier_name="web"';

test('parse: figures only where their Set flag is true; a set figure that is not a number names the field', () => {
  const s = parseDomainStats(JSON.stringify(STATS));
  assert.equal(s.cpu, { Time: 3e9, User: 2e9, System: 1e9 });
  assert.is(s.memory?.Cached, undefined);
  assert.is(s.memory?.SwapIn, 0, 'a zero that is set stays');
  assert.is(s.net.length, 1, 'an unnamed NIC is dropped');
  assert.equal(s.block[0]?.alias, 'rootdisk');
  assert.equal(parseDomainStats('{"Name":"n","Cpu":null,"Memory":null,"Vcpu":null,"Net":null,"Block":null,"MigrateDomainJobInfo":null}').vcpu, []);
  const bad: Array<[string, RegExp]> = [
    ['[]', /must be a JSON object/], ['nope', /not JSON/],
    ['{"Cpu":{"TimeSet":true,"Time":"3"}}', /Cpu\.Time: TimeSet is true/],
    ['{"Block":{}}', /Block: must be an array/],
    ['{"Vcpu":[1]}', /Vcpu\[0\]: must be an object/],
  ];
  for (const [json, re] of bad) assert.throws(() => parseDomainStats(json), (e: unknown) => e instanceof DomainStatsParseError && re.test((e as Error).message), json);
});

test('domain metrics: KubeVirt names, bytes from KiB, seconds from ns, VMI labels, drive/interface/id/state', () => {
  const text = formatExposition(domainMetrics(vmi(), parseDomainStats(JSON.stringify(STATS))).families());
  const want = [
    `kubevirt_vmi_memory_resident_bytes{${L}} 1024000`,
    `kubevirt_vmi_memory_domain_bytes{${L}} 201326592`,
    `kubevirt_vmi_memory_actual_balloon_bytes{${L}} 201326592`,
    `kubevirt_vmi_memory_available_bytes{${L}} 194560000`,
    `kubevirt_vmi_memory_usable_bytes{${L}} 153600000`,
    `kubevirt_vmi_memory_unused_bytes{${L}} 143360000`,
    `kubevirt_vmi_memory_pgmajfault_total{${L}} 7`,
    `kubevirt_vmi_memory_pgminfault_total{${L}} 900`,
    `kubevirt_vmi_memory_swap_in_traffic_bytes{${L}} 0`,
    `kubevirt_vmi_cpu_usage_seconds_total{${L}} 3`,
    `kubevirt_vmi_cpu_user_usage_seconds_total{${L}} 2`,
    `kubevirt_vmi_cpu_system_usage_seconds_total{${L}} 1`,
    `kubevirt_vmi_vcpu_seconds_total{${L},id="0",state="running"} 1.5`,
    `kubevirt_vmi_vcpu_seconds_total{${L},id="1",state="blocked"} 0.5`,
    `kubevirt_vmi_vcpu_delay_seconds_total{${L},id="0"} 0.25`,
    `kubevirt_vmi_storage_iops_read_total{${L},drive="rootdisk"} 10`,
    `kubevirt_vmi_storage_read_traffic_bytes_total{${L},drive="rootdisk"} 4096`,
    `kubevirt_vmi_storage_write_traffic_bytes_total{${L},drive="rootdisk"} 512`,
    `kubevirt_vmi_storage_read_times_seconds_total{${L},drive="rootdisk"} 0.002`,
    `kubevirt_vmi_storage_flush_requests_total{${L},drive="rootdisk"} 5`,
    `kubevirt_vmi_storage_flush_times_seconds_total{${L},drive="rootdisk"} 0.003`,
    `kubevirt_vmi_network_receive_bytes_total{${L},interface="default"} 100`,
    `kubevirt_vmi_network_transmit_bytes_total{${L},interface="default"} 200`,
    `kubevirt_vmi_network_traffic_bytes_total{${L},interface="default",type="rx"} 100`,
    `kubevirt_vmi_network_receive_packets_dropped_total{${L},interface="default"} 3`,
    'kubevirt_vmi_migration_data_bytes_total{node="node1",namespace="ns1",name="vm1"} 1000',
    'kubevirt_vmi_migration_data_remaining_bytes{node="node1",namespace="ns1",name="vm1"} 400',
    'kubevirt_vmi_migration_memory_transfer_rate_bytes{node="node1",namespace="ns1",name="vm1"} 125',
  ];
  const got = new Set(lines(text));
  for (const w of want) assert.ok(got.has(w.replace(`{${L}`, `{node="node1",namespace="ns1",name="vm1",kubernetes_vmi_label_kubevirt_io_vm="vm1",kubernetes_vmi_label_app_example_com_tier_name="web"`)), `${w}\nin:\n${text}`);
  for (const absent of ['kubevirt_vmi_memory_cached_bytes', 'kubevirt_vmi_memory_swap_out_traffic_bytes', 'kubevirt_vmi_vcpu_wait_seconds_total', 'kubevirt_vmi_migration_dirty_memory_rate_bytes']) {
    assert.not.ok(text.includes(absent), `${absent}: not set, not reported`);
  }
  assert.ok(text.includes('# TYPE kubevirt_vmi_storage_read_traffic_bytes_total counter\n'));
  assert.ok(text.includes('# TYPE kubevirt_vmi_memory_domain_bytes gauge\n'));
});

test('label names and vCPU states as KubeVirt writes them', () => {
  const cases: Array<[string, string]> = [['kubevirt.io/vm', 'kubernetes_vmi_label_kubevirt_io_vm'], ['app', 'kubernetes_vmi_label_app'], ['a-b.c/d', 'kubernetes_vmi_label_a_b_c_d']];
  for (const [k, want] of cases) assert.is(vmiLabelName(k), want);
  assert.equal([0, 1, 2, 7].map(vcpuState), ['offline', 'running', 'blocked', 'unknown']);
});

test('kubevirt_vmi_info: phase lowercased, system annotations, guest OS, evictable/outdated, instancetypes by vendor', () => {
  const v = vmi({
    status: { nodeName: 'node1', phase: 'Running', machine: { type: 'pc-q35-7.2' }, guestOSInfo: { kernelRelease: '6.1.0', machine: 'x86_64', name: 'Debian', versionId: '12' } },
  });
  v.metadata!.annotations = { 'vm.kubevirt.io/os': 'linux', 'vm.kubevirt.io/workload': 'server', 'kubevirt.io/cluster-instancetype-name': 'u1.small', 'kubevirt.io/preference-name': 'mine' };
  const labels = vmiInfoLabels(v, (kind, ns, name) => (kind === 'VirtualMachineClusterInstancetype' && ns === undefined && name === 'u1.small' ? 'kubevirt.io' : kind === 'VirtualMachinePreference' && ns === 'ns1' ? 'acme.example' : undefined));
  assert.equal(labels, {
    node: 'node1', namespace: 'ns1', name: 'vm1', phase: 'running', os: 'linux', workload: 'server', flavor: '',
    instance_type: 'u1.small', preference: '<other>',
    guest_os_kernel_release: '6.1.0', guest_os_machine: 'pc-q35-7.2', guest_os_arch: 'x86_64', guest_os_name: 'Debian', guest_os_version_id: '12',
    evictable: 'true', outdated: 'false', vmi_pod: '',
  });
  assert.is(vmiInfoLabels(v).instance_type, '<other>', 'unknown vendor');
  const live = vmi({ spec: { evictionStrategy: 'LiveMigrate', domain: { devices: {} } } });
  assert.is(isEvictable(live), false);
  live.status!.conditions = [{ type: 'LiveMigratable', status: 'True' }] as never;
  assert.is(isEvictable(live), true);
  const out = new FamilyBuilder();
  vmiMetrics(vmi({ status: { nodeName: 'node1', phase: 'Scheduled', memory: { memoryOverhead: '180Mi' } } }), out);
  const text = formatExposition(out.families());
  assert.ok(text.includes('kubevirt_vmi_info{node="node1",namespace="ns1",name="vm1",phase="scheduled",os="linux",evictable="true",outdated="false"} 1\n'), text);
  assert.ok(text.includes('kubevirt_vmi_launcher_memory_overhead_bytes{namespace="ns1",name="vm1"} 188743680\n'), text);
});

test('scraper: bounded concurrency, a busy launcher skipped, deadline and refusal reported per VMI', async () => {
  let inFlight = 0, most = 0;
  const calls: Array<number | undefined> = [];
  const slow = (ms: number, answer: () => { response: { success: boolean; message: string } | null; domainStats: string }) => ({
    getDomainStats: async (opts?: { timeoutMs?: number }) => {
      calls.push(opts?.timeoutMs);
      inFlight++; most = Math.max(most, inFlight);
      try {
        await new Promise((r) => setTimeout(r, ms));
        if (opts?.timeoutMs !== undefined && ms > opts.timeoutMs) throw new Error('Deadline exceeded');
        return answer();
      } finally { inFlight--; }
    },
  });
  const good = () => ({ response: { success: true, message: '' }, domainStats: JSON.stringify({ Name: 'ns1_vm1' }) });
  const sources: StatsSource[] = [
    { key: 'ns1/slow', vmi: vmi(), client: slow(300, good) },
    ...Array.from({ length: 6 }, (_, i) => ({ key: `ns1/ok${i}`, vmi: vmi(), client: slow(20, good) })),
    { key: 'ns1/refused', vmi: vmi(), client: slow(1, () => ({ response: { success: false, message: 'no QEMU' }, domainStats: '' })) },
    { key: 'ns1/gone', vmi: vmi(), client: slow(1, () => ({ response: { success: true, message: '' }, domainStats: JSON.stringify({ Name: '' }) })) },
  ];
  const s = new DomainStatsScraper({ concurrency: 3, timeoutMs: 100 });
  const first = s.scrape(sources);
  const again = await s.scrape([sources[0]!]);
  assert.equal(again.map((r) => [r.key, r.ok, r.ok ? '' : r.reason]), [['ns1/slow', false, 'busy from a previous collection, skipped']]);
  const out = await first;
  assert.ok(most <= 3, `at most 3 at once (saw ${most})`);
  assert.ok(calls.every((t) => t === 100), 'every call carries the deadline');
  const by = new Map(out.map((r) => [r.key, r]));
  assert.is(out.filter((r) => r.ok).length, 6);
  assert.match(JSON.stringify(by.get('ns1/slow')), /Deadline exceeded/);
  assert.match(JSON.stringify(by.get('ns1/refused')), /no QEMU/);
  assert.match(JSON.stringify(by.get('ns1/gone')), /disappearing domain/);
});

test.run();

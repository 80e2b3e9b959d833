// GetDomainStats' pure parts: the balloon's guest statistics as libvirt maps them, /proc/net/dev,
// the NICs on taps from the argv, their counters from the guest's side, memory totals.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildDomainStats, guestMemoryStats } from '../../launcher/supervise/domain-stats.ts';
import { netStats, parseNetDev, tapInterfaces } from '../../launcher/supervise/net-stats.ts';

test('guest stats: bytes → KiB, faults as counts, -1 (not reported) left out, nothing before the first report', () => {
  const stats = {
    'stat-swap-in': 0, 'stat-swap-out': 4096, 'stat-major-faults': 12, 'stat-minor-faults': 3456,
    'stat-free-memory': 100 * 1024 * 1024, 'stat-total-memory': 180 * 1024 * 1024, 'stat-available-memory': 150 * 1024 * 1024,
    'stat-disk-caches': -1, 'stat-htlb-pgalloc': 0,
  };
  assert.equal(guestMemoryStats({ stats, 'last-update': 1700000000 }), {
    SwapInSet: true, SwapIn: 0, SwapOutSet: true, SwapOut: 4, MajorFaultSet: true, MajorFault: 12, MinorFaultSet: true, MinorFault: 3456,
    UnusedSet: true, Unused: 102400, AvailableSet: true, Available: 184320, UsableSet: true, Usable: 153600,
  });
  assert.equal(guestMemoryStats({ stats, 'last-update': 0 }), {}, 'the guest has not reported yet');
  assert.equal(guestMemoryStats(undefined), {});
  assert.equal(guestMemoryStats({ stats: 'x', 'last-update': 5 }), {});
});

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  eth0: 9000      90    0    0    0     0          0         0     8000      80    0    0    0     0       0          0
  tap0:  1234      12    1    2    0     0          0         0     5678      34    3    4    0     0       0          0
garbage line
`;

test('/proc/net/dev: counters per device; header and malformed lines skipped', () => {
  const m = parseNetDev(NET_DEV);
  assert.equal([...m.keys()], ['lo', 'eth0', 'tap0']);
  assert.equal(m.get('tap0'), { rxBytes: 1234, rxPackets: 12, rxErrs: 1, rxDrop: 2, txBytes: 5678, txPackets: 34, txErrs: 3, txDrop: 4 });
});

test('taps: -netdev tap joined to the interface by netdev id; user-mode and passt NICs have none', () => {
  const argv = [
    'qemu', '-netdev', JSON.stringify({ type: 'tap', id: 'hostua-default', ifname: 'tap0', script: 'no' }),
    '-netdev', JSON.stringify({ type: 'user', id: 'hostua-slirp' }),
    '-netdev', JSON.stringify({ type: 'stream', id: 'hostua-passt', addr: { type: 'unix', path: '/x' } }),
    '-netdev', 'not json',
    '-device', '{"driver":"virtio-net-pci"}',
  ];
  const devices = [
    { alias: 'default', kind: 'interface' as const, qemuId: 'ua-default', driver: 'virtio-net-pci', netdevId: 'hostua-default' },
    { alias: 'slirp', kind: 'interface' as const, qemuId: 'ua-slirp', driver: 'virtio-net-pci', netdevId: 'hostua-slirp' },
    { alias: 'passt', kind: 'interface' as const, qemuId: 'ua-passt', driver: 'virtio-net-pci', netdevId: 'hostua-passt' },
    { alias: 'rootdisk', kind: 'disk' as const, qemuId: 'ua-rootdisk', driver: 'virtio-blk-pci' },
  ];
  const taps = tapInterfaces(argv, devices);
  assert.equal(taps, [{ alias: 'default', tap: 'tap0' }]);
  // libvirt swaps a tap's counters: what the tap transmits, the guest received.
  assert.equal(netStats(taps, parseNetDev(NET_DEV)), [{
    NameSet: true, Name: 'tap0', AliasSet: true, Alias: 'default',
    RxBytesSet: true, RxBytes: 5678, RxPktsSet: true, RxPkts: 34, RxErrsSet: true, RxErrs: 3, RxDropSet: true, RxDrop: 4,
    TxBytesSet: true, TxBytes: 1234, TxPktsSet: true, TxPkts: 12, TxErrsSet: true, TxErrs: 1, TxDropSet: true, TxDrop: 2,
  }]);
  assert.equal(netStats([{ alias: 'x', tap: 'tap9' }], parseNetDev(NET_DEV)), [], 'a tap that is gone reports nothing');
});

test('buildDomainStats: balloon actual is the total; without a balloon the domain memory; vCPU delay; blockstats by device', () => {
  const cpus = [{ 'cpu-index': 1, 'thread-id': 11 }, { 'cpu-index': 0, 'thread-id': 10 }];
  const proc = { userNs: 5, systemNs: 6, rssKiB: 777, threadTimeNs: { 10: 100, 11: 200 }, threadDelayNs: { 10: 7 } };
  const blockstats = [{ device: '', qdev: '/machine/peripheral/ua-rootdisk/virtio-backend', stats: { rd_bytes: 4096, rd_operations: 2, wr_bytes: 0, wr_operations: 0, flush_operations: 1, rd_total_time_ns: 10, wr_total_time_ns: 0, flush_total_time_ns: 3 } }];
  const s = buildDomainStats({ name: 'ns_vm', uuid: 'u', cpus, proc, blockstats, balloon: { actual: 192 * 1024 * 1024 }, guestStats: { stats: { 'stat-free-memory': 1024 }, 'last-update': 1 } }) as Record<string, unknown>;
  const mem = s.Memory as Record<string, unknown>;
  assert.equal([mem.TotalSet, mem.Total, mem.ActualBalloon, mem.Unused, mem.RSS], [true, 196608, 196608, 1, 777]);
  assert.equal((s.Vcpu as Array<Record<string, unknown>>).map((v) => [v.Time, v.DelaySet, v.Delay]), [[100, true, 7], [200, false, 0]]);
  const b = (s.Block as Array<Record<string, unknown>>)[0]!;
  assert.equal([b.Name, b.Alias, b.RdBytes, b.FlReqs, b.FlTimes], ['ua-rootdisk', 'rootdisk', 4096, 1, 3]);
  const noBalloon = buildDomainStats({ name: 'n', uuid: 'u', memoryKiB: 1024 }) as Record<string, unknown>;
  assert.equal([(noBalloon.Memory as Record<string, unknown>).TotalSet, (noBalloon.Memory as Record<string, unknown>).Total, (noBalloon.Memory as Record<string, unknown>).ActualBalloonSet], [true, 1024, false]);
  assert.equal(noBalloon.Net, []);
});

test.run();

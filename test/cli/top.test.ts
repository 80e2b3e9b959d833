// qvirt top's arithmetic and table: two readings → rates (src/api/vmi-usage.ts), a reading from a
// launcher's domain stats (handler/metrics/usage.ts), and kubectl top's format (src/cli/top-table.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseVmiUsageSample, usageBetween, type VmiUsageSample } from '../../src/api/vmi-usage.ts';
import { usageSample } from '../../handler/metrics/usage.ts';
import { parseDomainStats } from '../../handler/metrics/domain-stats.ts';
import { formatCpu, formatMemory, formatRate, formatTop } from '../../src/cli/top-table.ts';

const sample = (time: number, over: Partial<VmiUsageSample> = {}): VmiUsageSample => ({
  time, vcpus: 1, cpuSeconds: 10, memoryResidentBytes: 300 << 20, storageReadBytes: 0, storageWriteBytes: 0, storageReadOps: 0, storageWriteOps: 0,
  networkReceiveBytes: 0, networkTransmitBytes: 0, ...over,
});

test('usageBetween: counters over the agent\'s clock; the guest\'s used memory before QEMU\'s RSS', () => {
  const u = usageBetween(sample(1000), sample(3000, { cpuSeconds: 11.5, storageWriteBytes: 4 << 20, storageReadBytes: 1024, networkReceiveBytes: 2000, memoryUsedBytes: 50 << 20 }));
  assert.equal(u, { cpuCores: 0.75, memoryBytes: 50 << 20, memorySource: 'guest', readBytesPerSecond: 512, writeBytesPerSecond: 2 << 20, receiveBytesPerSecond: 1000, transmitBytesPerSecond: 0 });
  assert.equal(usageBetween(sample(0), sample(1000)).memorySource, 'qemu');
});

test('usageBetween: no rate across a counter reset (a new QEMU) or without time between, no CPU when not reported', () => {
  const u = usageBetween(sample(1000, { storageWriteBytes: 100 }), sample(1000, { storageWriteBytes: 200 }));
  assert.is(u.writeBytesPerSecond, undefined);
  assert.is(usageBetween(sample(0, { storageWriteBytes: 100 }), sample(1000, { storageWriteBytes: 50 })).writeBytesPerSecond, undefined);
  assert.is(usageBetween(sample(0, { cpuSeconds: undefined }), sample(1000)).cpuCores, undefined);
});

test('parseVmiUsageSample: the agent\'s answer checked field by field', () => {
  assert.equal(parseVmiUsageSample(JSON.parse(JSON.stringify(sample(5)))), sample(5));
  assert.throws(() => parseVmiUsageSample([]), /not a JSON object/);
  assert.throws(() => parseVmiUsageSample({ ...sample(5), time: 'now' }), /usage\.time: required, must be a number \(got "now"\)/);
  assert.throws(() => parseVmiUsageSample({ ...sample(5), cpuSeconds: null }), /usage\.cpuSeconds: must be a number \(got null\)/);
});

test('usageSample: the launcher\'s domain stats in /metrics\' units, summed over drives and interfaces', () => {
  const stats = parseDomainStats(JSON.stringify({
    Name: 'default_vm', UUID: 'u',
    Cpu: { TimeSet: true, Time: 2_500_000_000 },
    Memory: { AvailableSet: true, Available: 200_000, UsableSet: true, Usable: 150_000, RSSSet: true, RSS: 250_000, TotalSet: true, Total: 196_608 },
    Vcpu: [{ StateSet: true, State: 1 }, { StateSet: true, State: 1 }],
    Block: [{ NameSet: true, Name: 'ua-a', RdBytesSet: true, RdBytes: 10, WrBytesSet: true, WrBytes: 20, RdReqsSet: true, RdReqs: 1, WrReqsSet: true, WrReqs: 2 },
      { NameSet: true, Name: 'ua-b', RdBytesSet: true, RdBytes: 5, WrBytesSet: false, WrBytes: 999 }],
    Net: [{ NameSet: true, Name: 'tap0', RxBytesSet: true, RxBytes: 7, TxBytesSet: true, TxBytes: 9 }],
  }));
  assert.equal(usageSample(stats, 42), {
    time: 42, cpuSeconds: 2.5, vcpus: 2, memoryUsedBytes: 50_000 * 1024, memoryResidentBytes: 250_000 * 1024, memoryDomainBytes: 196_608 * 1024,
    storageReadBytes: 15, storageWriteBytes: 20, storageReadOps: 1, storageWriteOps: 2, networkReceiveBytes: 7, networkTransmitBytes: 9,
  });
  const bare = usageSample(parseDomainStats(JSON.stringify({ Name: 'x' })), 1);
  assert.equal([bare.cpuSeconds, bare.memoryUsedBytes, bare.memoryResidentBytes, bare.storageWriteBytes], [undefined, undefined, undefined, 0]);
});

test('formatting: kubectl top\'s millicores and Mi, rates as quantities, <unknown> for what is missing', () => {
  assert.equal([formatCpu(0.0124), formatCpu(2), formatCpu(undefined)], ['12m', '2000m', '<unknown>']);
  assert.equal([formatMemory(118.4 * 1024 * 1024), formatMemory(undefined)], ['118Mi', '<unknown>']);
  assert.equal([formatRate(0), formatRate(512.4), formatRate(12 * 1024), formatRate(3.4 * 1024 * 1024)], ['0', '512', '12Ki', '3Mi']);
});

test('formatTop: columns three spaces apart, NAMESPACE with -A, sorting, no headers', () => {
  const rows = [
    { namespace: 'b', name: 'small', usage: { cpuCores: 0.001, memoryBytes: 10 << 20, readBytesPerSecond: 0, writeBytesPerSecond: 2048 } },
    { namespace: 'a', name: 'busy-vm', usage: { cpuCores: 0.5, memoryBytes: 5 << 20, readBytesPerSecond: 100, writeBytesPerSecond: 0 } },
    { namespace: 'a', name: 'gone', usage: undefined },
  ];
  assert.is(formatTop(rows), [
    'NAME      CPU(cores)   MEMORY(bytes)   READ(bytes/s)   WRITE(bytes/s)',
    'small     1m           10Mi            0               2Ki',
    'busy-vm   500m         5Mi             100             0',
    'gone      <unknown>    <unknown>       <unknown>       <unknown>',
    '',
  ].join('\n'));
  assert.is(formatTop(rows, { sortBy: 'cpu', noHeaders: true, allNamespaces: true }).split('\n')[0], 'a   busy-vm   500m        5Mi         100         0');
  assert.is(formatTop(rows, { sortBy: 'memory' }).split('\n')[1]!.split(/\s+/)[0], 'small');
  assert.match(formatTop(rows, { network: true }).split('\n')[0]!, /WRITE\(bytes\/s\)   RX\(bytes\/s\)   TX\(bytes\/s\)$/);
});

test.run();

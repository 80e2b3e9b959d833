// The claim size a memory dump needs (KubeVirt's CalcExpectedMemoryDumpSize + the default 5.5 %
// filesystem overhead rounded up to a MiB), the number virt-api checks and virtctl --create-claim asks for.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { expectedMemoryDumpSize, filesystemOverheadOf, memoryDumpClaimSize, sizeIncludingFSOverhead } from '../../src/api/memory-dump-size.ts';
import { formatQuantity, parseQuantity } from '../../src/api/quantity.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';

const vmi = (memory?: string): VirtualMachineInstance =>
  ({ spec: { domain: { devices: {}, ...(memory ? { resources: { requests: { memory } } } : {}) } } }) as VirtualMachineInstance;

const cases: Array<[string, string | undefined, string, string]> = [
  // [name, memory request, expected dump size, claim size]
  ['192Mi guest', '192Mi', '292Mi', '309Mi'],
  ['1Gi guest', '1Gi', '1124Mi', '1186Mi'],
  ['no memory request: 100 MiB, decimal as Go\'s zero Quantity', undefined, '104857600', '111149056'],
  ['decimal request keeps its format', '1G', '1104857600', '1166016512'],
];
for (const [name, memory, dump, claim] of cases) {
  test(name, () => {
    assert.is(formatQuantity(expectedMemoryDumpSize(vmi(memory))), dump);
    assert.is(formatQuantity(memoryDumpClaimSize(vmi(memory))), claim);
  });
}

test('overhead: below a MiB rounds to one MiB; a given percentage is used', () => {
  assert.is(formatQuantity(sizeIncludingFSOverhead(parseQuantity('1Ki'))), '1Mi');
  assert.is(formatQuantity(sizeIncludingFSOverhead(parseQuantity('100Mi'), '0')), '100Mi');
  assert.is(formatQuantity(sizeIncludingFSOverhead(parseQuantity('100Mi'), '0.1')), '111Mi', 'a float product, as Go computes it: 110.00000000000001 MiB');
});

test('the overhead from CDI\'s CDIConfig, as KubeVirt\'s GetFilesystemOverhead: the storage class\'s, else global', () => {
  const cfg = { status: { filesystemOverhead: { global: '0.06', storageClass: { 'local-path': '0.1' } } } };
  assert.is(filesystemOverheadOf(cfg, undefined), '0.06');
  assert.is(filesystemOverheadOf(cfg, 'local-path'), '0.1');
  assert.is(filesystemOverheadOf(cfg, 'other'), '0.06');
  assert.throws(() => filesystemOverheadOf({ status: {} }, undefined), /CDI config not initialized/);
  assert.is(formatQuantity(memoryDumpClaimSize(vmi('192Mi'), '0.06')), '310Mi', 'the local mode\'s CDIConfig (CDI\'s 6 %)');
});

test.run();

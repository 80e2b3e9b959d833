// launcher/supervise/qemu-process stderrReason: a QEMU that fails to start gives the same reason
// every time — without the timestamps `-msg timestamp=on` puts before its lines, which made each
// retry of a failing start a new SyncFailed event and a new VMI condition (issue 22). Table, and
// two real failed starts compared.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { QemuProcess, QemuStartError, stderrReason } from '../../launcher/supervise/qemu-process.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const cases: Array<[string, string, string]> = [
  ['one timestamped line', '2026-11-26T15:15:42.700122Z qemu-system-x86_64: -device {"id":"ua-hd"}: Failed to get "write" lock\n', 'qemu-system-x86_64: -device {"id":"ua-hd"}: Failed to get "write" lock'],
  ['a hint line after it keeps its words', '2026-11-26T15:15:42.700122Z qemu-system-x86_64: x: Failed to get "write" lock\nIs another process using the image [/a b/disk.img]?\n', 'qemu-system-x86_64: x: Failed to get "write" lock\nIs another process using the image [/a b/disk.img]?'],
  ['several timestamped lines', '2026-01-02T03:04:05.1Z qemu: a\n2026-01-02T03:04:06Z qemu: b', 'qemu: a\nqemu: b'],
  ['no timestamps: only trimmed', '  qemu-system-x86_64: -machine foo: unsupported machine type\n', 'qemu-system-x86_64: -machine foo: unsupported machine type'],
  ['a timestamp inside a line stays', 'qemu: file 2026-01-02T03:04:05Z x', 'qemu: file 2026-01-02T03:04:05Z x'],
  ['nothing', '\n', ''],
];
for (const [name, input, want] of cases) test(`stderrReason: ${name}`, () => { assert.is(stderrReason(input), want); });

test('real QEMU: two failed starts on a missing image give the same reason, without timestamps', async () => {
  const dir = tempDir('qvr');
  const log = componentLogger('test', { level: 'error' });
  try {
    const start = () => QemuProcess.start({
      argv: ['-machine', 'none', '-nodefaults', '-display', 'none', '-msg', 'timestamp=on', '-blockdev', JSON.stringify({ driver: 'file', filename: join(dir.path, 'missing.img'), 'node-name': 'libvirt-1-storage' })],
      pidfile: join(dir.path, 'qemu.pid'),
      log,
    }).then(() => assert.unreachable('QEMU started without its image'), (e: unknown) => e);
    const [a, b] = [await start(), await start()];
    assert.instance(a, QemuStartError);
    assert.instance(b, QemuStartError);
    assert.match((a as Error).message, /missing\.img.*No such file or directory/);
    assert.match((a as QemuStartError).exit?.stderrTail ?? '', /^\d{4}-\d\d-\d\dT[\d:.]+Z /m, 'QEMU did timestamp its stderr');
    assert.not.match((a as Error).message, /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    assert.is((a as Error).message, (b as Error).message);
  } finally {
    dir.cleanup();
  }
});

test.run();

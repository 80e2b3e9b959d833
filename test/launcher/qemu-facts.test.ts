import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadQemuFacts, q35FromMachineHelp, versionFromBanner } from '../../launcher/qemu-facts.ts';
import { tempDir } from '../lib/tmp.ts';

test('q35FromMachineHelp takes the alias, else the newest versioned machine', () => {
  assert.is(q35FromMachineHelp('Supported machines are:\nq35                  Standard PC (Q35 + ICH9, 2009) (alias of pc-q35-7.2)\npc-q35-7.2           Standard PC\n'), 'pc-q35-7.2');
  assert.is(q35FromMachineHelp('pc-q35-6.2   x\npc-q35-10.1  x\npc-q35-9.0  x\n'), 'pc-q35-10.1');
  assert.is(q35FromMachineHelp('pc-i440fx-7.2  x\n'), undefined);
});

test('versionFromBanner', () => {
  assert.equal(versionFromBanner('QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)\nCopyright'), { major: 7, minor: 2, micro: 22 });
  assert.is(versionFromBanner('something else'), undefined);
});

test('loadQemuFacts asks the real QEMU once, then answers from the cache', async () => {
  const t = tempDir('qf');
  try {
    const cache = join(t.path, 'facts.json');
    const t0 = Date.now();
    const facts = await loadQemuFacts('qemu-system-x86_64', cache);
    const cold = Date.now() - t0;
    assert.match(facts.q35Machine, /^pc-q35-\d+\.\d+$/);
    assert.ok(facts.version.major >= 7);
    assert.is(facts.q35Machine, `pc-q35-${facts.version.major}.${facts.version.minor}`);
    const t1 = Date.now();
    const again = await loadQemuFacts('qemu-system-x86_64', cache);
    const warm = Date.now() - t1;
    assert.equal(again, facts);
    assert.ok(warm < cold, `cached (${warm} ms) is faster than asking (${cold} ms)`);
    // A cache written for another binary identity is not trusted.
    const doc = JSON.parse(readFileSync(cache, 'utf8')) as { identity: string; facts: unknown };
    writeFileSync(cache, JSON.stringify({ identity: 'other', facts: { ...facts as object, q35Machine: 'pc-q35-1.0' } }));
    assert.is((await loadQemuFacts('qemu-system-x86_64', cache)).q35Machine, facts.q35Machine);
    assert.is(typeof doc.identity, 'string');
  } finally {
    t.cleanup();
  }
});

test('a missing binary is a clear error', async () => {
  await loadQemuFacts('qemu-system-does-not-exist').then(() => assert.unreachable(), (err: Error) => assert.match(err.message, /not found on PATH/));
});

test.run();

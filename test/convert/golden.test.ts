// Golden tests: each fixture VMI converts to exactly the argv in golden/<name>.args (one argument
// per line) and the plan metadata in golden/<name>.plan.json. Regenerate after an intended
// change with `QVIRT_UPDATE_GOLDEN=1 node test/convert/golden.test.ts` and review the diff.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { convertVMI } from '../../launcher/convert/index.ts';
import { FIXTURES, fixtureContext } from './fixtures.ts';

const dir = new URL('./golden/', import.meta.url).pathname;
const update = process.env.QVIRT_UPDATE_GOLDEN === '1';

function check(file: string, actual: string): void {
  const path = dir + file;
  if (update) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  assert.ok(existsSync(path), `${file} missing: run with QVIRT_UPDATE_GOLDEN=1`);
  assert.fixture(actual, readFileSync(path, 'utf8'));
}

for (const f of FIXTURES) {
  test(`golden argv and plan of ${f.name}`, () => {
    const plan = convertVMI(f.vmi, fixtureContext(f, ''));
    check(`${f.name}.args`, plan.argv.join('\n') + '\n');
    const { argv: _argv, ...rest } = plan;
    check(`${f.name}.plan.json`, JSON.stringify(rest, null, 2) + '\n');
  });
}

// KVM cannot run here, so KVM argv is checked against goldens only (host CPU, Hyper-V flags, PIT).
for (const name of ['vmi-windows-like', 'vmi-cpu-topology', 'vmi-ephemeral']) {
  test(`golden argv of ${name} under KVM`, () => {
    const f = FIXTURES.find((x) => x.name === name);
    assert.ok(f, name);
    const plan = convertVMI(f.vmi, fixtureContext(f, '', { accelerator: 'kvm' }));
    check(`${name}.kvm.args`, plan.argv.join('\n') + '\n');
  });
}

test('conversion is deterministic (same input, same plan)', () => {
  for (const f of FIXTURES) {
    const a = convertVMI(f.vmi, fixtureContext(f, ''));
    const b = convertVMI(structuredClone(f.vmi), fixtureContext(f, ''));
    assert.equal(a, b, f.name);
  }
});

test('conversion does not modify the VMI', () => {
  for (const f of FIXTURES) {
    const before = structuredClone(f.vmi);
    convertVMI(f.vmi, fixtureContext(f, ''));
    assert.equal(f.vmi, before, f.name);
  }
});

test.run();

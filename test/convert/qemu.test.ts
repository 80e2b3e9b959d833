// The real check: every golden VMI's plan is started with QEMU 7.2 under TCG (argv carries -S),
// with the QMP monitor on an inherited socketpair. QEMU must get past argument parsing and device
// realization (greeting, status `prelaunch`), show every planned PCI device and root port in
// query-pci and every disk in query-block, accept the plan's setup commands, and quit cleanly.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { convertVMI } from '../../launcher/convert/index.ts';
import { tempDir } from '../lib/tmp.ts';
import { FIXTURES, fixtureContext } from './fixtures.ts';
import { blockIds, pciIds, prepareFiles, startPlan, type QmpSession } from './qemu-check.ts';

for (const f of FIXTURES) {
  test(`QEMU 7.2 accepts the plan of ${f.name}`, async () => {
    const tmp = tempDir('qvc');
    let session: QmpSession | undefined;
    try {
      const plan = convertVMI(f.vmi, fixtureContext(f, tmp.path));
      prepareFiles(f, tmp.path, plan);
      session = await startPlan(plan);
      const version = (session.greeting['QMP'] as { version: { qemu: { major: number; minor: number } } }).version.qemu;
      assert.is(`${version.major}.${version.minor}`, '7.2');

      const status = (await session.execute('query-status')) as { status: string };
      assert.is(status.status, 'prelaunch');

      // Before firmware runs, bridges have no bus numbers: query-pci lists pcie.0 only (root
      // ports, video); devices behind root ports are checked through QOM instead.
      const pci = pciIds(await session.execute('query-pci'));
      for (const port of plan.pciPorts) {
        if (port.id === 'pcie.0') continue;
        assert.ok(pci.includes(port.id), `root port ${port.id} missing from query-pci`);
        const hotplug = await session.execute('qom-get', { path: `/machine/peripheral/${port.id}`, property: 'hotplug' });
        assert.is(hotplug, port.hotplug, `hotplug of ${port.id}`);
      }
      for (const d of plan.devices) {
        const path = `/machine/peripheral/${d.qemuId}`;
        assert.is(await session.execute('qom-get', { path, property: 'realized' }), true, `${d.qemuId} realized`);
        const parent = String(await session.execute('qom-get', { path, property: 'parent_bus' }));
        assert.ok(parent.endsWith(`/${d.bus}`), `${d.qemuId} sits on ${parent}, plan says ${d.bus}`);
        if (d.bus === 'pcie.0') assert.ok(pci.includes(d.qemuId), `${d.qemuId} missing from query-pci`);
      }
      for (const port of plan.pciPorts) {
        if (port.occupiedBy) assert.ok(plan.devices.some((d) => d.qemuId === port.occupiedBy), `${port.occupiedBy} on ${port.id} is not in plan.devices`);
      }

      const blocks = blockIds(await session.execute('query-block'));
      for (const d of plan.devices) {
        if (d.kind === 'disk' || d.kind === 'cdrom' || d.kind === 'lun') assert.ok(blocks.includes(d.qemuId), `${d.qemuId} missing from query-block`);
      }
      const nodes = (await session.execute('query-named-block-nodes', { flat: true })) as Array<{ 'node-name': string }>;
      const nodeNames = nodes.map((n) => n['node-name']);
      for (const d of plan.devices) for (const n of d.nodeNames ?? []) assert.ok(nodeNames.includes(n), `block node ${n} of ${d.qemuId} missing`);

      for (const c of plan.setupCommands) await session.execute(c.execute, c.arguments);

      const code = await session.quit();
      assert.is(code, 0, `QEMU exit code; stderr: ${session.stderr()}`);
      assert.not.match(session.stderr(), /error/i);
    } finally {
      session?.kill();
      tmp.cleanup();
    }
  });
}

test.run();

// Hotplug/unplug plans: pure checks of ports, node numbering and command order, then the real
// thing: a started QEMU 7.2 (prelaunch) takes a virtio disk, a scsi disk and a NIC exactly as
// planned, and a scsi disk unplug completes with its block nodes deleted.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { convertVMI, planDiskHotplug, planInterfaceHotplug, planUnplug, freeHotplugPort, ConversionError, type HotplugState } from '../../launcher/convert/index.ts';
import { tempDir } from '../lib/tmp.ts';
import { FIXTURES, fixtureContext, type Fixture } from './fixtures.ts';
import { prepareFiles, startPlan, type QmpSession } from './qemu-check.ts';
import { execFileSync } from 'node:child_process';

const base = FIXTURES.find((f) => f.name === 'vmi-ephemeral');
if (!base) throw new Error('fixture vmi-ephemeral missing');

/** vmi-ephemeral plus hotpluggable volumes (not attached at start) and a second interface. */
function hotVMI(): VirtualMachineInstance {
  const v = structuredClone(base!.vmi);
  v.spec.domain.devices.disks = [
    ...(v.spec.domain.devices.disks ?? []),
    { name: 'hot-virtio', disk: { bus: 'virtio' }, serial: 'HOT1' },
    { name: 'hot-scsi', disk: { bus: 'scsi' } },
  ];
  v.spec.volumes = [
    ...(v.spec.volumes ?? []),
    { name: 'hot-virtio', persistentVolumeClaim: { claimName: 'hot1', hotpluggable: true } },
    { name: 'hot-scsi', dataVolume: { name: 'hot2', hotpluggable: true } },
  ];
  v.spec.domain.devices.interfaces = [...(v.spec.domain.devices.interfaces ?? []), { name: 'net2', masquerade: {}, macAddress: '02:00:00:00:00:22' }];
  v.spec.networks = [...(v.spec.networks ?? []), { name: 'net2', pod: {} }];
  return v;
}
const fixture: Fixture = { ...base, name: 'hotplug', vmi: hotVMI() };

test('cold plan skips the unprepared hotpluggable volumes and leaves spare ports', () => {
  const plan = convertVMI(fixture.vmi, fixtureContext(fixture, ''));
  assert.not.ok(plan.devices.some((d) => d.alias.startsWith('hot-')));
  assert.ok(freeHotplugPort(plan));
});

test('planDiskHotplug: virtio disk takes the first spare port and the next node numbers', () => {
  const plan = convertVMI(fixture.vmi, fixtureContext(fixture, ''));
  const state: HotplugState = { pciPorts: plan.pciPorts, devices: plan.devices, nextBlockNodeIndex: plan.nextBlockNodeIndex };
  const spare = freeHotplugPort(state);
  const h = planDiskHotplug(fixture.vmi, 'hot-virtio', { path: '/h/top.qcow2', format: 'qcow2', backing: { path: '/h/base.img', format: 'raw' } }, state);
  assert.equal(h.commands.map((c) => c.execute), ['blockdev-add', 'blockdev-add', 'blockdev-add', 'device_add']);
  const n = plan.nextBlockNodeIndex;
  assert.equal(h.device.nodeNames, [`libvirt-${n + 1}-format`, `libvirt-${n + 1}-storage`, `libvirt-${n}-storage`]);
  assert.is(h.commands[3]?.arguments?.['bus'], spare?.id);
  assert.is(h.commands[3]?.arguments?.['serial'], 'HOT1');
  assert.is(h.state.nextBlockNodeIndex, n + 2);
  assert.is(h.state.pciPorts.find((p) => p.id === spare?.id)?.occupiedBy, 'ua-hot-virtio');
  assert.is.not(freeHotplugPort(h.state)?.id, spare?.id);
  assert.throws(() => planDiskHotplug(fixture.vmi, 'hot-virtio', { path: '/x', format: 'raw' }, h.state), /already attached/);
});

test('planDiskHotplug: sata disks cannot be hotplugged; a full set of ports is an error', () => {
  const v = hotVMI();
  v.spec.domain.devices.disks?.push({ name: 'hot-sata', disk: { bus: 'sata' } });
  const state: HotplugState = { pciPorts: [], devices: [], nextBlockNodeIndex: 1 };
  assert.throws(() => planDiskHotplug(v, 'hot-sata', { path: '/x', format: 'raw' }, state), (e: unknown) => e instanceof ConversionError && e.field.endsWith('.disk.bus'));
  assert.throws(() => planDiskHotplug(v, 'hot-virtio', { path: '/x', format: 'raw' }, state), /no free hotplug/);
});

test('planUnplug: device_del, then blockdev-del top first; cold disks on hotplug=off ports refuse', () => {
  const plan = convertVMI(fixture.vmi, fixtureContext(fixture, ''));
  const state: HotplugState = { pciPorts: plan.pciPorts, devices: plan.devices, nextBlockNodeIndex: plan.nextBlockNodeIndex };
  const h = planDiskHotplug(fixture.vmi, 'hot-virtio', { path: '/h/top.qcow2', format: 'qcow2' }, state);
  const u = planUnplug(h.state, 'ua-hot-virtio');
  assert.equal(u.deviceDel, { execute: 'device_del', arguments: { id: 'ua-hot-virtio' }, reason: 'unplug hot-virtio' });
  assert.equal(u.afterDeleted.map((c) => c.arguments?.['node-name']), h.device.nodeNames);
  assert.is(freeHotplugPort(u.state)?.id, freeHotplugPort(state)?.id);
  assert.throws(() => planUnplug(state, 'ua-containerdisk'), /hotplug off/);
  const nicUnplug = planUnplug(state, 'ua-default');
  assert.equal(nicUnplug.afterDeleted, [{ execute: 'netdev_del', arguments: { id: 'hostua-default' }, reason: 'unplug ua-default: backend' }]);
});

test('QEMU 7.2 takes the planned hotplugs (prelaunch) and completes a scsi unplug', async () => {
  const tmp = tempDir('qvh');
  let s: QmpSession | undefined;
  try {
    const vmi = fixture.vmi;
    // start without net2: it is hotplugged below
    const cold = structuredClone(vmi);
    cold.spec.domain.devices.interfaces = cold.spec.domain.devices.interfaces?.filter((i) => i.name !== 'net2') ?? [];
    const ctx = fixtureContext(fixture, tmp.path);
    const plan = convertVMI(cold, ctx);
    prepareFiles(fixture, tmp.path, plan);
    const img = (path: string, fmt: string) => execFileSync('qemu-img', ['create', '-f', fmt, path, '16M'], { stdio: 'ignore' });
    img(`${tmp.path}/hot1.qcow2`, 'qcow2');
    img(`${tmp.path}/hot2.img`, 'raw');
    s = await startPlan(plan);

    let state: HotplugState = { pciPorts: plan.pciPorts, devices: plan.devices, nextBlockNodeIndex: plan.nextBlockNodeIndex };
    const steps = [
      planDiskHotplug(vmi, 'hot-virtio', { path: `${tmp.path}/hot1.qcow2`, format: 'qcow2' }, state),
    ];
    state = steps[0]!.state;
    steps.push(planDiskHotplug(vmi, 'hot-scsi', { path: `${tmp.path}/hot2.img`, format: 'raw' }, state));
    state = steps[1]!.state;
    steps.push(planInterfaceHotplug(vmi, 'net2', state, ctx));
    state = steps[2]!.state;
    for (const step of steps) for (const c of step.commands) await s.execute(c.execute, c.arguments);

    for (const step of steps) {
      const path = `/machine/peripheral/${step.device.qemuId}`;
      assert.is(await s.execute('qom-get', { path, property: 'realized' }), true);
      const parent = String(await s.execute('qom-get', { path, property: 'parent_bus' }));
      assert.ok(parent.endsWith(`/${step.device.bus}`), `${step.device.qemuId} on ${parent}, planned ${step.device.bus}`);
    }
    const blocks = (await s.execute('query-block')) as Array<{ qdev?: string; inserted?: { node_name?: string } }>;
    assert.ok(blocks.some((b) => b.qdev === '/machine/peripheral/ua-hot-virtio/virtio-backend'));
    assert.ok(blocks.some((b) => b.qdev === 'ua-hot-scsi'));

    // A SCSI unplug needs no guest cooperation: DEVICE_DELETED, then the nodes can go.
    const u = planUnplug(state, 'ua-hot-scsi');
    await s.execute(u.deviceDel.execute, u.deviceDel.arguments);
    await s.waitEvent('DEVICE_DELETED', (d) => d['device'] === u.deviceId, 10000);
    for (const c of u.afterDeleted) await s.execute(c.execute, c.arguments);
    const nodes = ((await s.execute('query-named-block-nodes', { flat: true })) as Array<{ 'node-name': string }>).map((n) => n['node-name']);
    for (const n of steps[1]!.device.nodeNames ?? []) assert.not.ok(nodes.includes(n), `${n} still present`);
    assert.is(await s.quit(), 0);
  } finally {
    s?.kill();
    tmp.cleanup();
  }
});

test.run();

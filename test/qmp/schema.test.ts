// qmp/schema.ts against the installed QEMU's own `query-qmp-schema`: enum values and event
// members (names and optionality) must match what this QEMU really sends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  QmpClient, RUN_STATES, SHUTDOWN_CAUSES, MIGRATION_STATUSES, JOB_STATUSES, GUEST_PANIC_ACTIONS, BLOCK_ERROR_ACTIONS,
  OOB_COMMANDS_QEMU_7_2, isEvent, type QmpEvent, type StatusInfo,
} from '../../qmp/index.ts';
import { spawnQemu } from './qemu.ts';

interface SchemaEntry { name: string; 'meta-type': string; 'arg-type'?: string; 'ret-type'?: string; members?: { name: string; type: string; default?: null }[]; values?: string[]; 'allow-oob'?: boolean }

/** Members as `name` or `name?` (optional), the way qmp/schema.ts declares them. */
const EVENTS: Record<string, string[]> = {
  SHUTDOWN: ['guest', 'reason'],
  RESET: ['guest', 'reason'],
  POWERDOWN: [],
  STOP: [],
  RESUME: [],
  DEVICE_DELETED: ['device?', 'path'],
  MIGRATION: ['status'],
  BLOCK_IO_ERROR: ['device', 'node-name?', 'operation', 'action', 'nospace?', 'reason'],
  GUEST_PANICKED: ['action', 'info?'],
  VSERPORT_CHANGE: ['id', 'open'],
  BALLOON_CHANGE: ['actual'],
  ACPI_DEVICE_OST: ['info'],
  DEVICE_TRAY_MOVED: ['device', 'id', 'tray-open'],
  JOB_STATUS_CHANGE: ['id', 'status'],
  MEMORY_DEVICE_SIZE_CHANGE: ['id?', 'size', 'qom-path'],
};

let schema: SchemaEntry[] = [];
const byName = new Map<string, SchemaEntry>();
const enumOf = (type: string): string[] | undefined => byName.get(type)?.values;
const eventArg = (ev: string): SchemaEntry => {
  const e = schema.find((x) => x['meta-type'] === 'event' && x.name === ev);
  if (!e) throw new Error(`event ${ev} not in this QEMU's schema`);
  return byName.get(e['arg-type']!) ?? { name: '', 'meta-type': 'object', members: [] };
};
const memberType = (ev: string, member: string): string => eventArg(ev).members!.find((m) => m.name === member)!.type;

test.before(async () => {
  const q = spawnQemu({ mode: 'socketpair' });
  let c: QmpClient | undefined;
  try {
    c = await QmpClient.adopt(q.stream);
    schema = await c.execute<SchemaEntry[]>('query-qmp-schema');
    for (const e of schema) byName.set(e.name, e);
    // While we are here: a typed query-status.
    const st = await c.execute<StatusInfo>('query-status');
    assert.ok((RUN_STATES as readonly string[]).includes(st.status));
    await c.quit();
  } finally {
    await c?.close();
    await q.stop();
  }
});

test('the schema reply (~180 KiB, above govmm\'s 64 KiB scanner default) arrived whole', () => {
  assert.ok(schema.length > 500);
});

for (const [ev, members] of Object.entries(EVENTS)) {
  test(`event ${ev}: members match QEMU's schema`, () => {
    const live = (eventArg(ev).members ?? []).map((m) => (m.default === null ? `${m.name}?` : m.name));
    assert.equal(live.sort(), [...members].sort());
  });
}

test('enums match: RunState, ShutdownCause, MigrationStatus, JobStatus, GUEST_PANICKED action, BLOCK_IO_ERROR action', () => {
  const qs = schema.find((x) => x.name === 'query-status')!;
  const statusType = byName.get(qs['ret-type']!)!.members!.find((m) => m.name === 'status')!.type;
  assert.equal(enumOf(statusType), [...RUN_STATES]);
  assert.equal(enumOf(memberType('SHUTDOWN', 'reason')), [...SHUTDOWN_CAUSES]);
  assert.equal(enumOf(memberType('RESET', 'reason')), [...SHUTDOWN_CAUSES]);
  assert.equal(enumOf(memberType('MIGRATION', 'status')), [...MIGRATION_STATUSES]);
  assert.equal(enumOf(memberType('JOB_STATUS_CHANGE', 'status')), [...JOB_STATUSES]);
  assert.equal(enumOf(memberType('GUEST_PANICKED', 'action')), [...GUEST_PANIC_ACTIONS]);
  assert.equal(enumOf(memberType('BLOCK_IO_ERROR', 'action')), [...BLOCK_ERROR_ACTIONS]);
});

test('OOB-capable commands are exactly the ones listed for 7.2', () => {
  assert.equal(schema.filter((x) => x['allow-oob']).map((x) => x.name).sort(), [...OOB_COMMANDS_QEMU_7_2].sort());
});

test('isEvent narrows by name', () => {
  const ev: QmpEvent = { event: 'SHUTDOWN', data: { guest: true, reason: 'guest-shutdown' }, timestamp: { seconds: 0, microseconds: 0 }, seq: 1 };
  if (isEvent(ev, 'SHUTDOWN')) assert.is(ev.data.reason, 'guest-shutdown');
  else assert.unreachable();
  assert.is(isEvent(ev, 'RESET'), false);
});

test.run();

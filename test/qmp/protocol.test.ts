// QmpProtocol in isolation (no socket, no timer): each case feeds a sequence of inputs and states
// the effects each one must return, rendered as short lines:
//   > a q2 {"i":1}      write of an in-band command (`> oob:yank q3` for exec-oob, `> 0xFF` for the parser reset)
//   ok q2 1             a caller released: outcome, id, value (errors as `Name: message`)
//   event STOP · greeting 7.2.0 · arm-resync 100 · disarm-resync · log warn <msg> · closed <error | expected> (<why>)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QmpProtocol, PARSER_RESET, capabilitiesToEnable, type QmpCommand, type QmpConnectionState, type QmpEffect, type QmpProtocolOptions } from '../../qmp/protocol.ts';
import type { QmpGreeting } from '../../qmp/messages.ts';

const GREETING = { QMP: { version: { qemu: { major: 7, minor: 2, micro: 0 }, package: '' }, capabilities: ['oob'] } };
const R = (id: unknown, value: unknown = {}) => ({ return: value, id });
const E = (id: unknown, cls = 'GenericError', desc = 'failed') => (id === undefined ? { error: { class: cls, desc } } : { error: { class: cls, desc }, id });
const EV = (event: string, data?: Record<string, unknown>) => ({ event, ...(data ? { data } : {}), timestamp: { seconds: 1, microseconds: 0 } });
/** QEMU's answer to 0xFF. */
const RESET_ACK = E(undefined, 'GenericError', "JSON parse error, stray '\uFFFD'");

type Input =
  | { send: string; args?: object; oob?: true }
  | { recv: unknown }
  | { timeout: string; ms?: number }
  | { abort: string; reason?: unknown }
  | { negotiated: true }
  | { resyncExpired: true }
  | { eof: true; cause?: string }
  | { expectClose: true }
  | { close: true }
  | { fail: string };

type Step = [Input, string[]];

interface Case {
  name: string;
  opts?: QmpProtocolOptions;
  /** Start from `ready` (greeting read, q1 = qmp_capabilities answered). Default true. */
  ready?: boolean;
  steps: Step[];
  /** State, commands in flight and held after the last step. */
  end?: { state: QmpConnectionState; inFlight?: number; held?: number };
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : JSON.stringify(e);
}

function render(e: QmpEffect<string>): string {
  switch (e.kind) {
    case 'write': {
      if (typeof e.data !== 'string') return e.data === PARSER_RESET ? '> 0xFF' : `> bytes ${[...e.data].join(',')}`;
      assert.ok(e.data.endsWith('\n'), 'a command line ends with \\n');
      const m = JSON.parse(e.data) as { execute?: string; 'exec-oob'?: string; id: string; arguments?: object };
      const name = m.execute ?? `oob:${m['exec-oob']}`;
      return `> ${name} ${m.id}${m.arguments === undefined ? '' : ` ${JSON.stringify(m.arguments)}`}`;
    }
    case 'settle':
      assert.is(e.cmd.ctx, `ctx:${e.cmd.command}`, 'the caller handle travels with the command');
      return `${e.outcome} ${e.cmd.id} ${e.outcome === 'ok' ? JSON.stringify(e.value) : errorText(e.value)}${e.errorClass === undefined ? '' : ` [${e.errorClass}]`}`;
    case 'greeting': {
      const v = e.greeting.version.qemu;
      return `greeting ${v.major}.${v.minor}.${v.micro}`;
    }
    case 'event':
      return `event ${e.event}${Object.keys(e.data).length ? ` ${JSON.stringify(e.data)}` : ''}`;
    case 'arm-resync':
      return `arm-resync ${e.ms}`;
    case 'disarm-resync':
      return 'disarm-resync';
    case 'log':
      return `log ${e.level} ${e.msg}`;
    case 'closed':
      return `closed ${e.error === undefined ? 'expected' : errorText(e.error)} (${e.why})`;
  }
}

class Harness {
  readonly p: QmpProtocol<string>;
  readonly cmds = new Map<string, QmpCommand<string>>();
  constructor(opts: QmpProtocolOptions = {}) {
    this.p = new QmpProtocol<string>(opts);
  }
  input(i: Input): QmpEffect<string>[] {
    if ('send' in i) {
      const { cmd, effects } = this.p.request(i.send, i.args, i.oob === true, `ctx:${i.send}`);
      this.cmds.set(cmd.id, cmd);
      return effects;
    }
    if ('recv' in i) return this.p.receive(i.recv);
    if ('timeout' in i) return this.p.timeout(this.cmd(i.timeout), i.ms ?? 50);
    if ('abort' in i) return this.p.abort(this.cmd(i.abort), i.reason ?? new Error('cancelled'));
    if ('negotiated' in i) return this.p.negotiated();
    if ('resyncExpired' in i) return this.p.resyncExpired();
    if ('eof' in i) return this.p.streamEnded(i.cause === undefined ? undefined : new Error(i.cause));
    if ('expectClose' in i) {
      this.p.expectClose();
      return [];
    }
    if ('close' in i) return this.p.close();
    return this.p.fail(new Error(i.fail));
  }
  run(i: Input): string[] {
    const effects = this.input(i);
    return effects.map(render);
  }
  cmd(id: string): QmpCommand<string> {
    const c = this.cmds.get(id);
    if (c === undefined) throw new Error(`no command ${id} in this case`);
    return c;
  }
}

function readyHarness(opts?: QmpProtocolOptions): Harness {
  const h = new Harness(opts);
  assert.equal(h.run({ recv: GREETING }), ['greeting 7.2.0']);
  assert.equal(h.run({ send: 'qmp_capabilities', args: { enable: ['oob'] } }), ['> qmp_capabilities q1 {"enable":["oob"]}']);
  assert.equal(h.run({ recv: R('q1') }), ['ok q1 {}']);
  assert.equal(h.run({ negotiated: true }), []);
  assert.is(h.p.state, 'ready');
  return h;
}

const SUSPECT = [
  'log warn QMP command timed out; its late reply will be discarded',
  'log warn QMP connection suspect after a timeout; resynchronising',
  '> 0xFF',
];

const cases: Case[] = [
  // ——— handshake
  {
    name: 'handshake: greeting, capabilities written before ready, then ready',
    ready: false,
    steps: [
      [{ recv: GREETING }, ['greeting 7.2.0']],
      [{ send: 'qmp_capabilities' }, ['> qmp_capabilities q1']],
      [{ recv: R('q1') }, ['ok q1 {}']],
      [{ negotiated: true }, []],
      [{ negotiated: true }, []],
    ],
    end: { state: 'ready', inFlight: 0, held: 0 },
  },
  {
    name: 'handshake: a refused qmp_capabilities is an error reply, the state stays handshake',
    ready: false,
    steps: [
      [{ recv: GREETING }, ['greeting 7.2.0']],
      [{ send: 'qmp_capabilities' }, ['> qmp_capabilities q1']],
      [{ recv: E('q1', 'CommandNotFound', 'already complete') }, ["error q1 QmpError: QMP command 'qmp_capabilities' failed: CommandNotFound: already complete [CommandNotFound]"]],
    ],
    end: { state: 'handshake' },
  },
  {
    name: 'handshake: a timed-out qmp_capabilities does not resync (not in sync yet)',
    ready: false,
    steps: [
      [{ recv: GREETING }, ['greeting 7.2.0']],
      [{ send: 'qmp_capabilities' }, ['> qmp_capabilities q1']],
      [{ timeout: 'q1', ms: 80 }, ['timeout q1 QmpTimeoutError: QMP qmp_capabilities: no reply within 80 ms', 'log warn QMP command timed out; its late reply will be discarded']],
      [{ fail: 'no capabilities' }, ['log warn QMP connection lost', 'closed Error: no capabilities (no capabilities)']],
    ],
    end: { state: 'closed', inFlight: 0 },
  },
  {
    name: 'a second greeting is a protocol error',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ recv: GREETING }, [
        'log warn QMP connection lost',
        'disconnected q2 QmpDisconnectedError: QMP command \'a\' interrupted: QMP protocol error: a second greeting arrived on an established connection',
        'closed QmpProtocolError: QMP protocol error: a second greeting arrived on an established connection (QMP protocol error: a second greeting arrived on an established connection)',
      ]],
    ],
    end: { state: 'closed', inFlight: 0 },
  },
  {
    name: 'a greeting with a bad version is a protocol error naming the field',
    ready: false,
    steps: [
      [{ recv: { QMP: { version: { qemu: { major: 7 } }, capabilities: [] } } }, ['log warn QMP connection lost', 'closed QmpProtocolError: QMP protocol error: greeting: \'QMP.version.qemu.minor\' is not a number (input: {"QMP":{"version":{"qemu":{"major":7}},"capabilities":[]}}) (QMP protocol error: greeting: \'QMP.version.qemu.minor\' is not a number (input: {"QMP":{"version":{"qemu":{"major":7}},"capabilities":[]}}))']],
    ],
    end: { state: 'closed' },
  },
  {
    name: 'a message of no known shape is a protocol error',
    steps: [[{ recv: { hello: 1 } }, ['log warn QMP connection lost', 'closed QmpProtocolError: QMP protocol error: message is none of greeting (\'QMP\'), event (\'event\'), reply (\'return\'/\'error\') (input: {"hello":1}) (QMP protocol error: message is none of greeting (\'QMP\'), event (\'event\'), reply (\'return\'/\'error\') (input: {"hello":1}))']]],
    end: { state: 'closed' },
  },

  // ——— replies
  {
    name: 'replies are matched on id, in any order; error replies carry the class',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ send: 'b', args: { x: 1 } }, ['> b q3 {"x":1}']],
      [{ send: 'c' }, ['> c q4']],
      [{ recv: R('q3', 'B') }, ['ok q3 "B"']],
      [{ recv: E('q4', 'DeviceNotFound', "Device 'x' not found") }, ["error q4 QmpError: QMP command 'c' failed: DeviceNotFound: Device 'x' not found [DeviceNotFound]"]],
      [{ recv: R('q2', { status: 'running' }) }, ['ok q2 {"status":"running"}']],
    ],
    end: { state: 'ready', inFlight: 0, held: 0 },
  },
  {
    name: 'a reply to an unknown id (string or not) is logged and dropped; the real reply still counts',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ recv: R('nobody') }, ['log warn QMP reply with an unknown id dropped']],
      [{ recv: R(42) }, ['log warn QMP reply with an unknown id dropped']],
      [{ recv: R('q2', 1) }, ['ok q2 1']],
      [{ recv: R('q2', 1) }, ['log warn QMP reply with an unknown id dropped']],
    ],
    end: { state: 'ready', inFlight: 0 },
  },
  {
    name: 'events are delivered in order between replies',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ recv: EV('STOP') }, ['event STOP']],
      [{ recv: R('q2') }, ['ok q2 {}']],
      [{ recv: EV('BALLOON_CHANGE', { actual: 1 }) }, ['event BALLOON_CHANGE {"actual":1}']],
    ],
    end: { state: 'ready' },
  },

  // ——— in-flight limit and the send queue
  {
    name: 'at most maxInFlight in-band commands are written; each reply writes the next held one; OOB bypasses the cap',
    opts: { maxInFlight: 2 },
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ send: 'b' }, ['> b q3']],
      [{ send: 'c' }, []],
      [{ send: 'd' }, []],
      [{ send: 'yank', oob: true }, ['> oob:yank q6']],
      [{ recv: R('q6') }, ['ok q6 {}']],
      [{ recv: R('q3') }, ['ok q3 {}', '> c q4']],
      [{ recv: R('q2') }, ['ok q2 {}', '> d q5']],
      [{ recv: R('q4') }, ['ok q4 {}']],
    ],
    end: { state: 'ready', inFlight: 1, held: 0 },
  },
  {
    name: 'a command sent while others are held waits its turn even when a slot is free (send order kept)',
    opts: { maxInFlight: 1 },
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ send: 'b' }, []],
      [{ recv: R('q2') }, ['ok q2 {}', '> b q3']],
      [{ send: 'c' }, []],
      [{ recv: R('q3') }, ['ok q3 {}', '> c q4']],
    ],
    end: { state: 'ready', inFlight: 1, held: 0 },
  },
  {
    name: 'a held command that times out or is aborted is released and never written',
    opts: { maxInFlight: 1 },
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ send: 'b' }, []],
      [{ send: 'c' }, []],
      [{ send: 'd' }, []],
      [{ timeout: 'q3', ms: 30 }, ['timeout q3 QmpTimeoutError: QMP b: no reply within 30 ms']],
      [{ abort: 'q4', reason: 'stop' }, ['aborted q4 "stop"']],
      [{ recv: R('q2') }, ['ok q2 {}', '> d q5']],
    ],
    end: { state: 'ready', inFlight: 1, held: 0 },
  },

  // ——— abort
  {
    name: 'abort of a written command: released with the reason, slot kept, late reply discarded, no resync',
    steps: [
      [{ send: 'migrate' }, ['> migrate q2']],
      [{ abort: 'q2', reason: 'user cancelled' }, ['aborted q2 "user cancelled"', 'log debug QMP command aborted; its late reply will be discarded']],
      [{ abort: 'q2' }, []],
      [{ timeout: 'q2' }, []],
      [{ recv: R('q2', 'late') }, ['log debug QMP late reply discarded']],
    ],
    end: { state: 'ready', inFlight: 0 },
  },
  {
    name: 'a timeout or abort after the reply does nothing',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ recv: R('q2') }, ['ok q2 {}']],
      [{ timeout: 'q2' }, []],
      [{ abort: 'q2' }, []],
    ],
    end: { state: 'ready', inFlight: 0 },
  },

  // ——— resync
  {
    name: 'timeout: 0xFF + fresh-id probe; late reply and reset ack consumed; the probe reply proves sync; held commands flow',
    opts: { resyncTimeout: 100 },
    steps: [
      [{ send: 'blockdev-add' }, ['> blockdev-add q2']],
      [{ timeout: 'q2', ms: 60 }, ['timeout q2 QmpTimeoutError: QMP blockdev-add: no reply within 60 ms', ...SUSPECT, '> query-status q3', 'arm-resync 100']],
      [{ send: 'query-name' }, []],
      [{ send: 'yank', oob: true }, ['> oob:yank q5']],
      [{ recv: R('q2', 'late') }, ['arm-resync 100', 'log debug QMP late reply discarded']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: R('q3', { status: 'running' }) }, ['disarm-resync', 'log info QMP connection resynchronised', '> query-name q4']],
      [{ recv: R('q4', { name: 'vm' }) }, ['ok q4 {"name":"vm"}']],
    ],
    end: { state: 'ready', inFlight: 1, held: 0 },
  },
  {
    name: 'an error reply to the probe proves sync as well',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q3', 'arm-resync 10000']],
      [{ recv: R('q2') }, ['arm-resync 10000', 'log debug QMP late reply discarded']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: E('q3', 'GenericError', 'whatever') }, ['disarm-resync', 'log info QMP connection resynchronised']],
    ],
    end: { state: 'ready', inFlight: 0 },
  },
  {
    name: 'in-band commands written before the probe and unanswered at its reply are lost (freed, failed); OOB ones are not',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ send: 'b' }, ['> b q3']],
      [{ send: 'yank', oob: true }, ['> oob:yank q4']],
      [{ timeout: 'q2', ms: 30 }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 30 ms', ...SUSPECT, '> query-status q5', 'arm-resync 10000']],
      [{ recv: R('q2') }, ['arm-resync 10000', 'log debug QMP late reply discarded']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: R('q5') }, [
        'disarm-resync',
        'log warn QMP command lost: QEMU answered a later command first',
        "disconnected q3 QmpProtocolError: QMP protocol error: no reply to 'b' (id q3): QEMU answered a later command first, so this one was lost",
        'log info QMP connection resynchronised',
      ]],
      [{ recv: R('q3') }, ['log warn QMP reply with an unknown id dropped']],
      [{ recv: R('q4') }, ['ok q4 {}']],
    ],
    end: { state: 'ready', inFlight: 0 },
  },
  {
    name: 'the timed-out command itself, unanswered at the probe reply, is freed without a second release',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q3', 'arm-resync 10000']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: R('q3') }, ['disarm-resync', 'log warn QMP command lost: QEMU answered a later command first', 'log info QMP connection resynchronised']],
    ],
    end: { state: 'ready', inFlight: 0 },
  },
  {
    name: 'a second timeout while resyncing releases its caller but sends no second 0xFF or probe',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ send: 'b' }, ['> b q3']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q4', 'arm-resync 10000']],
      [{ timeout: 'q3', ms: 70 }, ['timeout q3 QmpTimeoutError: QMP b: no reply within 70 ms', 'log warn QMP command timed out; its late reply will be discarded']],
      [{ recv: R('q2') }, ['arm-resync 10000', 'log debug QMP late reply discarded']],
      [{ recv: R('q3') }, ['arm-resync 10000', 'log debug QMP late reply discarded']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: R('q4') }, ['disarm-resync', 'log info QMP connection resynchronised']],
    ],
    end: { state: 'ready', inFlight: 0 },
  },
  {
    name: 'replies while resyncing are progress: each re-arms the deadline and releases its caller',
    opts: { resyncTimeout: 100 },
    steps: [
      [{ send: 'blockdev-add' }, ['> blockdev-add q2']],
      [{ send: 'dump-guest-memory' }, ['> dump-guest-memory q3']],
      [{ timeout: 'q2', ms: 20 }, ['timeout q2 QmpTimeoutError: QMP blockdev-add: no reply within 20 ms', ...SUSPECT, '> query-status q4', 'arm-resync 100']],
      [{ recv: R('q2') }, ['arm-resync 100', 'log debug QMP late reply discarded']],
      [{ recv: EV('STOP') }, ['event STOP']],
      [{ recv: R('q3', 'dumped') }, ['arm-resync 100', 'ok q3 "dumped"']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: R('q4') }, ['disarm-resync', 'log info QMP connection resynchronised']],
      [{ resyncExpired: true }, []],
    ],
    end: { state: 'ready', inFlight: 0 },
  },
  {
    name: 'no progress until the resync deadline: the connection ends, held and written commands are released',
    opts: { resyncTimeout: 80 },
    steps: [
      [{ send: 'blockdev-add' }, ['> blockdev-add q2']],
      [{ timeout: 'q2', ms: 30 }, ['timeout q2 QmpTimeoutError: QMP blockdev-add: no reply within 30 ms', ...SUSPECT, '> query-status q3', 'arm-resync 80']],
      [{ send: 'query-name' }, []],
      [{ resyncExpired: true }, [
        'log warn QMP connection lost',
        "disconnected q4 QmpDisconnectedError: QMP command 'query-name' interrupted: QEMU made no progress for 80 ms while resynchronising after 'blockdev-add' timed out (no reply to the query-status probe)",
        "closed QmpDisconnectedError: QEMU made no progress for 80 ms while resynchronising after 'blockdev-add' timed out (no reply to the query-status probe) (QEMU made no progress for 80 ms while resynchronising after 'blockdev-add' timed out (no reply to the query-status probe))",
      ]],
      [{ recv: R('q3') }, []],
    ],
    end: { state: 'closed', inFlight: 0, held: 0 },
  },
  {
    name: 'resyncTimeout 0: no resync deadline at all',
    opts: { resyncTimeout: 0 },
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q3']],
      [{ recv: R('q2') }, ['log debug QMP late reply discarded']],
      [{ resyncExpired: true }, []],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: R('q3') }, ['disarm-resync', 'log info QMP connection resynchronised']],
    ],
    end: { state: 'ready' },
  },
  {
    name: 'the cap holds across a resync: the probe may exceed it, held commands wait for free slots',
    opts: { maxInFlight: 1 },
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ send: 'b' }, []],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q4', 'arm-resync 10000']],
      [{ send: 'c' }, []],
      [{ recv: R('q2') }, ['arm-resync 10000', 'log debug QMP late reply discarded']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: R('q4') }, ['disarm-resync', 'log info QMP connection resynchronised', '> b q3']],
      [{ recv: R('q3') }, ['ok q3 {}', '> c q5']],
    ],
    end: { state: 'ready', inFlight: 1, held: 0 },
  },

  // ——— id-less replies
  {
    name: 'an id-less error nobody provoked: protocol error, outstanding commands fail with it as cause',
    steps: [
      [{ send: 'query-status' }, ['> query-status q2']],
      [{ recv: E(undefined, 'GenericError', 'JSON parse error, invalid keyword') }, [
        'log warn QMP connection lost',
        "disconnected q2 QmpDisconnectedError: QMP command 'query-status' interrupted: QMP protocol error: id-less reply (GenericError: JSON parse error, invalid keyword) while no id-less input was pending: a command was not understood and its reply will never come",
        'closed QmpProtocolError: QMP protocol error: id-less reply (GenericError: JSON parse error, invalid keyword) while no id-less input was pending: a command was not understood and its reply will never come (QMP protocol error: id-less reply (GenericError: JSON parse error, invalid keyword) while no id-less input was pending: a command was not understood and its reply will never come)',
      ]],
    ],
    end: { state: 'closed', inFlight: 0 },
  },
  {
    name: 'an id-less success reply is never a reset ack',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q3', 'arm-resync 10000']],
      [{ recv: { return: {} } }, [
        'log warn QMP connection lost',
        'closed QmpProtocolError: QMP protocol error: id-less reply (a success reply) while no id-less input was pending: a command was not understood and its reply will never come (QMP protocol error: id-less reply (a success reply) while no id-less input was pending: a command was not understood and its reply will never come)',
      ]],
    ],
    end: { state: 'closed' },
  },
  {
    name: 'one 0xFF is answered once: a second id-less error is a protocol error',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q3', 'arm-resync 10000']],
      [{ recv: RESET_ACK }, ['log debug QMP parser reset acknowledged']],
      [{ recv: RESET_ACK }, [
        'log warn QMP connection lost',
        `closed QmpProtocolError: QMP protocol error: id-less reply (GenericError: JSON parse error, stray '\uFFFD') while no id-less input was pending: a command was not understood and its reply will never come (QMP protocol error: id-less reply (GenericError: JSON parse error, stray '\uFFFD') while no id-less input was pending: a command was not understood and its reply will never come)`,
      ]],
    ],
    end: { state: 'closed' },
  },
  {
    name: 'after the probe reply the reset accounting starts over: a stray id-less error is a protocol error',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q3', 'arm-resync 10000']],
      [{ recv: R('q3') }, ['disarm-resync', 'log warn QMP command lost: QEMU answered a later command first', 'log info QMP connection resynchronised']],
      [{ recv: RESET_ACK }, ['log warn QMP connection lost', `closed QmpProtocolError: QMP protocol error: id-less reply (GenericError: JSON parse error, stray '\uFFFD') while no id-less input was pending: a command was not understood and its reply will never come (QMP protocol error: id-less reply (GenericError: JSON parse error, stray '\uFFFD') while no id-less input was pending: a command was not understood and its reply will never come)`]],
    ],
    end: { state: 'closed' },
  },

  // ——— the end
  {
    name: 'EOF without SHUTDOWN is reported; every outstanding command is released naming itself',
    opts: { maxInFlight: 1 },
    steps: [
      [{ send: 'blockdev-add' }, ['> blockdev-add q2']],
      [{ send: 'device_add' }, []],
      [{ eof: true }, [
        'log warn QMP connection lost',
        "disconnected q2 QmpDisconnectedError: QMP command 'blockdev-add' interrupted: QEMU closed the connection",
        "disconnected q3 QmpDisconnectedError: QMP command 'device_add' interrupted: QEMU closed the connection",
        'closed QmpDisconnectedError: QEMU closed the connection (QEMU closed the connection)',
      ]],
      [{ eof: true }, []],
      [{ recv: R('q2') }, []],
      [{ send: 'x' }, ["disconnected q4 QmpDisconnectedError: QMP command 'x' interrupted: connection is closed"]],
    ],
    end: { state: 'closed', inFlight: 0, held: 0 },
  },
  {
    name: 'a stream error is reported with its cause',
    steps: [[{ eof: true, cause: 'read ECONNRESET' }, ['log warn QMP connection lost', 'closed QmpDisconnectedError: connection failed: read ECONNRESET (connection failed: read ECONNRESET)']]],
    end: { state: 'closed' },
  },
  {
    name: 'EOF after SHUTDOWN is expected',
    steps: [
      [{ recv: EV('SHUTDOWN', { guest: true, reason: 'guest-shutdown' }) }, ['event SHUTDOWN {"guest":true,"reason":"guest-shutdown"}']],
      [{ eof: true, cause: 'read ECONNRESET' }, ['closed expected (connection closed)']],
    ],
    end: { state: 'closed' },
  },
  {
    name: 'SHUTDOWN followed by RESET (a reboot) makes EOF unexpected again',
    steps: [
      [{ recv: EV('SHUTDOWN') }, ['event SHUTDOWN']],
      [{ recv: EV('RESET') }, ['event RESET']],
      [{ eof: true }, ['log warn QMP connection lost', 'closed QmpDisconnectedError: QEMU closed the connection (QEMU closed the connection)']],
    ],
    end: { state: 'closed' },
  },
  {
    name: 'SHUTDOWN followed by RESUME makes EOF unexpected again',
    steps: [
      [{ recv: EV('SHUTDOWN') }, ['event SHUTDOWN']],
      [{ recv: EV('STOP') }, ['event STOP']],
      [{ recv: EV('RESUME') }, ['event RESUME']],
      [{ eof: true }, ['log warn QMP connection lost', 'closed QmpDisconnectedError: QEMU closed the connection (QEMU closed the connection)']],
    ],
    end: { state: 'closed' },
  },
  {
    name: 'quit: after expectClose the EOF is expected; quit itself is released as disconnected',
    steps: [
      [{ expectClose: true }, []],
      [{ send: 'quit' }, ['> quit q2']],
      [{ eof: true, cause: 'read ECONNRESET' }, ["disconnected q2 QmpDisconnectedError: QMP command 'quit' interrupted: connection closed", 'closed expected (connection closed)']],
    ],
    end: { state: 'closed' },
  },
  {
    name: 'close(): outstanding commands are told the client closed; later inputs do nothing',
    steps: [
      [{ send: 'device_add' }, ['> device_add q2']],
      [{ close: true }, ["disconnected q2 QmpDisconnectedError: QMP command 'device_add' interrupted: connection closed by the client", 'closed expected (connection closed by the client)']],
      [{ close: true }, []],
      [{ eof: true }, []],
      [{ fail: 'late' }, []],
      [{ timeout: 'q2' }, []],
      [{ recv: EV('STOP') }, []],
      [{ negotiated: true }, []],
    ],
    end: { state: 'closed', inFlight: 0 },
  },
  {
    name: 'close() while resyncing: the probe has no caller to release',
    steps: [
      [{ send: 'a' }, ['> a q2']],
      [{ timeout: 'q2' }, ['timeout q2 QmpTimeoutError: QMP a: no reply within 50 ms', ...SUSPECT, '> query-status q3', 'arm-resync 10000']],
      [{ close: true }, ['closed expected (connection closed by the client)']],
      [{ resyncExpired: true }, []],
    ],
    end: { state: 'closed', inFlight: 0 },
  },
];

for (const c of cases) {
  test(c.name, () => {
    const h = c.ready === false ? new Harness(c.opts) : readyHarness(c.opts);
    c.steps.forEach(([input, want], i) => {
      assert.equal(h.run(input), want, `step ${i + 1}: ${JSON.stringify(input)}`);
    });
    if (c.end) {
      assert.is(h.p.state, c.end.state, 'state');
      if (c.end.inFlight !== undefined) assert.is(h.p.inFlight, c.end.inFlight, 'in flight');
      if (c.end.held !== undefined) assert.is(h.p.held, c.end.held, 'held');
    }
  });
}

test('capabilities: oob only when wanted and offered', () => {
  const g = (capabilities: string[]): QmpGreeting => ({ version: { qemu: { major: 7, minor: 2, micro: 0 }, package: '' }, capabilities });
  assert.equal(capabilitiesToEnable(g(['oob']), true), ['oob']);
  assert.equal(capabilitiesToEnable(g(['oob']), false), []);
  assert.equal(capabilitiesToEnable(g([]), true), []);
});

test('idPrefix names the ids; the resync duration comes from the injected clock', () => {
  let now = 1000;
  const p = new QmpProtocol<number>({ idPrefix: 'vm1-', now: () => now });
  p.receive(GREETING);
  const { cmd } = p.request('a', undefined, false, 7);
  assert.is(cmd.id, 'vm1-1');
  p.negotiated();
  p.timeout(cmd, 10);
  now = 1234;
  p.receive(RESET_ACK);
  const out = p.receive(R('vm1-2'));
  const log = out.find((e) => e.kind === 'log' && e.msg === 'QMP connection resynchronised');
  assert.equal(log && log.kind === 'log' ? log.fields : undefined, { ms: 234 });
});

test('10 000 commands through a window of 8, answered in random order within the window: all released once, in-flight never above 8', () => {
  const p = new QmpProtocol<number>();
  p.receive(GREETING);
  p.negotiated();
  const written: string[] = [];
  const released = new Map<number, unknown>();
  const apply = (effects: QmpEffect<number>[]): void => {
    for (const e of effects) {
      if (e.kind === 'write') written.push(JSON.parse(e.data as string).id as string);
      else if (e.kind === 'settle') {
        assert.not.ok(released.has(e.cmd.ctx), 'released once');
        released.set(e.cmd.ctx, e.value);
      } else assert.unreachable(`unexpected ${e.kind}`);
    }
  };
  const N = 10_000;
  for (let i = 0; i < N; i++) apply(p.request('q', { i }, false, i).effects);
  assert.is(written.length, 8);
  assert.is(p.held, N - 8);
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  let answered = 0;
  while (answered < N) {
    const open = written.slice(answered);
    assert.ok(p.inFlight <= 8 && p.inFlight === written.length - answered);
    // Answer one of the unanswered at random, then keep `written` ordered as "answered first".
    const k = Math.floor(rnd() * open.length);
    const id = open[k]!;
    written.splice(answered + k, 1);
    written.splice(answered, 0, id);
    answered++;
    apply(p.receive(R(id, Number(id.slice(1)) - 1)));
  }
  assert.is(released.size, N);
  for (const [ctx, value] of released) assert.is(value, ctx);
  assert.is(p.inFlight, 0);
  assert.is(p.held, 0);
});

test.run();

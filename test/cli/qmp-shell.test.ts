// `qvirt qmp` as a user runs it, against a real launcher and QEMU (the launcher runtime tests'
// harness, `-machine none`: no guest to boot): the lines QEMU users type — a QMP JSON object pasted
// from QEMU's docs, with and without blanks, qmp-shell's `human-monitor-command command-line="..."`
// and, with -H, HMP's `info status` — get QEMU's own answers; HMP `stop` is refused without --unsafe
// (by the launcher: the CLI sends it as typed) and runs with it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CmdClient } from '../../src/proto/launcher-client.ts';
import { harness, testVmi, processGone, type Harness } from '../launcher-runtime/lib.ts';
import { tempDir } from '../lib/tmp.ts';
import { within } from '../lib/within.ts';

const qvirt = new URL('../../bin/qvirt', import.meta.url).pathname;
const NONE_ARGV = ['-machine', 'none', '-nodefaults', '-display', 'none', '-accel', 'tcg'];
const state = tempDir('qvs');
// The shell's history goes to $XDG_STATE_HOME (only on a terminal; never the user's own).
const env = { ...process.env, XDG_STATE_HOME: state.path };

interface Ran { code: number | null; stdout: string; stderr: string }

/** A one-shot `qvirt qmp ARGS`: its exit and output, within a bound. */
async function qmp(args: string[]): Promise<Ran> {
  const shell = new Shell(args);
  return shell.end();
}

/**
 * An interactive `qvirt qmp ARGS` fed one line at a time, as a user types: each line's answer is
 * what it printed on stdout before its next prompt. Errors go to stderr (read at the end: the two
 * pipes are read in no particular order).
 */
class Shell {
  readonly child;
  readonly args: string[];
  readonly prompt: string;
  stdout = '';
  stderr = '';
  private read = 0;
  private readonly exited: Promise<number | null>;
  private wake = () => {};

  constructor(args: string[], prompt = '') {
    this.args = args;
    this.prompt = prompt;
    this.child = spawn(qvirt, ['qmp', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d: Buffer) => { this.stdout += d.toString(); this.wake(); });
    this.child.stderr.on('data', (d: Buffer) => { this.stderr += d.toString(); });
    this.exited = new Promise((r) => this.child.on('close', (c) => { this.wake(); r(c); }));
  }

  /** Waits for the next prompt; returns what came before it. */
  private async nextPrompt(what: string): Promise<string> {
    const found = () => this.stdout.indexOf(this.prompt, this.read);
    await within(new Promise<void>((resolve) => {
      const check = () => { if (found() >= 0 || this.child.exitCode !== null) resolve(); };
      this.wake = check;
      check();
    }), 30_000, `${what} (stdout: ${JSON.stringify(this.stdout)}, stderr: ${JSON.stringify(this.stderr)})`);
    const at = found();
    assert.ok(at >= 0, `the shell ended before ${what}: ${this.stderr}`);
    const before = this.stdout.slice(this.read, at);
    this.read = at + this.prompt.length;
    return before;
  }

  async start(): Promise<this> {
    await this.nextPrompt(`the first prompt of qvirt qmp ${this.args.join(' ')}`);
    return this;
  }

  /** Types `line`; returns what the shell printed for it. */
  async line(line: string): Promise<string> {
    this.child.stdin.write(`${line}\n`);
    return (await this.nextPrompt(`the answer to ${line}`)).trim();
  }

  async end(): Promise<Ran> {
    this.child.stdin.end();
    try {
      const code = await within(this.exited, 60_000, `qvirt qmp ${this.args.join(' ')} to exit (stdout: ${this.stdout}, stderr: ${this.stderr})`);
      return { code, stdout: this.stdout, stderr: this.stderr };
    } finally {
      this.child.kill('SIGKILL');
    }
  }
}

const shell = (args: string[], prompt: string) => new Shell(args, prompt).start();
const json = (text: string): unknown => JSON.parse(text);

async function withLauncher(uid: string, fn: (socket: string, h: Harness) => Promise<void>) {
  const h = await harness({ uid, start: async () => ({ argv: NONE_ARGV }), markReady: true, notifyTimings: { intervalMs: 100, totalTimeoutMs: 3000 } });
  const socket = join(h.shareDir, 'sockets', 'launcher-sock');
  const cmd = new CmdClient(socket);
  let pid: number | undefined;
  try {
    assert.is((await cmd.syncVirtualMachine(testVmi('testvm', uid))).success, true);
    pid = h.runtime.manager.qemu?.pid;
    await fn(socket, h);
  } finally {
    cmd.close();
    await h.cleanup();
  }
  if (pid !== undefined) assert.ok(processGone(pid), `QEMU ${pid} is gone after the test`);
}

const RUNNING = { status: 'running', singlestep: false, running: true };

test('the QMP shell reads QEMU docs\' JSON objects and qmp-shell\'s key=value; -H runs HMP info, refuses stop without --unsafe', async () => {
  await withLauncher('uid-shell', async (socket, h) => {
    const q = await shell(['testvm', '--socket', socket], '(QEMU testvm) ');
    assert.equal(json(await q.line('{"execute":"query-status"}')), RUNNING);
    assert.equal(json(await q.line('{ "execute": "query-status" }')), RUNNING);
    assert.equal(json(await q.line('human-monitor-command command-line="info status"')), 'VM status: running\r\n');
    assert.equal(json(await q.line('query-named-block-nodes flat=true')), []);
    assert.equal(json(await q.line('query-named-block-nodes {"flat": true}')), []);
    // A line the shell cannot read says why, with an example; the shell goes on.
    assert.is(await q.line('{"execute": "query-status"'), '');
    assert.is(await q.line('stop'), '');
    assert.equal(json(await q.line('query-status')), RUNNING);
    const qEnd = await q.end();
    assert.is(qEnd.code, 0);
    const qErrors = qEnd.stderr.trim().split('\n');
    assert.is(qErrors.length, 2, qEnd.stderr);
    assert.match(qErrors[0]!, /^not JSON \(.*\): a QMP command object looks like \{"execute": "query-named-block-nodes", "arguments": \{"flat": true\}\}$/);
    assert.match(qErrors[1]!, /^refused: 'stop' is not a read-only query on the passthrough allow-list; set unsafe to run it$/);

    const hmp = await shell(['testvm', '--socket', socket, '-H'], '(HMP testvm) ');
    assert.is(await hmp.line('info status'), 'VM status: running');
    assert.is(await hmp.line('stop'), '');
    assert.is(await hmp.line('info status; stop'), '');
    assert.is(await hmp.line('info status'), 'VM status: running', 'the refused stop never reached QEMU');
    assert.is(await hmp.line('cpu 3'), '', '-machine none has no CPU 3');
    const hmpEnd = await hmp.end();
    assert.is(hmpEnd.code, 0);
    const refusals = hmpEnd.stderr.trim().split('\n');
    assert.is(refusals.length, 3, hmpEnd.stderr);
    assert.match(refusals[0]!, /^refused: HMP 'stop' is not an `info` command.*set unsafe to run it$/);
    assert.match(refusals[1]!, /^refused: the HMP command line contains ";"/);
    assert.match(refusals[2]!, /^bad CPU index 3: error \(GenericError\): .*cpu-index/);
    assert.is(h.runtime.manager.domainState.status, 'Running');
  });
});

test('with --unsafe: HMP stop and cont, seen in QMP\'s and HMP\'s status; the one-shot forms', async () => {
  await withLauncher('uid-unsafe', async (socket, h) => {
    const hmp = await shell(['testvm', '--socket', socket, '-H', '--unsafe'], '(HMP testvm, unsafe) ');
    assert.is(await hmp.line('stop'), '');
    assert.is(await hmp.line('info status'), 'VM status: paused');
    assert.equal(await hmp.end(), { code: 0, stdout: hmp.stdout, stderr: '' });
    const paused = await qmp(['testvm', '--socket', socket, '{"execute":"query-status"}']);
    assert.equal(json(paused.stdout), { status: 'paused', singlestep: false, running: false });
    const q = await shell(['testvm', '--socket', socket, '--unsafe'], '(QEMU testvm, unsafe) ');
    assert.equal(json(await q.line('{"execute": "cont", "id": 1}')), {});
    assert.equal(json(await q.line('human-monitor-command command-line="info status"')), 'VM status: running\r\n');
    assert.equal(await q.end(), { code: 0, stdout: q.stdout, stderr: '' });

    const info = await qmp(['testvm', '--socket', socket, '-H', 'info', 'status']);
    assert.equal([info.code, info.stdout, info.stderr], [0, 'VM status: running\n', '']);
    const hmc = await qmp(['testvm', '--socket', socket, 'human-monitor-command', 'command-line=info status']);
    assert.equal([hmc.code, json(hmc.stdout)], [0, 'VM status: running\r\n']);
    const stop = await qmp(['testvm', '--socket', socket, '-H', 'stop']);
    assert.is(stop.code, 1);
    assert.match(stop.stderr, /^refused: HMP 'stop' is not an `info` command/);
    const usage = await qmp(['testvm', '--socket', socket, 'query-named-block-nodes', 'flat']);
    assert.is(usage.code, 2);
    assert.match(usage.stderr, /'flat' is not a key=value argument, e\.g\. query-named-block-nodes flat=true/);
    assert.is(h.runtime.manager.domainState.status, 'Running');
  });
});

/**
 * `qvirt qmp ARGS` on a terminal: util-linux's `script` gives it a pseudo-terminal (TERM=xterm:
 * node:readline completes nothing on a dumb one). `expect` waits for the output since the last
 * expect, escape sequences removed, to match.
 */
class TerminalShell {
  /** Every one started, ended by the test whatever happens. */
  static readonly all: TerminalShell[] = [];
  readonly child;
  private out = '';
  private seen = 0;
  private wake = () => {};
  private readonly exited: Promise<number | null>;

  constructor(args: string[]) {
    const command = ['qvirt', 'qmp', ...args].map((a) => `'${a}'`).join(' ').replace(/^'qvirt'/, `'${qvirt}'`);
    this.child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...env, TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] });
    const take = (d: Buffer) => { this.out += d.toString(); this.wake(); };
    this.child.stdout.on('data', take);
    this.child.stderr.on('data', take);
    this.exited = new Promise((r) => this.child.on('close', (c) => { this.wake(); r(c); }));
    TerminalShell.all.push(this);
  }

  private text() { return this.out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, ''); }

  async expect(pattern: RegExp, what: string): Promise<string> {
    let m: RegExpExecArray | null = null;
    await within(new Promise<void>((resolve) => {
      const check = () => {
        m = pattern.exec(this.text().slice(this.seen));
        if (m || this.child.exitCode !== null) resolve();
      };
      this.wake = check;
      check();
    }), 30_000, `${what} (terminal so far: ${JSON.stringify(this.text().slice(this.seen))})`);
    assert.ok(m, `${what}: the shell ended first: ${this.text()}`);
    const hit = m as RegExpExecArray;
    const at = this.text().slice(this.seen).indexOf(hit[0]) + hit[0].length;
    this.seen += at;
    return hit[0];
  }

  type(keys: string) { this.child.stdin.write(keys); }

  /** Leaves the shell with `keys` (quit, or Ctrl-C); its exit code. */
  async end(keys = 'quit\r'): Promise<number | null> {
    this.type(keys);
    try {
      return await within(this.exited, 30_000, `the terminal shell to end: ${this.text()}`);
    } finally {
      this.child.kill('SIGKILL');
    }
  }
}

test('on a terminal: Tab completes from query-commands (with -H, info commands), the history is kept in $XDG_STATE_HOME', async () => {
  try {
    await terminalSessions();
  } finally {
    for (const t of TerminalShell.all) t.child.kill('SIGKILL');
  }
});

async function terminalSessions() {
  await withLauncher('uid-tty', async (socket) => {
    const version = json((await qmp(['testvm', '--socket', socket, 'query-version'])).stdout) as { qemu: { major: number; minor: number } };
    const prompt = /\(QEMU testvm\) $/;
    const t1 = new TerminalShell(['testvm', '--socket', socket]);
    await t1.expect(prompt, 'the first prompt');
    t1.type('query-versi\t');
    await t1.expect(/query-version$/, 'Tab to complete query-versi to query-version');
    t1.type('\r');
    const answer = await t1.expect(/\{[\s\S]*\}\n\(QEMU testvm\) $/, 'query-version\'s answer');
    assert.equal((json(answer.slice(0, answer.lastIndexOf('}') + 1)) as typeof version).qemu, version.qemu);
    // node:readline completes on a Tab that ends what the terminal delivered (else it takes it for a
    // paste): each Tab is typed after the effect of the one before.
    t1.type('query-sta\t');
    await t1.expect(/query-stat$/, 'Tab to complete query-sta as far as it goes: query-stat');
    t1.type('\t');
    await t1.expect(/query-stats\s+query-stats-schemas\s+query-status/, 'a second Tab listing what query-stat may become');
    t1.type('\x15human-monitor-command command-line="info status"\r'); // Ctrl-U clears the line first
    await t1.expect(/"VM status: running\\r\\n"\n\(QEMU testvm\) $/, 'info status through human-monitor-command');
    assert.is(await t1.end(), 0);

    const history = join(state.path, 'qvirt', 'qmp-history');
    assert.is(readFileSync(history, 'utf8'), 'query-version\nhuman-monitor-command command-line="info status"\nquit\n');
    assert.is(statSync(history).mode & 0o777, 0o600);

    // The next session starts with that history: Up three times is query-version.
    const t2 = new TerminalShell(['testvm', '--socket', socket]);
    await t2.expect(prompt, 'the first prompt of the second session');
    t2.type('\x1b[A\x1b[A\x1b[A');
    await t2.expect(/query-version$/, 'Up three times to recall query-version from the saved history');
    t2.type('\r');
    await t2.expect(/"qemu": \{[\s\S]*\}\n\(QEMU testvm\) $/, 'the recalled query-version\'s answer');
    assert.is(await t2.end(), 0);

    const t3 = new TerminalShell(['testvm', '--socket', socket, '-H']);
    await t3.expect(/\(HMP testvm\) $/, 'the HMP shell\'s first prompt');
    t3.type('info statu\t');
    await t3.expect(/info status$/, 'Tab to complete info statu to info status');
    t3.type('\r');
    await t3.expect(/VM status: running\n\(HMP testvm\) $/, 'info status\'s answer');
    assert.is(await t3.end('\x03'), 0, 'Ctrl-C leaves the shell');
    assert.is(readFileSync(join(state.path, 'qvirt', 'hmp-history'), 'utf8'), 'info status\n', 'HMP lines have their own history');
  });
}

test.after(() => state.cleanup());
test.run();

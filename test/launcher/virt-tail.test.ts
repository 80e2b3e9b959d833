// virt-tail (launcher/virt-tail.sh, `qvirt tail`): the guest-console-log container's program, run for real
// with /bin/sh and coreutils' tail: it waits for the log to appear, follows appends and a truncation, ends
// with exit 0 on SIGTERM leaving no tail behind, and refuses bad flags naming them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VIRT_TAIL_SCRIPT } from '../../src/local/launcher-command.ts';
import { tempDir } from '../lib/tmp.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function childPids(pid: number): number[] {
  try { return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number); } catch { return []; }
}

test('follows a log that appears later, across a truncation; SIGTERM ends it with 0 and its tail', async () => {
  const t = tempDir('qvt');
  try {
    const log = join(t.path, 'virt-serial0-log');
    let out = '';
    let err = '';
    const child = spawn('/bin/sh', [VIRT_TAIL_SCRIPT, '--logfile', log], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    const closed = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.once('close', (code, signal) => r([code, signal])));
    await until('its tail to start', () => childPids(child.pid!).length === 1);
    const [tailPid] = childPids(child.pid!);
    await sleep(300);
    assert.not.ok(existsSync(log));
    writeFileSync(log, 'SeaBIOS\n');
    await until('the first line', () => out.includes('SeaBIOS\n'));
    appendFileSync(log, 'Linux version 6.1\n');
    await until('an appended line', () => out.includes('Linux version 6.1\n'));
    writeFileSync(log, 'after truncation\n');
    await until('the line after a truncation', () => out.includes('after truncation\n'));
    assert.is(out, 'SeaBIOS\nLinux version 6.1\nafter truncation\n', 'only the console\'s bytes, no notices from tail');
    child.kill('SIGTERM');
    assert.equal(await closed, [0, null], 'exit 0 on SIGTERM');
    await until('its tail to end', () => !existsSync(`/proc/${tailPid}/stat`) || readFileSync(`/proc/${tailPid}/stat`, 'utf8').includes(') Z '));
    assert.is(err, '');
  } finally {
    t.cleanup();
  }
});

test('bad flags: exit 2 with the flag named; --help shows --logfile', () => {
  const run = (...args: string[]) => spawnSync('/bin/sh', [VIRT_TAIL_SCRIPT, ...args], { encoding: 'utf8', timeout: 5000 });
  const none = run();
  assert.is(none.status, 2);
  assert.match(none.stderr, /--logfile is required/);
  const unknown = run('--logfle', '/x');
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, /unknown flag "--logfle"/);
  const missing = run('--logfile');
  assert.is(missing.status, 2);
  assert.match(missing.stderr, /--logfile needs a value/);
  const help = run('--help');
  assert.is(help.status, 0);
  assert.match(help.stdout, /--logfile FILE/);
});

test.run();

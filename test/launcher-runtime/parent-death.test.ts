// QEMU's parent-death signal: the command the launcher spawns QEMU with (setpriv --pdeathsig KILL,
// then a shell that checks its parent is still the launcher), and the check itself refusing to
// start a QEMU whose launcher is gone. (A real launcher SIGKILLed with its QEMU running:
// test/launcher/launcher-killed.test.ts.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { withParentDeathSignal, PARENT_CHECK_NAME, PARENT_GONE_MESSAGE, type ParentDeathTools } from '../../src/process/parent-death.ts';
import { findExecutable } from '../../launcher/disks/tools.ts';
import { within } from '../lib/within.ts';

const cases: [string, ParentDeathTools, { file: string; args: string[]; guard: string }][] = [
  ['setpriv and a shell: the signal, then the parent check, then exec', { setpriv: '/usr/bin/setpriv', shell: '/usr/bin/sh' }, {
    file: '/usr/bin/setpriv',
    args: ['--pdeathsig', 'KILL', '--', '/usr/bin/sh', '-c', '[ "$PPID" = "$1" ] || { echo "the launcher ended before QEMU started: not starting an orphaned QEMU (parent $PPID, launcher $1)" >&2; exit 1; }; shift; exec "$@"', PARENT_CHECK_NAME, '4242', 'qemu-system-x86_64', '-machine', 'none'],
    guard: 'signal-and-check',
  }],
  ['setpriv without a shell: the signal alone', { setpriv: '/usr/bin/setpriv', shell: undefined }, {
    file: '/usr/bin/setpriv', args: ['--pdeathsig', 'KILL', '--', 'qemu-system-x86_64', '-machine', 'none'], guard: 'signal',
  }],
  ['no setpriv: QEMU bare', { setpriv: undefined, shell: '/usr/bin/sh' }, {
    file: 'qemu-system-x86_64', args: ['-machine', 'none'], guard: 'none',
  }],
];
for (const [name, tools, want] of cases) {
  test(`withParentDeathSignal: ${name}`, () => {
    assert.equal(withParentDeathSignal(tools, 4242, 'qemu-system-x86_64', ['-machine', 'none']), want);
  });
}

function run(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const tools = { setpriv: findExecutable('setpriv'), shell: findExecutable('sh') };

test('the parent check execs the command when its parent is the spawner, and refuses when it is not', async () => {
  assert.ok(tools.setpriv, 'util-linux setpriv is on PATH (Debian 12 has it in util-linux)');
  assert.ok(tools.shell, 'a shell is on PATH');
  // Spawned by this process: the check passes and the command runs with the spawner as its parent.
  const ours = withParentDeathSignal(tools, process.pid, 'sh', ['-c', 'echo parent=$PPID']);
  const ok = await within(run(ours.file, ours.args), 10_000, 'the guarded command to run');
  assert.equal([ok.code, ok.stdout.trim(), ok.stderr], [0, `parent=${process.pid}`, '']);
  // Told the launcher is another process (as when the launcher died and this child was re-parented):
  // exit 1, the command (here QEMU) never started.
  const orphan = withParentDeathSignal(tools, process.pid + 1_000_000, 'qemu-system-x86_64', ['-machine', 'none', '-nodefaults', '-display', 'none']);
  const refused = await within(run(orphan.file, orphan.args), 10_000, 'the parent check to refuse');
  assert.is(refused.code, 1);
  assert.ok(refused.stderr.includes(PARENT_GONE_MESSAGE), refused.stderr);
  assert.ok(refused.stderr.includes(`parent ${process.pid}, launcher ${process.pid + 1_000_000}`), refused.stderr);
});

test.run();

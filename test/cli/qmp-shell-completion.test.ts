// Tab completion's names, from QEMU's own answers (the texts below are QEMU 7.2's).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hmpHelpNames, hmpInfoNames, qmpCommandNames, shellCompleter } from '../../src/cli/qmp-shell-completion.ts';

test('qmpCommandNames: the names query-commands lists, sorted, once each', () => {
  assert.equal(qmpCommandNames([{ name: 'query-status' }, { name: 'cont' }, { name: 'query-block' }, { name: 'cont' }]), ['cont', 'query-block', 'query-status']);
  assert.equal(qmpCommandNames([{ name: 'stop' }, { nope: 1 }, null, 'x', { name: 5 }]), ['stop']);
  assert.equal(qmpCommandNames({ error: 'x' }), []);
  assert.equal(qmpCommandNames(undefined), []);
});

test('hmpInfoNames: `info X` from a bare `info`', () => {
  const info = 'info balloon  -- show balloon information\r\ninfo block [-n] [-v] [device] -- show info of one block device\r\ninfo status  -- show the current VM status (running|paused)\r\n';
  assert.equal(hmpInfoNames(info), ['info balloon', 'info block', 'info status']);
  assert.equal(hmpInfoNames(''), []);
  assert.equal(hmpInfoNames('unknown command\r\n'), []);
});

test('hmpHelpNames: command names from `help`, the long spelling of a|b, each with help NAME', () => {
  const help = [
    'announce_self [interfaces] [id] -- Trigger GARP/RARP announcements',
    'block_job_cancel [-f] device -- stop an active background block operation (use -f',
    '\t\t\t if you want to abort the operation immediately',
    'c|cont  -- resume emulation',
    'info [subcommand] -- show various information about the system state',
    'q|quit  -- quit the emulator',
    'help|? [cmd] -- show the help',
    '[not a command]',
    '',
  ].join('\r\n');
  assert.equal(hmpHelpNames(help), ['announce_self', 'block_job_cancel', 'cont', 'help', 'help announce_self', 'help block_job_cancel', 'help cont', 'help help', 'help info', 'help quit', 'quit']);
});

test('shellCompleter: the names the whole line so far begins (query- is not a word break)', () => {
  const complete = shellCompleter(['query-block', 'query-status', 'stop', 'info status', 'info registers']);
  assert.equal(complete('query-s'), [['query-status'], 'query-s']);
  assert.equal(complete('query-'), [['query-block', 'query-status'], 'query-']);
  assert.equal(complete('info r'), [['info registers'], 'info r']);
  assert.equal(complete('x'), [[], 'x']);
  assert.equal(complete(''), [['query-block', 'query-status', 'stop', 'info status', 'info registers'], '']);
});

test.run();

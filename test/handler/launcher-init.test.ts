// handler/launcher-init: when a launcher that has no command socket yet counts as unresponsive.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LAUNCHER_INIT_TIMEOUT_MS, launcherInit, type LauncherInit, type LauncherInitView } from '../../handler/launcher/init.ts';

const T = 10_000;
const cases: Array<[string, Omit<LauncherInitView, 'timeoutMs'>, LauncherInit]> = [
  ['socket there: a client can be made', { socketExists: true, notInitializedSinceMs: 0, nowMs: 10 * T }, 'socket'],
  ['socket there long after the timeout: still a client (the watchdog judges it)', { socketExists: true, notInitializedSinceMs: 0, nowMs: 100 * T }, 'socket'],
  ['no socket yet, just looked', { socketExists: false, notInitializedSinceMs: 1000, nowMs: 1000 }, 'initializing'],
  ['no socket, at the timeout exactly', { socketExists: false, notInitializedSinceMs: 1000, nowMs: 1000 + T }, 'initializing'],
  ['no socket, past the timeout', { socketExists: false, notInitializedSinceMs: 1000, nowMs: 1001 + T }, 'unresponsive'],
];
for (const [name, v, want] of cases) {
  test(name, () => { assert.is(launcherInit({ ...v, timeoutMs: T }), want); });
}

test('KubeVirt waits 3 minutes for the socket', () => {
  assert.is(LAUNCHER_INIT_TIMEOUT_MS, 180_000);
});

test.run();

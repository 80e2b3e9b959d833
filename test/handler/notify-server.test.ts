// The node agent's notify server when two of its caches listen on one launcher's socket path in turn (the
// migration target's side, then the node's main controller taking the launcher over): stopping the older
// server must not remove the newer one's socket file, or the launcher's domain events find no socket at all.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NotifyServer } from '../../handler/launcher/notify-server.ts';
import { Notifier } from '../../launcher/notify/notifier.ts';
import { buildDomain } from '../../launcher/domain/domain.ts';
import type { Domain } from '../../src/api/domain/domain.ts';
import { componentLogger } from '../../src/log/logger.ts';
import { tempDir } from '../lib/tmp.ts';

const log = componentLogger('launcher', { level: 'silent' });
const ref = { namespace: 'ns', name: 'vm', uid: 'u1' };

test('an older server stopped after a newer one took the path: the newer one keeps its socket and gets the events; its own stop removes it', async () => {
  const dir = tempDir('qns');
  const sock = join(dir.path, 'domain-notify-pipe.sock');
  const older: string[] = [];
  const newer: string[] = [];
  const a = await NotifyServer.start(sock, { domainEvent: (type, d: Domain) => { older.push(`${type} ${d.Status.Status}`); } });
  const b = await NotifyServer.start(sock, { domainEvent: (type, d: Domain) => { newer.push(`${type} ${d.Status.Status}`); } });
  const n = new Notifier({ socketPath: sock, log, vmiRef: ref, intervalMs: 100, sendTimeoutMs: 1000, totalTimeoutMs: 5000 });
  try {
    await a.stop();
    assert.ok(existsSync(sock), 'the newer server\'s socket file stays');
    n.notifyDomain('MODIFIED', buildDomain({ ...ref, acpi: true, status: 'Running', reason: 'Unknown', gracePeriod: null }));
    await n.flush();
    assert.equal(newer, ['MODIFIED Running'], 'the newer server got the event');
    assert.equal(older, []);
    await b.stop();
    assert.not.ok(existsSync(sock), 'the last server\'s stop removes its own socket');
  } finally {
    n.close();
    await a.stop().catch(() => undefined);
    await b.stop().catch(() => undefined);
    dir.cleanup();
  }
});

test('a server started while the last one on its path is closing waits for that close, then listens: its socket stays', async () => {
  const dir = tempDir('qns');
  const sock = join(dir.path, 'domain-notify-pipe.sock');
  const got: string[] = [];
  const a = await NotifyServer.start(sock, { domainEvent: () => undefined });
  const closing = a.stop();
  const b = await NotifyServer.start(sock, { domainEvent: (type, d: Domain) => { got.push(`${type} ${d.Status.Status}`); } });
  await closing;
  const n = new Notifier({ socketPath: sock, log, vmiRef: ref, intervalMs: 100, sendTimeoutMs: 1000, totalTimeoutMs: 5000 });
  try {
    assert.ok(existsSync(sock), 'the new server\'s socket file is there after the old one closed');
    n.notifyDomain('MODIFIED', buildDomain({ ...ref, acpi: true, status: 'Paused', reason: 'User', gracePeriod: null }));
    await n.flush();
    assert.equal(got, ['MODIFIED Paused']);
  } finally {
    n.close();
    await b.stop();
    dir.cleanup();
  }
});

test.run();

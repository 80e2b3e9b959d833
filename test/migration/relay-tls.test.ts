// migrations.disableTLS as the node agents read it: from the migration configuration the
// controller copied into the VMI's migrationState (one value both ends read), TLS by default.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { relayTlsFor } from '../../handler/migration/relay-tls.ts';
import type { VirtualMachineInstanceMigrationState } from '../../src/api/types.ts';

const certs = { ca: 'CA', cert: 'CERT', key: 'KEY' };

test('relayTlsFor: disableTLS from the migration state; TLS unless it is true; no certificate is an error that names the field', () => {
  const ms = (disableTLS?: boolean): VirtualMachineInstanceMigrationState => ({ migrationUid: 'm1', ...(disableTLS === undefined ? {} : { migrationConfiguration: { disableTLS } }) });
  const rows: [string, VirtualMachineInstanceMigrationState | undefined, typeof certs | undefined, 'tls' | 'plain' | 'error'][] = [
    ['no configuration in the state: TLS (KubeVirt\'s default)', ms(), certs, 'tls'],
    ['disableTLS false', ms(false), certs, 'tls'],
    ['disableTLS true', ms(true), certs, 'plain'],
    ['disableTLS true, no certificate needed', ms(true), undefined, 'plain'],
    ['no migration state at all: TLS', undefined, certs, 'tls'],
    ['TLS wanted, no certificate', ms(), undefined, 'error'],
    ['disableTLS false, no certificate', ms(false), undefined, 'error'],
  ];
  for (const [what, state, agent, want] of rows) {
    const r = relayTlsFor(state, agent);
    const got = !r.ok ? 'error' : r.tls ? 'tls' : 'plain';
    assert.is(got, want, what);
    if (r.ok && r.tls) assert.is(r.tls, certs, what);
    if (!r.ok) assert.match(r.reason, 'status.migrationState.migrationConfiguration.disableTLS', what);
  }
});

test.run();

// A stand-in node agent for relay-records.test.ts, run as a child process: starts a target listener
// (socat, TLS) with its processes recorded under argv[2], forwarding to the unix socket argv[3],
// prints its ports as one JSON line, then waits to be killed.
import { join } from 'node:path';
import { componentLogger } from '../../src/log/logger.ts';
import { TargetListener } from '../../handler/migration/proxy.ts';
import { RelayRecords } from '../../handler/migration/relay-records.ts';
import { ensureMigrationTls } from '../../handler/migration/tls.ts';

const [recordsDir, forwardTo, tlsDir] = process.argv.slice(2);
if (!recordsDir || !forwardTo || !tlsDir) throw new Error('usage: relay-owner.ts RECORDS_DIR FORWARD_TO TLS_DIR');
const tls = ensureMigrationTls(tlsDir);
const l = await TargetListener.start({ address: '127.0.0.1', unixPath: forwardTo, tls, log: componentLogger('test', { level: 'silent' }), relay: 'socat', records: new RelayRecords(recordsDir) });
process.stdout.write(`${JSON.stringify({ port: l.port, multifdPort: l.multifdPort, records: join(recordsDir) })}\n`);
setInterval(() => {}, 60_000);

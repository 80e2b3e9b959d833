// Direct live migration between two launcher runtimes (real QEMU under TCG, real gRPC): the target
// QEMU listens on an address itself (SyncMigrationTarget's VMI carries the direct-migration
// annotation), the source QEMU connects to it with QEMU's own TLS (tls-creds-x509, verify-peer) on
// credentials issued for the one migration (handler/migration/direct-credentials.ts), 8 multifd
// channels, no forwarder between. A target whose certificate is not the migration's, or a source
// whose certificate is not from the CA or not this migration's (tls-authz), is refused and the guest runs on at the source; cancel and
// a killed target keep it running too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { CmdClient } from '../../src/proto/launcher-client.ts';
import { DIRECT_MIGRATION_TARGET_ANNOTATION, migrationTlsDir, type DirectMigration } from '../../src/api/migration.ts';
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { issueCertificate, type KeyPair } from '../../src/pki/x509.ts';
import { issueMigrationCredentials, migrationClientIdentity, migrationTlsHostname, removeMigrationCredentials, writeMigrationCredentials } from '../../handler/migration/direct-credentials.ts';
import { freePort } from '../../handler/migration/free-port.ts';
import { MIGRATION_TLS_CREDS_ID } from '../../launcher/migration/options.ts';
import { guestImages, hasState, processGone, testVmi, waitFor, socketsIn } from '../launcher-runtime/lib.ts';
import { guestSide, TickReader, type Side } from './lib.ts';
import { runningAccelerator } from '../../launcher/migration/accelerator.ts';

const guest = await guestImages();

const newCa = (cn: string): KeyPair => issueCertificate({ subject: { commonName: cn }, notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 3_600_000), ca: true });
const ca = newCa('qvirt-handler-ca');

function vmiFor(uid: string): VirtualMachineInstance {
  const vmi = testVmi('mig', uid, { domain: { devices: {}, memory: { guest: '256Mi' } } } as Partial<VirtualMachineInstance['spec']>);
  vmi.status = { phase: 'Running', migrationState: { migrationUid: `vmim-${uid}`, migrationConfiguration: { allowPostCopy: false } } } as VirtualMachineInstance['status'];
  return vmi;
}

interface Pair { src: Side; dst: Side; srcCmd: CmdClient; ticks: TickReader; vmi: VirtualMachineInstance; direct: DirectMigration }

/**
 * Two runtimes; the target's credentials from `targetCa` for `targetMigrationUid` (default: the
 * handlers' CA, this migration), the source's for `sourceMigrationUid`.
 */
async function withDirectPair(uid: string, certs: { targetCa?: KeyPair; targetMigrationUid?: string; sourceMigrationUid?: string }, fn: (p: Pair) => Promise<void>): Promise<void> {
  const src = await guestSide(guest, uid, 'qvirt.tick=100');
  const dst = await guestSide(guest, uid, 'qvirt.tick=100');
  const srcCmd = new CmdClient(join(src.h.shareDir, 'sockets', 'launcher-sock'), { timeoutMs: 60_000 });
  const dstCmd = new CmdClient(join(dst.h.shareDir, 'sockets', 'launcher-sock'), { timeoutMs: 60_000 });
  const ticks = new TickReader([{ side: 'source', path: src.serial }, { side: 'target', path: dst.serial }]);
  const pids: number[] = [];
  const vmi = vmiFor(uid);
  const migrationUid = vmi.status!.migrationState!.migrationUid!;
  const srcTls = migrationTlsDir(src.h.shareDir, uid);
  const dstTls = migrationTlsDir(dst.h.shareDir, uid);
  try {
    await writeMigrationCredentials(dstTls, issueMigrationCredentials({ ca: certs.targetCa ?? ca, endpoint: 'server', migrationUid: certs.targetMigrationUid ?? migrationUid, podName: 'virt-launcher-mig-target', addresses: ['127.0.0.1'] }));
    await writeMigrationCredentials(srcTls, { ...issueMigrationCredentials({ ca, endpoint: 'client', migrationUid: certs.sourceMigrationUid ?? migrationUid, podName: 'virt-launcher-mig-source' }) });
    // The credentials: 0600 in a 0700 directory.
    assert.is(statSync(dstTls).mode & 0o777, 0o700);
    assert.is(statSync(join(dstTls, 'server-key.pem')).mode & 0o777, 0o600);
    assert.is(statSync(join(srcTls, 'client-key.pem')).mode & 0o777, 0o600);
    assert.equal(existsSync(join(srcTls, 'ca-key.pem')), false, 'never the CA key');
    assert.is((await srcCmd.syncVirtualMachine(vmi)).success, true);
    pids.push(src.h.runtime.manager.qemu!.pid);
    await src.h.notify.waitDomain(hasState('Running', 'Unknown'), 20_000, 'source Running');
    await ticks.waitFor('source', 5, 90_000);
    const port = await freePort('127.0.0.1');
    const listen: DirectMigration = { Address: '127.0.0.1', Port: port, TLS: true, TLSAuthz: migrationClientIdentity(migrationUid, 'virt-launcher-mig-source') };
    const sent = { ...vmi, metadata: { ...vmi.metadata, annotations: { [DIRECT_MIGRATION_TARGET_ANNOTATION]: JSON.stringify(listen) } } };
    const r = await dstCmd.call('SyncMigrationTarget', { vmi: { vmiJson: Buffer.from(JSON.stringify(sent)) }, options: null });
    assert.is(r.success, true, r.message);
    pids.push(dst.h.runtime.manager.qemu!.pid);
    await dst.h.notify.waitDomain(hasState('Paused', 'Migration'), 20_000, 'target Paused/Migration (inmigrate)');
    await fn({ src, dst, srcCmd, ticks, vmi, direct: { Address: listen.Address, Port: port, TLS: true, TLSHostname: migrationTlsHostname(migrationUid) } });
  } finally {
    ticks.stop();
    srcCmd.close();
    dstCmd.close();
    await src.h.cleanup();
    await dst.h.cleanup();
    await removeMigrationCredentials(srcTls);
    await removeMigrationCredentials(dstTls);
  }
  for (const pid of pids) assert.ok(processGone(pid), `QEMU ${pid} is gone`);
  assert.equal(socketsIn(src.h.dir), []);
  assert.equal(socketsIn(dst.h.dir), []);
}

function migrate(cmd: CmdClient, vmi: VirtualMachineInstance, options: Record<string, unknown>) {
  return cmd.call('MigrateVirtualMachine', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: Buffer.from(JSON.stringify(options)) });
}

/** A failure the target caused (it ended the TLS session), not the source's check of the target's certificate. */
const TARGET_REFUSED = /^(?!.*(known issuer|hostname)).+$/i;

/** A direct migration that must be refused: the source's metadata Failed with a TLS reason, the guest running on there. */
async function refused({ src, srcCmd, ticks, vmi, direct }: Pair, what: RegExp): Promise<void> {
  const r = await migrate(srcCmd, vmi, { Bandwidth: '0', ParallelMigrationThreads: 8, DirectMigration: direct });
  // QEMU may refuse at `migrate` already (the main channel's handshake) or report the failure after.
  if (r.success) await src.h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.Migration?.Failed === true, 30_000, 'source metadata Failed');
  const meta = src.h.runtime.manager.migrationMetadata!;
  const reason = r.success ? meta.FailureReason : r.message;
  assert.match(reason, what, `refused: ${reason}`);
  assert.is(src.h.runtime.manager.domainState.status, 'Running');
  const n = ticks.of('source').length;
  await ticks.waitFor('source', n + 5, 20_000);
}

test('direct with QEMU TLS (8 multifd channels on KVM, one stream under TCG): the counter continues on the target, the source ends Shutoff/Migrated', async () => {
  await withDirectPair('uid-direct-ok', {}, async ({ src, dst, srcCmd, ticks, vmi, direct }) => {
    const srcPid = src.h.runtime.manager.qemu!.pid;
    const r = await migrate(srcCmd, vmi, { Bandwidth: '0', ParallelMigrationThreads: 8, DirectMigration: direct });
    assert.is(r.success, true, r.message);
    // Both QEMUs run the migration with the TLS credentials object; multifd on both ends exactly where
    // the guest runs on KVM (under TCG QEMU 7.2's multifd corrupts guests: launcher/migration/accelerator.ts).
    const srcQmp = src.h.runtime.manager.qemu!.qmp;
    const params = await srcQmp.execute('query-migrate-parameters') as Record<string, unknown>;
    assert.equal([params['tls-creds'], params['tls-hostname']], [MIGRATION_TLS_CREDS_ID, direct.TLSHostname]);
    const onKvm = await runningAccelerator(srcQmp) === 'kvm';
    const multifdOn = async (qmp: typeof srcQmp) => ((await qmp.execute('query-migrate-capabilities')) as Array<{ capability: string; state: boolean }>).find((c) => c.capability === 'multifd')?.state;
    assert.equal([await multifdOn(srcQmp), await multifdOn(dst.h.runtime.manager.qemu!.qmp)], [onKvm, onKvm], `multifd on both ends ${onKvm ? 'on KVM' : 'off under TCG'}`);
    if (onKvm) assert.is(params['multifd-channels'], 8);
    await src.h.notify.waitDomain(hasState('Shutoff', 'Migrated'), 60_000, 'source Shutoff/Migrated');
    await dst.h.notify.waitDomain((e) => e.domain.Status.Status === 'Running' && Boolean(e.domain.Spec.Metadata.KubeVirt.Migration?.EndTimestamp), 30_000, 'target Running with EndTimestamp');
    await waitFor('source QEMU exit', () => processGone(srcPid), 20_000);
    const final = src.h.runtime.migration.outgoing!.finalInfo!;
    const before = ticks.of('source');
    const after = await ticks.waitFor('target', 10, 30_000);
    assert.is(after[0]!.n, before.at(-1)!.n + 1, `the target continues the counter; the target's serial log begins: ${JSON.stringify(readFileSync(dst.serial(), 'utf8').slice(0, 600))}`);
    assert.ok(after[0]!.uptime > before.at(-1)!.uptime, 'no reboot');
    assert.not.ok(readFileSync(dst.serial(), 'utf8').includes('QVIRT-GUEST-BOOTED'), 'the target never booted the guest');
    console.log(`    direct TLS migration: total ${final['total-time']} ms, downtime ${final.downtime} ms`);
    assert.ok((final.downtime ?? 0) > 0 && (final['total-time'] ?? 0) > 0);
  });
});

test('a target whose certificate is from another CA is refused; the guest runs on at the source', async () => {
  await withDirectPair('uid-direct-badca', { targetCa: newCa('intruder-ca') }, (p) => refused(p, /certificate|TLS|verif/i));
});

test('a target whose certificate names another migration is refused (tls-hostname)', async () => {
  await withDirectPair('uid-direct-badhost', { targetMigrationUid: 'vmim-another' }, (p) => refused(p, /certificate|hostname|TLS/i));
});

test('a client whose certificate is from another CA is refused by the target (verify-peer)', async () => {
  // A QEMU does not even load a certificate its CA did not sign: the intruder is a plain TLS client.
  await withDirectPair('uid-direct-badclient', {}, async ({ dst, direct }) => {
    const intruder = issueMigrationCredentials({ ca: newCa('intruder-ca'), endpoint: 'client', migrationUid: 'vmim-uid-direct-badclient', podName: 'virt-launcher-mig-source' });
    const outcome = await new Promise<string>((resolve) => {
      const s = tlsConnect({ host: direct.Address, port: direct.Port, ca: ca.certPem, cert: intruder['client-cert.pem'], key: intruder['client-key.pem'], servername: direct.TLSHostname });
      let got = '';
      s.on('secureConnect', () => s.write(Buffer.from('QEVM\0\0\0\x03')));
      s.on('data', (d: Buffer) => { got += d.toString('latin1'); });
      s.on('error', (e) => resolve(`error: ${e.message}`));
      s.on('close', () => resolve(`closed${got ? ` after ${got.length} bytes` : ''}`));
      setTimeout(() => { s.destroy(); resolve('still open'); }, 10_000).unref();
    });
    assert.match(outcome, /^(error|closed$)/, `the target refused the intruder: ${outcome}`);
    assert.is(dst.h.runtime.manager.domainState.status, 'Paused');
    assert.not.ok(readFileSync(dst.serial(), 'utf8').includes('QVIRT-TICK'), 'the guest never ran on the target');
  });
});

test('a source whose certificate is from the CA but for another migration is refused by the target (tls-authz)', async () => {
  await withDirectPair('uid-direct-otherclient', { sourceMigrationUid: 'vmim-another' }, async (p) => {
    await refused(p, TARGET_REFUSED);
    assert.is(p.dst.h.runtime.manager.domainState.status, 'Paused');
  });
});

test('direct: cancel in flight keeps the guest at the source, abortStatus Succeeded', async () => {
  await withDirectPair('uid-direct-cancel', {}, async ({ src, dst, srcCmd, ticks, vmi, direct }) => {
    const dstPid = dst.h.runtime.manager.qemu!.pid;
    const r = await migrate(srcCmd, vmi, { Bandwidth: '1Mi', ParallelMigrationThreads: 8, DirectMigration: direct });
    assert.is(r.success, true, r.message);
    await new Promise((res) => setTimeout(res, 1500));
    const c = await srcCmd.call('CancelVirtualMachineMigration', { vmi: { vmiJson: Buffer.from(JSON.stringify(vmi)) }, options: null });
    assert.is(c.success, true, c.message);
    const meta = src.h.runtime.manager.migrationMetadata!;
    assert.equal([meta.Failed, meta.AbortStatus], [true, 'Succeeded']);
    assert.is(src.h.runtime.manager.domainState.status, 'Running');
    await waitFor('target QEMU exit', () => processGone(dstPid), 20_000);
    const n = ticks.of('source').length;
    await ticks.waitFor('source', n + 5, 20_000);
  });
});

test('direct: a target killed mid-migration fails the migration, the guest runs on at the source', async () => {
  await withDirectPair('uid-direct-kill', {}, async ({ src, dst, srcCmd, ticks, vmi, direct }) => {
    const r = await migrate(srcCmd, vmi, { Bandwidth: '1Mi', ParallelMigrationThreads: 8, DirectMigration: direct });
    assert.is(r.success, true, r.message);
    await new Promise((res) => setTimeout(res, 1500));
    dst.h.runtime.manager.qemu!.signal('SIGKILL');
    await src.h.notify.waitDomain((e) => e.domain.Spec.Metadata.KubeVirt.Migration?.Failed === true, 30_000, 'source metadata Failed');
    assert.is(src.h.runtime.manager.domainState.status, 'Running');
    const n = ticks.of('source').length;
    await ticks.waitFor('source', n + 5, 20_000);
  });
});

test.run();

// A directory's CA and certificates (src/pki/cert-files.ts): made on first use with the modes a
// private key wants, reused afterwards, made anew when they no longer fit (a host is missing, the
// CA was made again, expired), and refused without a CA to sign them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CERT_FILES_LIFETIME_DAYS, certificateFits, ensureCaFiles, ensureCertFiles } from '../../src/pki/cert-files.ts';
import { tempDir } from '../lib/tmp.ts';

const tmp = tempDir('qpkif');
test.after(() => tmp.cleanup());

const mode = (p: string) => statSync(p).mode & 0o777;
const serving = { usages: ['serverAuth'], hosts: ['127.0.0.1', 'localhost'] } as const;

test('made on first use: files, modes, ten years; the same files the second time', () => {
  const dir = join(tmp.path, 'a', 'pki');
  const ca = ensureCaFiles(dir, 'qvirt-handler-ca');
  const leaf = ensureCertFiles(dir, 'handler', { commonName: 'qvirt-handler' }, serving);
  assert.is(mode(dir), 0o700);
  assert.is(mode(join(dir, 'ca.key')), 0o600);
  assert.is(mode(join(dir, 'handler.key')), 0o600);
  assert.is(mode(join(dir, 'ca.crt')), 0o644);
  assert.is(mode(join(dir, 'handler.crt')), 0o644);
  assert.is(readFileSync(join(dir, 'handler.crt'), 'utf8'), leaf.certPem);
  const c = new X509Certificate(leaf.certPem);
  assert.is(c.subject, 'CN=qvirt-handler');
  assert.is(c.issuer, 'CN=qvirt-handler-ca');
  assert.is(Math.round((Date.parse(c.validTo) - Date.parse(c.validFrom)) / 864e5), CERT_FILES_LIFETIME_DAYS);
  assert.equal(ensureCaFiles(dir, 'qvirt-handler-ca'), ca);
  assert.equal(ensureCertFiles(dir, 'handler', { commonName: 'qvirt-handler' }, serving), leaf);
});

test('made anew when it no longer fits: a new host, a new CA, expired — by the CA of the directory', () => {
  const dir = join(tmp.path, 'b');
  let ca = ensureCaFiles(dir, 'ca');
  const first = ensureCertFiles(dir, 'tls', { commonName: 'tls' }, serving);
  const moved = ensureCertFiles(dir, 'tls', { commonName: 'tls' }, { ...serving, hosts: [...serving.hosts, '10.0.0.7'] });
  assert.is.not(moved.certPem, first.certPem, 'a host it does not name');
  assert.ok(new X509Certificate(moved.certPem).checkIP('10.0.0.7'));
  assert.equal(ensureCertFiles(dir, 'tls', { commonName: 'tls' }, serving), moved, 'fewer hosts than it names: kept');
  rmSync(join(dir, 'ca.key'));
  ca = ensureCaFiles(dir, 'ca');
  const resigned = ensureCertFiles(dir, 'tls', { commonName: 'tls' }, serving);
  assert.is.not(resigned.certPem, moved.certPem, 'the CA was made again');
  assert.ok(new X509Certificate(resigned.certPem).verify(new X509Certificate(ca.certPem).publicKey));
  const later = new Date(Date.now() + (CERT_FILES_LIFETIME_DAYS + 1) * 864e5);
  assert.not.ok(certificateFits(resigned, ca, [], later), 'expired');
  assert.ok(certificateFits(resigned, ca, serving.hosts, new Date()));
  assert.not.ok(certificateFits({ ...resigned, certPem: 'junk' }, ca, [], new Date()), 'unreadable');
});

test('no CA in the directory: refused, naming the directory', () => {
  const dir = join(tmp.path, 'c');
  assert.throws(() => ensureCertFiles(dir, 'tls', { commonName: 'tls' }, serving), (e: Error) => e.message.includes(`no CA in ${dir} to sign tls.crt`));
});

test.run();

// The .proto descriptors the build writes beside the launcher bundle (src/proto/descriptor.ts): loading
// one gives the same services and messages as parsing the .proto, and a descriptor beside a .proto is
// what is loaded.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { descriptorFileName, loadProtoRoot, parseProto, protoDescriptorJson } from '../../src/proto/descriptor.ts';
import { tempDir } from '../lib/tmp.ts';

const srcDir = new URL('../../src/proto/', import.meta.url).pathname;
const protos = readdirSync(srcDir).filter((f) => f.endsWith('.proto'));

test('every .proto: its descriptor loads to the same Root as parsing it, and encodes the same bytes', () => {
  assert.ok(protos.length >= 5, protos.join(' '));
  const work = tempDir('qpd');
  try {
    for (const f of protos) {
      copyFileSync(join(srcDir, f), join(work.path, f));
      writeFileSync(join(work.path, descriptorFileName(f)), protoDescriptorJson(srcDir, f));
      const parsed = parseProto(srcDir, f);
      parsed.resolveAll();
      const loaded = loadProtoRoot(work.path, f);
      assert.equal(loaded.toJSON(), parsed.toJSON(), f);
    }
    // A message with both cases of field names round-trips through the descriptor's types.
    const req = loadProtoRoot(work.path, 'cmd.proto').lookupType('kubevirt.cmd.v1.VMIRequest');
    const msg = { vmi: { vmiJson: Buffer.from('{"a":1}') }, options: null };
    const bytes = req.encode(req.fromObject(msg)).finish();
    const viaParse = parseProto(srcDir, 'cmd.proto').lookupType('kubevirt.cmd.v1.VMIRequest');
    assert.equal(Buffer.from(bytes), Buffer.from(viaParse.encode(viaParse.fromObject(msg)).finish()));
    assert.equal((req.toObject(req.decode(bytes)) as { vmi: { vmiJson: Buffer } }).vmi.vmiJson.toString(), '{"a":1}');
  } finally {
    work.cleanup();
  }
});

test('a descriptor beside a .proto is what is loaded; without one the .proto is parsed', () => {
  const work = tempDir('qpd');
  try {
    copyFileSync(join(srcDir, 'cmd.proto'), join(work.path, 'cmd.proto'));
    assert.ok(loadProtoRoot(work.path, 'cmd.proto').lookup('kubevirt.cmd.v1.Cmd'), 'parsed');
    // The descriptor wins: here it is notify.proto's, so cmd.proto's service is not there.
    writeFileSync(join(work.path, descriptorFileName('cmd.proto')), protoDescriptorJson(srcDir, 'notify.proto'));
    const root = loadProtoRoot(work.path, 'cmd.proto');
    assert.is(root.lookup('kubevirt.cmd.v1.Cmd'), null);
    assert.ok(root.lookup('kubevirt.notify.v1.Notify'));
  } finally {
    work.cleanup();
  }
});

test.run();

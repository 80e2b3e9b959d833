// The .proto descriptors the build writes beside the launcher bundle (src/proto/descriptor.ts): loading
// one gives the same services and messages as parsing the .proto, and a descriptor beside a .proto is
// what is loaded. (That the codec built on a descriptor encodes and decodes as protobufjs does:
// test/proto/codec.test.ts.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescriptorSet } from '../../src/proto/codec.ts';
import { descriptorFileName, loadProtoDescriptor, parseProto, protoDescriptorJson } from '../../src/proto/descriptor.ts';
import { tempDir } from '../lib/tmp.ts';

const srcDir = new URL('../../src/proto/', import.meta.url).pathname;
const protos = readdirSync(srcDir).filter((f) => f.endsWith('.proto'));

test('every .proto: its descriptor loads to the same descriptor as parsing it, and encodes the same bytes', () => {
  assert.ok(protos.length >= 5, protos.join(' '));
  const work = tempDir('qpd');
  try {
    for (const f of protos) {
      copyFileSync(join(srcDir, f), join(work.path, f));
      writeFileSync(join(work.path, descriptorFileName(f)), protoDescriptorJson(srcDir, f));
      const parsed = parseProto(srcDir, f);
      parsed.resolveAll();
      const loaded = loadProtoDescriptor(work.path, f);
      assert.equal(loaded, JSON.parse(JSON.stringify(parsed.toJSON())), f);
    }
    // A message with both cases of field names round-trips through the descriptor's types.
    const req = new DescriptorSet(loadProtoDescriptor(work.path, 'cmd.proto')).messages.get('kubevirt.cmd.v1.VMIRequest')!;
    const msg = { vmi: { vmiJson: Buffer.from('{"a":1}') }, options: null };
    const bytes = req.encode(msg);
    const viaParse = parseProto(srcDir, 'cmd.proto').lookupType('kubevirt.cmd.v1.VMIRequest');
    assert.equal(Buffer.from(bytes), Buffer.from(viaParse.encode(viaParse.fromObject(msg)).finish()));
    assert.equal((req.decode(bytes) as { vmi: { vmiJson: Buffer } }).vmi.vmiJson.toString(), '{"a":1}');
  } finally {
    work.cleanup();
  }
});

test('a descriptor beside a .proto is what is loaded; without one the .proto is parsed', () => {
  const work = tempDir('qpd');
  try {
    copyFileSync(join(srcDir, 'cmd.proto'), join(work.path, 'cmd.proto'));
    assert.ok(new DescriptorSet(loadProtoDescriptor(work.path, 'cmd.proto')).services.get('kubevirt.cmd.v1.Cmd'), 'parsed');
    // The descriptor wins: here it is notify.proto's, so cmd.proto's service is not there.
    writeFileSync(join(work.path, descriptorFileName('cmd.proto')), protoDescriptorJson(srcDir, 'notify.proto'));
    const set = new DescriptorSet(loadProtoDescriptor(work.path, 'cmd.proto'));
    assert.is(set.services.get('kubevirt.cmd.v1.Cmd'), undefined);
    assert.ok(set.services.get('kubevirt.notify.v1.Notify'));
  } finally {
    work.cleanup();
  }
});

test.run();

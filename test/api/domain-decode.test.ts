// The domain contract between launcher and node agent (src/api/domain): what the launcher builds
// decodes to itself; absent fields take Go's zero values; a field of the wrong type or a lifecycle
// string KubeVirt does not have is refused with an error naming the field.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeDomain, DomainDecodeError } from '../../src/api/domain/decode.ts';
import { buildDomain, gracePeriodMetadata } from '../../launcher/domain/domain.ts';
import { hotplugDomainSpec } from '../../launcher/supervise/hotplug.ts';

test('what the launcher builds decodes to the same object', () => {
  const d = buildDomain({
    namespace: 'ns', name: 'v', uid: 'u', uuid: 'uu', hypervisor: 'qemu', memoryBytes: 2 ** 30, acpi: true, status: 'Running', reason: 'Unknown',
    gracePeriod: gracePeriodMetadata(30), creationTimestamp: '2026-01-01T00:00:00Z',
    migration: { UID: 'm', StartTimestamp: 't0', EndTimestamp: null, Failed: false, FailureReason: '', AbortStatus: '', Mode: 'PreCopy' },
    memoryDump: { FileName: 'f', StartTimestamp: 't', EndTimestamp: null, Completed: false, Failed: false, FailureReason: '' },
    accessCredential: { Succeeded: true, Message: '' },
    interfaces: [{ Mac: '02:00:00:00:00:01', Ip: '10.0.2.15', IPs: ['10.0.2.15'], InterfaceName: 'eth0' }],
    fsFreezeStatus: 'frozen', panicInfo: { Type: 'hyper-v', Arg1: 1, Arg2: 2, Arg3: 3, Arg4: 4, Arg5: 5 }, panicCount: 1,
    specExtras: hotplugDomainSpec({
      disks: [{ name: 'hp', qemuId: 'ua-hp', kind: 'disk', target: 'sda', bus: 'scsi', source: '/x', hotplugged: true }],
      interfaces: [{ name: 'n', qemuId: 'ua-n', mac: '02:00:00:00:00:02' }],
      detaching: [{ alias: 'hp', qemuId: 'ua-hp', kind: 'disk', since: 't', reason: 'why' }],
      refused: ['no'], vcpus: { current: 1, max: 2 }, memory: { guestBytes: 2 ** 30, maxBytes: 2 ** 31, requestedBytes: 0 },
    }),
  });
  const wire = JSON.parse(JSON.stringify(d));
  assert.equal(decodeDomain(JSON.stringify(d)), wire);
  assert.equal(decodeDomain(Buffer.from(JSON.stringify(d))), wire);
});

test('absent fields take their zero values; an absent reason is api.ReasonUnknown', () => {
  const d = decodeDomain('{"Status":{"Status":"Shutoff"}}');
  assert.equal(d.Status.Reason, 'Unknown');
  assert.equal(d.Spec.Metadata.KubeVirt, { UID: '', GracePeriod: null, Migration: null, Backup: null, AccessCredential: null, MemoryDump: null });
  assert.is(d.Spec.Features, null);
  assert.equal(d.Status.Interfaces, null);
  assert.is(d.Status.PanicCount, 0);
  assert.equal(d.ObjectMeta, { name: '', namespace: '', creationTimestamp: null });
});

test('a field of the wrong type or an unknown lifecycle string is refused, naming the field', () => {
  const bad: Array<[string, RegExp]> = [
    ['not json', /does not parse/],
    ['[]', /is not an object/],
    ['{"Spec":{}}', /Status\.Status is missing/],
    ['{"Status":{"Status":"Sleeping"}}', /Status\.Status: want one of .*got "Sleeping"/],
    ['{"Status":{"Status":"Running","Reason":"Bored"}}', /Status\.Reason: want one of .*got "Bored"/],
    ['{"Status":{"Status":"Running","PanicCount":"1"}}', /Status\.PanicCount: want a number, got "1"/],
    ['{"Status":{"Status":"Running"},"Spec":{"Metadata":{"KubeVirt":{"GracePeriod":{"MarkedForGracefulShutdown":"yes"}}}}}', /Spec\.Metadata\.KubeVirt\.GracePeriod\.MarkedForGracefulShutdown: want a boolean/],
    ['{"Status":{"Status":"Running"},"Spec":{"Devices":{"Disks":[{"Alias":"x"}]}}}', /Spec\.Devices\.Disks\[0\]\.Alias: want an object/],
    ['{"Status":{"Status":"Running","Interfaces":[{"IPs":[1]}]}}', /Status\.Interfaces\[0\]\.IPs\[0\]: want a string/],
    ['{"ObjectMeta":{"name":3},"Status":{"Status":"Running"}}', /ObjectMeta\.name: want a string/],
  ];
  for (const [json, re] of bad) assert.throws(() => decodeDomain(json), (e: unknown) => e instanceof DomainDecodeError && re.test((e as Error).message), json);
});

test.run();

// kubevirt_vmi_guest_os_panic_total (handler/metrics/guest-panic.ts): one per new panic a domain
// reports, by type and bugcheck code, never the old ones again; and the domain's panic fields as the
// node agent decodes them (src/api/domain/decode.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GuestPanicCounter } from '../../handler/metrics/guest-panic.ts';
import { decodeDomain } from '../../src/api/domain/decode.ts';
import { Registry } from '../../src/metrics/registry.ts';
import { formatExposition } from '../../src/metrics/exposition.ts';

const dom = (uid: string, count: number, type = 'unknown', arg1 = 0) => decodeDomain({
  ObjectMeta: { name: `vm-${uid}`, namespace: 'ns' }, Spec: { Metadata: { KubeVirt: { UID: uid } } },
  Status: { Status: 'Crashed', Reason: 'Panicked', PanicCount: count, GuestPanicInfo: count ? { Type: type, Arg1: arg1 } : null },
});

test('one increment per new panic, by type and bugcheck code; a report seen again counts nothing', async () => {
  const r = new Registry();
  const c = new GuestPanicCounter(r);
  c.observe(dom('a', 0));
  c.observe(dom('a', 1));
  c.observe(dom('a', 1));
  c.observe(dom('b', 1, 'hyper-v', 0x7e));
  c.observe(dom('b', 3, 'hyper-v', 0x7e));
  c.observe(undefined);
  const text = formatExposition(await r.gather());
  assert.match(text, /^kubevirt_vmi_guest_os_panic_total\{namespace="ns",name="vm-a",type="unknown",bugcheck_code="unknown"\} 1$/m);
  assert.match(text, /^kubevirt_vmi_guest_os_panic_total\{namespace="ns",name="vm-b",type="hyper-v",bugcheck_code="0x7e"\} 2$/m);
  c.forget('a');
  c.observe(dom('a', 1));
  assert.match(formatExposition(await r.gather()), /name="vm-a",type="unknown",bugcheck_code="unknown"\} 2$/m);
});

test('decodeDomain: Status.PanicCount and GuestPanicInfo', () => {
  const d = (status: Record<string, unknown>) => decodeDomain(JSON.stringify({ ObjectMeta: { name: 'v', namespace: 'ns' }, Spec: {}, Status: { Status: 'Crashed', Reason: 'Panicked', ...status } })).Status;
  const panicked = d({ PanicCount: 1, GuestPanicInfo: { Type: 'hyper-v', Arg1: 126 } });
  assert.equal([panicked.PanicCount, panicked.GuestPanicInfo?.Type, panicked.GuestPanicInfo?.Arg1], [1, 'hyper-v', 126]);
  assert.equal([d({ PanicCount: 0, GuestPanicInfo: null }).PanicCount, d({ PanicCount: 0, GuestPanicInfo: null }).GuestPanicInfo], [0, null]);
  assert.equal([d({}).PanicCount, d({}).GuestPanicInfo], [0, null]);
});

test.run();

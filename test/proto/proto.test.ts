// The launcher protocols over a real unix socket with grpc-js: every service loads from its
// .proto at runtime, typed clients reach typed handlers, and the wire uses KubeVirt's field numbers
// (checked with hand-encoded protobuf bytes).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { grpc, addUnaryService, listenUnix, shutdownServer, unixAddress } from '../../src/proto/grpc.ts';
import { cmdService, type CmdHandlers, type CmdMethodName, type Response } from '../../src/proto/cmd.ts';
import { CmdClient, QmpPassthroughClient, negotiateCmdVersion } from '../../src/proto/launcher-client.ts';
import { cmdInfoService, cmdInfoHandlers, notifyInfoService, notifyInfoHandlers, negotiateNotifyVersion, highestCompatibleVersion } from '../../src/proto/info.ts';
import { NotifyClient, notifyService, type NotifyHandlers } from '../../src/proto/notify.ts';
import { qmpPassthroughService, type QmpPassthroughMethods } from '../../src/proto/qmp.ts';
import { tempDir } from '../lib/tmp.ts';

const seen: { method: string; request: unknown }[] = [];

function cmdHandlers(): CmdHandlers {
  const ok = (m: string) => async (request: unknown): Promise<Response> => { seen.push({ method: m, request }); return { success: true, message: m }; };
  const names = Object.keys(cmdService().methods) as CmdMethodName[];
  const h: Record<string, unknown> = {};
  for (const n of names) h[n] = ok(n);
  h.GetDomain = async () => ({ response: { success: true, message: '' }, domain: '{"Status":{"Status":"Running"}}' });
  h.Exec = async (request: unknown) => { seen.push({ method: 'Exec', request }); return { response: { success: true, message: '' }, exitCode: 3, stdOut: 'out' }; };
  h.GetDomainDirtyRateStats = async () => ({ response: { success: true, message: '' }, dirtyRateMbs: 2 ** 40 });
  return h as CmdHandlers;
}

async function withServer(fn: (sock: string, server: grpc.Server) => Promise<void>) {
  const dir = tempDir('qvp');
  const sock = join(dir.path, 'launcher-sock');
  const server = new grpc.Server();
  addUnaryService(server, cmdService(), cmdHandlers());
  addUnaryService(server, cmdInfoService(), cmdInfoHandlers);
  addUnaryService(server, notifyInfoService(), notifyInfoHandlers);
  const notifyHandlers: NotifyHandlers = {
    HandleDomainEvent: async (req) => ({ success: true, message: `${req.eventType}:${req.domainJSON.toString()}:${req.statusJSON.length}` }),
    HandleK8sEvent: async (req) => ({ success: true, message: JSON.parse(req.eventJSON.toString()).reason }),
  };
  addUnaryService(server, notifyService(), notifyHandlers);
  addUnaryService<QmpPassthroughMethods>(server, qmpPassthroughService(), {
    Execute: async (req) => ({ success: !req.unsafe, message: `${req.caller}`, returnJson: req.argumentsJson, errorClass: '', refused: req.unsafe }),
  });
  await listenUnix(server, sock);
  try {
    await fn(sock, server);
  } finally {
    await shutdownServer(server);
    dir.cleanup();
  }
}

test('Cmd: typed client reaches typed handlers for every RPC shape', async () => {
  await withServer(async (sock) => {
    const c = new CmdClient(sock);
    try {
      const vmi = { metadata: { name: 'vm1', namespace: 'ns', uid: 'u1' } };
      const r = await c.syncVirtualMachine(vmi, { MemBalloonStatsPeriod: 10, DisksInfo: { disk0: { format: 'qcow2', virtualSize: 1 << 30 } }, interfaceDomainAttachment: { default: 'tap' }, clusterConfig: { SerialConsoleLogDisabled: true } });
      assert.equal(r, { success: true, message: 'SyncVirtualMachine' });
      const req = seen.at(-1)!.request as { vmi: { vmiJson: Buffer }; options: { MemBalloonStatsPeriod: number; DisksInfo: Record<string, { format: string; virtualSize: number; backingFile: string }>; interfaceDomainAttachment: Record<string, string>; clusterConfig: { SerialConsoleLogDisabled: boolean; ExpandDisksEnabled: boolean } } };
      assert.equal(JSON.parse(req.vmi.vmiJson.toString()), vmi);
      assert.is(req.options.MemBalloonStatsPeriod, 10);
      assert.equal(req.options.DisksInfo.disk0, { format: 'qcow2', backingFile: '', actualSize: 0, virtualSize: 1 << 30 });
      assert.equal(req.options.interfaceDomainAttachment, { default: 'tap' });
      assert.is(req.options.clusterConfig.SerialConsoleLogDisabled, true);
      assert.is(req.options.clusterConfig.ExpandDisksEnabled, false);

      for (const m of ['pauseVirtualMachine', 'unpauseVirtualMachine', 'shutdownVirtualMachine', 'killVirtualMachine', 'deleteVirtualMachine', 'resetVirtualMachine', 'softRebootVirtualMachine', 'unfreezeVirtualMachine'] as const) {
        assert.is((await c[m](vmi)).success, true, m);
      }
      assert.is((await c.freezeVirtualMachine(vmi, 30)).message, 'FreezeVirtualMachine');
      assert.is((seen.at(-1)!.request as { unfreezeTimeoutSeconds: number }).unfreezeTimeoutSeconds, 30);
      const d = await c.getDomain();
      assert.is(d.response?.success, true);
      assert.is(JSON.parse(d.domain).Status.Status, 'Running');
      const e = await c.exec('ns_vm1', '/bin/echo', ['a', 'b'], 7);
      assert.equal([e.exitCode, e.stdOut], [3, 'out']);
      assert.equal(seen.at(-1)!.request, { domainName: 'ns_vm1', Command: '/bin/echo', Args: ['a', 'b'], timeoutSeconds: 7 });
      const dr = await c.call('GetDomainDirtyRateStats', {});
      assert.is(dr.dirtyRateMbs, 2 ** 40, 'int64 survives as a number');
      assert.is((await c.ping()).success, true);
    } finally {
      c.close();
    }
  });
});

test('Cmd: wire field numbers are KubeVirt\'s (hand-encoded ExecRequest)', async () => {
  await withServer(async (sock) => {
    // ExecRequest{domainName(1)="d", Command(2)="ls", Args(3)=["-l","x"], timeoutSeconds(4)=5}
    const str = (field: number, s: string) => Buffer.concat([Buffer.from([(field << 3) | 2, s.length]), Buffer.from(s)]);
    const bytes = Buffer.concat([str(1, 'd'), str(2, 'ls'), str(3, '-l'), str(3, 'x'), Buffer.from([(4 << 3) | 0, 5])]);
    const client = new grpc.Client(unixAddress(sock), grpc.credentials.createInsecure());
    try {
      const raw = await new Promise<Buffer>((resolve, reject) => {
        client.makeUnaryRequest('/kubevirt.cmd.v1.Cmd/Exec', (b: Buffer) => b, (b: Buffer) => b, bytes, (err, res) => (err ? reject(err) : resolve(res!)));
      });
      assert.equal(seen.at(-1)!.request, { domainName: 'd', Command: 'ls', Args: ['-l', 'x'], timeoutSeconds: 5 });
      // ExecResponse{response(1){success(1)=true}, exitCode(2)=3, stdOut(3)="out"}
      // (protobufjs also writes the empty message string; decoders treat that as the default)
      assert.is(raw[0], 0x0a);
      assert.equal([...raw.subarray(2, 4)], [0x08, 0x01]);
      assert.ok(raw.subarray(2 + raw[1]!).equals(Buffer.from([0x10, 0x03, 0x1a, 0x03, ...Buffer.from('out')])));
    } finally {
      client.close();
    }
  });
});

test('Info: version negotiation answers [1] on both protocols', async () => {
  await withServer(async (sock) => {
    assert.is(await negotiateCmdVersion(sock), 1);
    assert.is(await negotiateNotifyVersion(sock), 1);
  });
  assert.is(highestCompatibleVersion([1, 2, 3], [1, 2]), 2);
  assert.throws(() => highestCompatibleVersion([2], [1]), /no compatible protocol version/);
});

test('Notify and QmpPassthrough: typed round trip', async () => {
  await withServer(async (sock) => {
    const n = new NotifyClient(sock);
    const q = new QmpPassthroughClient(sock);
    try {
      const r = await n.handleDomainEvent('MODIFIED', '{"x":1}');
      assert.equal(r, { success: true, message: 'MODIFIED:{"x":1}:0' });
      const k = await n.handleK8sEvent({ involvedObject: { kind: 'VirtualMachineInstance', apiVersion: 'kubevirt.io/v1', namespace: 'ns', name: 'n', uid: 'u' }, type: 'Warning', reason: 'IOerror', message: 'm' });
      assert.is(k.message, 'IOerror');
      const e = await q.execute('query-status', { a: 1 }, { caller: 'me', unsafe: true });
      assert.equal(e, { success: false, message: 'me', returnJson: '{"a":1}', errorClass: '', refused: true });
    } finally {
      n.close();
      q.close();
    }
  });
});

test('server shutdown leaves no socket file; a stale socket file is replaced', async () => {
  let path = '';
  await withServer(async (sock) => { path = sock; });
  assert.is(existsSync(path), false);
});

test.run();

// The client of the streaming subresources: the URL it dials, what it tells the user when the API
// server refuses the upgrade (a Status before the 101), and — against a real websocket server (ws)
// over TLS (a CA from src/pki) behind a real kubeconfig with the CA, a bearer token and a path
// prefix — the upgrade it asks for, bytes both ways as a Duplex, datagrams as messages, and
// refusals read from the server's Status.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { UserError } from '../../src/kube/user-error.ts';
import { issueCertificate, type KeyPair } from '../../src/pki/x509.ts';
import { connect } from '../../src/cli/kube-context.ts';
import { openDatagramChannel, openSubresourceStream, streamRefusal, subresourceStreamUrl, type StreamTarget } from '../../src/cli/subresource-stream.ts';
import { tempDir } from '../lib/tmp.ts';
import { within } from '../lib/within.ts';

const pf: StreamTarget = { resource: 'virtualmachineinstances', namespace: 'ns1', name: 'vm1', subresource: 'portforward/22/tcp' };

test('the URL: wss for https, ws for http, the server\'s path prefix kept', () => {
  assert.is(subresourceStreamUrl(new URL('https://api.example:6443'), pf).href, 'wss://api.example:6443/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vm1/portforward/22/tcp');
  assert.is(subresourceStreamUrl(new URL('http://127.0.0.1:8001/proxy/'), { ...pf, resource: 'virtualmachines', subresource: 'console' }).href, 'ws://127.0.0.1:8001/proxy/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachines/vm1/console');
  assert.throws(() => subresourceStreamUrl(new URL('ftp://x'), pf), /neither https:\/\/ nor http:\/\//);
});

const status = (code: number, reason: string, message: string, details?: object) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code, ...(details ? { details } : {}) });
const S = 'https://api:6443';
const refusals: Array<[string, StreamTarget, number, string, RegExp]> = [
  ['a missing VMI (virt-api\'s NotFound)', pf, 404, status(404, 'NotFound', 'virtualmachineinstance.kubevirt.io "vm1" not found', { name: 'vm1', kind: 'virtualmachineinstance' }), /^VirtualMachineInstance "vm1" not found in namespace "ns1"$/],
  ['the group not served', pf, 404, status(404, 'NotFound', 'the server could not find the requested resource'), /^the API server at https:\/\/api:6443 does not serve subresources\.kubevirt\.io .*qvirt install/],
  ['RBAC', pf, 403, status(403, 'Forbidden', 'User "bob" cannot get resource "virtualmachineinstances/portforward"'), /^forbidden: User "bob" cannot get .*; opening the portforward needs "get" on virtualmachineinstances\/portforward in API group "subresources\.kubevirt\.io" in namespace "ns1"$/],
  ['credentials', pf, 401, status(401, 'Unauthorized', 'Unauthorized'), /did not accept your credentials \(Unauthorized\): Unauthorized; check the user in your kubeconfig$/],
  ['a VM not started', { ...pf, resource: 'virtualmachines' }, 409, status(409, 'Conflict', 'Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm1": VMI is not started'), /^cannot open the portforward\/22\/tcp of VirtualMachine "vm1" in namespace "ns1": Operation cannot .*VMI is not started; start it with 'qvirt start vm1'$/],
  ['a paused VMI', pf, 409, status(409, 'Conflict', 'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "vm1": VMI is paused'), /; unpause it with 'qvirt unpause vmi vm1'$/],
  ['a VMI not running', pf, 409, status(409, 'Conflict', 'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "vm1": VMI is not running'), /; wait until it is Running \(kubectl get vmi vm1 -n ns1 -w\)$/],
  ['nothing listens in the guest', pf, 500, status(500, 'InternalError', 'Internal error occurred: dial 10.0.0.1:22: connect: connection refused'), /^cannot open the portforward\/22\/tcp of VirtualMachineInstance "vm1" in namespace "ns1": Internal error occurred: dial .*; is a server listening on port 22 in the guest\?$/],
  ['the aggregated API down', pf, 503, status(503, 'ServiceUnavailable', 'service unavailable'), /cannot reach the subresources\.kubevirt\.io API \(service unavailable\); is qvirt's virt-api running\?/],
  ['a plain-text answer', pf, 502, 'Bad Gateway\n', /^cannot open the portforward\/22\/tcp of VirtualMachineInstance "vm1" in namespace "ns1": Bad Gateway$/],
  ['no body', pf, 400, '', /: HTTP 400$/],
];
for (const [what, t, code, body, re] of refusals) test(`refusal: ${what}`, () => assert.match(streamRefusal(t, code, body.startsWith('{') ? 'application/json' : 'text/plain', body, S), re));

/** A websocket server standing in for the API server's subresource routes. */
async function fakeApiServer(ca: KeyPair): Promise<{ port: number; seen: Array<{ url: string; auth: string; protocol: string }>; close(): Promise<void> }> {
  const seen: Array<{ url: string; auth: string; protocol: string }> = [];
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has('plain.kubevirt.io') ? 'plain.kubevirt.io' : false) });
  const now = Date.now();
  const tls = issueCertificate({ subject: { commonName: 'api' }, notBefore: new Date(now - 60_000), notAfter: new Date(now + 3_600_000), usages: ['serverAuth'], hosts: ['127.0.0.1'] }, ca);
  const server = https.createServer({ key: tls.keyPem, cert: tls.certPem }, (_req, res) => { res.writeHead(405); res.end(); });
  server.on('upgrade', (req, socket, head) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization ?? '', protocol: String(req.headers['sec-websocket-protocol'] ?? '') });
    const refuse = (code: number, body: string) => socket.end(`HTTP/1.1 ${code} ${http.STATUS_CODES[code]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    if (req.headers.authorization !== 'Bearer t0k3n') return refuse(401, status(401, 'Unauthorized', 'Unauthorized'));
    if ((req.url ?? '').includes('/vmi-missing/')) return refuse(404, status(404, 'NotFound', 'virtualmachineinstance.kubevirt.io "vmi-missing" not found', { name: 'vmi-missing', kind: 'virtualmachineinstance' }));
    wss.handleUpgrade(req, socket, head, (ws) => {
      // An echo: TCP bytes back as they came, a UDP datagram back reversed (one message each).
      ws.on('message', (data, isBinary) => {
        const b = Buffer.from(data as Buffer);
        ws.send((req.url ?? '').endsWith('/udp') ? Buffer.from(b).reverse() : b, { binary: isBinary });
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as { port: number }).port,
    seen,
    close: async () => { for (const c of wss.clients) c.terminate(); wss.close(); server.closeAllConnections(); await new Promise((r) => server.close(() => r(undefined))); },
  };
}

test('against a websocket server: the kubeconfig\'s token, bytes and datagrams both ways, a Status refusal', async () => {
  const now = Date.now();
  const ca = issueCertificate({ subject: { commonName: 'test-ca' }, notBefore: new Date(now - 60_000), notAfter: new Date(now + 3_600_000), ca: true });
  const api = await fakeApiServer(ca);
  const t = tempDir('qss');
  const kc = join(t.path, 'kubeconfig');
  const write = (token: string, caPem = ca.certPem) => writeFileSync(kc, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${api.port}/prefix`, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u', namespace: 'ns1' } }],
  }));
  try {
    write('t0k3n');
    const ctx = connect({ kubeconfig: kc });
    const tcp = await openSubresourceStream(ctx, pf);
    const back = new Promise<string>((resolve) => { let got = ''; tcp.on('data', (d: Buffer) => { got += d.toString(); if (got.length >= 11) resolve(got); }); });
    tcp.write('hello ');
    tcp.write('world');
    assert.is(await within(back, 10_000, 'the echo through the Duplex'), 'hello world');
    tcp.destroy();
    assert.equal(api.seen[0], { url: '/prefix/apis/subresources.kubevirt.io/v1/namespaces/ns1/virtualmachineinstances/vm1/portforward/22/tcp', auth: 'Bearer t0k3n', protocol: 'plain.kubevirt.io' });

    const udp = await openDatagramChannel(ctx, { ...pf, subresource: 'portforward/53/udp' });
    const got: string[] = [];
    const two = new Promise<void>((resolve) => udp.on('datagram', (d) => { got.push(d.toString()); if (got.length === 2) resolve(); }));
    udp.send(Buffer.from('abc'));
    udp.send(Buffer.from('xy'));
    await within(two, 10_000, 'two datagrams back');
    assert.equal(got, ['cba', 'yx'], 'one message per datagram, boundaries kept');
    const closed = new Promise<void>((r) => udp.once('close', () => r()));
    udp.close();
    await within(closed, 5_000, 'the channel closed');
    assert.ok(udp.closed);

    const missing = await openSubresourceStream(ctx, { ...pf, name: 'vmi-missing' }).then(() => undefined, (e: unknown) => e);
    assert.instance(missing, UserError);
    assert.is((missing as Error).message, 'VirtualMachineInstance "vmi-missing" not found in namespace "ns1"');
    await ctx.client.close();

    write('wrong');
    const ctx2 = connect({ kubeconfig: kc });
    const denied = await openSubresourceStream(ctx2, pf).then(() => undefined, (e: unknown) => e);
    assert.match((denied as Error).message, /did not accept your credentials \(Unauthorized\)/);
    await ctx2.client.close();

    // A server the kubeconfig's CA did not sign.
    write('t0k3n', issueCertificate({ subject: { commonName: 'other-ca' }, notBefore: new Date(now - 60_000), notAfter: new Date(now + 3_600_000), ca: true }).certPem);
    const ctx4 = connect({ kubeconfig: kc });
    const untrusted = await openSubresourceStream(ctx4, pf).then(() => undefined, (e: unknown) => e);
    assert.match((untrusted as Error).message, /^cannot verify the API server at https:\/\/127\.0\.0\.1:\d+: .*; check the certificate-authority of the kubeconfig's cluster$/);
    await ctx4.client.close();
    write('t0k3n');

    // Nothing listening: the API server named, and what to check.
    await api.close();
    const ctx3 = connect({ kubeconfig: kc });
    const down = await openSubresourceStream(ctx3, pf).then(() => undefined, (e: unknown) => e);
    assert.match((down as Error).message, new RegExp(`cannot reach the Kubernetes API server at https://127\\.0\\.0\\.1:${api.port}: ECONNREFUSED`));
    await ctx3.client.close();
  } finally {
    await api.close().catch(() => undefined);
    t.cleanup();
  }
});

test.run();

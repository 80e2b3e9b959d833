// The Kubernetes versions qvirt supports: the API server's /version read the way distributions
// spell it (k3s, EKS, GKE, the embedded server), compared with MIN_KUBERNETES; and `qvirt install`
// refusing an older server before it applies anything, naming both versions.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  checkServerVersion,
  compareKubernetesVersions,
  KubernetesVersionError,
  MIN_KUBERNETES,
  parseKubernetesVersion,
  type ServerVersionInfo,
} from '../../src/deploy/kubernetes-versions.ts';
import { SERVER_VERSION } from '../../src/apiserver/discovery.ts';
import { install } from '../../src/cli/install.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { kubeConfigForServer } from '../../src/kube/kubeconfig.ts';
import { imageRefsFrom } from '../../src/deploy/images.ts';

test('parse: gitVersion as distributions write it, else major/minor', () => {
  const table: [ServerVersionInfo, [number, number, number]][] = [
    [{ gitVersion: 'v1.36.2' }, [1, 36, 2]],
    [{ gitVersion: 'v1.26.3+k3s1' }, [1, 26, 3]],
    [{ gitVersion: 'v1.30.0-eks-036c24b' }, [1, 30, 0]],
    [{ gitVersion: 'v1.31.1-gke.1146000' }, [1, 31, 1]],
    [{ gitVersion: 'v1.33.0-rc.1' }, [1, 33, 0]],
    [{ gitVersion: 'v1.32.0+qvirt' }, [1, 32, 0]],
    [{ gitVersion: '1.34.1' }, [1, 34, 1]],
    [{ gitVersion: 'v1.35' }, [1, 35, 0]],
    [{ gitVersion: 'v0.0.0-master+$Format:%H$', major: '1', minor: '33' }, [1, 33, 0]],
    [{ gitVersion: 'v0.0.0-master+$Format:%H$', major: '', minor: '' }, [0, 0, 0]],
    [{ gitVersion: 'unknown', major: '1', minor: '30+' }, [1, 30, 0]],
    [{ major: '1', minor: '32' }, [1, 32, 0]],
  ];
  for (const [info, [major, minor, patch]] of table) assert.equal(parseKubernetesVersion(info), { major, minor, patch }, JSON.stringify(info));
  for (const bad of [{}, { gitVersion: 'latest' }, { gitVersion: 42 }, { major: 'one', minor: '30' }]) {
    assert.throws(() => parseKubernetesVersion(bad), (e: unknown) => e instanceof KubernetesVersionError && /cannot read the Kubernetes version/.test((e as Error).message), JSON.stringify(bad));
  }
});

test('compare', () => {
  const v = (s: string) => parseKubernetesVersion({ gitVersion: s });
  const table: [string, string, number][] = [
    ['v1.32.0', 'v1.32.0', 0],
    ['v1.31.14', 'v1.32.0', -1],
    ['v1.32.1', 'v1.32.0', 1],
    ['v1.100.0', 'v1.36.9', 1],
    ['v2.0.0', 'v1.99.99', 1],
    ['v1.26.3+k3s1', 'v1.26.3', 0],
  ];
  for (const [a, b, want] of table) assert.is(Math.sign(compareKubernetesVersions(v(a), v(b))), want, `${a} vs ${b}`);
});

test(`supported: v${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor} and newer; older refused naming both versions`, () => {
  assert.equal(MIN_KUBERNETES, { major: 1, minor: 32, patch: 0 });
  const table: [string, boolean][] = [
    ['v1.36.2', true],
    ['v1.32.0', true],
    ['v1.32.0+qvirt', true],
    ['v1.33.5+k3s1', true],
    ['v1.40.0', true],
    ['v1.31.14', false],
    ['v1.30.0-eks-036c24b', false],
    ['v1.26.3+k3s1', false],
  ];
  for (const [gitVersion, ok] of table) {
    if (ok) { checkServerVersion({ gitVersion }); continue; }
    assert.throws(() => checkServerVersion({ gitVersion }), (e: unknown) => {
      const m = (e as Error).message;
      return e instanceof KubernetesVersionError && m.includes(gitVersion) && m.includes('v1.32') && /upgrade/.test(m);
    }, gitVersion);
  }
  // The embedded API server (qvirt up / the tests) reports a supported version.
  checkServerVersion(SERVER_VERSION);
});

test('qvirt install on an older API server: refused after reading /version, nothing applied', async () => {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.url === '/version') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ major: '1', minor: '26', gitVersion: 'v1.26.3+k3s1', platform: 'linux/amd64' }));
      return;
    }
    res.writeHead(500, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'this test serves /version only', reason: 'InternalError', code: 500 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = new KubeClient(kubeConfigForServer(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  const out: string[] = [];
  try {
    const err = await install({ client, images: imageRefsFrom([]), wait: false, out: (s) => out.push(s) }).then(() => undefined, (e: unknown) => e);
    assert.instance(err, KubernetesVersionError);
    assert.match((err as Error).message, /Kubernetes v1\.26\.3\+k3s1, older than v1\.32/);
    assert.equal(requests, ['GET /version']);
    assert.equal(out, []);
  } finally {
    await client.close();
    await new Promise((r) => server.close(r));
  }
});

test.run();

// The generated CRDs (deploy/crds/) on a real kube-apiserver, the one test/lib/real-cluster.ts names:
// - `kubectl apply --dry-run=server` of deploy/crds/ passes with no warning, and what the server would
//   store keeps KubeVirt's short names, categories and printer columns;
// - each CRD created (dry run) under a group of its own passes creation's validation in full: an
//   update that leaves a schema as it was skips the per-rule cost limit, a create never does;
// - src/apiserver/cel-cost.ts estimates every rule as this server does: each rule alone, on a node
//   repeated just enough times to pass the limit, its cost read back from the server's factor;
// - the rules are enforced: the CRDs are created for real under the test's own group (own kinds,
//   plurals and short names, no categories or labels: nobody's `kubectl get vm` can resolve to
//   them), bad objects are refused with 422 naming the field and the reason, good ones are stored
//   and listed with KubeVirt's columns. The kubevirt.io CRDs and objects of the cluster are never
//   touched (only dry runs), and the test's own CRDs and namespace are deleted at the end.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { withRealCluster, type RealCluster } from '../lib/real-cluster.ts';
import { customResourceDefinitions } from '../../src/api/schema/crds.ts';
import type { CustomResourceDefinition } from '../../src/api/schema/crd-types.ts';
import { CostModels, crdRuleCosts, StaticEstimatedCostLimit, type CostModel } from '../../src/apiserver/cel-cost.ts';
import { KubeApiError, KubeClient, loadKubeConfig } from '../../src/kube/client.ts';
import { CRD_DIR } from '../../scripts/gen-crds.ts';
import { compareKubernetesVersions, MIN_KUBERNETES, parseKubernetesVersion } from '../../src/deploy/kubernetes-versions.ts';

type Obj = Record<string, any>;

const GROUP = `crds${process.pid}.test.qvirt.io`;
const PREFIX = 'qvcheck';
const NS = `qvirt-crds-${process.pid}`;
const LABEL = `qvirt.io/crds-test=${process.pid}`;
/** Every CRD qvirt installs; the kubevirt.io ones (v1, CEL rules, printer columns) are the ones renamed and exercised below. */
const all = customResourceDefinitions();
const generated = all.filter((g) => g.spec.group === 'kubevirt.io');
let c: RealCluster;
let client: KubeClient;
let created = false;

/** kubectl with its exit status, stdout and stderr (warnings go to stderr). */
function kc(args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(c.kubectl, ['--kubeconfig', c.kubeconfig, ...args], { encoding: 'utf8', input, maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
function ok(args: string[], input?: string): string {
  const r = kc(args, input);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.status}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** The CRD under the test's group, with its kind, plural, singular and short names prefixed; no categories, no labels. */
function renamed(crd: CustomResourceDefinition): CustomResourceDefinition {
  const n = crd.spec.names;
  const names = {
    kind: `Qvcheck${n.kind}`,
    listKind: `Qvcheck${n.listKind}`,
    plural: `${PREFIX}${n.plural}`,
    singular: `${PREFIX}${n.singular}`,
    shortNames: (n.shortNames ?? []).map((s) => `${PREFIX}${s}`),
    categories: [],
  };
  return {
    ...structuredClone(crd),
    metadata: { name: `${names.plural}.${GROUP}`, labels: { [LABEL.split('=')[0]!]: LABEL.split('=')[1]! } },
    spec: { ...structuredClone(crd.spec), group: GROUP, names },
  };
}
const byKind = (kind: string) => generated.find((g) => g.spec.names.kind === kind)!;
const schemaOf = (crd: CustomResourceDefinition) => crd.spec.versions[0]!.schema.openAPIV3Schema as Obj;

test.before(async () => {
  c = await withRealCluster();
  client = new KubeClient(loadKubeConfig(c.kubeconfig));
  client.userAgent = 'qvirt-crds-test';
});

test.after(async () => {
  if (created) {
    kc(['delete', 'crd', '-l', LABEL, '--wait=true', '--timeout=120s']);
    kc(['delete', 'namespace', NS, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  }
  await client?.close();
});

let model: CostModel;

test('the cluster runs a Kubernetes qvirt supports', () => {
  const v = JSON.parse(ok(['version', '-o', 'json'])).serverVersion;
  const parsed = parseKubernetesVersion(v);
  assert.ok(compareKubernetesVersions(parsed, MIN_KUBERNETES) >= 0, `the cluster runs ${v.gitVersion}: older than qvirt supports`);
  // cel-go 0.23+ from kube-apiserver 1.33 on; 0.20–0.22 in 1.31–1.32.
  model = parsed.minor >= 33 || parsed.major > 1 ? CostModels.kube136 : CostModels.kube132;
});

/** Warnings, less kubectl's own note on objects it did not create (as `qvirt install` creates the CRDs). */
const warnings = (stderr: string) => stderr.split('\n').filter((l) => l.trim() && !/is missing the kubectl\.kubernetes\.io\/last-applied-configuration annotation/.test(l));

test('kubectl apply --dry-run=server -f deploy/crds/: accepted, no warning, names and printer columns kept', () => {
  const r = kc(['apply', '--dry-run=server', '-o', 'json', '-f', CRD_DIR]);
  assert.is(r.status, 0, r.stderr);
  assert.equal(warnings(r.stderr), [], 'warnings from the API server');
  const answer = JSON.parse(r.stdout) as Obj;
  const items: Obj[] = answer.kind === 'List' ? answer.items : [answer];
  for (const g of all) {
    const got = items.find((i) => i.metadata?.name === g.metadata.name);
    assert.ok(got, `${g.metadata.name} in the answer`);
    assert.equal(got!.spec.names.shortNames, g.spec.names.shortNames, `${g.metadata.name} short names`);
    assert.equal(got!.spec.names.categories, g.spec.names.categories, `${g.metadata.name} categories`);
    assert.is(got!.spec.scope, g.spec.scope, `${g.metadata.name} scope`);
    const cols = (v: Obj) => (v.additionalPrinterColumns ?? []).map((p: Obj) => [p.name, p.type, p.jsonPath, p.priority ?? 0, p.description ?? '']);
    assert.equal(cols(got!.spec.versions[0]), cols(g.spec.versions[0]!), `${g.metadata.name} printer columns`);
  }
});

test('each CRD created (dry run) under a group of its own: creation validation in full, no warning', () => {
  for (const g of generated) {
    const r = kc(['create', '--dry-run=server', '-o', 'name', '-f', '-'], JSON.stringify(renamed(g)));
    assert.is(r.status, 0, `${g.metadata.name}: ${r.stderr}`);
    assert.equal(warnings(r.stderr), [], `${g.metadata.name}: warnings from the API server`);
  }
});

test('the cost estimate agrees with this server on every rule', () => {
  const seen = new Set<string>();
  const disagreements: string[] = [];
  let compared = 0;
  for (const g of generated) {
    const root = schemaOf(g);
    for (const r of crdRuleCosts(root, model).rules) {
      const node = nodeAt(root, r.field.replace(/\.x-kubernetes-validations\[\d+\]\.rule$/, ''));
      const alone = { ...withoutRules(node), 'x-kubernetes-validations': [{ rule: r.rule, message: 'cost probe' }] };
      const key = JSON.stringify(alone);
      if (seen.has(key) || r.cost === 0) continue;
      seen.add(key);
      // The rule on a list's items: its cost × maxItems, just past the limit, comes back as a factor.
      const times = Math.max(2, Math.ceil((StaticEstimatedCostLimit + 1) / r.cost));
      const probe = {
        apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
        metadata: { name: `costprobes.${GROUP}` },
        spec: {
          group: GROUP, scope: 'Namespaced',
          names: { kind: 'CostProbe', listKind: 'CostProbeList', plural: 'costprobes', singular: 'costprobe' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { probe: { type: 'array', maxItems: times, items: alone } } } } }],
        },
      };
      const res = kc(['create', '--dry-run=server', '-o', 'name', '-f', '-'], JSON.stringify(probe));
      const m = /estimated rule cost exceeds budget by factor of ([0-9.]+)x/.exec(res.stderr);
      compared++;
      if (!m) {
        disagreements.push(`${r.field}: estimated ${r.cost}, but ${r.cost} × ${times} was not refused (${res.stderr.trim().slice(0, 200) || 'accepted'})`);
        continue;
      }
      const server = (Number(m[1]) * StaticEstimatedCostLimit) / times;
      const decimals = m[1]!.split('.')[1]?.length ?? 0;
      const tolerance = (StaticEstimatedCostLimit * 0.5 * 10 ** -decimals) / times + 1;
      if (Math.abs(server - r.cost) > tolerance) disagreements.push(`${r.field}: estimated ${r.cost}, the server ${server.toFixed(1)}: ${r.rule}`);
    }
  }
  assert.ok(compared > 40, `${compared} rules compared`);
  assert.equal(disagreements, [], `${model.name} against the live server`);
});

const good: Record<string, Obj> = {
  VirtualMachineInstance: { spec: { domain: { devices: {}, memory: { guest: '64Mi' } } } },
  VirtualMachine: { spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {}, memory: { guest: '64Mi' } } } } } },
  VirtualMachineInstanceReplicaSet: { spec: { replicas: 0, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { domain: { devices: {}, memory: { guest: '64Mi' } } } } } },
  VirtualMachineInstanceMigration: { spec: { vmiName: 'some-vmi' } },
  VirtualMachineInstancePreset: { spec: { selector: { matchLabels: { flavor: 'small' } }, domain: { cpu: { cores: 1 } } } },
};

/** POSTs `spec` as an object of (the renamed) `kind`: undefined when accepted, else the API's Status. */
async function post(kind: string, name: string, body: Obj, dryRun = true): Promise<Obj | undefined> {
  const crd = renamed(byKind(kind));
  const obj = { apiVersion: `${GROUP}/v1`, kind: crd.spec.names.kind, metadata: { name, namespace: NS }, ...structuredClone(body) };
  try {
    await client.request('POST', `/apis/${GROUP}/v1/namespaces/${NS}/${crd.spec.names.plural}`, { query: dryRun ? { dryRun: 'All' } : {}, body: obj });
    return undefined;
  } catch (err) {
    if (err instanceof KubeApiError) return err.status as Obj;
    throw err;
  }
}

test('the rules are enforced: 422 naming the field and the reason', async () => {
  created = true;
  ok(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: generated.map(renamed) }));
  for (const g of generated) ok(['wait', '--for=condition=Established', `crd/${renamed(g).metadata.name}`, '--timeout=60s']);
  ok(['create', 'namespace', NS]);
  ok(['label', 'namespace', NS, LABEL]);
  for (const [kind, body] of Object.entries(good)) assert.is(await post(kind, 'good', body), undefined, `a good ${kind}`);

  const vm = () => structuredClone(good.VirtualMachine!);
  const disks = (o: Obj) => o.spec.template.spec.domain.devices;
  // [what, kind, object, cause expected: reason, field, message part]
  const table: [string, string, Obj, string, string, string][] = [
    ['duplicate disk names', 'VirtualMachine', ((o) => { disks(o).disks = [{ name: 'd', disk: {} }, { name: 'd', cdrom: {} }]; o.spec.template.spec.volumes = [{ name: 'd', emptyDisk: { capacity: '1Gi' } }]; return o; })(vm()),
      'FieldValueInvalid', 'spec.template.spec.domain.devices.disks', 'disk names must be unique'],
    ['disk bus ide', 'VirtualMachine', ((o) => { disks(o).disks = [{ name: 'd', disk: { bus: 'ide' } }]; o.spec.template.spec.volumes = [{ name: 'd', emptyDisk: { capacity: '1Gi' } }]; return o; })(vm()),
      'FieldValueNotSupported', 'spec.template.spec.domain.devices.disks[0].disk.bus', 'supported values: "virtio", "sata", "scsi", "usb"'],
    ['a disk and an interface with one boot order', 'VirtualMachine', ((o) => {
      disks(o).disks = [{ name: 'd', disk: {}, bootOrder: 1 }];
      disks(o).interfaces = [{ name: 'default', masquerade: {}, bootOrder: 1 }];
      o.spec.template.spec.volumes = [{ name: 'd', emptyDisk: { capacity: '1Gi' } }];
      o.spec.template.spec.networks = [{ name: 'default', pod: {} }];
      return o;
    })(vm()), 'FieldValueInvalid', 'spec.template.spec.domain.devices', 'Boot order already set for a different device'],
    ['an interface without its network', 'VirtualMachineInstance', { spec: { domain: { devices: { interfaces: [{ name: 'x', bridge: {} }] }, memory: { guest: '64Mi' } } } },
      'FieldValueInvalid', 'spec', 'every interface must name a network'],
    ['no memory (reason: FieldValueRequired)', 'VirtualMachineInstance', { spec: { domain: { devices: {} } } }, 'FieldValueRequired', 'spec', 'no memory requested'],
    ['no vmiName (reason: FieldValueRequired)', 'VirtualMachineInstanceMigration', { spec: { vmiName: '' } }, 'FieldValueRequired', 'spec', 'vmiName is missing'],
    ['selector not matching (fieldPath: .selector)', 'VirtualMachineInstanceReplicaSet', ((o) => { o.spec.template.metadata.labels = { app: 'b' }; return o; })(structuredClone(good.VirtualMachineInstanceReplicaSet!)),
      'FieldValueInvalid', 'spec.selector', 'selector does not match labels.'],
  ];
  for (const [what, kind, body, reason, field, message] of table) {
    const st = await post(kind, 'bad', body);
    assert.ok(st, `${what}: accepted`);
    assert.is(st!.code, 422, `${what}: ${JSON.stringify(st)}`);
    assert.is(st!.reason, 'Invalid', what);
    const causes: Obj[] = st!.details?.causes ?? [];
    assert.ok(causes.some((x) => x.reason === reason && x.field === field && String(x.message).includes(message)), `${what}: want ${reason} at ${field} (${message}), got ${JSON.stringify(causes)}`);
  }
});

test('served as generated: KubeVirt\'s printer columns (kubectl get -o wide) and the short names in discovery', async () => {
  for (const [kind, body] of Object.entries(good)) assert.is(await post(kind, 'shown', body, false), undefined, `store a ${kind}`);
  for (const g of generated) {
    const r = renamed(g);
    // Fully qualified: kubectl's discovery cache may still hold an earlier run's group with the same plural.
    const header = ok(['get', `${r.spec.names.plural}.${GROUP}`, '-n', NS, '-o', 'wide']).split('\n')[0]!.trim().split(/\s{2,}/);
    // No printer columns (VirtualMachineInstancePreset): the server's default table, NAME and AGE.
    const columns = (g.spec.versions[0]!.additionalPrinterColumns ?? []).map((p) => p.name.toUpperCase());
    assert.equal(header, ['NAME', ...(columns.length ? columns : ['AGE'])], `${g.spec.names.kind} columns`);
  }
  const discovery = JSON.parse(ok(['get', '--raw', `/apis/${GROUP}/v1`])) as { resources: Obj[] };
  for (const g of generated) {
    const res = discovery.resources.find((x) => x.name === renamed(g).spec.names.plural);
    assert.equal(res?.shortNames, (g.spec.names.shortNames ?? []).map((s) => `${PREFIX}${s}`), `${g.spec.names.kind} short names`);
  }
});

function nodeAt(root: Obj, field: string): Obj {
  let n = root;
  for (const m of field.replace(/^openAPIV3Schema/, '').matchAll(/\.properties\[([^\]]+)\]|\.items|\.additionalProperties/g)) {
    n = m[1] ? n.properties[m[1]] : m[0] === '.items' ? n.items : n.additionalProperties;
  }
  return n;
}

function withoutRules(s: unknown): any {
  if (Array.isArray(s)) return s.map(withoutRules);
  if (typeof s !== 'object' || s === null) return s;
  return Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'x-kubernetes-validations').map(([k, v]) => [k, withoutRules(v)]));
}

test.run();

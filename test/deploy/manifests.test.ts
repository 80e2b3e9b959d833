// The manifests operators apply: deploy/ is what scripts/gen-deploy.ts writes; every YAML document
// parses with a known apiVersion/kind and lives in the install namespace when namespaced; the
// kustomization lists every file and renders with kubectl's kustomize; the pod specs run the
// images `npm run images` names with the commands the images provide; the RBAC is least privilege
// as the code defines it — the ClusterRoles/Roles grant exactly the API calls found in each
// component's sources (test/deploy/api-calls.ts), and the service accounts the pods use are bound.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import yaml from 'js-yaml';
import { staleDeployFiles, DEPLOY_DIR } from '../../scripts/gen-deploy.ts';
import { overlayKustomization } from '../../scripts/images/build.ts';
import { CONTROLLER_CLUSTER_RULES, CONTROLLER_NAMESPACE_RULES, HANDLER_AUTH_NAMESPACE, HANDLER_AUTH_RULES, HANDLER_CLUSTER_RULES, HANDLER_NAMESPACE_RULES, INSTALL_NAMESPACE, Names, PROMETHEUS_LABEL, PROMETHEUS_SERVICE, installObjects, manifests, type PolicyRule } from '../../src/deploy/manifests.ts';
import { ImageNames, type BuiltImage } from '../../src/deploy/images.ts';
import { DEFAULT_LEASE_NAMESPACE } from '../../src/kube/controller-lease.ts';
import { callKeys, componentApiCalls } from './api-calls.ts';
import { tempDir } from '../lib/tmp.ts';
import { ROUTES } from '../../src/virt-api/subresource-routes.ts';
import { SUBRESOURCES } from '../../handler/endpoint/routes.ts';

interface Doc { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown }

const KNOWN: Record<string, { apiVersion: string; namespaced: boolean }> = {
  Namespace: { apiVersion: 'v1', namespaced: false },
  ServiceAccount: { apiVersion: 'v1', namespaced: true },
  CustomResourceDefinition: { apiVersion: 'apiextensions.k8s.io/v1', namespaced: false },
  ClusterRole: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false },
  ClusterRoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false },
  Role: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: true },
  RoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: true },
  KubeVirt: { apiVersion: 'kubevirt.io/v1', namespaced: true },
  Deployment: { apiVersion: 'apps/v1', namespaced: true },
  DaemonSet: { apiVersion: 'apps/v1', namespaced: true },
  Service: { apiVersion: 'v1', namespaced: true },
  ValidatingWebhookConfiguration: { apiVersion: 'admissionregistration.k8s.io/v1', namespaced: false },
  APIService: { apiVersion: 'apiregistration.k8s.io/v1', namespaced: false },
  Kustomization: { apiVersion: 'kustomize.config.k8s.io/v1beta1', namespaced: false },
};

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? yamlFiles(p) : /\.ya?ml$/.test(e) ? [p] : [];
  });
}

const docsOf = (file: string) => yaml.loadAll(readFileSync(file, 'utf8')).filter((d) => d !== null) as Doc[];
const ruleKeys = (rules: readonly PolicyRule[]) => [...new Set(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}|${res}|${v}`)))))].sort();

test('deploy/ is up to date with scripts/gen-deploy.ts', () => {
  assert.equal(staleDeployFiles(), [], 'run node scripts/gen-deploy.ts');
});

test('every YAML document has a known apiVersion/kind, a name, and the install namespace when namespaced', () => {
  const files = yamlFiles(DEPLOY_DIR);
  assert.ok(files.length >= 10, files.join(','));
  for (const f of files) {
    for (const d of docsOf(f)) {
      const where = `${relative(DEPLOY_DIR, f)}: ${d.kind}`;
      const k = KNOWN[d.kind];
      assert.ok(k, `${where}: unexpected kind`);
      assert.is(d.apiVersion, k!.apiVersion, where);
      if (d.kind === 'Kustomization') continue;
      assert.type(d.metadata?.name, 'string', where);
      // One exception: the reader of the API server's client and requestheader CAs (and its bindings) live beside that ConfigMap.
      if (k!.namespaced) assert.is(d.metadata.namespace, d.metadata.name === Names.HandlerAuthRole || d.metadata.name === Names.ControllerAuthReader ? HANDLER_AUTH_NAMESPACE : INSTALL_NAMESPACE, where);
      else assert.is(d.metadata.namespace, undefined, where);
    }
  }
  // The install namespace is where the controller looks for its Lease and the KubeVirt CR by default.
  assert.is(INSTALL_NAMESPACE, DEFAULT_LEASE_NAMESPACE);
});

test('the kustomization lists every manifest file and kubectl kustomize renders all objects', () => {
  const k = docsOf(join(DEPLOY_DIR, 'kustomization.yaml'))[0] as unknown as { resources: string[] };
  const files = yamlFiles(DEPLOY_DIR).map((f) => relative(DEPLOY_DIR, f)).filter((f) => f !== 'kustomization.yaml' && !f.startsWith('images/')).sort();
  assert.equal([...k.resources].sort(), files);
  const rendered = yaml.loadAll(execFileSync('kubectl', ['kustomize', DEPLOY_DIR], { encoding: 'utf8' })) as Doc[];
  assert.equal(rendered.map((d) => `${d.kind}/${d.metadata.name}`).sort(), installObjects().map((d) => `${d.kind}/${d.metadata!.name}`).sort());
});

test('pod specs run the images npm run images builds, with commands those images have; the overlay pins the built tags', () => {
  const objs = manifests();
  const deploy = objs.find((o) => o.kind === 'Deployment') as unknown as { spec: { replicas: number; template: { spec: { serviceAccountName: string; containers: { image: string; command: string[]; args: string[]; securityContext: Record<string, unknown> }[] } } } };
  const ds = objs.find((o) => o.kind === 'DaemonSet') as unknown as { spec: { template: { spec: { hostPID: boolean; serviceAccountName: string; containers: { image: string; command: string[]; args: string[]; env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[]; securityContext: Record<string, unknown>; volumeMounts: { mountPath: string }[] }[] } } } };
  const c = deploy.spec.template.spec.containers[0]!;
  const h = ds.spec.template.spec.containers[0]!;
  assert.is(deploy.spec.replicas, 2);
  assert.is(c.image.split(':')[0], ImageNames.Virt);
  assert.equal(c.command, ['/usr/bin/qvirt', 'controller']);
  assert.is(c.args[c.args.indexOf('--launcher-image') + 1]!.split(':')[0], ImageNames.Launcher);
  assert.ok(c.args.includes('--lease-name'), 'leader election on a named Lease');
  assert.equal(c.securityContext.privileged, undefined, 'the controller is not privileged');
  assert.is(c.securityContext.allowPrivilegeEscalation, false);
  assert.is(h.image.split(':')[0], ImageNames.Virt);
  assert.equal(h.command, ['/usr/bin/qvirt', 'handler']);
  assert.ok(ds.spec.template.spec.hostPID);
  assert.is(h.securityContext.privileged, true);
  assert.equal(h.env.find((e) => e.name === 'NODE_NAME')?.valueFrom?.fieldRef?.fieldPath, 'spec.nodeName');
  for (const p of ['/var/lib/kubelet/pods', '/var/lib/kubelet/device-plugins']) assert.ok(h.volumeMounts.some((m) => m.mountPath === p), p);
  assert.ok(h.args.includes('--device-plugins-dir'));
  // Only virt-handler is privileged.
  const privileged = objs.filter((o) => JSON.stringify(o).includes('"privileged":true')).map((o) => o.kind);
  assert.equal(privileged, ['DaemonSet']);

  const built: BuiltImage[] = [
    { name: ImageNames.Launcher, ref: 'qvirt/launcher:aaaaaaaaaaaa', archive: 'x', compressedBytes: 1, uncompressedBytes: 1, manifestDigest: 'sha256:1' },
    { name: ImageNames.Virt, ref: 'qvirt/virt:bbbbbbbbbbbb', archive: 'y', compressedBytes: 1, uncompressedBytes: 1, manifestDigest: 'sha256:2' },
  ];
  const dir = tempDir('qvov');
  try {
    writeFileSync(join(dir.path, 'kustomization.yaml'), overlayKustomization(built, relative(dir.path, DEPLOY_DIR)));
    const rendered = yaml.loadAll(execFileSync('kubectl', ['kustomize', dir.path], { encoding: 'utf8' })) as Doc[];
    const d = rendered.find((o) => o.kind === 'Deployment') as unknown as typeof deploy;
    const rc = d.spec.template.spec.containers[0]!;
    assert.is(rc.image, 'qvirt/virt:bbbbbbbbbbbb');
    assert.is(rc.args[rc.args.indexOf('--launcher-image') + 1], 'qvirt/launcher:aaaaaaaaaaaa');
    assert.is((rendered.find((o) => o.kind === 'DaemonSet') as unknown as typeof ds).spec.template.spec.containers[0]!.image, 'qvirt/virt:bbbbbbbbbbbb');
  } finally {
    dir.cleanup();
  }
});

test('kubevirt-prometheus-metrics selects the controller and the node agents on a port named metrics, the port their /metrics is served on', () => {
  const objs = manifests();
  const svc = objs.find((o) => o.kind === 'Service' && o.metadata?.name === PROMETHEUS_SERVICE) as unknown as { spec: { selector: Record<string, string>; ports: { name: string; targetPort: string }[]; clusterIP: string } };
  assert.ok(svc, `a Service ${PROMETHEUS_SERVICE}`);
  assert.equal(svc.spec.selector, { [PROMETHEUS_LABEL.key]: PROMETHEUS_LABEL.value });
  assert.equal([svc.spec.ports[0]?.name, svc.spec.ports[0]?.targetPort, svc.spec.clusterIP], ['metrics', 'metrics', 'None']);
  const workloads = objs.filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet') as unknown as { metadata: { name: string }; spec: { template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { containers: { ports?: { name: string; containerPort: number }[] }[] } } } }[];
  assert.equal(workloads.map((w) => w.metadata.name).sort(), [Names.ControllerDeployment, Names.HandlerDaemonSet].sort());
  for (const w of workloads) {
    const t = w.spec.template;
    assert.is(t.metadata.labels[PROMETHEUS_LABEL.key], PROMETHEUS_LABEL.value, `${w.metadata.name} is selected`);
    const port = t.spec.containers[0]!.ports?.find((p) => p.name === 'metrics');
    assert.ok(port, `${w.metadata.name} has a container port named metrics`);
    assert.is(String(port!.containerPort), t.metadata.annotations['prometheus.io/port'], `${w.metadata.name}'s metrics port is where its /metrics is served`);
  }
});

test('RBAC grants exactly the API calls in each component\'s code', () => {
  for (const [entry, rules, name] of [
    // The controller is also bound to the handler's kube-system reader (virt-api: the requestheader CA).
    ['src/cli/controller.ts', [...CONTROLLER_CLUSTER_RULES, ...CONTROLLER_NAMESPACE_RULES, ...HANDLER_AUTH_RULES], 'controller'],
    ['src/cli/handler.ts', [...HANDLER_CLUSTER_RULES, ...HANDLER_NAMESPACE_RULES, ...HANDLER_AUTH_RULES], 'handler'],
  ] as const) {
    const scan = componentApiCalls(entry);
    assert.equal(scan.unresolved, [], `${name}: calls whose resource the scan cannot resolve`);
    assert.ok(scan.files.length > 10, `${name}: import closure of ${entry}: ${scan.files.length} files`);
    const needed = callKeys(scan.calls);
    const granted = ruleKeys(rules);
    const missing = needed.filter((k) => !granted.includes(k));
    // subresources.kubevirt.io grants are what the node agents' SubjectAccessReviews check for virt-api's
    // own identity when it forwards a call: authorization of this component by another, not API calls.
    const extra = granted.filter((k) => !needed.includes(k) && !k.startsWith('subresources.kubevirt.io|'));
    assert.equal(missing, [], `${name}: calls without a rule: ${missing.map((k) => `${k} (${scan.calls.filter((c) => `${c.group}|${c.resource}|${c.verb}` === k).map((c) => c.where).join(', ')})`).join('; ')}`);
    assert.equal(extra, [], `${name}: rules no code uses`);
  }
  // Namespace-only grants: the Lease, the KubeVirt CR and the webhooks' Secret are in the install namespace only.
  assert.equal(CONTROLLER_NAMESPACE_RULES.flatMap((r) => r.resources).sort(), ['kubevirts', 'leases', 'secrets']);
  const objs = manifests();
  const roleFor = (sa: string) => objs.filter((o) => (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') && (o as unknown as { subjects: { name: string; namespace: string }[] }).subjects.some((s) => s.name === sa && s.namespace === INSTALL_NAMESPACE)).map((o) => `${o.kind}/${(o as unknown as { roleRef: { name: string } }).roleRef.name}`).sort();
  assert.equal(roleFor(Names.ControllerServiceAccount), [`ClusterRoleBinding/${Names.ControllerClusterRole}`, `RoleBinding/${Names.ControllerLeaseRole}`, `RoleBinding/${Names.HandlerAuthRole}`]);
  assert.equal(roleFor(Names.HandlerServiceAccount), [`ClusterRoleBinding/${Names.HandlerClusterRole}`, `RoleBinding/${Names.HandlerAuthRole}`, `RoleBinding/${Names.HandlerNamespaceRole}`]);
  // The node agents read one Secret by name (the migration CA) in their own namespace; no Secret anywhere else.
  assert.equal(HANDLER_NAMESPACE_RULES.filter((r) => r.verbs.includes('get')).map((r) => r.resourceNames), [['kubevirt-virt-handler-migration-ca']]);
  assert.not.ok(HANDLER_CLUSTER_RULES.some((r) => r.resources.includes('secrets')), 'no cluster-wide Secret access for the node agents');
  assert.equal(HANDLER_AUTH_RULES.map((r) => r.resourceNames), [['extension-apiserver-authentication']], 'one ConfigMap, by name');
  // No wildcards anywhere.
  for (const o of objs) if (o.kind === 'ClusterRole' || o.kind === 'Role') assert.not.ok(JSON.stringify(o).includes('"*"'), `${o.kind} ${o.metadata?.name}`);
});

test('virt-api may call every node-agent subresource it forwards: the node agent authorizes its identity (a screenshot was refused on a real cluster)', () => {
  const forwarded = Object.entries(ROUTES.virtualmachineinstances).filter(([sub, spec]) => spec.support === 'served' && SUBRESOURCES[sub] !== undefined).map(([sub]) => `virtualmachineinstances/${sub}`).sort();
  const granted = CONTROLLER_CLUSTER_RULES.filter((r) => r.apiGroups.includes('subresources.kubevirt.io')).flatMap((r) => r.resources).sort();
  assert.ok(forwarded.includes('virtualmachineinstances/vnc/screenshot'), forwarded.join(' '));
  assert.equal(granted, forwarded);
});

test.run();

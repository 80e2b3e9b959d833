// Everything an operator installs, as Kubernetes objects: the namespace, KubeVirt's CRDs (the four
// kinds and the KubeVirt CR's), service accounts, least-privilege RBAC (exactly the calls the
// components' code makes: test/deploy/manifests.test.ts derives them from the sources), the KubeVirt CR
// carrying the cluster configuration, the virt-controller Deployment (two replicas, leader election
// on a Lease) and the virt-handler DaemonSet. deploy/*.yaml are these objects written out by
// scripts/gen-deploy.ts; `qvirt install` applies them with the image tags `npm run images` built.
//
// Names are KubeVirt's (namespace `kubevirt`, virt-controller, virt-handler, kubevirt-controller and
// kubevirt-handler service accounts, the `kubevirt` KubeVirt CR) so what operators and tools know
// about a KubeVirt install holds. qvirt serves the same kubevirt.io API and cannot run beside KubeVirt.
import { DEFAULT_LEASE_NAME } from '../kube/controller-lease.ts';
import { KUBELET_PODS_DIR } from '../kube/kubelet-volume-dirs.ts';
import { DEVICE_PLUGIN_PATH } from '../proto/deviceplugin.ts';
import type { KubeObject } from '../kube/client.ts';
import { customResourceDefinitions } from '../api/schema/crds.ts';
import { CLIENT_CA_CONFIGMAP } from '../kube/extension-apiserver-authentication.ts';
import { defaultImageRefs, ImageNames, type ImageRefs } from './images.ts';
import { CONTROLLER_WEBHOOK_PORT, webhookObjects } from './webhooks.ts';
import { WEBHOOK_CONFIGURATION, WEBHOOK_SERVICE } from '../admission/controller-webhooks.ts';
import { SUBRESOURCE_GROUP } from '../api/constants.ts';
import { INSTANCETYPE_GROUP, InstancetypeResources } from '../api/instancetype/constants.ts';
import { apiServiceName, apiServiceObjects } from '../virt-api/api-service.ts';
import { SUBRESOURCE_VERSIONS } from '../virt-api/subresource-routes.ts';
import { userRoleObjects } from './user-roles.ts';
import { MIGRATION_CA_SECRET } from '../../handler/migration/cluster-tls.ts';

export const INSTALL_NAMESPACE = 'kubevirt';
export const Names = {
  ControllerDeployment: 'virt-controller',
  HandlerDaemonSet: 'virt-handler',
  ControllerServiceAccount: 'kubevirt-controller',
  HandlerServiceAccount: 'kubevirt-handler',
  ControllerClusterRole: 'kubevirt-controller',
  HandlerClusterRole: 'kubevirt-handler',
  ControllerLeaseRole: 'kubevirt-controller-leases',
  HandlerAuthRole: 'kubevirt-handler-auth-reader',
  HandlerNamespaceRole: 'kubevirt-handler-migration-ca',
  ControllerAuthReader: 'kubevirt-controller-auth-reader',
  KubeVirt: 'kubevirt',
} as const;
/** `kubevirt.io: virt-controller` etc. label the components' pods, as KubeVirt's do. */
export const APP_LABEL = 'kubevirt.io';
export const HANDLER_STATE_DIR = '/var/run/kubevirt-private';
/** Where virt-handler's pod has the host's root filesystem: `qvirt handler --host-fs`. */
export const HANDLER_HOST_FS = '/host';
/** virt-handler's subresource endpoint (console, VNC, ...): `qvirt handler --listen` default, KubeVirt's 8186. */
export const HANDLER_ENDPOINT_PORT = 8186;

/**
 * Prometheus' annotation-based pod discovery (the `kubernetes-pods` job of Prometheus' example
 * configuration and the community Helm chart): the node agents' /metrics over HTTPS on the endpoint
 * port. The scraper authenticates as itself and needs `get` on the non-resource URL /metrics.
 */
export const HANDLER_SCRAPE_ANNOTATIONS: Readonly<Record<string, string>> = {
  'prometheus.io/scrape': 'true',
  'prometheus.io/scheme': 'https',
  'prometheus.io/port': String(HANDLER_ENDPOINT_PORT),
  'prometheus.io/path': '/metrics',
};

/**
 * KubeVirt's own scrape target (virt-operator's NewPrometheusService): the pods labelled
 * `prometheus.kubevirt.io: "true"` behind the headless Service `kubevirt-prometheus-metrics`, on
 * the container port named `metrics` — what a ServiceMonitor for KubeVirt selects. As virt-api
 * does, the port that serves /metrics is declared a second time under that name.
 */
export const PROMETHEUS_LABEL = { key: 'prometheus.kubevirt.io', value: 'true' } as const;
export const PROMETHEUS_SERVICE = 'kubevirt-prometheus-metrics';
const METRICS_PORT_NAME = 'metrics';

/** The same discovery for virt-controller's /metrics, on its HTTPS (webhook) port. */
export const CONTROLLER_SCRAPE_ANNOTATIONS: Readonly<Record<string, string>> = {
  'prometheus.io/scrape': 'true',
  'prometheus.io/scheme': 'https',
  'prometheus.io/port': String(CONTROLLER_WEBHOOK_PORT),
  'prometheus.io/path': '/metrics',
};

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** The VMI subresources virt-api forwards to a node agent. */
const NODE_AGENT_SUBRESOURCES = ['pause', 'unpause', 'freeze', 'unfreeze', 'reset', 'softreboot', 'guestosinfo', 'userlist', 'filesystemlist', 'console', 'vnc', 'vnc/screenshot', 'portforward'] as const;

/**
 * virt-controller's cluster-wide permissions: the VM kinds it reconciles in every namespace, the
 * launcher pods it creates and deletes, nodes it marks unresponsive, events.
 */
export const CONTROLLER_CLUSTER_RULES: readonly PolicyRule[] = [
  // get, and patch of the status: virt-api's start/stop/restart/addvolume (subresources.kubevirt.io).
  // create, update, delete: the pool controller's VMs.
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachines/status'], verbs: ['update', 'patch'] },
  // get: the migration-create admitter's and the eviction interceptor's lookups (webhooks).
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancereplicasets'], verbs: ['list', 'watch'] },
  // The presets merged into new VMIs.
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancepresets'], verbs: ['list', 'watch'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancereplicasets/status'], verbs: ['update'] },
  // create: the evacuation controller's migrations off drained nodes.
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations'], verbs: ['list', 'watch', 'create', 'patch', 'delete'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations/status'], verbs: ['update'] },
  // patch: the descheduler's annotations on launcher pods (controller/vmi/descheduler.ts).
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'] },
  { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
  // The claims a VMI's volumes name (block or filesystem, access modes) when its launcher pod is rendered;
  // patch: a memory dump's claim is annotated with the dump's file name (kubevirt.io/memory-dump).
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'patch'] },
  // CDI's DataVolumes: the VM controller creates those of dataVolumeTemplates and waits for their phases.
  { apiGroups: ['cdi.kubevirt.io'], resources: ['datavolumes'], verbs: ['get', 'list', 'watch', 'create'] },
  // get: virt-api finds a VMI's node agent through its Node's annotations.
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  // The webhooks' CA bundle, on the one configuration the install creates.
  { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], verbs: ['get', 'patch'], resourceNames: [WEBHOOK_CONFIGURATION] },
  // virt-api: its APIServices' CA bundle; each caller authorized with a SubjectAccessReview.
  { apiGroups: ['apiregistration.k8s.io'], resources: ['apiservices'], verbs: ['get', 'patch'], resourceNames: SUBRESOURCE_VERSIONS.map(apiServiceName) },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  // /metrics: a scraper's own token (TokenReview), then get on the non-resource URL (SubjectAccessReview).
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  // virt-api → the node agents, which authorize virt-api's own identity for what it forwards.
  { apiGroups: [SUBRESOURCE_GROUP], resources: NODE_AGENT_SUBRESOURCES.map((s) => `virtualmachineinstances/${s}`), verbs: ['get', 'update'] },
  // The instance types and preferences VMs name (VM controller, VM admitter, virt-api's expand-spec),
  // and the ControllerRevisions that pin them for each VM.
  { apiGroups: [INSTANCETYPE_GROUP], resources: Object.values(InstancetypeResources).map((r) => r.plural), verbs: ['get', 'list', 'watch'] },
  // delete: a pool's revisions no VM or VMI names any more.
  { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  // The pools: their finalizer, their status (replicas, readyReplicas, the scale subresource's labelSelector).
  { apiGroups: ['pool.kubevirt.io'], resources: ['virtualmachinepools'], verbs: ['list', 'watch', 'patch'] },
  { apiGroups: ['pool.kubevirt.io'], resources: ['virtualmachinepools/status'], verbs: ['update'] },
  // The MigrationPolicies a migration is matched against, and the labels of the VMI's namespace they select on.
  { apiGroups: ['migrations.kubevirt.io'], resources: ['migrationpolicies'], verbs: ['list', 'watch'] },
  { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
];


/** virt-controller in its own namespace: its leader-election Lease, the KubeVirt CR, the webhooks' certificate Secret. */
export const CONTROLLER_NAMESPACE_RULES: readonly PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
  { apiGroups: ['kubevirt.io'], resources: ['kubevirts'], verbs: ['list', 'watch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'update'] },
];

/**
 * virt-handler: the VMIs of its node (status updates), its Node (heartbeat labels, endpoint
 * annotations), events, hotplugged claims, and — for its console/VNC endpoint, which authenticates
 * callers with their own credentials — TokenReviews and SubjectAccessReviews.
 */
export const HANDLER_CLUSTER_RULES: readonly PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  { apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstances'], verbs: ['list', 'watch', 'update', 'patch'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get'] },
  // A hotplugged claim's volume: its host path, or which of the attachment pod's volumes it is.
  { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  // A direct migration's target pod, by name: its IP, where the target QEMU listens (handler/migration/transport.ts).
  // KubeVirt's virt-handler reads no pods; qvirt's reads one, get only (no list or watch).
  { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
];

/**
 * virt-handler in its own namespace: the migration CA's Secret, read by name, created by the first
 * node agent that finds none (handler/migration/cluster-tls.ts; a create cannot be limited by name).
 */
export const HANDLER_NAMESPACE_RULES: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: [MIGRATION_CA_SECRET] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
];

/** virt-handler in kube-system: the API server's client CA (to verify client certificates), that one ConfigMap only. */
export const HANDLER_AUTH_NAMESPACE = CLIENT_CA_CONFIGMAP.namespace;
export const HANDLER_AUTH_RULES: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [CLIENT_CA_CONFIGMAP.name] },
];

export interface ManifestOptions {
  readonly images?: ImageRefs;
  readonly namespace?: string;
  /** spec.configuration.developerConfiguration.useEmulation of the KubeVirt CR (no KVM on the nodes). */
  readonly useEmulation?: boolean;
}

const labels = (app: string) => ({ [APP_LABEL]: app, 'app.kubernetes.io/part-of': 'qvirt', 'app.kubernetes.io/component': app });

/** The KubeVirt CR's CRD (`kubevirts.kubevirt.io`), as virt-operator installs it; spec is KubeVirt's, validated when read. */
export function kubeVirtCrd(): KubeObject & Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'kubevirts.kubevirt.io', labels: { 'operator.kubevirt.io': '' } },
    spec: {
      group: 'kubevirt.io',
      names: { categories: ['all'], kind: 'KubeVirt', listKind: 'KubeVirtList', plural: 'kubevirts', shortNames: ['kv', 'kvs'], singular: 'kubevirt' },
      scope: 'Namespaced',
      versions: [{
        name: 'v1',
        served: true,
        storage: true,
        additionalPrinterColumns: [
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            description: 'KubeVirt represents the object deploying all KubeVirt resources; qvirt reads spec.configuration (KubeVirtConfiguration) from it.',
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: {
                type: 'object',
                properties: {
                  configuration: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description: 'KubeVirtConfiguration: developerConfiguration, migrations, machineType, cpuModel, ...' },
                  imagePullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
                  imageRegistry: { type: 'string' },
                  imageTag: { type: 'string' },
                },
                'x-kubernetes-preserve-unknown-fields': true,
              },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
            required: ['spec'],
          },
        },
        subresources: { status: {} },
      }],
    },
  };
}

function clusterRole(name: string, rules: readonly PolicyRule[]): KubeObject & Record<string, unknown> {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels: { [APP_LABEL]: '' } }, rules: rules.map((r) => ({ ...r })) };
}

function binding(kind: 'ClusterRoleBinding' | 'RoleBinding', name: string, roleKind: 'ClusterRole' | 'Role', sa: string, ns: string, bindingNs = ns): KubeObject & Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(kind === 'RoleBinding' ? { namespace: bindingNs } : {}), labels: { [APP_LABEL]: '' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
  };
}

const restricted = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: { type: 'RuntimeDefault' } };

/** Every object, in the order they are applied (CRDs and RBAC before the workloads that need them). */
export function manifests(opts: ManifestOptions = {}): (KubeObject & Record<string, unknown>)[] {
  const ns = opts.namespace ?? INSTALL_NAMESPACE;
  const images = opts.images ?? defaultImageRefs;
  const virtImage = images[ImageNames.Virt];
  const launcherImage = images[ImageNames.Launcher];
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      // virt-handler is privileged and uses the host's PID namespace.
      metadata: { name: ns, labels: { [APP_LABEL]: '', 'pod-security.kubernetes.io/enforce': 'privileged' } },
    },
    kubeVirtCrd(),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: Names.ControllerServiceAccount, namespace: ns, labels: { [APP_LABEL]: '' } } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: Names.HandlerServiceAccount, namespace: ns, labels: { [APP_LABEL]: '' } } },
    clusterRole(Names.ControllerClusterRole, CONTROLLER_CLUSTER_RULES),
    binding('ClusterRoleBinding', Names.ControllerClusterRole, 'ClusterRole', Names.ControllerServiceAccount, ns),
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: Names.ControllerLeaseRole, namespace: ns, labels: { [APP_LABEL]: '' } }, rules: CONTROLLER_NAMESPACE_RULES.map((r) => ({ ...r })) },
    binding('RoleBinding', Names.ControllerLeaseRole, 'Role', Names.ControllerServiceAccount, ns),
    clusterRole(Names.HandlerClusterRole, HANDLER_CLUSTER_RULES),
    binding('ClusterRoleBinding', Names.HandlerClusterRole, 'ClusterRole', Names.HandlerServiceAccount, ns),
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: Names.HandlerNamespaceRole, namespace: ns, labels: { [APP_LABEL]: '' } }, rules: HANDLER_NAMESPACE_RULES.map((r) => ({ ...r })) },
    binding('RoleBinding', Names.HandlerNamespaceRole, 'Role', Names.HandlerServiceAccount, ns),
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: Names.HandlerAuthRole, namespace: HANDLER_AUTH_NAMESPACE, labels: { [APP_LABEL]: '' } }, rules: HANDLER_AUTH_RULES.map((r) => ({ ...r })) },
    binding('RoleBinding', Names.HandlerAuthRole, 'Role', Names.HandlerServiceAccount, ns, HANDLER_AUTH_NAMESPACE),
    // KubeVirt's roles for users, aggregated into admin/edit/view: virtctl's verbs for a namespace's editors.
    ...userRoleObjects(APP_LABEL),
    // virt-api (in the controller) reads the same ConfigMap: the front proxy's requestheader CA.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding',
      metadata: { name: Names.ControllerAuthReader, namespace: HANDLER_AUTH_NAMESPACE, labels: { [APP_LABEL]: '' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: Names.HandlerAuthRole },
      subjects: [{ kind: 'ServiceAccount', name: Names.ControllerServiceAccount, namespace: ns }],
    },
    {
      apiVersion: 'kubevirt.io/v1',
      kind: 'KubeVirt',
      metadata: { name: Names.KubeVirt, namespace: ns },
      spec: {
        imagePullPolicy: 'IfNotPresent',
        configuration: { developerConfiguration: { useEmulation: opts.useEmulation ?? false } },
      },
    },
    // Before the controller, which sets the configuration's caBundle when it starts.
    ...webhookObjects(ns, APP_LABEL, Names.ControllerDeployment, labels(Names.ControllerDeployment)),
    // virt-api's subresource group behind the same Service (the controller serves both, as virt-api does).
    ...apiServiceObjects(ns, WEBHOOK_SERVICE, { [APP_LABEL]: '' }),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: Names.ControllerDeployment, namespace: ns, labels: labels(Names.ControllerDeployment) },
      spec: {
        // Two replicas: one leads (the Lease), the other takes over within the lease duration.
        replicas: 2,
        selector: { matchLabels: { [APP_LABEL]: Names.ControllerDeployment } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } },
        template: {
          metadata: { labels: { ...labels(Names.ControllerDeployment), [PROMETHEUS_LABEL.key]: PROMETHEUS_LABEL.value }, annotations: { ...CONTROLLER_SCRAPE_ANNOTATIONS } },
          spec: {
            serviceAccountName: Names.ControllerServiceAccount,
            securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
            affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { [APP_LABEL]: Names.ControllerDeployment } } } }] } },
            tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            terminationGracePeriodSeconds: 30,
            containers: [{
              name: Names.ControllerDeployment,
              image: virtImage,
              imagePullPolicy: 'IfNotPresent',
              command: ['/usr/bin/qvirt', 'controller'],
              args: ['--namespace', ns, '--lease-name', DEFAULT_LEASE_NAME, '--launcher-image', launcherImage, '--webhook-port', String(CONTROLLER_WEBHOOK_PORT)],
              ports: [{ name: 'webhooks', containerPort: CONTROLLER_WEBHOOK_PORT, protocol: 'TCP' }, { name: METRICS_PORT_NAME, containerPort: CONTROLLER_WEBHOOK_PORT, protocol: 'TCP' }],
              // Ready means serving: the API server calls these webhooks for every kubevirt.io write,
              // so a replica is not an endpoint of their Service before its HTTPS server answers.
              readinessProbe: { httpGet: { path: '/readyz', port: 'webhooks', scheme: 'HTTPS' }, periodSeconds: 2, failureThreshold: 3 },
              env: [{ name: 'QVIRT_LOG_LEVEL', value: 'info' }],
              resources: { requests: { cpu: '10m', memory: '100Mi' } },
              securityContext: restricted,
            }],
          },
        },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: Names.HandlerDaemonSet, namespace: ns, labels: labels(Names.HandlerDaemonSet) },
      spec: {
        selector: { matchLabels: { [APP_LABEL]: Names.HandlerDaemonSet } },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
        template: {
          metadata: { labels: { ...labels(Names.HandlerDaemonSet), [PROMETHEUS_LABEL.key]: PROMETHEUS_LABEL.value }, annotations: { ...HANDLER_SCRAPE_ANNOTATIONS } },
          spec: {
            serviceAccountName: Names.HandlerServiceAccount,
            // The host's PID namespace: the container-disk helpers' processes are found through their
            // sockets, and their images read through /proc/<pid>/root.
            hostPID: true,
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
            terminationGracePeriodSeconds: 30,
            containers: [{
              name: Names.HandlerDaemonSet,
              image: virtImage,
              imagePullPolicy: 'IfNotPresent',
              command: ['/usr/bin/qvirt', 'handler'],
              args: ['--pods-dir', KUBELET_PODS_DIR, '--state-dir', HANDLER_STATE_DIR, '--device-plugins-dir', DEVICE_PLUGIN_PATH, '--host-fs', HANDLER_HOST_FS],
              env: [
                { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                // The console/VNC endpoint is published on the Node at this address.
                { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
                // The migration CA's Secret is in the node agents' namespace.
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'QVIRT_LOG_LEVEL', value: 'info' },
              ],
              ports: [{ name: 'endpoint', containerPort: HANDLER_ENDPOINT_PORT, protocol: 'TCP' }, { name: METRICS_PORT_NAME, containerPort: HANDLER_ENDPOINT_PORT, protocol: 'TCP' }],
              // Ready once its endpoint (console, VNC, pause, ...) listens: that comes after its PKI,
              // the device plugins and the informers have started.
              readinessProbe: { tcpSocket: { port: 'endpoint' }, periodSeconds: 2, failureThreshold: 3 },
              resources: { requests: { cpu: '10m', memory: '100Mi' } },
              // Privileged is needed here and only here: the handler sees the host's /dev (device health),
              // bind-mounts container disks, opens /dev/net/tun and /dev/vhost-net so their modules load, serves
              // sockets in the kubelet's device-plugins dir and dials launcher sockets inside other
              // pods' emptyDirs. Launcher pods get their devices from the device plugins instead.
              securityContext: { privileged: true, runAsUser: 0 },
              volumeMounts: [
                // Bidirectional: the container disks and hotplugged claims it bind-mounts into launcher
                // pods' dirs must reach the host's mount namespace (and from there, through their
                // HostToContainer mounts, the launchers).
                { name: 'kubelet-pods', mountPath: KUBELET_PODS_DIR, mountPropagation: 'Bidirectional' },
                { name: 'device-plugins', mountPath: DEVICE_PLUGIN_PATH },
                { name: 'virt-private', mountPath: HANDLER_STATE_DIR },
                // The host's root filesystem, where the host's mount namespace cannot be entered
                // (/proc/1/ns/mnt is not readable under every runtime): container disks are bind-mounted
                // from their image layers there, hotplugged hostPath/local claims from their directories
                // (an empty claim gets its disk.img made there: read-write).
                { name: 'host-fs', mountPath: HANDLER_HOST_FS },
              ],
            }],
            volumes: [
              { name: 'kubelet-pods', hostPath: { path: KUBELET_PODS_DIR, type: 'Directory' } },
              { name: 'device-plugins', hostPath: { path: DEVICE_PLUGIN_PATH, type: 'DirectoryOrCreate' } },
              { name: 'virt-private', hostPath: { path: HANDLER_STATE_DIR, type: 'DirectoryOrCreate' } },
              { name: 'host-fs', hostPath: { path: '/', type: 'Directory' } },
              // No hostPath for /dev/kvm, /dev/net/tun, /dev/vhost-net: a privileged container sees the
              // host's device nodes already, and a hostPath of /dev/kvm would keep the handler off nodes
              // without KVM (emulation). The kubelet hands them to launcher pods through the plugins.
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: PROMETHEUS_SERVICE, namespace: ns, labels: { [APP_LABEL]: '', [PROMETHEUS_LABEL.key]: PROMETHEUS_LABEL.value } },
      spec: {
        selector: { [PROMETHEUS_LABEL.key]: PROMETHEUS_LABEL.value },
        ports: [{ name: METRICS_PORT_NAME, port: 443, targetPort: METRICS_PORT_NAME, protocol: 'TCP' }],
        type: 'ClusterIP',
        clusterIP: 'None',
      },
    },
  ];
}

/** KubeVirt's four CRDs (src/api/schema) and the KubeVirt CR's. */
export function allCrds(): (KubeObject & Record<string, unknown>)[] {
  return [...customResourceDefinitions().map((c) => c as unknown as KubeObject & Record<string, unknown>), kubeVirtCrd()];
}

/** What `qvirt install` applies, in order: the namespace, every CRD, then the rest of manifests(). */
export function installObjects(opts: ManifestOptions = {}): (KubeObject & Record<string, unknown>)[] {
  const m = manifests(opts).filter((o) => o.kind !== 'CustomResourceDefinition');
  return [m[0]!, ...allCrds(), ...m.slice(1)];
}

// virt-controller's validating webhooks in the install: the Service kube-apiserver calls them
// through (every controller replica serves them) and the ValidatingWebhookConfiguration with
// virt-api's webhook names, paths and rules. The caBundle is set by the controller itself from
// the Secret it keeps (src/admission/controller-webhooks.ts).
import type { KubeObject } from '../kube/client.ts';
import { kubeVirtObjectWebhooks, OBJECT_WEBHOOK_RULES } from '../admission/object-webhooks.ts';
import { WEBHOOK_CONFIGURATION, WEBHOOK_SERVICE } from '../admission/controller-webhooks.ts';
import { isKubeVirtServiceAccount } from '../admission/kubevirt-webhooks.ts';
import { MIGRATION_CREATE_PATH, POD_EVICTION_PATH } from '../admission/api-webhooks.ts';
import { MIGRATION_CREATE_WEBHOOK } from '../admission/migration-create.ts';
import { LAUNCHER_EVICTION_WEBHOOK } from '../admission/pod-eviction.ts';

/** The port the controller serves the webhooks on (`--webhook-port`); the Service maps 443 to it. */
export const CONTROLLER_WEBHOOK_PORT = 8444;

export function webhookObjects(ns: string, appLabel: string, controllerApp: string, labels: Record<string, string>): (KubeObject & Record<string, unknown>)[] {
  return [
    {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: WEBHOOK_SERVICE, namespace: ns, labels },
      spec: { selector: { [appLabel]: controllerApp }, ports: [{ name: 'webhooks', port: 443, targetPort: CONTROLLER_WEBHOOK_PORT, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration',
      metadata: { name: WEBHOOK_CONFIGURATION, labels },
      webhooks: kubeVirtObjectWebhooks(isKubeVirtServiceAccount).map((w): Record<string, unknown> => {
        const rule = OBJECT_WEBHOOK_RULES[w.name as keyof typeof OBJECT_WEBHOOK_RULES];
        return {
          name: w.name,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { service: { namespace: ns, name: WEBHOOK_SERVICE, path: w.path, port: 443 } },
          rules: [{ operations: [...rule.operations], apiGroups: ['kubevirt.io'], apiVersions: ['v1'], resources: [rule.resource], scope: '*' }],
        };
      }).concat([
        {
          name: MIGRATION_CREATE_WEBHOOK,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { service: { namespace: ns, name: WEBHOOK_SERVICE, path: MIGRATION_CREATE_PATH, port: 443 } },
          rules: [{ operations: ['CREATE'], apiGroups: ['kubevirt.io'], apiVersions: ['v1'], resources: ['virtualmachineinstancemigrations'], scope: '*' }],
        },
        // As virt-operator installs it: every operation on pods/eviction, only for launcher pods
        // (a match condition, Kubernetes ≥ 1.28), side effects (the VMI's evacuation mark) none on dry run.
        {
          name: LAUNCHER_EVICTION_WEBHOOK,
          admissionReviewVersions: ['v1'],
          sideEffects: 'NoneOnDryRun',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { service: { namespace: ns, name: WEBHOOK_SERVICE, path: POD_EVICTION_PATH, port: 443 } },
          rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], scope: '*' }],
          matchConditions: [{ name: 'only-vms', expression: 'object.metadata.name.startsWith("virt-launcher")' }],
        },
      ]),
    },
  ];
}

// virt-controller's validating webhooks in the install: the Service kube-apiserver calls them
// through (every controller replica serves them) and the ValidatingWebhookConfiguration with
// virt-api's webhook names, paths and rules. The caBundle is set by the controller itself from
// the Secret it keeps (src/admission/controller-webhooks.ts).
import type { KubeObject } from '../kube/client.ts';
import { kubeVirtObjectWebhooks, OBJECT_WEBHOOK_RULES } from '../admission/object-webhooks.ts';
import { WEBHOOK_CONFIGURATION, WEBHOOK_SERVICE } from '../admission/controller-webhooks.ts';
import { isKubeVirtServiceAccount } from '../admission/kubevirt-webhooks.ts';
import { MIGRATION_CREATE_PATH, POD_EVICTION_PATH } from '../admission/api-webhooks.ts';
import { MIGRATION_CREATE_WEBHOOK } from '../admission/migration-create-admitter.ts';
import { LAUNCHER_EVICTION_WEBHOOK } from '../admission/pod-eviction-admitter.ts';

/** The port the controller serves the webhooks on (`--webhook-port`); the Service maps 443 to it. */
export const CONTROLLER_WEBHOOK_PORT = 8444;

/** One validating webhook served by the controller's Service, with virt-api's settings (v1 reviews, fail closed, 10 s). */
function webhook(ns: string, name: string, path: string, rule: { operations: string[]; apiGroups: string[]; apiVersions?: string[]; resources: string[] }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    clientConfig: { service: { namespace: ns, name: WEBHOOK_SERVICE, path, port: 443 } },
    rules: [{ operations: rule.operations, apiGroups: rule.apiGroups, apiVersions: rule.apiVersions ?? ['v1'], resources: rule.resources, scope: '*' }],
    ...extra,
  };
}

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
      webhooks: [
        ...kubeVirtObjectWebhooks(isKubeVirtServiceAccount).map((w) => {
          const rule = OBJECT_WEBHOOK_RULES[w.name as keyof typeof OBJECT_WEBHOOK_RULES];
          return webhook(ns, w.name, w.path, { operations: [...rule.operations], apiGroups: [rule.group], apiVersions: [rule.version], resources: [rule.resource] });
        }),
        webhook(ns, MIGRATION_CREATE_WEBHOOK, MIGRATION_CREATE_PATH, { operations: ['CREATE'], apiGroups: ['kubevirt.io'], resources: ['virtualmachineinstancemigrations'] }),
        // As virt-operator installs it: every operation on pods/eviction, only for launcher pods
        // (a match condition, Kubernetes ≥ 1.28), side effects (the VMI's evacuation mark) none on dry run.
        webhook(ns, LAUNCHER_EVICTION_WEBHOOK, POD_EVICTION_PATH, { operations: ['*'], apiGroups: [''], resources: ['pods/eviction'] }, {
          sideEffects: 'NoneOnDryRun',
          matchConditions: [{ name: 'only-vms', expression: 'object.metadata.name.startsWith("virt-launcher")' }],
        }),
      ],
    },
  ];
}

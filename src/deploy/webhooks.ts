// virt-controller's validating webhooks in the install: the Service kube-apiserver calls them
// through (every controller replica serves them) and the ValidatingWebhookConfiguration with
// virt-api's webhook names, paths and rules. The caBundle is set by the controller itself from
// the Secret it keeps (src/admission/controller-webhooks.ts).
import type { KubeObject } from '../kube/client.ts';
import { kubeVirtObjectWebhooks, OBJECT_WEBHOOK_RULES } from '../admission/object-webhooks.ts';
import { WEBHOOK_CONFIGURATION, WEBHOOK_SERVICE } from '../admission/controller-webhooks.ts';
import { isKubeVirtServiceAccount } from '../admission/kubevirt-webhooks.ts';

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
      webhooks: kubeVirtObjectWebhooks(isKubeVirtServiceAccount).map((w) => {
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
      }),
    },
  ];
}

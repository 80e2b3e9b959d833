// A client-node KubeConfig for an API server URL without credentials (plain-HTTP embedded server).
import { KubeConfig } from '@kubernetes/client-node';

export function kubeConfigForServer(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'qvirt', server: url, skipTLSVerify: url.startsWith('http:') }],
    users: [{ name: 'qvirt' }],
    contexts: [{ name: 'qvirt', cluster: 'qvirt', user: 'qvirt' }],
    currentContext: 'qvirt',
  });
  return kc;
}

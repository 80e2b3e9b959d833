// The API conformance cases (conformance-cases.ts) against a real kube-apiserver: the cluster of
// QVIRT_E2E_KUBECONFIG, else the shared one (test/lib/real-cluster.ts). The suite creates and removes
// only its own CRD group and namespaces.
import { test } from 'uvu';
import { KubeConfig } from '@kubernetes/client-node';
import { withRealCluster } from '../lib/real-cluster.ts';
import { conformanceSuite, probeExpiredResourceVersion } from './conformance-cases.ts';

const cluster = await withRealCluster();
const kc = new KubeConfig();
kc.loadFromFile(cluster.kubeconfig);
conformanceSuite(test, { name: 'real', kc, expiredResourceVersion: probeExpiredResourceVersion });
test.run();

// The Lease virt-controller's replicas elect their leader on (leader-election.ts), by default: the
// controller takes it (controller/manager.ts, `qvirt controller --namespace --lease-name`), the install
// passes its name and grants access to it (src/deploy/manifests.ts). Its namespace is the install's.
export const DEFAULT_LEASE_NAME = 'qvirt-controller';
export const DEFAULT_LEASE_NAMESPACE = 'kubevirt';

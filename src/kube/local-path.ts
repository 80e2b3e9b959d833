// The local-path provisioner's names (the local mode's storage, src/local/local-path-provisioner.ts):
// the storage class it provisions for, and the claim annotation it records the claim's host
// directory (or block file) in — read by the controllers (a DataVolume's import, a VMI's claims) and
// the node agent (a hotplugged claim) to find the claim's disk without a kubelet mount.
export const LOCAL_PATH_ANNOTATION = 'local.qvirt.io/path';
export const LOCAL_PATH_STORAGE_CLASS = 'local-path';

/**
 * `<podDir>/host-dev`: written by the local pod runner, whose containers are processes sharing the
 * host's mount namespace — a pod's containers see the host's /dev, not device nodes of their own. The
 * node agent then has none to hand to the launcher's user (KubeVirt's claimDeviceOwnership changes the
 * launcher container's /dev only, never the host's) and need not look for the pod's processes in every
 * /proc entry. A pod without it is a real node's.
 */
export const POD_HOST_DEV_FILE = 'host-dev';

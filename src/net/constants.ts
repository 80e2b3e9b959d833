// Names shared by the local pod runner (which makes pod network namespaces) and the node agent
// (which sets up VM networking inside them).

/**
 * `<podDir>/netns`: the pod's network namespace file (one line, e.g. `/run/netns/qvirt-<uid>`),
 * written by the local pod runner when it attaches the pod to its network — what a CNI result
 * is in a cluster. Empty when the local pod runner has no pod network (the pod shares the host's);
 * a pod without it is a real node's, found through its processes.
 */
export const POD_NETNS_FILE = 'netns';

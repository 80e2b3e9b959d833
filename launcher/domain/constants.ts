// The launcher's own strings: the Kubernetes event reasons only it sends through Notify and the
// guest agent's channel. The domain's lifecycle strings are the contract's (src/api/domain/lifecycle.ts);
// the event reasons the API names (IOerror, GuestPanicked) are src/api/constants.ts's EventReason.

/** Reasons of the Kubernetes events a launcher records on its VMI through Notify.HandleK8sEvent, besides EventReason's. */
export const K8sEventReason = {
  GuestAgentPingFailed: 'GuestAgentPingFailed',
  /** qvirt's: the guest's watchdog expired (libvirt reports it to no one in KubeVirt). */
  Watchdog: 'Watchdog',
  /** A reset the guest did itself (virt-handler's reason for the reset it is asked for). */
  Reset: 'Reset',
} as const;

/** The guest agent's virtio-serial port name and the QEMU id KubeVirt/libvirt gives its channel. */
export const GUEST_AGENT_PORT_NAME = 'org.qemu.guest_agent.0';

// Where a `portforward/PORT[/PROTOCOL]` connection goes, decided as KubeVirt decides it. Pure.
//
// KubeVirt (pkg/virt-api/rest/portforward.go, dialers.go netDial): virt-api refuses a paused VMI
// (409 "VMI is paused") and otherwise dials `status.interfaces[0].ipAddress:PORT` with the
// protocol, from its own pod over the cluster network (400 "no network interfaces are present"
// without one); virt-handler takes no part. What answers at that address is the binding's doing:
// masquerade DNATs the pod IP's ports to the guest (all of them unless `ports` lists some), bridge
// gave the guest the pod IP itself, passt forwards the listed ports from the pod IP.
//
// An interface served by QEMU user-mode networking (qvirt's local mode without a pod network,
// `infoSource` says `user-mode-network`) has no address anyone can dial: the guest sits behind
// QEMU's slirp NAT. That case goes through a host forward QEMU opens for the one connection
// (handler/endpoint/usernet-forward.ts).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { isVmiPaused } from '../../src/api/vmi-conditions.ts';
import { USER_MODE_NETWORK_INFO_SOURCE } from '../status.ts';
import type { PortForwardRequest } from './routes.ts';

export type PortForwardTarget =
  /** Dial `host:port` from here (the pod network: KubeVirt's way). */
  | { kind: 'dial'; host: string; port: number; protocol: PortForwardRequest['protocol']; interfaceName: string | undefined }
  /** The interface is QEMU user-mode networking: a host forward on the interface's netdev reaches the guest. */
  | { kind: 'user-mode'; interfaceName: string | undefined; port: number; protocol: PortForwardRequest['protocol'] }
  | { kind: 'refuse'; code: 400 | 409; message: string };

/** The target of a port-forward to `req` on `vmi`. Pure. */
export function portForwardTarget(vmi: VirtualMachineInstance, req: PortForwardRequest): PortForwardTarget {
  const ref = `VMI ${vmi.metadata?.namespace ?? ''}/${vmi.metadata?.name ?? ''}`;
  if (isVmiPaused(vmi)) return { kind: 'refuse', code: 409, message: `${ref} is paused: unpause it to forward ports` };
  const first = vmi.status?.interfaces?.[0];
  if (!first) return { kind: 'refuse', code: 400, message: `${ref}: no network interfaces are present (status.interfaces is empty), so port ${req.port}/${req.protocol} cannot be forwarded` };
  if (first.infoSource?.split(',').some((s) => s.trim() === USER_MODE_NETWORK_INFO_SOURCE)) {
    return { kind: 'user-mode', interfaceName: first.name, port: req.port, protocol: req.protocol };
  }
  const host = first.ipAddress;
  if (!host) return { kind: 'refuse', code: 400, message: `${ref}: its first interface${first.name ? ` "${first.name}"` : ''} has no IP address yet (status.interfaces[0].ipAddress), so port ${req.port}/${req.protocol} cannot be reached` };
  return { kind: 'dial', host, port: req.port, protocol: req.protocol, interfaceName: first.name };
}

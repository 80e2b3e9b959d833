// What virt-api checks on a VMI before it forwards a subresource call to the node agent
// (pkg/virt-api/rest/lifecycle.go, console.go, vnc.go), as pure functions: the VMI goes in, the
// refusal (HTTP code and virt-api's message) or undefined comes out. qvirt's virt-api checks them
// before it calls the node agent, and so does the CLI where it calls the node agent directly; the
// node agent checks its own state again.
import type { VirtualMachineInstance } from '../api/types.ts';
import { VMIConditionType, VMIPhase } from '../api/constants.ts';
import { hasVmiCondition, isVmiPaused } from '../api/vmi-conditions.ts';

export type VmiSubresource = 'pause' | 'unpause' | 'freeze' | 'unfreeze' | 'reset' | 'softreboot' | 'guestosinfo' | 'userlist' | 'filesystemlist' | 'console' | 'vnc' | 'vnc/screenshot' | 'qmp';

export interface Refusal {
  readonly code: 400 | 403 | 409;
  readonly message: string;
}

const vmNotRunning = 'VM is not running';
const vmiNotRunning = 'VMI is not running';

/** The refusal virt-api would answer for this subresource on this VMI, or undefined when it would go ahead. */
export function checkVmiSubresource(sub: VmiSubresource, vmi: VirtualMachineInstance): Refusal | undefined {
  const phase = vmi.status?.phase ?? '';
  const running = phase === VMIPhase.Running;
  switch (sub) {
    case 'pause':
      if (!running) return { code: 409, message: vmNotRunning };
      if (vmi.spec.livenessProbe && !vmi.spec.livenessProbe.guestAgentPing) return { code: 403, message: 'Pausing VMIs with a non-GuestAgentPing LivenessProbe is not supported' };
      if (hasVmiCondition(vmi, VMIConditionType.Paused)) return { code: 409, message: 'VMI is already paused' };
      return undefined;
    case 'unpause':
      if (!running) return { code: 409, message: vmiNotRunning };
      if (!hasVmiCondition(vmi, VMIConditionType.Paused)) return { code: 409, message: 'VMI is not paused' };
      return undefined;
    case 'freeze':
      return running ? undefined : { code: 409, message: vmNotRunning };
    case 'unfreeze':
      return running ? undefined : { code: 409, message: vmiNotRunning };
    case 'softreboot': {
      if (!running) return { code: 409, message: vmNotRunning };
      if (isVmiPaused(vmi)) return { code: 409, message: 'VMI is paused' };
      if (!hasVmiCondition(vmi, VMIConditionType.AgentConnected) && vmi.spec.domain.features?.acpi?.enabled === false) {
        return { code: 409, message: 'VMI neither have the agent connected nor the ACPI feature enabled' };
      }
      return undefined;
    }
    case 'reset':
      return running ? undefined : { code: 409, message: `Failed to reset non-running VMI with phase ${phase || 'unset'}` };
    case 'console':
      if (vmi.spec.domain.devices.autoattachSerialConsole === false) return { code: 400, message: 'No serial consoles are present.' };
      if (phase === VMIPhase.Failed) return { code: 409, message: 'VMI is in failed status' };
      return running ? undefined : { code: 400, message: vmiNotRunning };
    case 'vnc':
    case 'vnc/screenshot': // vmiHasDisplay, as for the VNC stream
      if (vmi.spec.domain.devices.autoattachGraphicsDevice === false) return { code: 400, message: 'No graphics devices are present.' };
      return running ? undefined : { code: 400, message: vmiNotRunning };
    case 'guestosinfo':
    case 'userlist':
    case 'filesystemlist':
    case 'qmp':
      // virt-api asks the handler directly; the VMI must be on a node, i.e. at least Scheduled.
      return running || phase === VMIPhase.Scheduled ? undefined : { code: 409, message: vmiNotRunning };
  }
}

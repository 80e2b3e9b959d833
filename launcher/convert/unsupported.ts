// VMI features qvirt cannot express yet: each becomes a ConversionError naming the field, so a
// VMI never starts with part of its spec silently dropped.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { ConversionError } from './plan.ts';

const DEV = 'spec.domain.devices';

export function rejectUnsupported(vmi: VirtualMachineInstance): void {
  const d = vmi.spec.domain;
  const dev = d.devices;
  const nonEmpty = (a: unknown[] | undefined): boolean => a !== undefined && a.length > 0;
  if (nonEmpty(dev.gpus)) throw new ConversionError(`${DEV}.gpus`, 'GPU passthrough is not supported by qvirt yet');
  if (nonEmpty(dev.hostDevices)) throw new ConversionError(`${DEV}.hostDevices`, 'host device passthrough is not supported by qvirt yet');
  if (nonEmpty(dev.filesystems)) throw new ConversionError(`${DEV}.filesystems`, 'virtiofs filesystems are not supported by qvirt yet');
  if (dev.sound) throw new ConversionError(`${DEV}.sound`, 'sound devices are not supported by qvirt yet');
  if (dev.clientPassthrough) throw new ConversionError(`${DEV}.clientPassthrough`, 'USB redirection is not supported by qvirt yet');
  if (dev.downwardMetrics) throw new ConversionError(`${DEV}.downwardMetrics`, 'the downward metrics channel is not supported by qvirt yet');
  if (d.launchSecurity) {
    const kind = d.launchSecurity.sev ? 'sev' : d.launchSecurity.snp ? 'snp' : d.launchSecurity.tdx ? 'tdx' : '';
    throw new ConversionError(`spec.domain.launchSecurity${kind ? '.' + kind : ''}`, 'confidential computing (SEV/SNP/TDX) is not supported by qvirt yet');
  }
  if (nonEmpty(vmi.spec.resourceClaims)) throw new ConversionError('spec.resourceClaims', 'DRA resource claims are not supported by qvirt yet');
}

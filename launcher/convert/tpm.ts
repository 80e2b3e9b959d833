// The emulated TPM (KubeVirt's TPMDomainConfigurator: `<tpm model='tpm-tis'><backend type='emulator'
// version='2.0'/></tpm>`): a TPM 2.0 in an swtpm process the launcher runs beside QEMU
// (launcher/tpm/swtpm.ts), reached over swtpm's control socket in the launcher's private directory,
// and QEMU's `tpm-tis` on the ISA bus in front of it. The TPM's state lives in that directory for the
// VMI's life; QEMU carries it in the migration stream. `persistent: true` keeps it across reboots of
// the VM in a backend-storage claim, which qvirt does not provide yet: refused, naming the field.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { hasPersistentTpmDevice, hasTpmDevice } from '../../src/api/tpm.ts';
import { opt, type PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext, type TpmPlan } from './plan.ts';
import { PrivateFile, QemuId } from './constants.ts';
import { isEFI } from './firmware.ts';

export function configureTpm(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): TpmPlan | undefined {
  if (!hasTpmDevice(vmi.spec)) return undefined;
  // QEMU 7.2's direct kernel boot under SeaBIOS loads the initrd right below the room it keeps for the
  // ACPI tables (160 KiB); the TPM's 64 KiB event log pushes SeaBIOS's tables below that, and the
  // initrd overwrites them: the guest finds a corrupt RSDT ("Invalid table length") and runs without
  // ACPI or the TPM (measured with KubeVirt's device set; a 4 KiB initrd leaves the tables intact).
  // OVMF loads the kernel itself; a guest booting from its disk has no initrd from QEMU.
  const kb = vmi.spec.domain.firmware?.kernelBoot;
  if (kb?.container?.initrdPath && !isEFI(vmi)) {
    throw new ConversionError('spec.domain.devices.tpm', 'a TPM with spec.domain.firmware.kernelBoot\'s initrd under BIOS firmware: QEMU 7.2 would load the initrd over the ACPI tables the TPM moves down, and the guest would have neither ACPI nor the TPM; boot from a disk, or use EFI (firmware.bootloader.efi)');
  }
  if (hasPersistentTpmDevice(vmi.spec)) {
    throw new ConversionError('spec.domain.devices.tpm.persistent', 'a persistent TPM keeps its state in a backend-storage claim, which qvirt does not provide yet (a TPM without persistent: true works)');
  }
  const socket = `${ctx.paths.privateDir}/${PrivateFile.Swtpm}`;
  const stateDir = `${ctx.paths.privateDir}/${PrivateFile.SwtpmState}`;
  b.backend('-chardev', `socket,id=${QemuId.TpmChardev},path=${opt(socket)}`);
  b.backend('-tpmdev', `emulator,id=${QemuId.TpmBackend},chardev=${QemuId.TpmChardev}`);
  b.device({ driver: 'tpm-tis', tpmdev: QemuId.TpmBackend, id: QemuId.Tpm });
  return { socket, stateDir };
}

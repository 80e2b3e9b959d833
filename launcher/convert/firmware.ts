// Firmware and boot: SMBIOS identity (uuid, serial, chassis), SeaBIOS (default) or OVMF pflash with
// a per-VM VARS copy (secure boot: secboot code, MS-enrolled vars, SMM), direct kernel boot,
// the boot menu of paused starts, and the Ignition fw_cfg blob.
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import { Annotation } from '../../src/api/constants.ts';
import { json, opt, type PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext } from './plan.ts';
import { DEFAULT_NVRAM_DIR, DEFAULT_SMBIOS, QemuId } from './constants.ts';

const FW = 'spec.domain.firmware';

/** QEMU's -smbios uses ',' as separator: a literal comma is written ',,'. */
const smbiosValue = opt;

export function isEFI(vmi: VirtualMachineInstance): boolean {
  return vmi.spec.domain.firmware?.bootloader?.efi !== undefined;
}

/** EFI secure boot: KubeVirt defaults `efi.secureBoot` to true. */
export function isSecureBoot(vmi: VirtualMachineInstance): boolean {
  const efi = vmi.spec.domain.firmware?.bootloader?.efi;
  return efi !== undefined && efi.secureBoot !== false;
}

export function configureFirmware(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): void {
  const fw = vmi.spec.domain.firmware;
  configureSmbios(vmi, ctx, b);

  if (fw?.acpi) throw new ConversionError(`${FW}.acpi`, 'ACPI SLIC/MSDM tables are not supported by qvirt yet');
  const bl = fw?.bootloader;
  if (bl?.bios?.useSerial) b.machine('graphics', 'off');
  if (bl?.efi) configureEFI(vmi, ctx, b);

  // Boot order is carried by bootindex on the devices; a paused start gets a boot menu.
  b.arg('-boot', vmi.spec.startStrategy === 'Paused' ? 'menu=on,splash-time=10000,strict=on' : 'strict=on');

  const kb = fw?.kernelBoot;
  if (kb?.container) {
    const c = kb.container;
    if (c.kernelPath) {
      if (!ctx.kernelBoot?.kernel) throw new ConversionError(`${FW}.kernelBoot.container.kernelPath`, 'the launcher did not provide the extracted kernel');
      b.arg('-kernel', ctx.kernelBoot.kernel);
    }
    if (c.initrdPath) {
      if (!ctx.kernelBoot?.initrd) throw new ConversionError(`${FW}.kernelBoot.container.initrdPath`, 'the launcher did not provide the extracted initrd');
      b.arg('-initrd', ctx.kernelBoot.initrd);
    }
    if (kb.kernelArgs) b.arg('-append', kb.kernelArgs);
  } else if (kb?.kernelArgs) {
    b.warn(`${FW}.kernelBoot.kernelArgs: ignored without kernelBoot.container (no kernel to pass them to)`);
  }

  const ignition = vmi.metadata?.annotations?.[Annotation.IgnitionData];
  if (ignition && ignition.includes('ignition')) {
    if (!ctx.ignitionFile) throw new ConversionError(`metadata.annotations["${Annotation.IgnitionData}"]`, 'the launcher did not write the Ignition file');
    b.arg('-fw_cfg', `name=opt/com.coreos/config,file=${opt(ctx.ignitionFile)}`);
  }
}

/** -uuid + SMBIOS type 1 (system) and type 3 (chassis), as libvirt's <sysinfo> renders them. */
export function configureSmbios(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): void {
  const fw = vmi.spec.domain.firmware;
  const uuid = fw?.uuid;
  if (uuid !== undefined) {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(uuid)) {
      throw new ConversionError(`${FW}.uuid`, `"${uuid}" is not a UUID`);
    }
    b.arg('-uuid', uuid);
  }
  const sys = { ...DEFAULT_SMBIOS, ...ctx.smbios };
  const type1: Array<[string, string | undefined]> = [
    ['manufacturer', sys.manufacturer],
    ['product', sys.product],
    ['version', sys.version],
    ['serial', fw?.serial],
    ['uuid', uuid],
    ['sku', sys.sku],
    ['family', sys.family],
  ];
  const t1 = type1.filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => `${k}=${smbiosValue(v ?? '')}`);
  if (t1.length > 0) b.arg('-smbios', ['type=1', ...t1].join(','));
  const ch = vmi.spec.domain.chassis;
  if (ch) {
    const t3 = ([['manufacturer', ch.manufacturer], ['version', ch.version], ['serial', ch.serial], ['asset', ch.asset], ['sku', ch.sku]] as const)
      .filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => `${k}=${smbiosValue(v ?? '')}`);
    if (t3.length > 0) b.arg('-smbios', ['type=3', ...t3].join(','));
  }
}

/** NVRAM copy path: KubeVirt's `<nvramDir>/<vmi name>_VARS.fd`. */
export function nvramPath(vmi: VirtualMachineInstance, ctx: ConvertContext): string {
  return `${ctx.paths.nvramDir ?? DEFAULT_NVRAM_DIR}/${vmi.metadata?.name ?? 'vmi'}_VARS.fd`;
}

function configureEFI(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): void {
  const efi = vmi.spec.domain.firmware?.bootloader?.efi;
  if (efi?.persistent) {
    throw new ConversionError(`${FW}.bootloader.efi.persistent`, 'persistent EFI NVRAM needs backend storage, which qvirt does not support yet');
  }
  if (!ctx.ovmf) throw new ConversionError(`${FW}.bootloader.efi`, 'EFI requested but the launcher found no OVMF firmware');
  const secure = isSecureBoot(vmi);
  const code = secure ? ctx.ovmf.secureBootCode : ctx.ovmf.code;
  const template = secure ? ctx.ovmf.secureBootVars : ctx.ovmf.vars;
  const vars = nvramPath(vmi, ctx);
  b.files.push({ kind: 'copy', source: template, destination: vars, onlyIfMissing: true });

  b.backend(
    '-blockdev', json({ driver: 'file', filename: code, 'node-name': QemuId.PflashCodeStorage, 'auto-read-only': true, discard: 'unmap' }),
    '-blockdev', json({ 'node-name': QemuId.PflashCodeFormat, 'read-only': true, driver: 'raw', file: QemuId.PflashCodeStorage }),
    '-blockdev', json({ driver: 'file', filename: vars, 'node-name': QemuId.PflashVarsStorage, 'auto-read-only': true, discard: 'unmap' }),
    '-blockdev', json({ 'node-name': QemuId.PflashVarsFormat, 'read-only': false, driver: 'raw', file: QemuId.PflashVarsStorage }),
  );
  b.machine('pflash0', QemuId.PflashCodeFormat);
  b.machine('pflash1', QemuId.PflashVarsFormat);
  if (secure) {
    const smm = vmi.spec.domain.features?.smm;
    if (smm && smm.enabled === false) {
      throw new ConversionError('spec.domain.features.smm', 'EFI secure boot requires SMM; it is disabled');
    }
    b.machine('smm', 'on');
    b.global('driver=cfi.pflash01,property=secure,value=on');
  }
}

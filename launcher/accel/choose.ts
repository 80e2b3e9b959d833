// Which accelerator a VM gets: KVM where it really works, TCG (software emulation) only when the
// cluster allows emulation — KubeVirt's `developerConfiguration.useEmulation`, passed to the
// launcher as `--allow-emulation`. Without it, a node whose KVM cannot run guests is an error.
export type Accelerator = 'kvm' | 'tcg';

export type AcceleratorChoice =
  | { accel: 'kvm'; softwareEmulation: false; reason: string }
  | { accel: 'tcg'; softwareEmulation: true; reason: string }
  | { accel: null; error: string };

/** The decision (pure): `kvm` is the probe's verdict (see kvm-probe.ts). */
export function chooseAccelerator(kvm: { usable: boolean; reason: string }, allowEmulation: boolean): AcceleratorChoice {
  if (kvm.usable) return { accel: 'kvm', softwareEmulation: false, reason: kvm.reason };
  if (allowEmulation) {
    return { accel: 'tcg', softwareEmulation: true, reason: `software emulation (TCG), allowed by useEmulation: ${kvm.reason}` };
  }
  return { accel: null, error: `hardware virtualization is not usable and software emulation is not allowed (set spec.configuration.developerConfiguration.useEmulation in the KubeVirt CR to allow it): ${kvm.reason}` };
}

/** Thrown by launcher code when `chooseAccelerator` finds no accelerator. */
export class AcceleratorUnavailableError extends Error {
  override readonly name = 'AcceleratorUnavailableError';
}

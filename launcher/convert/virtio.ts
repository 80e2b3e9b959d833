// virtio device model names: KubeVirt's `useVirtioTransitional` picks libvirt's
// virtio-transitional model, else virtio-non-transitional (virtio/transitional-model.go);
// libvirt renders those as QEMU's `<base>-pci-transitional` / `<base>-pci-non-transitional`.

export function virtioDriver(base: string, transitional: boolean): string {
  return `${base}-pci-${transitional ? 'transitional' : 'non-transitional'}`;
}

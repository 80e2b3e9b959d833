// A `registry` DataVolume source's disk, brought onto this machine: CDI's registry data source
// (pkg/importer/registry-datasource.go) pulls the image and takes the disk out of it. Pulling is
// the node's business, not the controller's: the local mode passes one that pulls into its image
// store (src/local/image-store-registry-source.ts); without one, registry sources fail.
export interface RegistryDataSource {
  /**
   * Pulls the image of `url` (`docker://<ref>`) and resolves to the path of its disk file, which
   * stays the pulled image's (the importer copies or converts from it). `ca` is the PEM of the
   * source's certConfigMap, `auth` the credentials of its secretRef; `scratch` the import's temp
   * directory. A failed pull throws an ImportError, permanent when retrying cannot help.
   */
  pullDisk(url: string, o: RegistryPull): Promise<string>;
}

export interface RegistryPull {
  readonly ca?: string | undefined;
  readonly auth?: { readonly secret: string; readonly user: string; readonly password: string } | undefined;
  readonly scratch: string;
  readonly signal: AbortSignal;
  /** The pull's bytes so far and the image's total (CDI's registry import progress). */
  readonly onProgress?: ((done: number, total: number | undefined) => void) | undefined;
}

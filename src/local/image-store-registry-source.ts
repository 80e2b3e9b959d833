// The local mode's RegistryDataSource: a DataVolume's registry image is pulled into the local image
// store as the pod runners pull container disks (same registries' certs.d and insecure list), the
// source's certConfigMap as a certs.d entry for the registry's host and its secretRef as the
// credentials for it; the disk is the image's containerDisk file.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImportError } from '../../controller/datavolume/importer.ts';
import type { RegistryDataSource, RegistryPull } from '../../controller/datavolume/registry-data-source.ts';
import { ImageSourceError } from './image-import.ts';
import { pullImage, type RegistryOptions } from './image-pull.ts';
import { ImageStoreError, normalizeImageRef, type ImageStore } from './image-store.ts';
import { imageRegistry } from './registry-auth.ts';

export class ImageStoreRegistrySource implements RegistryDataSource {
  readonly store: ImageStore;
  readonly registries: RegistryOptions;

  constructor(store: ImageStore, registries: RegistryOptions = {}) {
    this.store = store;
    this.registries = registries;
  }

  async pullDisk(url: string, o: RegistryPull): Promise<string> {
    const ref = url.replace(/^docker:\/\//, '');
    const host = imageRegistry(normalizeImageRef(ref)).host;
    let registries = this.registries;
    if (o.ca !== undefined) {
      const certsDir = join(o.scratch, 'certs.d');
      await mkdir(join(certsDir, host), { recursive: true });
      await writeFile(join(certsDir, host, 'ca.crt'), o.ca);
      registries = { ...registries, certsDir };
    }
    try {
      await pullImage(this.store, ref, { registries, signal: o.signal, onProgress: o.onProgress, ...(o.auth ? { credentials: [{ key: host, secret: o.auth.secret, username: o.auth.user, password: o.auth.password }] } : {}) });
      return await this.store.containerDiskFile(ref);
    } catch (err) {
      if (o.signal.aborted) throw err;
      const permanent = err instanceof ImageSourceError ? err.notFound || err.unauthorized : err instanceof ImageStoreError;
      throw new ImportError(`Unable to pull ${url}: ${err instanceof Error ? err.message : String(err)}`, permanent);
    }
  }
}

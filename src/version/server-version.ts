// qvirt's version.Info (KubeVirt's pkg/version): what virt-api answers at
// `/apis/subresources.kubevirt.io/v1/version` and `virtctl version` prints as the server's version,
// and what the node agent's kubevirt_info metric labels. KubeVirt answers its version.Info (the Go
// runtime's fields included); qvirt answers the same fields for itself: its package version as
// gitVersion and the JavaScript runtime it runs on.
import { arch, platform, version as nodeVersion } from 'node:process';

export interface VersionInfo {
  readonly gitVersion: string;
  readonly gitCommit: string;
  readonly gitTreeState: string;
  readonly buildDate: string;
  readonly goVersion: string;
  readonly compiler: string;
  readonly platform: string;
}

const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

/** version.Info for qvirt `packageVersion` (e.g. 0.1.0 → v0.1.0); pure apart from the runtime's constants. */
export function serverVersion(packageVersion: string, commit = process.env.QVIRT_GIT_COMMIT ?? ''): VersionInfo {
  return {
    gitVersion: packageVersion.startsWith('v') ? packageVersion : `v${packageVersion}`,
    gitCommit: commit,
    gitTreeState: commit ? 'clean' : '',
    buildDate: '',
    goVersion: nodeVersion,
    compiler: 'node',
    platform: `${platform}/${GO_ARCH[arch] ?? arch}`,
  };
}

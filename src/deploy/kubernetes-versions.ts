/**
 * The Kubernetes versions qvirt supports: from {@link MIN_KUBERNETES} up to the newest (1.36 is
 * the one it is tested on). The minimum is the oldest Kubernetes that KubeVirt of the same era
 * supports: KubeVirt follows the three newest Kubernetes minors at each release, and its 1.7
 * (November 2025) was released for 1.32–1.34, 1.8 for 1.33–1.35, 1.9 for 1.34–1.36 (kubevirt/sig-release
 * `releases/k8s-support-matrix.md`). Everything in the CRDs must be known to the minimum: see
 * {@link CRD_FIELDS_SINCE}; and their CEL rules must stay within the cost budgets of every estimator
 * from the minimum on (src/apiserver/cel-cost.ts, test/api/crd-cel-cost.test.ts).
 *
 * `qvirt install` refuses an older API server (checkServerVersion) before it applies anything.
 */

export interface KubernetesVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

/** The oldest Kubernetes qvirt installs on. */
export const MIN_KUBERNETES: KubernetesVersion = { major: 1, minor: 32, patch: 0 };

/**
 * The CRD schema fields newer than `apiextensions.k8s.io/v1` itself (1.16), with the minor that
 * first accepts them on by default. An older API server refuses a CRD using them ("unknown field").
 */
export const CRD_FIELDS_SINCE: Readonly<Record<string, number>> = {
  /** CRDValidationRules: beta, on by default (GA in 1.29). */
  'x-kubernetes-validations': 25,
  'x-kubernetes-validations[].messageExpression': 27,
  'x-kubernetes-validations[].reason': 28,
  'x-kubernetes-validations[].fieldPath': 28,
  /** CRDValidationRatcheting: beta, on by default. */
  'x-kubernetes-validations[].optionalOldSelf': 30,
  /** CustomResourceFieldSelectors: beta, on by default. */
  'selectableFields': 31,
};

/** What the API server's `/version` says (client-go's version.Info), as far as it is read here. */
export interface ServerVersionInfo {
  readonly gitVersion?: unknown;
  readonly major?: unknown;
  readonly minor?: unknown;
}

export class KubernetesVersionError extends Error {
  override readonly name = 'KubernetesVersionError';
}

/**
 * `gitVersion` of the API server's /version (`v1.36.2`, `v1.26.3+k3s1`, `v1.30.0-eks-036c24b`,
 * `v1.31.1-gke.1146000`), or its `major`/`minor` (`"1"`, `"30+"`) when gitVersion is not a version.
 */
export function parseKubernetesVersion(info: ServerVersionInfo): KubernetesVersion {
  const m = typeof info.gitVersion === 'string' ? /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$/.exec(info.gitVersion.trim()) : null;
  const major = typeof info.major === 'string' ? /^(\d+)\+?$/.exec(info.major) : null;
  const minor = typeof info.minor === 'string' ? /^(\d+)\+?$/.exec(info.minor) : null;
  // An unstamped build from source says v0.0.0-master+$Format:%H$: then major/minor, where given.
  if (m && !(m[1] === '0' && major && minor)) return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) };
  if (major && minor) return { major: Number(major[1]), minor: Number(minor[1]), patch: 0 };
  throw new KubernetesVersionError(`cannot read the Kubernetes version from the API server's /version (gitVersion ${JSON.stringify(info.gitVersion)}, major ${JSON.stringify(info.major)}, minor ${JSON.stringify(info.minor)})`);
}

/** Negative, zero or positive as a is older than, the same as, or newer than b. */
export function compareKubernetesVersions(a: KubernetesVersion, b: KubernetesVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

export const formatKubernetesVersion = (v: KubernetesVersion, withPatch = true): string => `v${v.major}.${v.minor}${withPatch ? `.${v.patch}` : ''}`;

/** The server's version as it names itself (gitVersion), else as parsed. */
export const describeServerVersion = (info: ServerVersionInfo, v: KubernetesVersion = parseKubernetesVersion(info)): string =>
  typeof info.gitVersion === 'string' && info.gitVersion ? info.gitVersion : formatKubernetesVersion(v);

/**
 * The server's version; throws KubernetesVersionError, naming the server's version and the minimum,
 * when it is older than `min`.
 */
export function checkServerVersion(info: ServerVersionInfo, min: KubernetesVersion = MIN_KUBERNETES): KubernetesVersion {
  const v = parseKubernetesVersion(info);
  if (compareKubernetesVersions(v, min) < 0) {
    throw new KubernetesVersionError(
      `the API server runs Kubernetes ${describeServerVersion(info, v)}, older than ${formatKubernetesVersion(min, false)}, the oldest qvirt supports ` +
      '(its CRDs\' validation rules use fields and CEL cost estimates older servers refuse): upgrade the cluster to ' +
      `${formatKubernetesVersion(min, false)} or newer, then run qvirt install again (nothing was applied)`,
    );
  }
  return v;
}

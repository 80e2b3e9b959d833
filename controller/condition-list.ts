// KubeVirt's condition managers (pkg/controller/conditions.go) as pure list operations. All
// condition kinds the controllers touch (VMI, VM, VMIRS, VMIM, pod) share one shape, so one set of
// helpers serves them; every function returns a new list and leaves its input alone.

export interface ConditionLike {
  readonly type: string;
  readonly status: string;
  readonly reason?: string | undefined;
  readonly message?: string | undefined;
  readonly lastProbeTime?: string | null | undefined;
  readonly lastTransitionTime?: string | null | undefined;
}

export function findCondition<C extends ConditionLike>(list: readonly C[] | undefined, type: string): C | undefined {
  return list?.find((c) => c.type === type);
}

export function hasCondition(list: readonly ConditionLike[] | undefined, type: string): boolean {
  return findCondition(list, type) !== undefined;
}

export function hasConditionWithStatus(list: readonly ConditionLike[] | undefined, type: string, status: string): boolean {
  return findCondition(list, type)?.status === status;
}

export function hasConditionWithStatusAndReason(list: readonly ConditionLike[] | undefined, type: string, status: string, reason: string): boolean {
  const c = findCondition(list, type);
  return c !== undefined && c.status === status && c.reason === reason;
}

/**
 * `UpdateCondition`: append when absent; replace when status or reason changed; otherwise keep
 * the existing entry untouched (its timestamps and message stay — KubeVirt compares only status
 * and reason, so a probe that keeps failing does not rewrite the object on every sync).
 */
export function updateCondition<C extends ConditionLike>(list: readonly C[] | undefined, cond: C): C[] {
  const out = [...(list ?? [])];
  const i = out.findIndex((c) => c.type === cond.type);
  if (i < 0) {
    out.push(cond);
    return out;
  }
  const existing = out[i]!;
  if (existing.status !== cond.status || existing.reason !== cond.reason) out[i] = cond;
  return out;
}

export function removeCondition<C extends ConditionLike>(list: readonly C[] | undefined, type: string): C[] {
  return (list ?? []).filter((c) => c.type !== type);
}

/** `AddPodCondition`: add only when no condition of that type exists yet. */
export function addConditionIfAbsent<C extends ConditionLike>(list: readonly C[] | undefined, cond: C): C[] {
  return hasCondition(list, cond.type) ? [...(list ?? [])] : [...(list ?? []), cond];
}

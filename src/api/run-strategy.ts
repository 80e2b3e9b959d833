// A VM's run strategy as KubeVirt's API package reads it (staging/src/kubevirt.io/api/core/v1
// VirtualMachine.RunStrategy()): shared by the VM controller (controller/vm/run-strategy.ts), virt-api's
// start/stop/restart (src/virt-api/lifecycle.ts) and the CLI.
import { RunStrategy } from './constants.ts';
import type { VirtualMachine } from './types.ts';

/** A run strategy by name (the API's set without the empty "unknown" value). */
export type RunStrategyName = Exclude<(typeof RunStrategy)[keyof typeof RunStrategy], ''>;

/** `spec.running` and `spec.runStrategy` are both set: KubeVirt refuses to pick one. */
export class RunStrategyConflictError extends Error {
  override name = 'RunStrategyConflictError';
  constructor(vmName: string) {
    super(`VirtualMachine ${vmName}: spec.running and spec.runStrategy are mutually exclusive; set only spec.runStrategy`);
  }
}

/** A run strategy qvirt knows by name but does not implement. */
export class RunStrategyNotSupportedError extends Error {
  override name = 'RunStrategyNotSupportedError';
  readonly reason = 'FailedCreate';
  constructor(vmName: string, strategy: string, why: string) {
    super(`VirtualMachine ${vmName}: spec.runStrategy ${JSON.stringify(strategy)} is not supported: ${why}`);
  }
}

const KNOWN: ReadonlySet<string> = new Set(Object.values(RunStrategy));

/**
 * `VirtualMachine.RunStrategy()`: `running: true` → Always, `running: false` → Halted, else
 * `runStrategy`, else Halted. Throws RunStrategyConflictError when both fields are set.
 */
export function effectiveRunStrategy(vm: VirtualMachine): RunStrategyName {
  const { running, runStrategy } = vm.spec;
  if (running !== undefined && runStrategy !== undefined) throw new RunStrategyConflictError(vm.metadata?.name ?? '');
  if (running === true) return RunStrategy.Always;
  if (running === false) return RunStrategy.Halted;
  if (runStrategy === undefined) return RunStrategy.Halted;
  if (!KNOWN.has(runStrategy)) {
    throw new RunStrategyNotSupportedError(vm.metadata?.name ?? '', runStrategy, 'unknown run strategy');
  }
  return runStrategy as RunStrategyName;
}

/** The effective strategy, or undefined when it cannot be determined (both fields set / unknown). */
export function tryEffectiveRunStrategy(vm: VirtualMachine): RunStrategyName | undefined {
  try {
    return effectiveRunStrategy(vm);
  } catch {
    return undefined;
  }
}

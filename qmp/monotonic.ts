// A monotonic clock in milliseconds, for deadlines and durations. Not `performance.now()`: the global
// `performance` loads node:perf_hooks and its ten internal modules on first use, ~0.4 MiB of RSS in every
// launcher, which has no other use for them (bench/launcher-memory.md).

/** Milliseconds (with a fractional part) on a monotonic clock with an arbitrary origin. */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

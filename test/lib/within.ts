// Bounded waits on promises for tests: a test never waits for an effect without a limit, and when the
// limit passes it says what it was waiting for.

/**
 * `p`'s value, or a rejection naming `what` once `timeoutMs` has passed first. The timer does not
 * outlive the race (a passed test leaves no timer keeping the process up).
 */
export async function within<T>(p: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** True when `p` settles (either way) within `timeoutMs`; for teardown that escalates instead of failing. */
export function settlesWithin(p: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  return within(p.then(() => true, () => true), timeoutMs, 'a settlement').catch(() => false);
}

/**
 * Polls `f` every `everyMs` until it returns something truthy (a throw counts as not yet); past
 * `timeoutMs` it throws naming `what` and the last value or error. The shared form of the polling
 * waits the test folders' own lib.ts files each wrote (they may move to it).
 */
export async function waitFor<T>(what: string, f: () => T | Promise<T>, timeoutMs = 120_000, everyMs = 1000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > end) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what} (last: ${typeof last === 'string' ? last : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

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

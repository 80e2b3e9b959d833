// KubeVirt's (and client-go's) controller expectations: after a controller creates or deletes
// objects it waits until its informers have seen those changes before acting on the same key again,
// so a stale cache can never make it create a second VMI or pod. Expectations expire after 5 minutes
// so a lost watch event cannot wedge a key forever.

const EXPECTATION_TTL_MS = 5 * 60 * 1000;

interface Expectation {
  add: number;
  del: number;
  timestamp: number;
}

export class Expectations {
  private readonly items = new Map<string, Expectation>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Records that `adds` creations and `dels` deletions are on their way for this key. */
  expect(key: string, adds: number, dels: number): void {
    this.items.set(key, { add: adds, del: dels, timestamp: this.now() });
  }

  expectCreations(key: string, n: number): void {
    const e = this.items.get(key);
    if (e && !this.expired(e)) { e.add += n; e.timestamp = this.now(); } else this.expect(key, n, 0);
  }

  expectDeletions(key: string, n: number): void {
    const e = this.items.get(key);
    if (e && !this.expired(e)) { e.del += n; e.timestamp = this.now(); } else this.expect(key, 0, n);
  }

  creationObserved(key: string): void {
    const e = this.items.get(key);
    if (e) e.add--;
  }

  deletionObserved(key: string): void {
    const e = this.items.get(key);
    if (e) e.del--;
  }

  /** A failed create or delete will never be observed: take it back. */
  lowerExpectations(key: string, adds: number, dels: number): void {
    const e = this.items.get(key);
    if (e) { e.add -= adds; e.del -= dels; }
  }

  private expired(e: Expectation): boolean {
    return this.now() - e.timestamp > EXPECTATION_TTL_MS;
  }

  /** True when nothing is pending for the key (or what was pending is too old to wait for). */
  satisfied(key: string): boolean {
    const e = this.items.get(key);
    if (!e) return true;
    return (e.add <= 0 && e.del <= 0) || this.expired(e);
  }

  delete(key: string): void {
    this.items.delete(key);
  }
}

/**
 * How a backoff spreads its waits: `none` waits the whole ceiling; `full` waits a uniform share of it
 * (0 to ceiling, whole milliseconds), `equal` at least half of it. Jitter keeps the clients that failed
 * together from retrying together (AWS Architecture Blog, "Exponential Backoff And Jitter").
 */
export const Jitter = {
  None: "none",
  Full: "full",
  Equal: "equal",
} as const;
export type Jitter = (typeof Jitter)[keyof typeof Jitter];

export interface Backoff {
  /** The ceiling of the first retry's wait; it doubles with every retry after it. */
  readonly baseMs: number;
  /** The ceiling never grows past this. */
  readonly capMs: number;
  /** Default `none`. */
  readonly jitter?: Jitter;
}

/**
 * The wait before retry number `retry` (1 for the first retry): a ceiling of
 * min(capMs, baseMs * 2^(retry - 1)), spread by the jitter. `random` returns [0, 1), as Math.random.
 */
export function backoffDelayMs(retry: number, backoff: Backoff, random: () => number = Math.random): number {
  if (!Number.isInteger(retry) || retry < 1) {
    throw new RangeError(`backoff: retry counts from 1, got ${retry}`);
  }
  for (const field of ["baseMs", "capMs"] as const) {
    const value = backoff[field];
    if (Number.isNaN(value) || value < 0) {
      throw new RangeError(`backoff: ${field} must be a number >= 0, got ${value}`);
    }
  }
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** (retry - 1));
  if (!Number.isFinite(ceiling)) throw new RangeError("backoff: baseMs or capMs must be finite");
  switch (backoff.jitter ?? Jitter.None) {
    case Jitter.None:
      return ceiling;
    case Jitter.Full:
      return Math.floor(random() * ceiling);
    case Jitter.Equal:
      return ceiling * (0.5 + random() / 2);
    default:
      throw new RangeError(`backoff: unknown jitter ${JSON.stringify(backoff.jitter)}`);
  }
}

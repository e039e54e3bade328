/**
 * When a run gives up waiting: at its deadline, or sooner when nothing has moved for a while. A loaded
 * machine is slow but still moves (records delivered, functions invoked, inputs settled); a run where
 * nothing moves for minutes is stuck, and waiting for the deadline only hides where. Either way the run
 * says it timed out, with what was still in flight, and never counts that as lost.
 */
export const TimeoutCause = { Deadline: "deadline", NoProgress: "no progress" } as const;
export type TimeoutCause = (typeof TimeoutCause)[keyof typeof TimeoutCause];

export class Watchdog {
  readonly #deadline: number;
  readonly #stallMs: number;
  #signature: string | undefined;
  #movedAt: number;

  /** `deadline` is a time (ms since the epoch); `stallMs` how long nothing may move. */
  constructor(deadline: number, stallMs: number, now: number) {
    this.#deadline = deadline;
    this.#stallMs = stallMs;
    this.#movedAt = now;
  }

  /** `signature` names the run's state (counts of what moves): a new one is progress. */
  observe(signature: string, now: number): void {
    if (signature === this.#signature) return;
    this.#signature = signature;
    this.#movedAt = now;
  }

  /** How long nothing has moved. */
  quietMs(now: number): number {
    return now - this.#movedAt;
  }

  /** Why the run must stop waiting now, if it must. */
  expired(now: number): TimeoutCause | undefined {
    if (now > this.#deadline) return TimeoutCause.Deadline;
    if (this.quietMs(now) > this.#stallMs) return TimeoutCause.NoProgress;
    return undefined;
  }
}

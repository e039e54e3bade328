/**
 * A person asked a long operation to stop (Ctrl-C, SIGTERM). The operations here take an AbortSignal and
 * check it only between steps, never during a request: a receive answered after an abort would leave
 * messages held with no receipt to release them. Aborted, each step ends what it began (a chunk written
 * is marked, messages held are made visible again), then the operation ends with what it did.
 */
export class InterruptedError extends Error {
  /** The signal that asked, when a signal did (SIGINT for Ctrl-C). */
  readonly signal: string | undefined;

  constructor(signal?: string, options?: ErrorOptions) {
    super(`interrupted${signal ? ` (${signal})` : ""}`, options);
    this.name = "InterruptedError";
    this.signal = signal;
  }
}

/** Throws the abort's reason (an InterruptedError) if `signal` has aborted. */
export function throwIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw interruption(signal);
}

/** The abort's reason as an InterruptedError. */
export function interruption(signal: AbortSignal): InterruptedError {
  return signal.reason instanceof InterruptedError
    ? signal.reason
    : new InterruptedError(undefined, { cause: signal.reason });
}

/** A pause that an abort ends early, without throwing: the caller's next check sees the abort. */
export async function pause(
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) return;
  try {
    await sleep(ms, signal);
  } catch (error) {
    if (!signal?.aborted) throw error;
  }
}

/**
 * An operator's command run again, as an operator runs it again, after the service refused it for the
 * moment (S3's SlowDown, a 5xx, a throttle): with a growing pause, for as long as the run is moving. A
 * command refused for good (access denied, a missing bucket) fails at once: running it again changes
 * nothing. The replay's marks make a second run resume where the first stopped (docs/operations.md).
 *
 * Why not a fixed number of tries: the replay lists the whole quarantine, two S3 requests an object, and
 * the chaos run's S3 door refuses one request in ten. After the SDK's three attempts one request in a
 * thousand still fails, so a listing of 4,000 objects (10,000 events) fails almost every time, and five
 * tries ended a 10,000-event run with the raw `SlowDown` instead of a verdict.
 */
import { sleep as realSleep } from "@mcp-pipeline/retry";

/** Whether the error, or one it wraps, says that the same request may succeed later. */
export function refusedForTheMoment(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status !== undefined && (status >= 500 || status === 429)) return true;
    if (
      /^(SlowDown|Throttling|ThrottlingException|TooManyRequestsException|RequestTimeout|ProvisionedThroughputExceededException)$/.test(
        e.name,
      )
    )
      return true;
    // A connection that broke or was refused (no answer at all): the SDK's own retries were spent.
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT)$/.test(code)) return true;
  }
  return false;
}

export interface OperatorRetry {
  /** False once the run is out of time: the command is not run again. */
  readonly moving: () => boolean;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told of each refusal that is followed by another run. */
  readonly onRetry?: (error: unknown, attempt: number) => void;
}

/** The command's result, or `undefined` when the run ran out of time while the service still refused it. */
export async function runAgainWhileRefused<T>(
  command: () => Promise<T>,
  { moving, sleep = realSleep, onRetry }: OperatorRetry,
): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await command();
    } catch (error) {
      if (!refusedForTheMoment(error)) throw error;
      if (!moving()) return undefined;
      onRetry?.(error, attempt);
      await sleep(Math.min(5_000, 250 * 2 ** Math.min(attempt - 1, 5)));
    }
  }
}

import { Client } from "@smithy/core/client";
import { vi } from "vitest";
import { dynamoDbRetryBases, type SdkRetryBases } from "../src/sdk-retry.js";

// What a function's `wire` gave each client it built, read without a clock and without a request: the
// clients are caught at their first `send` (refused there, so nothing leaves the process), and each one's own
// retry strategy says what it would wait before its first retry (its record of the delay, on faked timers).

/** The jitter's draw, fixed: a delay then names the base it came from (0.9 x 13 and 0.9 x 1000 differ). */
export const JITTER_DRAW = 0.9;

/**
 * Fixes Math.random at JITTER_DRAW. Call it before the clients are built: sdkRetryStrategy takes its draw
 * function (Math.random) when it is built, so a client built earlier draws at random.
 */
export function fixJitter(): void {
  vi.spyOn(Math, "random").mockReturnValue(JITTER_DRAW);
}

/** What a client's retry strategy waits before the first retry after each kind of retryable error, in ms. */
export interface FirstRetryDelays {
  readonly throttling: number | undefined;
  readonly transient: number | undefined;
}

/** The delays a client with these bases waits, with the jitter at JITTER_DRAW (full jitter, floored). */
export function expectedDelays(bases: SdkRetryBases) {
  return {
    throttling: Math.floor(JITTER_DRAW * bases.throttlingBaseMs),
    transient: Math.floor(JITTER_DRAW * bases.baseMs),
  } satisfies FirstRetryDelays;
}

/** The same for a DynamoDB client given `bases`: its transient base in DynamoDB's proportion (25 to 50 ms). */
export function expectedDynamoDbDelays(bases: SdkRetryBases) {
  return expectedDelays(dynamoDbRetryBases(bases));
}

/** The part of a client's retry strategy (the SDK's RetryStrategyV2) read here. */
interface RetryStrategy {
  acquireInitialRetryToken(scope: string): Promise<object>;
  refreshRetryTokenForRetry(token: object, error: { errorType: "THROTTLING" | "TRANSIENT" }): Promise<object>;
}

/** An SDK client: its resolved configuration holds its retry strategy. */
export type SdkClient = { readonly config: object };

/**
 * The first retry's delay after a throttling error and after a transient one, as `client`'s retry strategy
 * computes it: a fresh token each, refreshed once; the strategy's wait runs on faked timers.
 */
export async function firstRetryDelays(client: SdkClient): Promise<FirstRetryDelays> {
  const { retryStrategy } = client.config as { retryStrategy?: () => Promise<RetryStrategy> };
  if (retryStrategy === undefined) throw new Error("not an SDK client: its config has no retryStrategy");
  const delay = async (errorType: "THROTTLING" | "TRANSIENT"): Promise<number | undefined> => {
    const strategy = await retryStrategy();
    const token = await strategy.acquireInitialRetryToken("wiring");
    vi.useFakeTimers();
    try {
      const refreshed = strategy.refreshRetryTokenForRetry(token, { errorType });
      await vi.runAllTimersAsync();
      return ((await refreshed) as { $retryLog?: { acquisitionDelay?: number } }).$retryLog?.acquisitionDelay;
    } finally {
      vi.useRealTimers();
    }
  };
  return { throttling: await delay("THROTTLING"), transient: await delay("TRANSIENT") };
}

/**
 * The clients `trigger` sends its requests through, in order: every SDK client's `send` (the one Client
 * class of @smithy/core they all extend) is refused for the while, so `trigger` fails as it would on a
 * refused request, and that failure is ignored here. The signal `trigger` is given aborts at the first
 * refusal, so that a caller that retries on its own (the Kinesis producer's rounds) stops instead of
 * waiting on the clock.
 */
export async function clientsSentThrough(
  trigger: (signal: AbortSignal) => Promise<unknown>,
): Promise<SdkClient[]> {
  const sent: SdkClient[] = [];
  const refused = new AbortController();
  const send = vi
    .spyOn(Client.prototype as { send(...args: unknown[]): Promise<unknown> }, "send")
    .mockImplementation(function (this: SdkClient) {
      sent.push(this);
      const refusal = new Error("refused: a unit test sends no request");
      refused.abort(refusal);
      return Promise.reject(refusal);
    });
  try {
    await trigger(refused.signal).catch(() => undefined);
  } finally {
    send.mockRestore();
  }
  return sent;
}

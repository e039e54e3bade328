/**
 * The AWS SDK's retry backoff as a declared setting of each function (SDK_RETRY_BASE_MS and
 * SDK_THROTTLE_RETRY_BASE_MS in terraform/modules/pipeline/function-environment.json), so that the local
 * stack divides it by its time scale like every other duration (docs/local-runtime.md, "Time scale").
 * Only the two bases change: the rest is the SDK's standard mode, unchanged (its StandardRetryStrategy):
 * the retry quota, which errors are retried, throttling errors backing off from their own base, full jitter,
 * the cap and maxAttempts. A client given bases runs standard mode whatever AWS_RETRY_MODE says (the SDK's
 * default mode, and the one the functions ran before: Lambda does not set the variable).
 */
import {
  MAXIMUM_RETRY_DELAY,
  Retry,
  StandardRetryStrategy,
  type StandardRetryStrategyOptions,
} from "@smithy/core/retry";

type StandardRetryBackoffStrategy = NonNullable<StandardRetryStrategyOptions["backoff"]>;

export interface SdkRetryBases {
  /** The first retry's ceiling after a transient error (a 5xx, a timeout, a reset connection), in ms. */
  readonly baseMs: number;
  /** The same after a throttling error, in ms. */
  readonly throttlingBaseMs: number;
}

/**
 * Standard mode's own bases. Read from the SDK (its `Retry`, 50 ms and 1 s in @smithy/core 3.41), not from
 * the exported DEFAULT_RETRY_DELAY_BASE / THROTTLING_RETRY_DELAY_BASE (100 ms, 500 ms): those are kept for
 * the deprecated pre-SRA strategy only, and are not what a client waits. function-environment.json's
 * defaults equal these (test/unit/sdk-retry.test.ts), so a deployed function waits as it did before.
 */
export const SDK_RETRY_BASES: SdkRetryBases = {
  baseMs: Retry.delay(),
  throttlingBaseMs: Retry.throttlingDelay(),
};

/**
 * DynamoDB's clients back off from their own base after a transient error: @aws-sdk/client-dynamodb builds
 * standard mode with a `defaultBaseDelay` of 25 ms (DynamoDBClient.js, not exported), half the other
 * clients'. SDK_RETRY_BASE_MS is the other clients' base, and a DynamoDB client's is in the same proportion
 * to it, so that the default waits as the SDK does (test/unit/sdk-retry.test.ts compares them) and a scaled
 * setting scales both.
 */
export const DYNAMODB_RETRY_DELAY_BASE = 25;

/** `bases` for a DynamoDB client: the transient base in DynamoDB's proportion to the SDK's, at least 1 ms. */
export function dynamoDbRetryBases(bases: SdkRetryBases): SdkRetryBases {
  return {
    baseMs: Math.max(1, Math.round((bases.baseMs * DYNAMODB_RETRY_DELAY_BASE) / Retry.delay())),
    throttlingBaseMs: bases.throttlingBaseMs,
  };
}

/**
 * The cap stays the SDK's 20 s, not scaled with the bases: with the clients' 3 attempts the largest ceiling
 * is twice a base (2 s by default, at most 40 s with the largest base the settings allow), so the cap only
 * bounds a base set far above the SDK's; a third setting for it would change nothing a run can measure.
 */
export const SDK_RETRY_CAP_MS = MAXIMUM_RETRY_DELAY;

/**
 * The SDK's backoff (DefaultRetryBackoffStrategy: a uniform draw from 0 to min(base x 2^retries, cap),
 * floored) with the declared bases. StandardRetryStrategy sets the base before each retry: its own
 * throttling base after a throttling error, else the `baseDelay` it was built with (the SDK's base, see
 * sdkRetryStrategy); each is replaced by its declared counterpart.
 */
class DeclaredBackoff implements StandardRetryBackoffStrategy {
  #base: number;

  constructor(
    private readonly bases: SdkRetryBases,
    private readonly random: () => number,
  ) {
    this.#base = bases.baseMs;
  }

  setDelayBase(sdkBase: number): void {
    this.#base = sdkBase === Retry.throttlingDelay() ? this.bases.throttlingBaseMs : this.bases.baseMs;
  }

  computeNextBackoffDelay(retries: number): number {
    return Math.floor(this.random() * Math.min(this.#base * 2 ** retries, SDK_RETRY_CAP_MS));
  }
}

/**
 * Standard mode with the declared bases. `random` (as Math.random, [0, 1)) is the jitter's draw; tests fix
 * it. A base must be a whole number of ms >= 1: the functions' config refuses anything else first.
 */
export function sdkRetryStrategy(
  maxAttempts: number,
  bases: SdkRetryBases,
  random: () => number = Math.random,
): StandardRetryStrategy {
  for (const [name, value] of Object.entries(bases)) {
    if (!(Number.isInteger(value) && value >= 1)) {
      throw new RangeError(`sdkRetryStrategy: ${name} must be a whole number of ms >= 1, got ${value}`);
    }
  }
  // baseDelay: the SDK's own non-throttling base, which differs from its throttling base, so that
  // DeclaredBackoff.setDelayBase can tell which of the two the strategy chose.
  return new StandardRetryStrategy({
    maxAttempts,
    baseDelay: Retry.delay(),
    backoff: new DeclaredBackoff(bases, random),
  });
}

/** A function's configuration's SDK_RETRY_BASE_MS and SDK_THROTTLE_RETRY_BASE_MS, as the clients take them. */
export function sdkRetryBases(config: {
  readonly SDK_RETRY_BASE_MS: number;
  readonly SDK_THROTTLE_RETRY_BASE_MS: number;
}): SdkRetryBases {
  return { baseMs: config.SDK_RETRY_BASE_MS, throttlingBaseMs: config.SDK_THROTTLE_RETRY_BASE_MS };
}

/**
 * `@mcp-pipeline/settings/tuning`: what a function's config.ts needs to read its tuning variables with
 * the ranges and defaults of its settings. Light: the tuning declaration and the hand-written field rules,
 * no zod (a function's bundle includes this).
 */
import * as s from "@mcp-pipeline/contracts/light-schema";
import type { Tuning } from "./tuning.js";

export { functionTuning, MAX_RECEIVE_COUNT, TEST_TOOLS_VALUES, testToolsOffered } from "./tuning.js";

/** A tuning variable (a whole number, from the environment's string) with its setting's range and default. */
export const tuningField = (t: Pick<Tuning, "min" | "max" | "default">): s.Field<number> =>
  s.withDefault(s.integer({ coerce: true, min: t.min, max: t.max }), t.default);

/**
 * The bases of the AWS SDK's retry backoff after a transient and after a throttling error
 * (@mcp-pipeline/aws's sdk-retry.ts), the same two fields in every function's config: the SDK's own by
 * default, declared so that the local stack scales them.
 */
export const sdkRetryFields = (tuning: {
  readonly sdk_retry_base_ms: Pick<Tuning, "min" | "max" | "default">;
  readonly sdk_throttle_retry_base_ms: Pick<Tuning, "min" | "max" | "default">;
}) => ({
  SDK_RETRY_BASE_MS: tuningField(tuning.sdk_retry_base_ms),
  SDK_THROTTLE_RETRY_BASE_MS: tuningField(tuning.sdk_throttle_retry_base_ms),
});

import type { RequestOptions } from "@mcp-pipeline/aws";
import type { Claim, IdempotencyStore } from "./store.js";

export type RunOnceResult = "applied" | "duplicate";

/** The part of the store `runOnce` uses. */
export type ClaimStore = Pick<IdempotencyStore, "claim" | "complete" | "release">;

/**
 * Runs `effect` at most once per key across deliveries: claim, run, complete; release and rethrow on
 * failure. `completed` (from a batch prefetch) skips the claim request for keys known to be done.
 * `options.signal` aborts the three requests (an invocation's deadline); end the lease no later than the
 * signal, so that a claim whose answer was cut off (applied or not) stops deciding anything by then.
 *
 * `effect` gets the claim: an effect that writes its outcome elsewhere fences that write by the claim's
 * token, so that a write of a claim whose lease ran out cannot land over a later claim's (the workers'
 * tool-calls item: docs/idempotency.md "Fencing outcomes by the claim").
 */
export async function runOnce(
  store: ClaimStore,
  key: string,
  leaseMs: number,
  effect: (claim: Claim) => Promise<void>,
  completed?: ReadonlySet<string>,
  options: RequestOptions = {},
): Promise<RunOnceResult> {
  if (completed?.has(key)) return "duplicate";
  const claimed = await store.claim(key, leaseMs, options);
  if (claimed.status === "completed") return "duplicate";
  try {
    await effect(claimed.claim);
  } catch (error) {
    try {
      await store.release(claimed.claim, options);
    } catch {
      // The effect's error is the one to report; the lease still ends with the invocation.
    }
    throw error;
  }
  await store.complete(claimed.claim, options);
  return "applied";
}

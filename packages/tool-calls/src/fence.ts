import { TransientError } from "@mcp-pipeline/contracts";
import type { CallClaim, ToolCallState } from "./state.js";

/**
 * Which claim a worker's write of a call must come from (docs/idempotency.md "Fencing outcomes by the
 * claim"). The call's item carries the claim of the invocation that last took the call
 * (`ToolCallStore.claimCall`); a write is checked against the item it was folded onto, and sent
 * conditionally on that item's version, so it is applied only if the item is still the one checked, even
 * when DynamoDB applies it long after it was sent (a request aborted at the deadline).
 */
export type ClaimFence =
  /** An outcome (completed, failed): only the claim registered on the call may write it. */
  | { readonly kind: "held"; readonly token: string }
  /**
   * A mark written for a job given up (dead-lettered at its last receive), by an invocation that may
   * hold no claim (`token` undefined: the job never started) or one it released: refused only while
   * another claim registered on the call is live at `now` (epoch ms), since that invocation is running
   * the job and decides its outcome.
   */
  | { readonly kind: "not-held-by-another"; readonly token: string | undefined; readonly now: number };

/** Whether a write under `fence` may be folded onto `current` (the call as read). */
export function fenceAdmits(fence: ClaimFence, current: ToolCallState | undefined): boolean {
  const registered = current?.claim;
  if (fence.kind === "held") return registered?.token === fence.token;
  return (
    registered === undefined || registered.token === fence.token || registered.leaseExpiresAt <= fence.now
  );
}

/**
 * A write of a call was refused because another invocation's claim is registered on it: the lease of
 * this invocation's claim ran out and the call was claimed again. Transient: the job is reported for
 * retry, and its redelivery finds the call completed by the other invocation, or claims it. Nothing of this
 * invocation's run is stored or published.
 */
export class ClaimSupersededError extends TransientError {
  readonly callId: string;
  /** This invocation's claim token, if it held one. */
  readonly token: string | undefined;
  /** The claim registered on the call instead. */
  readonly holder: CallClaim | undefined;

  constructor(callId: string, token: string | undefined, holder: CallClaim | undefined) {
    const until =
      holder !== undefined && Number.isFinite(holder.leaseExpiresAt)
        ? ` (its lease ends ${new Date(holder.leaseExpiresAt).toISOString()})`
        : "";
    super(
      "claim-superseded",
      `tool call ${callId} is claimed by another invocation${until}: this invocation's write was refused`,
    );
    this.name = "ClaimSupersededError";
    this.callId = callId;
    this.token = token;
    this.holder = holder;
  }
}

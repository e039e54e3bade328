import { TransientError } from "@mcp-pipeline/contracts";

/**
 * Another invocation holds an unexpired claim on this key. Transient: that invocation will complete
 * or release it, or its lease ends with it, and the redelivery then sees the outcome.
 */
export class AlreadyInProgressError extends TransientError {
  readonly key: string;
  readonly leaseExpiresAt: number;

  constructor(key: string, leaseExpiresAt: number) {
    super(
      "idempotency-in-progress",
      `${key} is being processed by another invocation until ${new Date(leaseExpiresAt).toISOString()}`,
    );
    this.name = "AlreadyInProgressError";
    this.key = key;
    this.leaseExpiresAt = leaseExpiresAt;
  }
}

/**
 * The claim was no longer ours when completing: the lease ran out and another invocation claimed the
 * key. The effect may have run twice, which is why effects are written to be idempotent as well.
 */
export class ClaimLostError extends TransientError {
  readonly key: string;

  constructor(key: string, options?: ErrorOptions) {
    super("idempotency-claim-lost", `claim on ${key} was lost before completion`, options);
    this.name = "ClaimLostError";
    this.key = key;
  }
}

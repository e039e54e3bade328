import { randomUUID } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { type BatchGetOptions, batchGetAll, type RequestOptions, sendOptions } from "@mcp-pipeline/aws";
import { AlreadyInProgressError, ClaimLostError } from "./errors.js";
import { type IdempotencyRecord, isCompleted, isLive, RecordStatus } from "./record.js";

export interface IdempotencyStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Namespaces keys so several functions can share one table, e.g. `processor`. */
  readonly scope: string;
  /** How long a completed key is remembered; longer than any redelivery or replay window. */
  readonly retentionSeconds: number;
  readonly now?: () => number;
  /** How `completedAmong` retries UnprocessedKeys. */
  readonly batchGet?: BatchGetOptions;
}

/** A claim held by this invocation; pass it to `complete` or `release`. */
export interface Claim {
  readonly key: string;
  readonly token: string;
  readonly leaseExpiresAt: number;
}

export type ClaimResult =
  | { readonly status: "claimed"; readonly claim: Claim }
  | { readonly status: "completed" };

/**
 * Two-phase idempotency on DynamoDB (docs/architecture.md "Effects once", docs/idempotency.md):
 * claim (conditional put with a lease that ends with the invocation), complete (conditional on still
 * holding the claim), release on error. The key is the producer's id, so producer retries that
 * carry the same id are caught too, not only Lambda redeliveries.
 */
export class IdempotencyStore {
  readonly #client: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #scope: string;
  readonly #retentionSeconds: number;
  readonly #now: () => number;
  readonly #batchGet: BatchGetOptions;

  constructor(options: IdempotencyStoreOptions) {
    if (!Number.isInteger(options.retentionSeconds) || options.retentionSeconds < 60) {
      throw new RangeError(`retentionSeconds must be an integer >= 60, got ${options.retentionSeconds}`);
    }
    if (options.scope.length === 0 || options.scope.includes("#")) {
      throw new RangeError(
        `scope must be non-empty and contain no '#', got ${JSON.stringify(options.scope)}`,
      );
    }
    this.#client = options.client;
    this.#table = options.tableName;
    this.#scope = options.scope;
    this.#retentionSeconds = options.retentionSeconds;
    this.#now = options.now ?? Date.now;
    this.#batchGet = options.batchGet ?? {};
  }

  #id(key: string): string {
    return `${this.#scope}#${key}`;
  }

  /**
   * Reads the rows of many keys with BatchGetItem (100 a request, consistent reads, UnprocessedKeys
   * retried with backoff) and returns the keys that are completed and unexpired: a redelivered batch
   * skips them without a request per record.
   */
  async completedAmong(keys: readonly string[], options: RequestOptions = {}): Promise<Set<string>> {
    const now = this.#now();
    const ids = [...new Set(keys)].map((k) => ({ id: this.#id(k) }));
    const items = await batchGetAll<IdempotencyRecord>(this.#client, this.#table, ids, {
      ...this.#batchGet,
      ...options,
    });
    return new Set(
      items.filter((item) => isCompleted(item, now)).map((item) => item.id.slice(this.#scope.length + 1)),
    );
  }

  /**
   * Claims `key` until `leaseMs` from now (use the time until the invocation's requests are cut off, so
   * the lease ends with the invocation's last write for the key: docs/idempotency.md). Resolves `completed` when the key was already done; throws AlreadyInProgressError
   * while another invocation holds a live claim.
   *
   * A row that carries this claim's own token is this claim: the put was applied but its answer was lost,
   * and the SDK sent it again (a timed-out or reset connection); the repeated put fails its condition on
   * our own row. Treating that as someone else's claim would fail the job until its lease ran out.
   */
  async claim(key: string, leaseMs: number, options: RequestOptions = {}): Promise<ClaimResult> {
    // A caller's bug (a remaining time read wrong): the SDK would refuse the row with a message naming no field.
    if (!Number.isFinite(leaseMs)) {
      throw new RangeError(`leaseMs must be a finite number of milliseconds, got ${leaseMs}`);
    }
    const now = this.#now();
    const claim: Claim = { key, token: randomUUID(), leaseExpiresAt: now + Math.max(1, Math.floor(leaseMs)) };
    const record: IdempotencyRecord = {
      id: this.#id(key),
      status: RecordStatus.InProgress,
      leaseExpiresAt: claim.leaseExpiresAt,
      claimToken: claim.token,
      // An abandoned claim is removed by TTL eventually; code never trusts it past the lease anyway.
      expiresAt: Math.ceil(claim.leaseExpiresAt / 1000) + this.#retentionSeconds,
    };
    try {
      await this.#client.send(
        new PutCommand({
          TableName: this.#table,
          Item: record,
          ConditionExpression:
            "attribute_not_exists(id) OR expiresAt <= :nowSeconds OR (#status = :inProgress AND leaseExpiresAt <= :now)",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":now": now,
            ":nowSeconds": Math.floor(now / 1000),
            ":inProgress": RecordStatus.InProgress,
          },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
        sendOptions(options),
      );
      return { status: "claimed", claim };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // DynamoDB returns the blocking item in DynamoDB JSON (the document client does not unmarshall
      // errors); where no item comes back (dynalite), it is read once more.
      const existing = error.Item
        ? (unmarshall(error.Item) as IdempotencyRecord)
        : await this.#get(key, options);
      if (existing === undefined || !isLive(existing, now)) {
        // Deleted or expired between the put and the read: the next delivery claims it.
        throw new AlreadyInProgressError(key, now);
      }
      if (existing.status === RecordStatus.Completed) return { status: "completed" };
      if (existing.claimToken === claim.token) return { status: "claimed", claim };
      throw new AlreadyInProgressError(key, existing.leaseExpiresAt);
    }
  }

  async #get(key: string, options: RequestOptions): Promise<IdempotencyRecord | undefined> {
    const response = await this.#client.send(
      new GetCommand({ TableName: this.#table, Key: { id: this.#id(key) }, ConsistentRead: true }),
      sendOptions(options),
    );
    return response.Item as IdempotencyRecord | undefined;
  }

  /** The key of a claimed row and the condition that the claim is still this invocation's. */
  #stillHeld(claim: Claim) {
    return {
      Key: { id: this.#id(claim.key) },
      ConditionExpression: "claimToken = :token AND #status = :inProgress",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: { ":token": claim.token, ":inProgress": RecordStatus.InProgress },
    };
  }

  /**
   * Marks the claimed key completed; throws ClaimLostError if the claim is no longer ours. A row already
   * completed under this claim's token is this completion, applied once already (its answer lost, the SDK
   * sent it again): done, not lost.
   */
  async complete(claim: Claim, options: RequestOptions = {}): Promise<void> {
    const now = this.#now();
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.#table,
          ...this.#stillHeld(claim),
          UpdateExpression: "SET #status = :completed, completedAt = :completedAt, expiresAt = :expiresAt",
          ExpressionAttributeValues: {
            ...this.#stillHeld(claim).ExpressionAttributeValues,
            ":completed": RecordStatus.Completed,
            ":completedAt": new Date(now).toISOString(),
            ":expiresAt": Math.floor(now / 1000) + this.#retentionSeconds,
          },
          ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        }),
        sendOptions(options),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = error.Item
        ? (unmarshall(error.Item) as IdempotencyRecord)
        : await this.#get(claim.key, options);
      if (existing?.status === RecordStatus.Completed && existing.claimToken === claim.token) return;
      throw new ClaimLostError(claim.key, { cause: error });
    }
  }

  /**
   * Gives the claim up after a failure so the retry need not wait for the lease. A claim that is no
   * longer ours is left alone; any other error is thrown, and the lease still ends with the invocation.
   */
  async release(claim: Claim, options: RequestOptions = {}): Promise<void> {
    try {
      await this.#client.send(
        new DeleteCommand({
          TableName: this.#table,
          ...this.#stillHeld(claim),
        }),
        sendOptions(options),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

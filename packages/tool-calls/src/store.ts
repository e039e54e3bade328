import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import {
  type BatchGetOptions,
  batchGetAll,
  onDemandTable,
  type RequestOptions,
  sendOptions,
} from "@mcp-pipeline/aws";
import { type ToolCallLifecycleEvent, type ToolCallStarted, TransientError } from "@mcp-pipeline/contracts";
import { type ClaimFence, ClaimSupersededError, fenceAdmits } from "./fence.js";
import { type Folded, foldEvents } from "./fold.js";
import {
  type Applied,
  applyEvent,
  type CallClaim,
  type CallEvent,
  isFinal,
  type ToolCallState,
} from "./state.js";

/** The tool-calls table: partition key `callId`. */
export function toolCallsTableDefinition(tableName: string): CreateTableCommandInput {
  return onDemandTable(tableName, "callId");
}

/** Another writer kept winning the optimistic race; the record is retried later. */
export class WriteContentionError extends TransientError {
  readonly callId: string;

  constructor(callId: string, attempts: number) {
    super("write-contention", `tool call ${callId} changed under ${attempts} consecutive writes`);
    this.name = "WriteContentionError";
    this.callId = callId;
  }
}

export interface ToolCallStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Optimistic write attempts before giving up with WriteContentionError. */
  readonly maxWriteAttempts?: number;
  readonly batchGet?: BatchGetOptions;
}

/**
 * Known state of the calls a batch touches: filled by one prefetch, then updated by every write,
 * so a call's second event in a batch needs no read. `null` means "known not to exist".
 * Create one per invocation: state kept across invocations goes stale.
 */
export type CallCache = Map<string, ToolCallState | null>;

export class ToolCallStore {
  readonly #client: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #maxWriteAttempts: number;
  readonly #batchGet: BatchGetOptions;

  constructor(options: ToolCallStoreOptions) {
    this.#client = options.client;
    this.#table = options.tableName;
    this.#maxWriteAttempts = options.maxWriteAttempts ?? 5;
    this.#batchGet = options.batchGet ?? {};
  }

  /** Reads every call of a batch in BatchGetItem requests of 100. */
  async prefetch(callIds: readonly string[], options: RequestOptions = {}): Promise<CallCache> {
    const unique = [...new Set(callIds)];
    const items = await batchGetAll<ToolCallState>(
      this.#client,
      this.#table,
      unique.map((callId) => ({ callId })),
      { ...this.#batchGet, ...options },
    );
    const cache: CallCache = new Map(unique.map((id) => [id, null]));
    for (const item of items) cache.set(item.callId, item);
    return cache;
  }

  async get(callId: string, options: RequestOptions = {}): Promise<ToolCallState | undefined> {
    const response = await this.#client.send(
      new GetCommand({ TableName: this.#table, Key: { callId }, ConsistentRead: true }),
      sendOptions(options),
    );
    return response.Item as ToolCallState | undefined;
  }

  /**
   * Folds every event of one call (in the given order) onto its known state and writes the call once,
   * conditionally on the version read: one `PutItem` for the lot, none when nothing changes (all
   * duplicates or dominated). A lost race re-reads with `GetItem`, never from the failed write's
   * answer (dynalite omits the item that DynamoDB returns with `ReturnValuesOnConditionCheckFailure`),
   * and folds again; the fold is a join, so the result is the same whichever writer wins.
   */
  async applyEvents(
    events: readonly ToolCallLifecycleEvent[],
    cache: CallCache = new Map(),
    options: RequestOptions = {},
  ): Promise<Folded> {
    const callId = events[0]?.callId;
    if (callId === undefined) return { state: undefined, changes: [], changed: false };
    const stranger = events.find((e) => e.callId !== callId);
    if (stranger) {
      throw new RangeError(`applyEvents takes one call's events: ${stranger.callId} is not ${callId}`);
    }
    for (let attempt = 1; attempt <= this.#maxWriteAttempts; attempt++) {
      const known = cache.get(callId);
      const current = known === undefined ? await this.get(callId, options) : (known ?? undefined);
      const folded = foldEvents(current, events);
      if (!folded.changed || folded.state === undefined) {
        cache.set(callId, current ?? null);
        return folded;
      }
      try {
        await this.#put(folded.state, current, options);
        cache.set(callId, folded.state);
        return folded;
      } catch (error) {
        // Whatever went wrong, the stored call may no longer be the one read (an aborted or timed-out
        // write may have been applied): the next write of this call reads it again.
        cache.delete(callId);
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    throw new WriteContentionError(callId, this.#maxWriteAttempts);
  }

  /** Writes `next` if the stored call is still `current` (absent, or at the version read). */
  async #put(
    next: ToolCallState,
    current: ToolCallState | undefined,
    options: RequestOptions,
  ): Promise<void> {
    await this.#client.send(
      new PutCommand({
        TableName: this.#table,
        Item: next,
        ...(current === undefined
          ? { ConditionExpression: "attribute_not_exists(callId)" }
          : {
              ConditionExpression: "version = :version",
              ExpressionAttributeValues: { ":version": current.version },
            }),
      }),
      sendOptions(options),
    );
  }

  /**
   * Folds the event into the stored call (with the inline result text, for a worker's completed event) with an optimistic write (conditional on the version read).
   * If another writer got there first, re-reads and folds again: the fold is a join, so the result is
   * the same whichever writer wins.
   *
   * With a `fence` (a worker's write: fence.ts), the call as read must admit it, or ClaimSupersededError
   * is thrown and nothing is written; since the write is conditional on the version of the call checked,
   * it cannot be applied once another claim was registered, however late DynamoDB applies it.
   */
  async apply(
    event: CallEvent,
    cache: CallCache = new Map(),
    output?: string,
    options: RequestOptions = {},
    fence?: ClaimFence,
  ): Promise<Applied> {
    for (let attempt = 1; attempt <= this.#maxWriteAttempts; attempt++) {
      const known = cache.get(event.callId);
      const current = known === undefined ? await this.get(event.callId, options) : (known ?? undefined);
      if (fence !== undefined && !fenceAdmits(fence, current)) {
        cache.set(event.callId, current ?? null);
        throw new ClaimSupersededError(event.callId, fence.token, current?.claim);
      }
      const applied = applyEvent(current, event, output);
      if (applied.change === "duplicate" || applied.change === "unchanged") {
        cache.set(event.callId, current ?? null);
        return applied;
      }
      try {
        await this.#put(applied.state, current, options);
        cache.set(event.callId, applied.state);
        return applied;
      } catch (error) {
        // As in applyEvents: after any failed write the stored call is read again before the next one.
        cache.delete(event.callId);
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    throw new WriteContentionError(event.callId, this.#maxWriteAttempts);
  }

  /**
   * Takes the call for a worker that holds `claim` (the dedupe table's claim on the job): registers the
   * claim on the call's item with the worker's `started`, so that only this claim can write the outcome
   * from now on (`apply` with a `held` fence), and a write of an earlier claim, even one DynamoDB applies
   * late, fails its condition. Unless the call already has its final outcome: then nothing is written and
   * the call is returned `decided`, for the worker to publish that outcome instead of running the tool.
   *
   * The call is read again, consistently, whatever `cache` holds: a state read before the claim (the
   * batch's pre-read) may say "no outcome yet" about a call that another invocation completed since
   * (issue 24, defect 1). The write is conditional on the version read; a lost race reads again.
   */
  async claimCall(
    started: ToolCallStarted,
    claim: CallClaim,
    cache: CallCache = new Map(),
    options: RequestOptions = {},
  ): Promise<ClaimedCall> {
    const callId = started.callId;
    cache.delete(callId);
    for (let attempt = 1; attempt <= this.#maxWriteAttempts; attempt++) {
      const current = cache.get(callId) ?? (await this.get(callId, options));
      if (current !== undefined && isFinal(current)) {
        cache.set(callId, current);
        return { status: "decided", state: current };
      }
      if (current?.claim?.token === claim.token) {
        // Registered already: this very write, applied once and its answer lost.
        cache.set(callId, current);
        return { status: "claimed", state: current };
      }
      const { state } = applyEvent(current, started);
      // Only what the fence reads: a caller's claim may carry more (the dedupe key).
      const registered: CallClaim = { token: claim.token, leaseExpiresAt: claim.leaseExpiresAt };
      const next: ToolCallState = { ...state, claim: registered, version: (current?.version ?? 0) + 1 };
      try {
        await this.#put(next, current, options);
        cache.set(callId, next);
        return { status: "claimed", state: next };
      } catch (error) {
        cache.delete(callId);
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    throw new WriteContentionError(callId, this.#maxWriteAttempts);
  }
}

/** What `claimCall` found: the call taken by the claim, or already decided by an earlier run. */
export type ClaimedCall =
  | { readonly status: "claimed"; readonly state: ToolCallState }
  | { readonly status: "decided"; readonly state: ToolCallState };

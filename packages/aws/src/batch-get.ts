import { BatchGetCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { TransientError } from "@mcp-pipeline/contracts";
import { backoffDelayMs, Jitter, sleep as realSleep, type Sleep } from "@mcp-pipeline/retry";
import { sendOptions } from "./request-options.js";

/** BatchGetItem reads at most 100 keys a request. */
export const BATCH_GET_MAX_KEYS = 100;

/** BatchGetItem still returned unprocessed keys after every retry. */
export class BatchGetIncompleteError extends TransientError {
  readonly unprocessed: number;

  constructor(unprocessed: number) {
    super("batch-get-incomplete", `${unprocessed} keys were still unprocessed after retries`);
    this.name = "BatchGetIncompleteError";
    this.unprocessed = unprocessed;
  }
}

export interface BatchGetOptions {
  /** Retries of UnprocessedKeys, with exponential backoff and full jitter. */
  readonly maxRetries?: number;
  readonly sleep?: Sleep;
  /** Aborts the requests and the waits between them (an invocation's deadline, RequestOptions). */
  readonly signal?: AbortSignal;
}

/** 50, 100, 200 ... ms ceilings, at most 1 s, fully jittered. */
const UNPROCESSED_BACKOFF = { baseMs: 50, capMs: 1_000, jitter: Jitter.Full } as const;

/**
 * Reads every key with consistent reads, 100 keys a request, asking again for the UnprocessedKeys
 * DynamoDB returns under throttling or size limits. Never returns a partial answer: it throws
 * BatchGetIncompleteError instead, so a caller cannot mistake "not read" for "absent".
 */
export async function batchGetAll<T>(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Record<string, unknown>[],
  options: BatchGetOptions = {},
): Promise<T[]> {
  const maxRetries = options.maxRetries ?? 5;
  const sleep = options.sleep ?? realSleep;
  const items: T[] = [];
  for (let start = 0; start < keys.length; start += BATCH_GET_MAX_KEYS) {
    let pending = keys.slice(start, start + BATCH_GET_MAX_KEYS);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > maxRetries) throw new BatchGetIncompleteError(pending.length);
      if (attempt > 0) await sleep(backoffDelayMs(attempt, UNPROCESSED_BACKOFF), options.signal);
      const response = await client.send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: [...pending], ConsistentRead: true } } }),
        sendOptions(options),
      );
      items.push(...((response.Responses?.[tableName] ?? []) as T[]));
      pending = (response.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
  }
  return items;
}

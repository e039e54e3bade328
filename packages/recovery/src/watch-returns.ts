import type { SQSClient } from "@aws-sdk/client-sqs";
import { sleep as realSleep, type Sleep } from "@mcp-pipeline/retry";
import { pause } from "./interrupted.js";
import { bodyDigest } from "./move-messages.js";
import { peekMessages } from "./peek-messages.js";

export interface WatchOptions {
  /** When the move started (ms, this machine's clock; compared with SQS's SentTimestamp). */
  readonly since: number;
  /** bodyDigest of every message moved: a DLQ message sent after `since` with one of them came back. */
  readonly digests: readonly string[];
  /** How long to watch at most (ms); the watch ends as soon as every moved message is back. */
  readonly timeoutMs: number;
  readonly fifo?: boolean;
  readonly pollMs?: number;
  readonly now?: () => number;
  readonly sleep?: Sleep;
  /** An abort ends the watch early (what it saw so far is the answer, `interrupted` says so). */
  readonly signal?: AbortSignal;
}

export interface Returns {
  /** Moved messages that are in the DLQ again (sent there after the move started, same body). */
  readonly cameBack: number;
  /** Their reasons: `pipeline.reason.code` (still poison) or max-receives. */
  readonly byReason: Readonly<Record<string, number>>;
  /** Every message sent to the DLQ after the move started, moved before or not. */
  readonly arrived: number;
  /** How long it watched (ms). */
  readonly watchedMs: number;
  /** The watch was cut short by an abort: fewer may have come back than will. */
  readonly interrupted: boolean;
}

/**
 * Watches a DLQ after a redrive for the moved messages coming straight back (a message that is still
 * poison is dead-lettered again by its worker within one invocation), reading the DLQ without taking
 * anything (peekMessages), until every moved message is back or `timeoutMs` has passed. A message that
 * fails again only after its receives run out (retryable, `maxReceiveCount` x visibility timeout) is
 * not "straight back" and is usually not seen in that time.
 */
export async function watchReturns(sqs: SQSClient, dlqUrl: string, options: WatchOptions): Promise<Returns> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const started = now();
  let result: Omit<Returns, "watchedMs" | "interrupted"> = { cameBack: 0, byReason: {}, arrived: 0 };
  const { signal } = options;
  for (;;) {
    if (signal?.aborted) break;
    let messages: Awaited<ReturnType<typeof peekMessages>>["messages"];
    try {
      ({ messages } = await peekMessages(sqs, dlqUrl, {
        ...(options.fifo ? { fifo: true } : {}),
        ...(signal ? { signal } : {}),
      }));
    } catch (error) {
      // Interrupted mid-read: the read released what it held; the last whole read is the answer.
      if (signal?.aborted) break;
      throw error;
    }
    const arrived = messages.filter((m) => m.sentAt > options.since);
    // A multiset: two moved messages with one body come back as two.
    const expected = new Map<string, number>();
    for (const d of options.digests) expected.set(d, (expected.get(d) ?? 0) + 1);
    const byReason: Record<string, number> = {};
    let cameBack = 0;
    for (const m of arrived) {
      const digest = bodyDigest(m.body);
      const left = expected.get(digest) ?? 0;
      if (left === 0) continue;
      expected.set(digest, left - 1);
      cameBack += 1;
      byReason[m.reason] = (byReason[m.reason] ?? 0) + 1;
    }
    result = { cameBack, byReason, arrived: arrived.length };
    if (cameBack >= options.digests.length || now() - started >= options.timeoutMs) break;
    await pause(
      sleep,
      Math.min(options.pollMs ?? 2_000, Math.max(0, options.timeoutMs - (now() - started))),
      signal,
    );
  }
  return { ...result, watchedMs: now() - started, interrupted: signal?.aborted === true };
}

import { createHash } from "node:crypto";
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import { sleep as realSleep, type Sleep } from "@mcp-pipeline/retry";
import { deadLetterReason } from "./failure-kind.js";
import { pause } from "./interrupted.js";
import { countMessages, HOLD_SECONDS, RECEIVE, release } from "./peek-messages.js";

export interface MoveOptions {
  readonly dlqUrl: string;
  readonly sourceUrl: string;
  readonly dryRun?: boolean;
  /** Messages per second at most (StartMessageMoveTask's MaxNumberOfMessagesPerSecond, 1-500). */
  readonly ratePerSecond?: number;
  /**
   * `auto` tries StartMessageMoveTask and falls back to the mover where the endpoint lacks it. `max` and
   * `reason` need the mover (a move task moves everything): `auto` then uses it, `move-task` is refused.
   */
  readonly mode?: "auto" | "move-task" | "mover";
  /** Move at most this many messages; the rest stay in the DLQ. */
  readonly max?: number;
  /** Move only messages of this reason (`pipeline.reason.code`, or MAX_RECEIVES_REASON); the rest stay. */
  readonly reason?: string;
  readonly pollIntervalMs?: number;
  /** Called after each step: messages moved so far, and the figure they are measured against. */
  readonly onProgress?: (moved: number, total: number) => void;
  readonly sleep?: Sleep;
  readonly now?: () => number;
  /**
   * An abort stops the move between steps: the mover ends the step it is in (what the source took is
   * deleted from the DLQ), makes every message it holds visible again, and returns with `interrupted`; a
   * move task is left to SQS, its handle returned to cancel it with.
   */
  readonly signal?: AbortSignal;
}

export interface MoveSummary {
  readonly mode: "move-task" | "mover" | "dry-run";
  /**
   * Messages in the DLQ when the move started. Counted by receiving them (dry run) or SQS's
   * ApproximateNumberOfMessagesToMove (move task); for the mover, SQS's approximate figure.
   */
  readonly waiting: number;
  /** True when `waiting` is SQS's approximate count (it lags: docs/aws-semantics.md §4), not a count. */
  readonly waitingIsApproximate: boolean;
  /** SQS's ApproximateNumberOfMessages when the move started, as SQS reported it. */
  readonly approximateWaiting: number;
  readonly moved: number;
  /** Messages the source queue refused or did not really take: left in the DLQ. */
  readonly failed: number;
  /**
   * Messages that reached the DLQ after the move started (still poison and dead-lettered again, or
   * new failures): left there for the next run, as StartMessageMoveTask does (§4).
   */
  readonly arrivedAfterStart: number;
  /** Messages left in the DLQ because of `max` or `reason`. */
  readonly leftByChoice: number;
  /** When the move started (ms): a message sent to the DLQ after it came back or is new. */
  readonly startedAt: number;
  /** bodyDigest of each message the mover moved (empty for a move task: SQS does not say). */
  readonly movedDigests: readonly string[];
  /** The move stopped early on an abort (`signal`): what was not moved is in the DLQ, visible. */
  readonly interrupted: boolean;
  /** The message move task's handle (move-task mode), e.g. to cancel a task left running. */
  readonly taskHandle?: string;
}

/** SHA-256 of a message body: how a moved message is recognised when it comes back under a new id. */
export function bodyDigest(body: string): string {
  return createHash("sha256").update(body, "utf8").digest("hex");
}

/** The endpoint has no StartMessageMoveTask (LocalStack community, the emulators, moto): use the mover. */
export function unsupported(error: unknown): boolean {
  const name = (error as Error).name ?? "";
  const message = (error as Error).message ?? "";
  const status =
    (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ??
    (error as { $response?: { statusCode?: number } }).$response?.statusCode;
  return (
    /UnsupportedOperation|InvalidAction|UnknownOperation|NotImplemented/i.test(name) ||
    /not (supported|implemented)|unknown (operation|action)|unsupported/i.test(message) ||
    status === 501 ||
    (status === 400 && /Action/i.test(message)) ||
    // moto answers an action it lacks with an HTML page (status 404 or 500), which the SDK cannot parse:
    // an HTML page is never SQS's answer.
    (name === "SyntaxError" && /not valid JSON/.test(message) && /<!doctype|<html/i.test(message))
  );
}

async function attributes(sqs: SQSClient, url: string) {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ["QueueArn", "ApproximateNumberOfMessages", "FifoQueue"],
    }),
  );
  return {
    arn: Attributes.QueueArn ?? "",
    waiting: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    fifo: Attributes.FifoQueue === "true",
  };
}

/**
 * Moves the messages a DLQ holds when the move starts back to its source queue, once each, as
 * StartMessageMoveTask does (docs/aws-semantics.md §4): with that API (polled with ListMessageMoveTasks
 * until it ends) where the endpoint has it, otherwise with a mover that receives, sends to the source
 * and deletes. The mover:
 * - leaves in the DLQ what arrived after it started (SentTimestamp after its start: a message it
 *   moved that failed again, or a new failure), so it ends even while the messages are still poison;
 * - sends FIFO messages with the DLQ message's id as the deduplication id. SQS's own moves never
 *   reuse the original id: "When a message is moved from a FIFO queue to a FIFO DLQ, the original
 *   message's deduplication ID will be replaced with the original message's ID", and "All redriven
 *   messages are considered new messages with a new messageID" (Amazon SQS Developer Guide,
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html;
 *   docs/aws-semantics.md §4). Reusing the original id would let SQS drop the message as a duplicate
 *   within five minutes of its first send (§3) while answering success; a re-run of the mover after a
 *   crash is the one duplicate that is dropped, which is what is wanted;
 * - deletes a message from the DLQ only once the source has taken it: accepted, and not answered with
 *   the id of a message sent before (SQS's answer to a de-duplicated send).
 */
export async function moveMessages(sqs: SQSClient, options: MoveOptions): Promise<MoveSummary> {
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const startedAt = now();
  const dlq = await attributes(sqs, options.dlqUrl);
  const source = await attributes(sqs, options.sourceUrl);
  if (options.dryRun) {
    // A FIFO queue returns no later message of a group while an earlier one is held (§3), so it
    // cannot be counted by receiving: its figure is SQS's, and says so.
    return {
      mode: "dry-run",
      waiting: dlq.fifo ? dlq.waiting : await countMessages(sqs, options.dlqUrl),
      waitingIsApproximate: dlq.fifo,
      approximateWaiting: dlq.waiting,
      moved: 0,
      failed: 0,
      arrivedAfterStart: 0,
      leftByChoice: 0,
      startedAt,
      movedDigests: [],
      interrupted: false,
    };
  }
  const selective = options.max !== undefined || options.reason !== undefined;
  const mode = options.mode ?? "auto";
  if (mode === "move-task" && selective)
    throw new RangeError("a message move task moves every message: max and reason need the mover");

  if (mode !== "mover" && !selective) {
    try {
      const { TaskHandle } = await sqs.send(
        new StartMessageMoveTaskCommand({
          SourceArn: dlq.arn,
          DestinationArn: source.arn,
          ...(options.ratePerSecond
            ? { MaxNumberOfMessagesPerSecond: Math.min(500, options.ratePerSecond) }
            : {}),
        }),
      );
      for (;;) {
        await pause(sleep, options.pollIntervalMs ?? 2_000, options.signal);
        const { Results = [] } = await sqs.send(
          new ListMessageMoveTasksCommand({ SourceArn: dlq.arn, MaxResults: 10 }),
        );
        const task = Results.find((r) => r.TaskHandle === TaskHandle) ?? Results[0];
        const moved = task?.ApproximateNumberOfMessagesMoved ?? 0;
        const toMove = task?.ApproximateNumberOfMessagesToMove ?? dlq.waiting;
        options.onProgress?.(moved, toMove);
        const interrupted = options.signal?.aborted === true && task?.Status === "RUNNING";
        if (interrupted || (task && task.Status !== "RUNNING")) {
          if (!interrupted && task?.Status !== "COMPLETED")
            throw new Error(`message move task ${task?.Status}: ${task?.FailureReason ?? "no reason given"}`);
          return {
            mode: "move-task",
            waiting: toMove,
            waitingIsApproximate: true,
            approximateWaiting: dlq.waiting,
            moved,
            failed: 0,
            arrivedAfterStart: 0,
            leftByChoice: 0,
            startedAt,
            movedDigests: [],
            interrupted,
            ...(TaskHandle ? { taskHandle: TaskHandle } : {}),
          };
        }
      }
    } catch (error) {
      if (mode === "move-task" || !unsupported(error)) throw error;
    }
  }

  let moved = 0;
  let failed = 0;
  let arrivedAfterStart = 0;
  let leftByChoice = 0;
  const movedDigests: string[] = [];
  // Every DLQ message seen in this run, and those left in the DLQ (made visible again at the end).
  const seen = new Set<string>();
  const left = new Map<string, string>();
  const sentIds = new Set<string>();
  // FIFO groups with a message left in the DLQ: their later messages stay too, so a group's order holds
  // (a job of a group never runs before an earlier one that --reason or --max left behind, §3).
  const heldGroups = new Set<string>();
  let interrupted = false;
  // Sent after the run started: the run cannot have sent it before, so it is not part of the snapshot.
  const isNew = (m: Message) => Number(m.Attributes?.SentTimestamp ?? 0) > startedAt;
  try {
    for (;;) {
      // Between steps only: a receive answered after the abort would hold messages with no one to release them.
      if (options.signal?.aborted) {
        interrupted = true;
        break;
      }
      const started = now();
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: options.dlqUrl, ...RECEIVE, VisibilityTimeout: HOLD_SECONDS }),
      );
      const fresh: Message[] = [];
      let unseen = 0;
      for (const m of Messages) {
        const id = m.MessageId ?? "";
        if (seen.has(id)) {
          // Left before and visible again after the hold; keep its newest receipt.
          if (left.has(id) && m.ReceiptHandle) left.set(id, m.ReceiptHandle);
          continue;
        }
        seen.add(id);
        unseen += 1;
        const group = m.Attributes?.MessageGroupId;
        const chosen =
          (options.reason === undefined || deadLetterReason(m.MessageAttributes ?? {}) === options.reason) &&
          (options.max === undefined || moved + fresh.length < options.max) &&
          (group === undefined || !heldGroups.has(group));
        if (isNew(m)) {
          arrivedAfterStart += 1;
          left.set(id, m.ReceiptHandle ?? "");
        } else if (!chosen) {
          leftByChoice += 1;
          left.set(id, m.ReceiptHandle ?? "");
          if (group !== undefined) heldGroups.add(group);
        } else {
          fresh.push(m);
        }
      }
      // Nothing this run has not seen: every message present at the start has been handled.
      if (unseen === 0) break;
      if (fresh.length === 0) continue;
      // Until the source has taken them they are the DLQ's: a failed send (a denial, the network) makes
      // them visible again at the end with the rest, not hidden for the hold.
      for (const m of fresh) left.set(m.MessageId ?? "", m.ReceiptHandle ?? "");
      const sent = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: options.sourceUrl,
          Entries: fresh.map((m, i) => ({
            Id: String(i),
            MessageBody: m.Body ?? "",
            ...(m.MessageAttributes && Object.keys(m.MessageAttributes).length > 0
              ? { MessageAttributes: m.MessageAttributes }
              : {}),
            ...(source.fifo
              ? {
                  MessageGroupId: m.Attributes?.MessageGroupId ?? m.MessageId,
                  // A new message, as SQS's move makes it: its DLQ message id, never the original's.
                  MessageDeduplicationId: m.MessageId,
                }
              : {}),
          })),
        }),
      );
      const taken: Message[] = [];
      for (const s of sent.Successful ?? []) {
        const m = fresh[Number(s.Id)];
        if (m === undefined) continue;
        if (s.MessageId === undefined || sentIds.has(s.MessageId)) {
          // The answer names a message sent before: SQS de-duplicated this one and dropped it.
          failed += 1;
          left.set(m.MessageId ?? "", m.ReceiptHandle ?? "");
          continue;
        }
        sentIds.add(s.MessageId);
        left.delete(m.MessageId ?? "");
        taken.push(m);
        movedDigests.push(bodyDigest(m.Body ?? ""));
      }
      for (const f of sent.Failed ?? []) {
        const m = fresh[Number(f.Id)];
        failed += 1;
        if (m) left.set(m.MessageId ?? "", m.ReceiptHandle ?? "");
      }
      if (taken.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: options.dlqUrl,
            Entries: taken.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
          }),
        );
      }
      moved += taken.length;
      options.onProgress?.(moved, dlq.waiting);
      // --max reached: what is not read yet stays in the DLQ unread.
      if (options.max !== undefined && moved >= options.max) break;
      if (options.ratePerSecond) {
        const budget = (fresh.length / options.ratePerSecond) * 1000;
        const elapsed = now() - started;
        if (elapsed < budget) await pause(sleep, budget - elapsed, options.signal);
      }
    }
  } finally {
    await release(
      sqs,
      options.dlqUrl,
      [...left.values()].filter((r) => r !== ""),
    );
  }
  return {
    mode: "mover",
    waiting: dlq.waiting,
    waitingIsApproximate: true,
    approximateWaiting: dlq.waiting,
    moved,
    failed,
    arrivedAfterStart,
    leftByChoice,
    startedAt,
    movedDigests,
    interrupted,
  };
}

import { createHash } from "node:crypto";
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
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

interface QueueFacts {
  readonly arn: string;
  /** SQS's ApproximateNumberOfMessages. */
  readonly waiting: number;
  readonly fifo: boolean;
}

async function attributes(sqs: SQSClient, url: string): Promise<QueueFacts> {
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

/** What every move starts from: both queues as SQS describes them, and when the move started. */
interface MoveStart {
  readonly dlq: QueueFacts;
  readonly source: QueueFacts;
  readonly startedAt: number;
  readonly sleep: Sleep;
  readonly now: () => number;
}

/** The figures of a move that moved nothing, in MoveSummary's order: each mode's own figures replace them. */
function nothingMoved(start: MoveStart): Omit<MoveSummary, "mode" | "waiting" | "waitingIsApproximate"> {
  return {
    approximateWaiting: start.dlq.waiting,
    moved: 0,
    failed: 0,
    arrivedAfterStart: 0,
    leftByChoice: 0,
    startedAt: start.startedAt,
    movedDigests: [],
    interrupted: false,
  };
}

/** Counts what the DLQ holds, moving nothing. */
async function dryRun(sqs: SQSClient, dlqUrl: string, start: MoveStart): Promise<MoveSummary> {
  // A FIFO queue returns no later message of a group while an earlier one is held (§3), so it
  // cannot be counted by receiving: its figure is SQS's, and says so.
  return {
    mode: "dry-run",
    waiting: start.dlq.fifo ? start.dlq.waiting : await countMessages(sqs, dlqUrl),
    waitingIsApproximate: start.dlq.fifo,
    ...nothingMoved(start),
  };
}

/**
 * StartMessageMoveTask, polled with ListMessageMoveTasks until it ends (or, on an abort, left running
 * with its handle returned). Throws what the endpoint answers when it lacks the API.
 */
async function runMoveTask(sqs: SQSClient, options: MoveOptions, start: MoveStart): Promise<MoveSummary> {
  const { dlq, source } = start;
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
    await pause(start.sleep, options.pollIntervalMs ?? 2_000, options.signal);
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
        ...nothingMoved(start),
        moved,
        interrupted,
        ...(TaskHandle ? { taskHandle: TaskHandle } : {}),
      };
    }
  }
}

/** What the mover knows across its steps: what it moved, left and why, and every message it has seen. */
export interface MoverLedger {
  moved: number;
  failed: number;
  arrivedAfterStart: number;
  leftByChoice: number;
  readonly movedDigests: string[];
  /** Every DLQ message seen in this run, by id. */
  readonly seen: Set<string>;
  /** Messages left in the DLQ, by id, with their newest receipt: made visible again at the end. */
  readonly left: Map<string, string>;
  /** Message ids the source queue answered sends with. */
  readonly sentIds: Set<string>;
  /**
   * FIFO groups with a message left in the DLQ: their later messages stay too, so a group's order holds
   * (a job of a group never runs before an earlier one that --reason or --max left behind, §3).
   */
  readonly heldGroups: Set<string>;
}

export function emptyMoverLedger(): MoverLedger {
  return {
    moved: 0,
    failed: 0,
    arrivedAfterStart: 0,
    leftByChoice: 0,
    movedDigests: [],
    seen: new Set(),
    left: new Map(),
    sentIds: new Set(),
    heldGroups: new Set(),
  };
}

/** Which messages the mover moves: those present at the start, of `reason`, up to `max`. */
export interface MoverChoice {
  readonly startedAt: number;
  readonly reason?: string;
  readonly max?: number;
}

/**
 * Sorts one receive's messages: seen before (left earlier and visible again: its newest receipt kept),
 * arrived after the start or not chosen (left in the DLQ), or to move now (`fresh`). `unseen` counts the
 * messages this run had not seen: 0 means every message present at the start has been handled.
 */
export function sortReceived(
  messages: readonly Message[],
  ledger: MoverLedger,
  choice: MoverChoice,
): { fresh: Message[]; unseen: number } {
  const fresh: Message[] = [];
  let unseen = 0;
  for (const m of messages) {
    const id = m.MessageId ?? "";
    if (ledger.seen.has(id)) {
      if (ledger.left.has(id) && m.ReceiptHandle) ledger.left.set(id, m.ReceiptHandle);
      continue;
    }
    ledger.seen.add(id);
    unseen += 1;
    const group = m.Attributes?.MessageGroupId;
    const chosen =
      (choice.reason === undefined || deadLetterReason(m.MessageAttributes ?? {}) === choice.reason) &&
      (choice.max === undefined || ledger.moved + fresh.length < choice.max) &&
      (group === undefined || !ledger.heldGroups.has(group));
    // Sent after the run started: the run cannot have sent it before, so it is not part of the snapshot.
    if (Number(m.Attributes?.SentTimestamp ?? 0) > choice.startedAt) {
      ledger.arrivedAfterStart += 1;
      ledger.left.set(id, m.ReceiptHandle ?? "");
    } else if (!chosen) {
      ledger.leftByChoice += 1;
      ledger.left.set(id, m.ReceiptHandle ?? "");
      if (group !== undefined) ledger.heldGroups.add(group);
    } else {
      fresh.push(m);
    }
  }
  return { fresh, unseen };
}

/** Sends DLQ messages to the source queue as new messages, attributes and group kept. */
function sendToSource(sqs: SQSClient, sourceUrl: string, messages: readonly Message[], fifo: boolean) {
  return sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: sourceUrl,
      Entries: messages.map((m, i) => ({
        Id: String(i),
        MessageBody: m.Body ?? "",
        ...(m.MessageAttributes && Object.keys(m.MessageAttributes).length > 0
          ? { MessageAttributes: m.MessageAttributes }
          : {}),
        ...(fifo
          ? {
              MessageGroupId: m.Attributes?.MessageGroupId ?? m.MessageId,
              // A new message, as SQS's move makes it: its DLQ message id, never the original's.
              MessageDeduplicationId: m.MessageId,
            }
          : {}),
      })),
    }),
  );
}

/**
 * Enters the source's answer to a send of `sent` in the ledger and returns the messages it took: accepted,
 * and answered with a message id not seen before (an id seen before is SQS's answer to a de-duplicated
 * send, which it dropped). What it did not take stays left in the DLQ.
 */
export function settleSend(
  sent: readonly Message[],
  answer: Partial<Pick<SendMessageBatchCommandOutput, "Successful" | "Failed">>,
  ledger: MoverLedger,
): Message[] {
  const taken: Message[] = [];
  for (const s of answer.Successful ?? []) {
    const m = sent[Number(s.Id)];
    if (m === undefined) continue;
    if (s.MessageId === undefined || ledger.sentIds.has(s.MessageId)) {
      ledger.failed += 1;
      ledger.left.set(m.MessageId ?? "", m.ReceiptHandle ?? "");
      continue;
    }
    ledger.sentIds.add(s.MessageId);
    ledger.left.delete(m.MessageId ?? "");
    taken.push(m);
    ledger.movedDigests.push(bodyDigest(m.Body ?? ""));
  }
  for (const f of answer.Failed ?? []) {
    const m = sent[Number(f.Id)];
    ledger.failed += 1;
    if (m) ledger.left.set(m.MessageId ?? "", m.ReceiptHandle ?? "");
  }
  return taken;
}

async function deleteFromDlq(sqs: SQSClient, dlqUrl: string, messages: readonly Message[]): Promise<void> {
  if (messages.length === 0) return;
  await sqs.send(
    new DeleteMessageBatchCommand({
      QueueUrl: dlqUrl,
      Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
    }),
  );
}

/** The mover: receive from the DLQ, send to the source, delete what the source took; step by step. */
async function runMover(sqs: SQSClient, options: MoveOptions, start: MoveStart): Promise<MoveSummary> {
  const ledger = emptyMoverLedger();
  const choice: MoverChoice = {
    startedAt: start.startedAt,
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.max !== undefined ? { max: options.max } : {}),
  };
  let interrupted = false;
  try {
    for (;;) {
      // Between steps only: a receive answered after the abort would hold messages with no one to release them.
      if (options.signal?.aborted) {
        interrupted = true;
        break;
      }
      const stepStarted = start.now();
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: options.dlqUrl, ...RECEIVE, VisibilityTimeout: HOLD_SECONDS }),
      );
      const { fresh, unseen } = sortReceived(Messages, ledger, choice);
      if (unseen === 0) break;
      if (fresh.length === 0) continue;
      // Until the source has taken them they are the DLQ's: a failed send (a denial, the network) makes
      // them visible again at the end with the rest, not hidden for the hold.
      for (const m of fresh) ledger.left.set(m.MessageId ?? "", m.ReceiptHandle ?? "");
      const answer = await sendToSource(sqs, options.sourceUrl, fresh, start.source.fifo);
      const taken = settleSend(fresh, answer, ledger);
      await deleteFromDlq(sqs, options.dlqUrl, taken);
      ledger.moved += taken.length;
      options.onProgress?.(ledger.moved, start.dlq.waiting);
      // --max reached: what is not read yet stays in the DLQ unread.
      if (options.max !== undefined && ledger.moved >= options.max) break;
      if (options.ratePerSecond) {
        const budget = (fresh.length / options.ratePerSecond) * 1000;
        const elapsed = start.now() - stepStarted;
        if (elapsed < budget) await pause(start.sleep, budget - elapsed, options.signal);
      }
    }
  } finally {
    await release(
      sqs,
      options.dlqUrl,
      [...ledger.left.values()].filter((r) => r !== ""),
    );
  }
  return {
    mode: "mover",
    waiting: start.dlq.waiting,
    waitingIsApproximate: true,
    ...nothingMoved(start),
    moved: ledger.moved,
    failed: ledger.failed,
    arrivedAfterStart: ledger.arrivedAfterStart,
    leftByChoice: ledger.leftByChoice,
    movedDigests: ledger.movedDigests,
    interrupted,
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
  const start: MoveStart = { dlq, source, startedAt, sleep, now };
  if (options.dryRun) return dryRun(sqs, options.dlqUrl, start);
  const selective = options.max !== undefined || options.reason !== undefined;
  const mode = options.mode ?? "auto";
  if (mode === "move-task" && selective)
    throw new RangeError("a message move task moves every message: max and reason need the mover");
  if (mode !== "mover" && !selective) {
    try {
      return await runMoveTask(sqs, options, start);
    } catch (error) {
      if (mode === "move-task" || !unsupported(error)) throw error;
    }
  }
  return runMover(sqs, options, start);
}

/**
 * `npm run drill:check`: whether a drill is done, judged from the stack's state against the drill's
 * ledger: every valid input applied (its call in the tool-calls table), every permanent poison kept (in
 * the quarantine or a DLQ). An input still in a DLQ or the quarantine is not done; one found nowhere is
 * lost. Each is named with where it is and what brings it home.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import {
  ChangeMessageVisibilityBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { listQuarantine, type QuarantineEntry } from "@mcp-pipeline/recovery";
import type { DrillInput, DrillLedger, DrillQueue } from "./drill-ledger.js";
import { queueDepth } from "./queue-depth.js";
import { readCalls } from "./read-calls.js";

export const DrillOutcome = {
  /** Where the drill wants it: applied, completed, or (poison) kept. */
  Done: "done",
  /** Kept, but not where it must end: in a DLQ, the quarantine, or still in flight. */
  NotDone: "not-done",
  /** Found nowhere. */
  Lost: "lost",
} as const;
export type DrillOutcome = (typeof DrillOutcome)[keyof typeof DrillOutcome];

export interface JudgedInput {
  readonly input: DrillInput;
  readonly outcome: DrillOutcome;
  /** Where it is now, in words: "in the tool-calls table (completed)", "in the tool-jobs DLQ"... */
  readonly where: string;
  /** What brings it where it must end, when it is not there. */
  readonly next?: string;
}

export interface DrillVerdict {
  readonly done: boolean;
  readonly inputs: readonly JudgedInput[];
  readonly counts: Readonly<Record<DrillOutcome, number>>;
}

export interface DrillClients {
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
}

const QUEUE_NAMES: Record<DrillQueue, string> = {
  tool_jobs: "tool-jobs",
  session_jobs: "session-jobs",
  stream_failures: "stream-failures",
};

/**
 * The bodies a queue holds that are visible now, read without taking them: each page is hidden while it
 * is read, then made visible again at once. A FIFO queue shows only the first waiting message of each
 * group (§3): what waits behind it is counted by the queue's depth, not seen.
 */
async function visibleBodies(sqs: SQSClient, queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  const handles: string[] = [];
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 30,
          WaitTimeSeconds: 0,
        }),
      );
      if (Messages.length === 0) return bodies;
      for (const m of Messages) {
        bodies.push(m.Body ?? "");
        handles.push(m.ReceiptHandle ?? "");
      }
    }
  } finally {
    for (let i = 0; i < handles.length; i += 10)
      await sqs
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: handles
              .slice(i, i + 10)
              .map((h, n) => ({ Id: String(n), ReceiptHandle: h, VisibilityTimeout: 0 })),
          }),
        )
        .catch(() => undefined);
  }
}

interface QueueView {
  /** Visible bodies: read for a DLQ only, where a receive changes nothing that matters. */
  readonly bodies: readonly string[];
  readonly depth: number;
}

/** Judges every input of the ledger from the stack's state. */
export async function checkDrill(clients: DrillClients, ledger: DrillLedger): Promise<DrillVerdict> {
  const state = await StackState.read(clients, ledger);
  const judged: JudgedInput[] = [];
  for (const input of ledger.inputs) judged.push(await state.judge(input));
  const counts = { done: 0, "not-done": 0, lost: 0 } as Record<DrillOutcome, number>;
  for (const j of judged) counts[j.outcome] += 1;
  return { done: counts["not-done"] === 0 && counts.lost === 0, inputs: judged, counts };
}

type InputOf<K extends DrillInput["kind"]> = Extract<DrillInput, { readonly kind: K }>;

/**
 * The stack's state as the check reads it: the ledger's calls and the quarantine read once, each queue
 * when an input first needs it; and each kind of input judged against it.
 */
class StackState {
  readonly #sqs: SQSClient;
  readonly #resources: DrillLedger["resources"];
  readonly #calls: Map<string, { status?: string; requestedAt?: string }>;
  readonly #quarantine: readonly QuarantineEntry[];
  readonly #views = new Map<string, QueueView>();

  private constructor(
    sqs: SQSClient,
    resources: DrillLedger["resources"],
    calls: Map<string, { status?: string; requestedAt?: string }>,
    quarantine: readonly QuarantineEntry[],
  ) {
    this.#sqs = sqs;
    this.#resources = resources;
    this.#calls = calls;
    this.#quarantine = quarantine;
  }

  static async read(clients: DrillClients, ledger: DrillLedger): Promise<StackState> {
    const { dynamodb, sqs, s3 } = clients;
    const r = ledger.resources;
    const callIds = ledger.inputs.flatMap((i) => (i.kind === "event" || i.kind === "job" ? [i.callId] : []));
    const read = new Map<string, Record<string, unknown>>();
    const [, quarantine] = await Promise.all([
      readCalls(dynamodb, r.toolCallsTable, read, callIds),
      listQuarantine(s3, r.quarantineBucket),
    ]);
    return new StackState(sqs, r, read as Map<string, { status?: string; requestedAt?: string }>, quarantine);
  }

  async judge(input: DrillInput): Promise<JudgedInput> {
    switch (input.kind) {
      case "event":
        return this.#event(input);
      case "poison-record":
        return this.#poisonRecord(input);
      case "job":
        return this.#job(input);
      case "poison-message":
        return this.#poisonMessage(input);
    }
  }

  #event(input: InputOf<"event">): JudgedInput {
    if (this.#calls.get(input.callId)?.requestedAt)
      return { input, outcome: DrillOutcome.Done, where: "applied: in the tool-calls table" };
    const kept = this.#byData(input.data);
    if (kept.length > 0) {
      const reasons = [...new Set(kept.map((e) => e.record.reason.code))].join(", ");
      return {
        input,
        outcome: DrillOutcome.NotDone,
        where: `in the quarantine (${reasons}), not applied`,
        next: "replay it from the quarantine (docs/operations.md); the table is healthy again",
      };
    }
    return {
      input,
      outcome: DrillOutcome.Lost,
      where: "nowhere: not in the table, not in the quarantine",
    };
  }

  #poisonRecord(input: InputOf<"poison-record">): JudgedInput {
    const kept = this.#byData(input.data);
    return kept.length > 0
      ? {
          input,
          outcome: DrillOutcome.Done,
          where: `kept in the quarantine (${kept[0]?.record.reason.code})`,
        }
      : {
          input,
          outcome: DrillOutcome.Lost,
          where: "nowhere: a permanent poison record is kept in the quarantine, never deleted",
        };
  }

  async #job(input: InputOf<"job">): Promise<JudgedInput> {
    const status = this.#calls.get(input.callId)?.status;
    if (status === "completed" || status === "failed")
      return { input, outcome: DrillOutcome.Done, where: `${status}: in the tool-calls table` };
    const queues = this.#resources.queues[input.queue];
    const name = QUEUE_NAMES[input.queue];
    const [dlq, source] = await Promise.all([this.#view(queues.dlqUrl, true), this.#view(queues.url, false)]);
    // In a FIFO DLQ only a group's first message shows: one behind it is known by the table's
    // dead-lettered status and the DLQ's depth.
    if (dlq.bodies.includes(input.body) || (status === "dead-lettered" && dlq.depth > dlq.bodies.length))
      return {
        input,
        outcome: DrillOutcome.NotDone,
        where: `in the ${name} DLQ${status ? ` (the table says ${status})` : ""}`,
        next: `redrive the ${name} DLQ once its downstream is back (docs/operations.md)`,
      };
    if (source.depth > 0 || status !== undefined)
      return {
        input,
        outcome: DrillOutcome.NotDone,
        where: `not completed${status ? ` (the table says ${status})` : ""}: still in ${name} (being retried, or waiting behind its group)`,
        next: "wait for it, or for it to reach the DLQ",
      };
    return { input, outcome: DrillOutcome.Lost, where: `nowhere: not in the table, ${name} or its DLQ` };
  }

  async #poisonMessage(input: InputOf<"poison-message">): Promise<JudgedInput> {
    const queues = this.#resources.queues[input.queue];
    const name = QUEUE_NAMES[input.queue];
    const [dlq, source] = await Promise.all([this.#view(queues.dlqUrl, true), this.#view(queues.url, false)]);
    if (dlq.bodies.includes(input.body))
      return { input, outcome: DrillOutcome.Done, where: `kept in the ${name} DLQ (${input.reason})` };
    if (source.depth > 0)
      return {
        input,
        outcome: DrillOutcome.NotDone,
        where: `back in ${name} (redriven): its consumer sends it to the DLQ again`,
        next: "wait for it to reach the DLQ again; permanent poison is not redriven (it cannot succeed)",
      };
    return {
      input,
      outcome: DrillOutcome.Lost,
      where: `nowhere: permanent poison is kept in the ${name} DLQ, never deleted`,
    };
  }

  /**
   * A DLQ's visible bodies and depth. A source queue's depth only: a receive there would count against
   * its messages' maxReceiveCount, and the check must not change what it judges.
   */
  async #view(url: string, dlq: boolean): Promise<QueueView> {
    const known = this.#views.get(url);
    if (known) return known;
    const seen = {
      bodies: dlq ? await visibleBodies(this.#sqs, url) : [],
      depth: await queueDepth(this.#sqs, url),
    };
    this.#views.set(url, seen);
    return seen;
  }

  #byData(data: string): QuarantineEntry[] {
    return this.#quarantine.filter((e: QuarantineEntry) => e.record.data === data);
  }
}

/** The input as a person names it: its call, or its reason and where it was put. */
export function nameOf(input: DrillInput): string {
  switch (input.kind) {
    case "event":
      return `event ${input.callId}`;
    case "job":
      return `job ${input.callId}`;
    case "poison-record":
      return `poison record (${input.reason})`;
    case "poison-message":
      return `poison message in ${QUEUE_NAMES[input.queue]} (${input.reason})`;
  }
}

/** The verdict for a person: a line per outcome, then each input not done or lost with what to do. */
export function formatDrillVerdict(ledger: DrillLedger, verdict: DrillVerdict): string {
  const lines = [
    `drill check (environment ${ledger.environment}, seed ${ledger.seed}): ${verdict.inputs.length} inputs`,
    `  done      ${verdict.counts.done}   valid inputs applied, permanent poison kept`,
    `  not done  ${verdict.counts["not-done"]}   kept, but not where they must end`,
    `  lost      ${verdict.counts.lost}   found nowhere`,
  ];
  for (const j of verdict.inputs.filter((i) => i.outcome !== DrillOutcome.Done))
    lines.push(
      `  ${j.outcome === DrillOutcome.Lost ? "LOST" : "not done"}: ${nameOf(j.input)}: ${j.where}${j.next ? `; ${j.next}` : ""}`,
    );
  lines.push(
    verdict.done
      ? "DONE: nothing was lost; every valid input is applied and every poison kept"
      : verdict.counts.lost > 0
        ? `NOT DONE: ${verdict.counts.lost} input(s) lost`
        : `NOT DONE: ${verdict.counts["not-done"]} input(s) still to recover`,
  );
  return lines.join("\n");
}

/**
 * Everything that failed and waits, in one view: the quarantine and every DLQ, grouped by reason, each
 * group labelled permanent or retryable with the next step for it. A library function (the drill and
 * the CLI's `triage` use it); next-command.ts renders a step as the command to type.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  FailureKind,
  InterruptedError,
  MAX_RECEIVES_REASON,
  peekMessages,
  planReplay,
  scanQuarantine,
  type UnreadableObject,
} from "@mcp-pipeline/recovery";

/** What to do next about a group: a command of `npm run recover`, as data. */
export type NextStep =
  | { readonly command: "replay"; readonly reason: string }
  | { readonly command: "inspect"; readonly reason: string }
  | { readonly command: "redrive"; readonly queue: QueueName; readonly reason?: string }
  | { readonly command: "peek"; readonly queue: QueueName; readonly reason: string };

/** A DLQ as the command line names it: `--queue tool-jobs`, or `--from <url>` for one outside the pipeline. */
export type QueueName = { readonly key: string } | { readonly url: string };

export interface TriageGroup {
  readonly where: "quarantine" | "dlq";
  /** The bucket, or the queue's name as typed (`tool-jobs`) or its URL. */
  readonly source: string;
  readonly reason: string;
  readonly kind: FailureKind;
  /** Records (quarantine: a record and its copies count once) or messages. */
  readonly count: number;
  /** True for a FIFO DLQ: a read sees the first messages of each group only (§3); SQS's count is below. */
  readonly partial: boolean;
  /** The oldest failure of the group (ms): quarantined at, or sent to the DLQ at. */
  readonly oldestAt: number;
  /** Quarantine: records that a replay put back before and that failed again. */
  readonly givenUpAgain: number;
  readonly next: NextStep;
}

export interface TriageDlq {
  readonly name: QueueName;
  readonly url: string;
  readonly fifo: boolean;
}

export interface TriageReport {
  readonly groups: readonly TriageGroup[];
  /** Quarantine objects that are not records this code can read: for a person, with `aws s3 cp`. */
  readonly unreadable: readonly UnreadableObject[];
  /** Quarantined records already put back, nothing of them waiting. */
  readonly replayed: number;
  /**
   * Sources that could not be read (a bucket that is not there, an endpoint that does not answer): what
   * waits there is unknown, which needs a person as much as what is seen.
   */
  readonly unread: readonly { readonly source: string; readonly why: string }[];
  /** Per FIFO DLQ, SQS's approximate count beside what the read saw. */
  readonly approximate: readonly {
    readonly source: string;
    readonly approximate: number;
    readonly seen: number;
  }[];
}

const nameOf = (q: QueueName) => ("key" in q ? q.key : q.url);

/** Reads the quarantine (when a bucket is given) and each DLQ, without changing anything. */
export async function triage(
  clients: { readonly s3: S3Client; readonly sqs: SQSClient },
  sources: {
    readonly bucket?: string;
    readonly dlqs: readonly TriageDlq[];
    readonly expectedBucketOwner?: string;
    /** Stops the read at its next receive (the messages read are released): InterruptedError. */
    readonly interrupt?: AbortSignal;
    /** How a service's error is told (which endpoint did not answer); `name: message` by default. */
    readonly describeError?: (service: "S3" | "SQS", error: unknown) => string;
  },
): Promise<TriageReport> {
  const groups: TriageGroup[] = [];
  let unreadable: UnreadableObject[] = [];
  let replayed = 0;
  const unread: { source: string; why: string }[] = [];
  const notRead = (source: string, service: "S3" | "SQS", error: unknown) => {
    if (error instanceof InterruptedError) throw error;
    unread.push({
      source,
      why: sources.describeError?.(service, error) ?? `${(error as Error).name}: ${(error as Error).message}`,
    });
  };
  if (sources.bucket !== undefined) {
    let scan: Awaited<ReturnType<typeof scanQuarantine>> | undefined;
    try {
      scan = await scanQuarantine(
        clients.s3,
        sources.bucket,
        {},
        {
          ...(sources.expectedBucketOwner ? { expectedBucketOwner: sources.expectedBucketOwner } : {}),
          ...(sources.interrupt ? { signal: sources.interrupt } : {}),
        },
      );
    } catch (error) {
      notRead(`quarantine s3://${sources.bucket}`, "S3", error);
    }
    unreadable = scan?.unreadable ?? [];
    const plan = planReplay(scan?.entries ?? [], { includePermanent: true });
    replayed = plan.alreadyReplayed;
    const byReason = new Map<string, TriageGroup>();
    for (const item of plan.items) {
      const at = Date.parse(item.entry.record.quarantinedAt);
      const previous = byReason.get(item.reason);
      byReason.set(item.reason, {
        where: "quarantine",
        source: sources.bucket,
        reason: item.reason,
        kind: item.kind,
        count: (previous?.count ?? 0) + 1,
        partial: false,
        oldestAt: Math.min(previous?.oldestAt ?? at, at),
        givenUpAgain: (previous?.givenUpAgain ?? 0) + (item.givenUpAgain ? 1 : 0),
        next:
          item.kind === FailureKind.Retryable
            ? { command: "replay", reason: item.reason }
            : { command: "inspect", reason: item.reason },
      });
    }
    groups.push(...byReason.values());
  }
  const approximate: TriageReport["approximate"][number][] = [];
  for (const dlq of sources.dlqs) {
    let messages: Awaited<ReturnType<typeof peekMessages>>["messages"];
    try {
      ({ messages } = await peekMessages(clients.sqs, dlq.url, {
        fifo: dlq.fifo,
        ...(sources.interrupt ? { signal: sources.interrupt } : {}),
      }));
    } catch (error) {
      notRead(`${nameOf(dlq.name)} DLQ`, "SQS", error);
      continue;
    }
    const reasons = new Map<string, { count: number; oldestAt: number; kind: FailureKind }>();
    for (const m of messages) {
      const previous = reasons.get(m.reason);
      reasons.set(m.reason, {
        count: (previous?.count ?? 0) + 1,
        oldestAt: Math.min(previous?.oldestAt ?? m.sentAt, m.sentAt),
        kind: m.kind,
      });
    }
    // A DLQ holding both kinds: a plain redrive would move the poison too, and it would come straight back.
    const mixed = [...reasons.values()].some((r) => r.kind === FailureKind.Permanent);
    for (const [reason, r] of reasons)
      groups.push({
        where: "dlq",
        source: nameOf(dlq.name),
        reason,
        kind: r.kind,
        count: r.count,
        partial: dlq.fifo,
        oldestAt: r.oldestAt,
        givenUpAgain: 0,
        next:
          r.kind === FailureKind.Retryable
            ? { command: "redrive", queue: dlq.name, ...(mixed ? { reason: MAX_RECEIVES_REASON } : {}) }
            : { command: "peek", queue: dlq.name, reason },
      });
    if (dlq.fifo) {
      const { Attributes = {} } = await clients.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: dlq.url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
      );
      approximate.push({
        source: nameOf(dlq.name),
        approximate:
          Number(Attributes.ApproximateNumberOfMessages ?? 0) +
          Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
        seen: messages.length,
      });
    }
  }
  // Retryable first (what a command can fix now), then the oldest.
  groups.sort(
    (a, b) =>
      Number(a.kind === FailureKind.Permanent) - Number(b.kind === FailureKind.Permanent) ||
      a.oldestAt - b.oldestAt,
  );
  return { groups, unreadable, replayed, unread, approximate };
}

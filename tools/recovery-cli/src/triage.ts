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
  type PeekedMessage,
  peekMessages,
  planReplay,
  type ReplayItem,
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

/** Where triage reads, and how. */
export interface TriageSources {
  readonly bucket?: string;
  readonly dlqs: readonly TriageDlq[];
  readonly expectedBucketOwner?: string;
  /** Stops the read at its next receive (the messages read are released): InterruptedError. */
  readonly interrupt?: AbortSignal;
  /** How a service's error is told (which endpoint did not answer); `name: message` by default. */
  readonly describeError?: (service: "S3" | "SQS", error: unknown) => string;
}

/** Records a source that could not be read; an interruption is not one, and stops the triage. */
type NotRead = (source: string, service: "S3" | "SQS", error: unknown) => void;

/** What the quarantine adds to the report. */
interface QuarantineView {
  readonly groups: readonly TriageGroup[];
  readonly unreadable: readonly UnreadableObject[];
  readonly replayed: number;
}

type Approximate = TriageReport["approximate"][number];

/** Reads the quarantine (when a bucket is given) and each DLQ, without changing anything. */
export async function triage(
  clients: { readonly s3: S3Client; readonly sqs: SQSClient },
  sources: TriageSources,
): Promise<TriageReport> {
  const unread: { source: string; why: string }[] = [];
  const notRead = notReadInto(unread, sources.describeError);
  const quarantine =
    sources.bucket === undefined
      ? undefined
      : await quarantineView(clients.s3, sources.bucket, sources, notRead);
  const groups: TriageGroup[] = [...(quarantine?.groups ?? [])];
  const approximate: Approximate[] = [];
  for (const dlq of sources.dlqs) {
    const view = await dlqView(clients.sqs, dlq, sources.interrupt, notRead);
    if (view === undefined) continue;
    groups.push(...view.groups);
    if (view.approximate !== undefined) approximate.push(view.approximate);
  }
  groups.sort(retryableThenOldest);
  return {
    groups,
    unreadable: quarantine?.unreadable ?? [],
    replayed: quarantine?.replayed ?? 0,
    unread,
    approximate,
  };
}

function notReadInto(
  unread: { source: string; why: string }[],
  describeError: TriageSources["describeError"],
): NotRead {
  return (source, service, error) => {
    if (error instanceof InterruptedError) throw error;
    unread.push({
      source,
      why: describeError?.(service, error) ?? `${(error as Error).name}: ${(error as Error).message}`,
    });
  };
}

/**
 * The quarantine's groups: what a replay (permanent records included) would find waiting, by reason. A
 * bucket that cannot be read is a source not read, and adds no group.
 */
async function quarantineView(
  s3: S3Client,
  bucket: string,
  sources: TriageSources,
  notRead: NotRead,
): Promise<QuarantineView> {
  let scan: Awaited<ReturnType<typeof scanQuarantine>> | undefined;
  try {
    scan = await scanQuarantine(
      s3,
      bucket,
      {},
      {
        ...(sources.expectedBucketOwner ? { expectedBucketOwner: sources.expectedBucketOwner } : {}),
        ...(sources.interrupt ? { signal: sources.interrupt } : {}),
      },
    );
  } catch (error) {
    notRead(`quarantine s3://${bucket}`, "S3", error);
  }
  const plan = planReplay(scan?.entries ?? [], { includePermanent: true });
  return {
    groups: quarantineGroups(bucket, plan.items),
    unreadable: scan?.unreadable ?? [],
    replayed: plan.alreadyReplayed,
  };
}

/** One group per reason; retryable records are replayed, permanent ones looked at (inspect). */
function quarantineGroups(bucket: string, items: readonly ReplayItem[]): TriageGroup[] {
  const byReason = new Map<string, TriageGroup>();
  for (const item of items) {
    const at = Date.parse(item.entry.record.quarantinedAt);
    const previous = byReason.get(item.reason);
    byReason.set(item.reason, {
      where: "quarantine",
      source: bucket,
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
  return [...byReason.values()];
}

/**
 * A DLQ's groups, by reason, and for a FIFO DLQ SQS's approximate count beside what the read saw (a
 * read sees the first messages of each group only); undefined where the DLQ could not be read.
 */
async function dlqView(
  sqs: SQSClient,
  dlq: TriageDlq,
  interrupt: AbortSignal | undefined,
  notRead: NotRead,
): Promise<{ groups: TriageGroup[]; approximate?: Approximate } | undefined> {
  let messages: Awaited<ReturnType<typeof peekMessages>>["messages"];
  try {
    ({ messages } = await peekMessages(sqs, dlq.url, {
      fifo: dlq.fifo,
      ...(interrupt ? { signal: interrupt } : {}),
    }));
  } catch (error) {
    notRead(`${nameOf(dlq.name)} DLQ`, "SQS", error);
    return undefined;
  }
  const groups = dlqGroups(dlq, messages);
  if (!dlq.fifo) return { groups };
  return { groups, approximate: await approximateCount(sqs, dlq, messages.length) };
}

/**
 * One group per reason; retryable messages are redriven, permanent ones peeked at. A DLQ holding both
 * kinds: a plain redrive would move the poison too, and it would come straight back, so its redrive
 * takes only the messages SQS moved after their receives ran out.
 */
function dlqGroups(dlq: TriageDlq, messages: readonly PeekedMessage[]): TriageGroup[] {
  const reasons = new Map<string, { count: number; oldestAt: number; kind: FailureKind }>();
  for (const m of messages) {
    const previous = reasons.get(m.reason);
    reasons.set(m.reason, {
      count: (previous?.count ?? 0) + 1,
      oldestAt: Math.min(previous?.oldestAt ?? m.sentAt, m.sentAt),
      kind: m.kind,
    });
  }
  const mixed = [...reasons.values()].some((r) => r.kind === FailureKind.Permanent);
  return [...reasons].map(([reason, r]) => ({
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
  }));
}

/** SQS's approximate count of a FIFO DLQ (visible and in flight), beside the messages the read saw. */
async function approximateCount(sqs: SQSClient, dlq: TriageDlq, seen: number): Promise<Approximate> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: dlq.url,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  return {
    source: nameOf(dlq.name),
    approximate:
      Number(Attributes.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    seen,
  };
}

/** Retryable first (what a command can fix now), then the oldest. */
function retryableThenOldest(a: TriageGroup, b: TriageGroup): number {
  return (
    Number(a.kind === FailureKind.Permanent) - Number(b.kind === FailureKind.Permanent) ||
    a.oldestAt - b.oldestAt
  );
}

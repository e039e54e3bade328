/**
 * Stuck FIFO groups: a FIFO queue serves a group's messages one after another (docs/aws-semantics.md §3),
 * so a job that does not finish holds every later job of its session. SQS does not say which group waits
 * or since when; the tool-calls table does: each call's status and when it was requested.
 */
import { type DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { interruption } from "@mcp-pipeline/recovery";
import { CallStatus } from "@mcp-pipeline/tool-calls";

/** A call whose job has not finished: it may still run (requested, started, or failed and to be retried). */
const UNFINISHED = [CallStatus.Requested, CallStatus.Started, CallStatus.Retrying] as const;

/**
 * Read too: a call whose last attempt failed is dead-lettered in the table at once, but SQS moves its
 * message to the DLQ only on a receive after that attempt's visibility timeout (docs/aws-semantics.md
 * §2.3), and until then the message holds its FIFO group (§3): the group is stuck behind it.
 */
const HOLDING = [...UNFINISHED, CallStatus.DeadLettered] as const;

export interface WaitingGroup {
  /** The message group: the session. */
  readonly group: string;
  /** The group's oldest unfinished call, which every later job of the group waits behind. */
  readonly callId: string;
  readonly tool: string;
  readonly status: string;
  readonly attempts: number;
  /**
   * When that call was requested (ms), or first started when the table has no request for it (a job sent
   * without its lifecycle event): the time it has waited is measured from here.
   */
  readonly since: number;
  /** Unfinished calls of the group, the oldest included. */
  readonly unfinished: number;
  /**
   * Whether a worker has started one of them: a group being worked on that does not move on is stuck; one
   * that no worker has started waits in a backlog, or its jobs were never sent.
   */
  readonly started: boolean;
}

/**
 * Every session with an unfinished call, and its oldest one, from one Scan of the table (a filter on the
 * status; the table has no index by status, so the Scan reads every item: `scanned` says how many).
 * Sessions are the FIFO queue's groups; the table does not say which queue a call's job went to, so a
 * call of the standard queue appears under its session too.
 */
export async function waitingGroups(
  dynamodb: DynamoDBClient,
  table: string,
  /**
   * For dead-lettered calls: now (ms) and the FIFO queue's visibility timeout. A call dead-lettered less
   * than that long ago may still hold its group; without it, dead-lettered calls are not read.
   */
  hold?: { readonly now: number; readonly visibilityTimeoutSeconds: number },
  /** Stops the scan before its next page (the table has no index by status: a big table is many pages). */
  signal?: AbortSignal,
): Promise<{ readonly groups: WaitingGroup[]; readonly scanned: number }> {
  const statuses = hold ? HOLDING : UNFINISHED;
  const bySession = new Map<string, WaitingGroup>();
  let scanned = 0;
  let start: Record<string, unknown> | undefined;
  do {
    if (signal?.aborted) throw interruption(signal);
    const page = await dynamodb.send(scanOf(table, statuses, start));
    scanned += page.ScannedCount ?? 0;
    for (const raw of page.Items ?? []) {
      const item = unmarshall(raw) as UnfinishedItem;
      if (inDlqByNow(item, hold)) continue; // Its group has moved on.
      bySession.set(item.sessionId, withCall(bySession.get(item.sessionId), item));
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return {
    groups: [...bySession.values()].sort((a, b) => a.since - b.since || a.group.localeCompare(b.group)),
    scanned,
  };
}

/** The attributes of a call that a group's line shows, as the Scan projects them. */
interface UnfinishedItem {
  callId: string;
  sessionId: string;
  tool: string;
  status: string;
  requestedAt?: string;
  startedAt?: string;
  lastEventAt: string;
  attempts?: number;
}

/** One page of the Scan: the calls whose status is one of `statuses`, from `start` on. */
function scanOf(table: string, statuses: readonly string[], start: Record<string, unknown> | undefined) {
  return new ScanCommand({
    TableName: table,
    FilterExpression: `#status IN (${statuses.map((_, i) => `:s${i}`).join(", ")})`,
    ProjectionExpression: "callId, sessionId, tool, #status, requestedAt, startedAt, lastEventAt, attempts",
    ExpressionAttributeNames: { "#status": "status" },
    ExpressionAttributeValues: Object.fromEntries(statuses.map((status, i) => [`:s${i}`, { S: status }])),
    ...(start ? { ExclusiveStartKey: start as never } : {}),
  });
}

/** A dead-lettered call whose message SQS has moved to the DLQ by now: it holds its group no more. */
function inDlqByNow(
  item: UnfinishedItem,
  hold: { readonly now: number; readonly visibilityTimeoutSeconds: number } | undefined,
): boolean {
  return (
    item.status === CallStatus.DeadLettered &&
    hold !== undefined &&
    hold.now - Date.parse(item.lastEventAt) > hold.visibilityTimeoutSeconds * 1000
  );
}

/** A session's group with one more unfinished call: the oldest call leads it. */
function withCall(previous: WaitingGroup | undefined, item: UnfinishedItem): WaitingGroup {
  const since = Date.parse(item.requestedAt ?? item.startedAt ?? item.lastEventAt);
  const oldest: Omit<WaitingGroup, "unfinished" | "started"> =
    previous === undefined || since < previous.since
      ? {
          group: item.sessionId,
          callId: item.callId,
          tool: item.tool,
          status: item.status,
          attempts: item.attempts ?? 0,
          since,
        }
      : {
          group: previous.group,
          callId: previous.callId,
          tool: previous.tool,
          status: previous.status,
          attempts: previous.attempts,
          since: previous.since,
        };
  return {
    ...oldest,
    unfinished: (previous?.unfinished ?? 0) + 1,
    started: (previous?.started ?? false) || item.status !== CallStatus.Requested,
  };
}

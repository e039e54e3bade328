/**
 * The pipeline's health in one read: per queue its depth, what is in flight and its oldest message's age;
 * the FIFO groups that are stuck behind a job (from the tool-calls table and the queue's attributes); the
 * processor's lag behind the stream; the environment's alarms that fire. `attention` lists what needs a
 * person, so a script can act on it. A library function (the drill and the CLI's `status` use it).
 */
import type { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { InterruptedError, peekMessages, type QueueRef, resolveQueue } from "@mcp-pipeline/recovery";
import { type WaitingGroup, waitingGroups } from "./fifo-groups.js";
import { type FiringAlarm, firingAlarms, latestMaxima, type MetricRequest } from "./metrics.js";
import { printable } from "./printable.js";
import type { PipelineQueue } from "./targets.js";

/** A figure, where it came from, or why there is none. */
export type Reading =
  | { readonly seconds: number; readonly from: "cloudwatch" | "read" }
  | { readonly unavailable: string };

export interface QueueStatus {
  /** The pipeline's name for it, as `--queue` takes it (`session-jobs`). */
  readonly queue: string;
  readonly role: "source" | "dlq";
  /** SQS's name. */
  readonly name: string;
  readonly url: string;
  readonly fifo: boolean;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly oldest: Reading;
  /**
   * The oldest message's age over which the queue's alarm pages: twice the visibility timeout for a source
   * queue (terraform/modules/pipeline: `<prefix>-<queue>-queue-age`); any message at all in a DLQ.
   */
  readonly pagesOverSeconds: number;
}

export interface StuckGroup extends WaitingGroup {
  readonly waitingSeconds: number;
}

export interface StatusReport {
  readonly queues: readonly QueueStatus[];
  /** Pipeline queues that could not be found, and why. */
  readonly missing: readonly { readonly queue: string; readonly why: string }[];
  /**
   * Queues SQS did not answer for (the endpoint down, a denial): their figures are unknown, which needs a
   * person as much as a full DLQ does.
   */
  readonly unread: readonly {
    readonly queue: string;
    readonly role: "source" | "dlq";
    readonly why: string;
  }[];
  readonly stuckGroups:
    | {
        readonly queue: string;
        readonly afterSeconds: number;
        readonly groups: readonly StuckGroup[];
        /** Sessions waiting as long whose calls no worker has started: a backlog, or jobs never sent. */
        readonly notStarted: readonly StuckGroup[];
        /** Items the table scan read. */
        readonly scanned: number;
      }
    | {
        readonly unavailable: string;
        /** The table is named but its scan failed (missing, denied): unknown, not "nothing stuck". */
        readonly scanFailed?: true;
      };
  /** The processor's IteratorAge (CloudWatch, the latest 1-minute maximum). */
  readonly iteratorAge: Reading;
  readonly alarms: readonly FiringAlarm[] | { readonly unavailable: string };
  /** Why CloudWatch's figures are missing, when they all are (said once, not per queue). */
  readonly cloudwatchUnavailable?: string;
  /** What needs a person, one line each; empty when all is well. */
  readonly attention: readonly string[];
}

export interface StatusSources {
  readonly queues: readonly PipelineQueue[];
  /** The tool-calls table, for the stuck groups. */
  readonly table?: string;
  /** The processor function (IteratorAge) and the alarms' name prefix. */
  readonly processorFunction?: string;
  readonly alarmPrefix?: string;
  /** Why CloudWatch cannot be asked here (aws-environment.ts `unreachable`), if it cannot. */
  readonly cloudwatchUnreachable?: string;
  /** Stops a DLQ's read at its next receive (the messages read are released): InterruptedError. */
  readonly interrupt?: AbortSignal;
  /** How a service's error is told (which endpoint did not answer); `name: message` by default. */
  readonly describeError?: (service: "SQS" | "CLOUDWATCH" | "DYNAMODB", error: unknown) => string;
}

export interface StatusOptions {
  readonly now: number;
  /** A FIFO group is stuck when its oldest unfinished call waits longer; default: the queue's visibility timeout. */
  readonly stuckAfterSeconds?: number;
  /** The processor's lag that needs a person (s). */
  readonly maxIteratorAgeSeconds: number;
}

export const formatSeconds = (seconds: number): string => {
  const s = Math.round(seconds);
  if (s < 120) return `${s} s`;
  if (s < 7_200) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3_600)} h ${Math.floor((s % 3_600) / 60)} min`;
};

const errorText = (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`;

type Role = "source" | "dlq";
type Service = "SQS" | "CLOUDWATCH" | "DYNAMODB";
/** How a service's error is told in the report. */
type Told = (service: Service, error: unknown) => string;
type Metrics = ReadonlyMap<string, { value: number; at: number }> | { unavailable: string };
/** A CloudWatch that is there but did not answer (denied, down): not the local stack's "no CloudWatch". */
interface CloudWatchFailed {
  readonly metrics?: string;
  readonly alarms?: string;
}
interface QueueRead {
  readonly queue: PipelineQueue;
  readonly role: Role;
  readonly ref: QueueRef;
}
type Missing = StatusReport["missing"][number];
type Unread = StatusReport["unread"][number];

export async function pipelineStatus(
  clients: {
    readonly sqs: SQSClient;
    readonly dynamodb: DynamoDBClient;
    readonly cloudwatch: CloudWatchClient;
  },
  sources: StatusSources,
  options: StatusOptions,
): Promise<StatusReport> {
  const told: Told = (service, error) => sources.describeError?.(service, error) ?? errorText(error);
  const { refs, missing, unread } = await readQueues(clients.sqs, sources.queues, told);
  const { metrics, alarms, cloudwatchFailed } = await readCloudWatch(
    clients.cloudwatch,
    refs,
    sources,
    options,
    told,
  );
  const queues = await queueStatuses(clients.sqs, refs, metrics, sources, options);
  const stuckGroups = await stuckFifoGroups(clients.dynamodb, queues, unread, sources, options, told);
  const iteratorAge = processorLag(metrics, sources);
  const attention = [
    ...unseenAttention(missing, unread),
    ...queueAttention(queues),
    ...stuckGroupsAttention(stuckGroups),
    ...lagAndAlarmsAttention(iteratorAge, cloudwatchFailed, alarms, options),
  ];
  return {
    queues,
    missing,
    unread,
    stuckGroups,
    iteratorAge,
    alarms,
    attention,
    ...("unavailable" in metrics ? { cloudwatchUnavailable: metrics.unavailable as string } : {}),
  };
}

/** Each pipeline queue's source and DLQ as SQS describes them; the queues not found, and those SQS did not answer for. */
async function readQueues(
  sqs: SQSClient,
  pipelineQueues: readonly PipelineQueue[],
  told: Told,
): Promise<{ refs: QueueRead[]; missing: Missing[]; unread: Unread[] }> {
  const refs: QueueRead[] = [];
  const missing: Missing[] = [];
  const unread: Unread[] = [];
  for (const queue of pipelineQueues) {
    if (queue.missing) missing.push({ queue: queue.name, why: queue.missing });
    for (const [role, url] of [
      ["source", queue.sourceUrl],
      ["dlq", queue.dlqUrl],
    ] as const) {
      if (!url) continue;
      try {
        refs.push({ queue, role, ref: await resolveQueue(sqs, url, `${queue.name} ${role}`) });
      } catch (error) {
        if (error instanceof InterruptedError) throw error;
        unread.push({
          queue: queue.name,
          role,
          why: told("SQS", error),
        });
      }
    }
  }
  return { refs, missing, unread };
}

/** CloudWatch: the queues' oldest ages, the processor's iterator age and the alarms, in two requests. */
async function readCloudWatch(
  cloudwatch: CloudWatchClient,
  refs: readonly QueueRead[],
  sources: StatusSources,
  options: StatusOptions,
  told: Told,
): Promise<{ metrics: Metrics; alarms: StatusReport["alarms"]; cloudwatchFailed: CloudWatchFailed }> {
  if (sources.cloudwatchUnreachable !== undefined)
    return {
      metrics: { unavailable: sources.cloudwatchUnreachable },
      alarms: { unavailable: sources.cloudwatchUnreachable },
      cloudwatchFailed: {},
    };
  let metrics: Metrics;
  let alarms: StatusReport["alarms"];
  let cloudwatchFailed: CloudWatchFailed = {};
  const requests: MetricRequest[] = refs.map(({ ref }) => ({
    id: ref.name,
    namespace: "AWS/SQS",
    metric: "ApproximateAgeOfOldestMessage",
    dimension: ["QueueName", ref.name],
  }));
  if (sources.processorFunction)
    requests.push({
      id: "iterator-age",
      namespace: "AWS/Lambda",
      metric: "IteratorAge",
      dimension: ["FunctionName", sources.processorFunction],
    });
  try {
    metrics = await latestMaxima(cloudwatch, requests, { now: options.now });
  } catch (error) {
    const why = told("CLOUDWATCH", error);
    metrics = { unavailable: `CloudWatch GetMetricData failed: ${why}` };
    cloudwatchFailed = { metrics: why };
  }
  try {
    alarms = sources.alarmPrefix
      ? await firingAlarms(cloudwatch, sources.alarmPrefix)
      : { unavailable: "no name prefix: pass --prefix or set STREAM_NAME" };
  } catch (error) {
    const why = told("CLOUDWATCH", error);
    alarms = { unavailable: `CloudWatch DescribeAlarms failed: ${why}` };
    cloudwatchFailed = { ...cloudwatchFailed, alarms: why };
  }
  return { metrics, alarms, cloudwatchFailed };
}

function metricReading(metrics: Metrics, id: string): Reading {
  if ("unavailable" in metrics) return { unavailable: "no CloudWatch" };
  const reading = metrics.get(id);
  return reading === undefined
    ? { unavailable: "no datapoint in the last 10 minutes" }
    : { seconds: reading.value, from: "cloudwatch" };
}

/** Each queue read: its depth, and its oldest message's age from CloudWatch or, where it can be, read. */
async function queueStatuses(
  sqs: SQSClient,
  refs: readonly QueueRead[],
  metrics: Metrics,
  sources: StatusSources,
  options: StatusOptions,
): Promise<QueueStatus[]> {
  const queues: QueueStatus[] = [];
  for (const { queue, role, ref } of refs) {
    const oldest = await oldestMessage(sqs, role, ref, metricReading(metrics, ref.name), sources, options);
    queues.push({
      queue: queue.name,
      role,
      name: ref.name,
      url: ref.url,
      fifo: ref.fifo,
      visible: ref.visible,
      inFlight: ref.inFlight,
      delayed: ref.delayed,
      oldest,
      pagesOverSeconds: role === "source" ? ref.visibilityTimeoutSeconds * 2 : 0,
    });
  }
  return queues;
}

/** Where CloudWatch has no figure: an empty queue's is 0, and a DLQ's is read from its messages. */
async function oldestMessage(
  sqs: SQSClient,
  role: Role,
  ref: QueueRef,
  fromCloudWatch: Reading,
  sources: StatusSources,
  options: StatusOptions,
): Promise<Reading> {
  let oldest = fromCloudWatch;
  // A DLQ has no consumer, so reading it (and releasing at once) harms nothing: its age is there to read.
  if ("unavailable" in oldest && role === "dlq" && ref.visible + ref.inFlight > 0) {
    const { messages } = await peekMessages(sqs, ref.url, {
      fifo: ref.fifo,
      ...(sources.interrupt ? { signal: sources.interrupt } : {}),
    });
    if (messages.length > 0)
      oldest = { seconds: (options.now - Math.min(...messages.map((m) => m.sentAt))) / 1000, from: "read" };
  } else if ("unavailable" in oldest && ref.visible + ref.inFlight + ref.delayed === 0) {
    oldest = { seconds: 0, from: "read" };
  }
  return oldest;
}

/** The FIFO groups held behind a job longer than the stuck threshold, or why they cannot be told. */
async function stuckFifoGroups(
  dynamodb: DynamoDBClient,
  queues: readonly QueueStatus[],
  unread: readonly Unread[],
  sources: StatusSources,
  options: StatusOptions,
  told: Told,
): Promise<StatusReport["stuckGroups"]> {
  const fifo = queues.find((q) => q.role === "source" && q.fifo);
  const fifoUnread = unread.find(
    (u) => u.role === "source" && sources.queues.find((q) => q.name === u.queue)?.fifo,
  );
  if (fifo === undefined)
    return {
      unavailable: fifoUnread ? `the FIFO queue was not read: ${fifoUnread.why}` : "no FIFO queue found",
    };
  if (sources.table === undefined)
    return { unavailable: "no tool-calls table: set TOOL_CALLS_TABLE, or pass --table" };
  const afterSeconds = options.stuckAfterSeconds ?? fifo.pagesOverSeconds / 2;
  // Nothing waits in the FIFO queue: no group can be held there, whatever the table says.
  if (fifo.visible + fifo.inFlight + fifo.delayed === 0)
    return { queue: fifo.name, afterSeconds, groups: [], notStarted: [], scanned: 0 };
  try {
    const { groups, scanned } = await waitingGroups(
      dynamodb,
      sources.table,
      { now: options.now, visibilityTimeoutSeconds: fifo.pagesOverSeconds / 2 },
      sources.interrupt,
    );
    const waiting = groups
      .map((g) => ({ ...g, waitingSeconds: (options.now - g.since) / 1000 }))
      .filter((g) => g.waitingSeconds > afterSeconds);
    return {
      queue: fifo.name,
      afterSeconds,
      groups: waiting.filter((g) => g.started),
      notStarted: waiting.filter((g) => !g.started),
      scanned,
    };
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    return {
      unavailable: `scanning ${sources.table} failed: ${told("DYNAMODB", error)}`,
      scanFailed: true,
    };
  }
}

/** The processor's IteratorAge, in seconds; CloudWatch gives it in milliseconds (§6). */
function processorLag(metrics: Metrics, sources: StatusSources): Reading {
  const rawIteratorAge = sources.processorFunction
    ? metricReading(metrics, "iterator-age")
    : { unavailable: "no processor function name: pass --prefix or set STREAM_NAME" };
  return "unavailable" in rawIteratorAge
    ? rawIteratorAge
    : { seconds: rawIteratorAge.seconds / 1000, from: "cloudwatch" };
}

/** What cannot be seen needs a person too: a queue not found, or not read. */
function unseenAttention(missing: readonly Missing[], unread: readonly Unread[]): string[] {
  const attention: string[] = [];
  if (missing.length > 0)
    attention.push(
      `${missing.length} ${missing.length === 1 ? "queue (with its DLQ) was" : "queues (with their DLQs) were"} not found (${missing.map((m) => `${m.queue}: ${m.why}`).join("; ")}): their depth and age are unknown`,
    );
  if (unread.length > 0)
    attention.push(
      `${unread.length} ${unread.length === 1 ? "queue was" : "queues were"} not read (${[...new Set(unread.map((u) => u.why))].join("; ")}): ${unread.length === 1 ? "its" : "their"} depth and age are unknown`,
    );
  return attention;
}

/** A DLQ that holds anything, and a source queue whose oldest job waits longer than its alarm allows. */
function queueAttention(queues: readonly QueueStatus[]): string[] {
  const attention: string[] = [];
  for (const q of queues) {
    const waiting = q.visible + q.inFlight + q.delayed;
    if (q.role === "dlq" && waiting > 0)
      attention.push(
        `${waiting} ${waiting === 1 ? "message waits" : "messages wait"} in ${q.name} (the ${q.queue} DLQ)`,
      );
    if (q.role === "source" && "seconds" in q.oldest && q.oldest.seconds > q.pagesOverSeconds)
      attention.push(
        `the oldest job in ${q.name} waits ${formatSeconds(q.oldest.seconds)}, over ${formatSeconds(q.pagesOverSeconds)} (twice its visibility timeout)`,
      );
  }
  return attention;
}

/** Stuck groups, calls no worker has started, and a table that could not be scanned. */
function stuckGroupsAttention(stuckGroups: StatusReport["stuckGroups"]): string[] {
  const attention: string[] = [];
  if ("groups" in stuckGroups && stuckGroups.groups.length > 0) {
    const [first] = stuckGroups.groups;
    attention.push(
      `${stuckGroups.groups.length} FIFO group${stuckGroups.groups.length === 1 ? "" : "s"} stuck over ${formatSeconds(stuckGroups.afterSeconds)} (longest: ${printable(first?.group ?? "")}, call ${printable(first?.callId ?? "")}, ${formatSeconds(first?.waitingSeconds ?? 0)})`,
    );
  }
  if ("notStarted" in stuckGroups && stuckGroups.notStarted.length > 0) {
    const calls = stuckGroups.notStarted.reduce((n, g) => n + g.unfinished, 0);
    attention.push(
      `${calls} call${calls === 1 ? "" : "s"} requested over ${formatSeconds(stuckGroups.afterSeconds)} ago that no worker has started (sessions ${stuckGroups.notStarted
        .slice(0, 5)
        .map((g) => printable(g.group))
        .join(
          ", ",
        )}${stuckGroups.notStarted.length > 5 ? ", ..." : ""}): their jobs wait in a backlog, or were never sent`,
    );
  }
  // A table that is named but cannot be scanned (missing, denied): whether a group is stuck is unknown,
  // which is not "nothing needs a person". A table never named is said in the report, not here.
  if ("scanFailed" in stuckGroups)
    attention.push(`stuck FIFO groups are unknown: ${stuckGroups.unavailable}`);
  return attention;
}

/** The processor's lag, CloudWatch not answering, and each alarm that fires. */
function lagAndAlarmsAttention(
  iteratorAge: Reading,
  cloudwatchFailed: CloudWatchFailed,
  alarms: StatusReport["alarms"],
  options: StatusOptions,
): string[] {
  const attention: string[] = [];
  if ("seconds" in iteratorAge && iteratorAge.seconds > options.maxIteratorAgeSeconds)
    attention.push(
      `the processor lags the stream by ${formatSeconds(iteratorAge.seconds)} (over ${formatSeconds(options.maxIteratorAgeSeconds)})`,
    );
  if (cloudwatchFailed.metrics !== undefined)
    attention.push(
      `CloudWatch was not read (${cloudwatchFailed.metrics}): the queues' oldest ages, the processor's lag${cloudwatchFailed.alarms !== undefined ? " and the alarms in ALARM" : ""} are unknown`,
    );
  if (cloudwatchFailed.alarms !== undefined && cloudwatchFailed.metrics === undefined)
    attention.push(
      `the alarms in ALARM are unknown: CloudWatch DescribeAlarms failed: ${cloudwatchFailed.alarms}`,
    );
  if (Array.isArray(alarms)) for (const a of alarms) attention.push(`alarm ${a.name} is in ALARM`);
  return attention;
}

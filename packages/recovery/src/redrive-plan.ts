import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasksCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { InvalidArnError, parseArn, queueNameOfArn } from "@mcp-pipeline/aws/arn";
import { type Check, failed, notChecked, passed } from "./checks.js";
import { unsupported } from "./move-messages.js";

/** A queue as a redrive needs to know it, read from SQS (GetQueueAttributes). */
export interface QueueRef {
  readonly url: string;
  readonly arn: string;
  readonly name: string;
  readonly fifo: boolean;
  /** Where SQS moves a message after `maxReceiveCount` receives (its RedrivePolicy), if anywhere. */
  readonly deadLetterTargetArn?: string;
  readonly maxReceiveCount?: number;
  /** The sources its RedriveAllowPolicy names (`byQueue`), when it names them. */
  readonly allowedSourceArns?: readonly string[];
  readonly visibilityTimeoutSeconds: number;
  /** SQS's approximate counts (they lag, on AWS too: docs/aws-semantics.md §4). */
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

/** A flag's value that is neither a queue URL nor a queue ARN: a bad command line. */
export class InvalidQueueReferenceError extends Error {
  readonly flag: string;
  readonly given: string;

  constructor(flag: string, given: string, reason: string, options?: ErrorOptions) {
    super(`${flag} must be an SQS queue URL or ARN, got "${given.slice(0, 200)}": ${reason}`, options);
    this.name = "InvalidQueueReferenceError";
    this.flag = flag;
    this.given = given;
  }
}

/** The queue a flag names is not where the caller looks (its account and region): `reason` says what is there. */
export class QueueNotFoundError extends Error {
  readonly flag: string;
  readonly given: string;
  readonly reason: string;

  constructor(flag: string, given: string, reason: string, options?: ErrorOptions) {
    super(`the queue ${flag} names (${given}) ${reason}`, options);
    this.name = "QueueNotFoundError";
    this.flag = flag;
    this.given = given;
    this.reason = reason;
  }
}

const NOT_FOUND = /QueueDoesNotExist|NonExistentQueue/;

/** A queue's attributes, read once; `url` is how the API addresses it. */
async function describe(sqs: SQSClient, url: string): Promise<QueueRef> {
  const { Attributes: a = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }),
  );
  const redrive = a.RedrivePolicy ? (JSON.parse(a.RedrivePolicy) as Record<string, unknown>) : undefined;
  const allow = a.RedriveAllowPolicy
    ? (JSON.parse(a.RedriveAllowPolicy) as { redrivePermission?: string; sourceQueueArns?: string[] })
    : undefined;
  const arn = a.QueueArn ?? "";
  return {
    url,
    arn,
    name: arn.split(":").at(-1) ?? url.split("/").at(-1) ?? url,
    fifo: a.FifoQueue === "true",
    ...(typeof redrive?.deadLetterTargetArn === "string"
      ? { deadLetterTargetArn: redrive.deadLetterTargetArn, maxReceiveCount: Number(redrive.maxReceiveCount) }
      : {}),
    ...(allow?.redrivePermission === "byQueue" ? { allowedSourceArns: allow.sourceQueueArns ?? [] } : {}),
    visibilityTimeoutSeconds: Number(a.VisibilityTimeout ?? 30),
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/**
 * Refuses, without a request, what cannot name a queue: neither an http(s) URL with a path nor an SQS
 * queue ARN. Returns the ARN's name and account for an ARN.
 */
export function checkQueueReference(
  given: string,
  flag: string,
): { readonly arn?: { readonly name: string; readonly account: string } } {
  if (given.startsWith("arn:")) {
    try {
      return { arn: { name: queueNameOfArn(given), account: parseArn(given).accountId } };
    } catch (error) {
      if (error instanceof InvalidArnError)
        throw new InvalidQueueReferenceError(flag, given, error.message, { cause: error });
      throw error;
    }
  }
  if (!/^https?:\/\/[^/\s]+\/\S+$/.test(given))
    throw new InvalidQueueReferenceError(
      flag,
      given,
      "a URL is https://sqs.<region>.amazonaws.com/<account>/<name>, an ARN arn:aws:sqs:<region>:<account>:<name>",
    );
  return {};
}

/**
 * The queue a flag names, given as a URL or as an ARN (the console and StartMessageMoveTask use ARNs).
 * An ARN is looked up by name and owner in the caller's region, and must then be that queue: a queue of
 * the same name in another region is not it.
 */
export async function resolveQueue(sqs: SQSClient, given: string, flag: string): Promise<QueueRef> {
  // A URL pasted with a trailing slash names the same queue; SQS would not read it as one.
  let url = given.replace(/\/+$/, "");
  const { arn } = checkQueueReference(given, flag);
  if (arn !== undefined) {
    try {
      const found = await sqs.send(
        new GetQueueUrlCommand({
          QueueName: arn.name,
          ...(arn.account ? { QueueOwnerAWSAccountId: arn.account } : {}),
        }),
      );
      url = found.QueueUrl ?? "";
    } catch (error) {
      if (NOT_FOUND.test((error as Error).name))
        throw new QueueNotFoundError(
          flag,
          given,
          `does not exist: no queue ${arn.name} of account ${arn.account || "(none given)"} in the region the caller reaches (${await sqs.config.region()})`,
          { cause: error },
        );
      throw error;
    }
  }
  let queue: QueueRef;
  try {
    queue = await describe(sqs, url);
  } catch (error) {
    if (NOT_FOUND.test((error as Error).name))
      throw new QueueNotFoundError(flag, given, "does not exist (GetQueueAttributes: QueueDoesNotExist)", {
        cause: error,
      });
    throw error;
  }
  if (given.startsWith("arn:") && queue.arn !== given)
    throw new QueueNotFoundError(
      flag,
      given,
      `is not the queue the caller reaches by that name: that is ${queue.arn} (its account and region are the credentials' and AWS_REGION's)`,
    );
  // A URL's path is /<account>/<name>. An endpoint that ignores the account (LocalStack, the emulators)
  // answers for the caller's own queue of that name: not the one the URL names.
  // Not WHATWG's URL: it refuses hosts such as fauxqs's sqs.<region>.127.0.0.1, which the SDK sends to.
  const [account, name] = url
    .replace(/^[a-z]+:\/\/[^/]*/i, "")
    .split("/")
    .slice(-2);
  if (!given.startsWith("arn:") && queue.arn !== "" && !queue.arn.endsWith(`:${account}:${name}`))
    throw new QueueNotFoundError(
      flag,
      given,
      `is not the queue that answered for it: that is ${queue.arn}, not queue ${name} of account ${account}`,
    );
  return queue;
}

/** The queues whose redrive policy names `dlq`, verified by reading each one's RedrivePolicy. */
async function sourcesOf(
  sqs: SQSClient,
  dlq: QueueRef,
  candidates: readonly QueueRef[],
): Promise<QueueRef[]> {
  // A named queue that is a source needs no search (and no sqs:ListDeadLetterSourceQueues permission).
  const named = candidates.filter((q) => q.deadLetterTargetArn === dlq.arn);
  if (named.length > 0) return named;
  const found: QueueRef[] = [];
  try {
    let token: string | undefined;
    do {
      const page = await sqs.send(
        new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlq.url, ...(token ? { NextToken: token } : {}) }),
      );
      for (const url of page.queueUrls ?? []) found.push(await describe(sqs, url));
      token = page.NextToken;
    } while (token);
  } catch (error) {
    // Emulators lack it (fauxqs); a role may lack sqs:ListDeadLetterSourceQueues. The DLQ's redrive
    // allow policy names the queues that may use it, when it names them.
    if (!unsupported(error) && !/AccessDenied/i.test((error as Error).name)) throw error;
    for (const arn of dlq.allowedSourceArns ?? []) {
      try {
        found.push(await resolveQueue(sqs, arn, "the DLQ's redrive allow policy"));
      } catch {
        // Gone, or not readable by this caller: not a source it can redrive to.
      }
    }
  }
  const byArn = new Map(found.filter((q) => q.deadLetterTargetArn === dlq.arn).map((q) => [q.arn, q]));
  return [...byArn.values()];
}

export interface RedrivePlan {
  readonly from: QueueRef;
  /** The queue the messages go back to: `--to`, or the DLQ's one source. Absent when neither is right. */
  readonly to?: QueueRef;
  /** Every queue whose redrive policy names the DLQ. */
  readonly sources: readonly QueueRef[];
  readonly checks: readonly Check[];
}

/**
 * Where a redrive of `from` may go. Like StartMessageMoveTask, back to the DLQ's source by default (the
 * queue whose redrive policy names it); a `to` that is not a source of that DLQ, is the DLQ itself, or is
 * of the other type (FIFO or standard) fails a check naming why: its jobs would run in the wrong worker.
 */
export async function planRedrive(
  sqs: SQSClient,
  request: { readonly from: string; readonly to?: string; readonly flags?: { from: string; to: string } },
): Promise<RedrivePlan> {
  const flags = request.flags ?? { from: "--from", to: "--to" };
  const from = await resolveQueue(sqs, request.from, flags.from);
  const given = request.to === undefined ? undefined : await resolveQueue(sqs, request.to, flags.to);
  const sources = await sourcesOf(sqs, from, given ? [given] : []);
  const checks: Check[] = [];
  const kind = (q: QueueRef) => (q.fifo ? "a FIFO queue" : "a standard queue");
  const sourceNames = sources.map((q) => q.arn).join(", ");
  let to: QueueRef | undefined;
  if (given !== undefined) {
    if (given.arn === from.arn) {
      checks.push(failed("target", `${flags.to} is the DLQ itself (${from.arn}): nothing would move`));
    } else if (given.fifo !== from.fifo) {
      checks.push(
        failed(
          "queue type",
          `${from.name} is ${kind(from)} and ${given.name} ${kind(given)}: its jobs would run in the wrong worker${sourceNames ? `; the DLQ's source is ${sourceNames}` : ""}`,
        ),
      );
    } else if (!sources.some((q) => q.arn === given.arn)) {
      checks.push(
        failed(
          "source",
          `${given.arn} is not a source of ${from.arn}: its redrive policy sends failures to ${given.deadLetterTargetArn ?? "no DLQ"}${sourceNames ? `; the DLQ's source is ${sourceNames}` : ""}`,
        ),
      );
    } else {
      to = given;
      checks.push(
        passed(
          "source",
          `${given.name}'s redrive policy sends its failures to ${from.name} (after ${given.maxReceiveCount} receives)`,
        ),
      );
    }
  } else if (sources.length === 1) {
    to = sources[0] as QueueRef;
    checks.push(
      passed(
        "source",
        `${to.name}, the queue whose redrive policy sends its failures to ${from.name} (as StartMessageMoveTask does by default)`,
      ),
    );
  } else if (sources.length === 0) {
    checks.push(
      failed(
        "source",
        `no queue's redrive policy names ${from.arn}: it is not a DLQ here, and has no source to go back to`,
      ),
    );
  } else {
    checks.push(
      failed(
        "target",
        `${from.arn} is the DLQ of several queues (${sourceNames}): pass ${flags.to} with one of them`,
      ),
    );
  }
  return { from, ...(to ? { to } : {}), sources, checks };
}

/**
 * Whether the endpoint runs message move tasks for `dlqArn` (ListMessageMoveTasks, read-only), and
 * whether one is running already: SQS runs one at a time per source queue.
 */
export async function moveTaskCheck(sqs: SQSClient, dlqArn: string): Promise<Check> {
  try {
    const { Results = [] } = await sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 10 }),
    );
    const running = Results.find((r) => r.Status === "RUNNING");
    return running
      ? failed(
          "move task",
          `a message move task is already running on ${dlqArn} (${running.TaskHandle ?? "no handle"})`,
        )
      : passed("move task", "StartMessageMoveTask is available (ListMessageMoveTasks answered)");
  } catch (error) {
    if (unsupported(error))
      return notChecked(
        "move task",
        "this endpoint has no message move tasks: the mover will move the messages",
      );
    return failed(
      "move task",
      `ListMessageMoveTasks failed: ${(error as Error).name}: ${(error as Error).message}`,
    );
  }
}

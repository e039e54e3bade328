import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type MessageSystemAttributeName,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";

export interface MoveOptions {
  readonly dlqUrl: string;
  readonly sourceUrl: string;
  readonly dryRun?: boolean;
  /** Messages per second at most (StartMessageMoveTask's MaxNumberOfMessagesPerSecond, 1-500). */
  readonly ratePerSecond?: number;
  /** `auto` tries StartMessageMoveTask and falls back to the mover where the endpoint lacks it. */
  readonly mode?: "auto" | "move-task" | "mover";
  readonly pollIntervalMs?: number;
  readonly onProgress?: (moved: number, total: number) => void;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface MoveSummary {
  readonly mode: "move-task" | "mover" | "dry-run";
  readonly waiting: number;
  readonly moved: number;
  readonly failed: number;
}

/** The endpoint has no StartMessageMoveTask (LocalStack community, emulators): use the mover. */
function unsupported(error: unknown): boolean {
  const name = (error as Error).name ?? "";
  const message = (error as Error).message ?? "";
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return (
    /UnsupportedOperation|InvalidAction|UnknownOperation|NotImplemented/i.test(name) ||
    /not (supported|implemented)|unknown (operation|action)|unsupported/i.test(message) ||
    status === 501 ||
    (status === 400 && /Action/i.test(message))
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
 * Moves every message of a DLQ back to its source queue: with StartMessageMoveTask (polled with
 * ListMessageMoveTasks until it ends) where the endpoint has it, otherwise with a mover that receives,
 * sends to the source keeping body, attributes, FIFO group and deduplication id, then deletes. A
 * message is deleted from the DLQ only after the source queue has accepted it.
 */
export async function moveMessages(sqs: SQSClient, options: MoveOptions): Promise<MoveSummary> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const dlq = await attributes(sqs, options.dlqUrl);
  const source = await attributes(sqs, options.sourceUrl);
  if (options.dryRun) return { mode: "dry-run", waiting: dlq.waiting, moved: 0, failed: 0 };
  const mode = options.mode ?? "auto";

  if (mode !== "mover") {
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
        await sleep(options.pollIntervalMs ?? 2_000);
        const { Results = [] } = await sqs.send(
          new ListMessageMoveTasksCommand({ SourceArn: dlq.arn, MaxResults: 10 }),
        );
        const task = Results.find((r) => r.TaskHandle === TaskHandle) ?? Results[0];
        const moved = task?.ApproximateNumberOfMessagesMoved ?? 0;
        options.onProgress?.(moved, task?.ApproximateNumberOfMessagesToMove ?? dlq.waiting);
        if (task && task.Status !== "RUNNING") {
          if (task.Status !== "COMPLETED")
            throw new Error(`message move task ${task.Status}: ${task.FailureReason ?? "no reason given"}`);
          return { mode: "move-task", waiting: dlq.waiting, moved, failed: 0 };
        }
      }
    } catch (error) {
      if (mode === "move-task" || !unsupported(error)) throw error;
    }
  }

  let moved = 0;
  let failed = 0;
  const systemAttributes: MessageSystemAttributeName[] = ["MessageGroupId", "MessageDeduplicationId"];
  for (;;) {
    const started = Date.now();
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.dlqUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: systemAttributes,
      }),
    );
    if (Messages.length === 0) break;
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: options.sourceUrl,
        Entries: Messages.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body ?? "",
          ...(m.MessageAttributes && Object.keys(m.MessageAttributes).length > 0
            ? { MessageAttributes: m.MessageAttributes }
            : {}),
          ...(source.fifo
            ? {
                MessageGroupId: m.Attributes?.MessageGroupId ?? m.MessageId,
                MessageDeduplicationId: m.Attributes?.MessageDeduplicationId ?? m.MessageId,
              }
            : {}),
        })),
      }),
    );
    const accepted = (sent.Successful ?? [])
      .map((s) => Messages[Number(s.Id)])
      .filter((m) => m !== undefined);
    failed += (sent.Failed ?? []).length;
    if (accepted.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.dlqUrl,
          Entries: accepted.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
        }),
      );
    }
    moved += accepted.length;
    options.onProgress?.(moved, dlq.waiting);
    if (options.ratePerSecond) {
      const budget = (Messages.length / options.ratePerSecond) * 1000;
      const elapsed = Date.now() - started;
      if (elapsed < budget) await sleep(budget - elapsed);
    }
  }
  return { mode: "mover", waiting: dlq.waiting, moved, failed };
}

import { UsageError } from "@mcp-pipeline/cli";
import { checkQueueReference } from "@mcp-pipeline/recovery";
import { queueUrlVariables } from "@mcp-pipeline/settings";
import type { Context } from "./context.js";
import { pipelineQueue, QUEUE_NAMES } from "./targets.js";
import type { QueueName } from "./triage.js";

/** The DLQ a command acts on (`--queue` or `--from`), and the queue `--queue` or `--to` names as its source. */
export interface DlqChoice {
  readonly from: string;
  readonly to?: string;
  readonly name: QueueName;
  /** The flags that named them, for messages. */
  readonly flags: { readonly from: string; readonly to: string };
}

export async function dlqChoice(context: Context, command: string): Promise<DlqChoice> {
  const { flags } = context;
  if (flags.queue !== undefined && flags.from !== undefined)
    throw new UsageError(`${command} takes --queue or --from, not both`);
  if (flags.queue !== undefined) {
    const key = QUEUE_NAMES[flags.queue];
    if (key === undefined)
      throw new UsageError(`--queue must be one of ${Object.keys(QUEUE_NAMES).join(", ")}`);
    if (flags.to !== undefined) checkQueueReference(flags.to, "--to");
    const queue = await pipelineQueue(context.aws.sqs, key, context.env, context.targets);
    if (queue.dlqUrl === undefined) throw new UsageError(`--queue ${flags.queue}: ${queue.missing}`);
    const to = flags.to ?? queue.sourceUrl;
    // A URL a variable gave is named with it: a stale one is then found where it is set.
    const variables = queueUrlVariables(key);
    const given = (variable: string) =>
      context.env[variable] ? `--queue ${flags.queue} (${variable})` : `--queue ${flags.queue}`;
    return {
      from: queue.dlqUrl,
      ...(to ? { to } : {}),
      name: { key: flags.queue },
      flags: {
        from: given(variables.dlq),
        to: flags.to !== undefined ? "--to" : given(variables.queue),
      },
    };
  }
  if (flags.from === undefined)
    throw new UsageError(
      `${command} needs --queue NAME (${Object.keys(QUEUE_NAMES).join(", ")}) or --from DLQ (a queue URL or ARN)`,
    );
  checkQueueReference(flags.from, "--from");
  if (flags.to !== undefined) checkQueueReference(flags.to, "--to");
  return {
    from: flags.from,
    ...(flags.to !== undefined ? { to: flags.to } : {}),
    name: { url: flags.from },
    flags: { from: "--from", to: "--to" },
  };
}

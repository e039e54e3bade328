import { shown, UsageError } from "@mcp-pipeline/cli";
import { peekMessages, resolveQueue } from "@mcp-pipeline/recovery";
import { ageOf, type Context, listed, maxOf, print, RecoverExit } from "../context.js";
import { dlqChoice } from "../dlq-choice.js";
import { printable } from "../printable.js";

/** How much of a body a line shows; --json prints it whole. */
const BODY_CHARACTERS = 300;

/**
 * `peek`: the messages of a DLQ, read without taking them (each held while it is read, then all visible
 * again at once): id, age, receives, reason, FIFO group and body. What `triage` points to for a DLQ's
 * permanent failures, which a redrive would only send back.
 */
export async function peek(context: Context): Promise<number> {
  const max = maxOf(context.flags) ?? 20;
  const choice = await dlqChoice(context, "peek");
  const dlq = await resolveQueue(context.aws.sqs, choice.from, choice.flags.from);
  const { messages, complete } = await peekMessages(context.aws.sqs, dlq.url, {
    fifo: dlq.fifo,
    ...(context.io.interrupt ? { signal: context.io.interrupt } : {}),
  });
  const reasons = new Map<string, number>();
  for (const m of messages) reasons.set(m.reason, (reasons.get(m.reason) ?? 0) + 1);
  const { reason } = context.flags;
  // A read that is not the whole queue (a FIFO DLQ shows the first messages of each group) cannot say
  // that no message has the reason: one may wait behind those read.
  const unseen = reason !== undefined && !reasons.has(reason);
  if (unseen && complete)
    throw new UsageError(
      `--reason ${shown(reason)} matches no message of ${dlq.name}; ${reasons.size === 0 ? "it holds none" : `the reasons there are: ${listed(reasons)}`}`,
    );
  const matching = messages.filter((m) => reason === undefined || m.reason === reason);
  const listedMessages = matching.slice(0, max);
  const lines = listedMessages.map(
    (m) =>
      `${printable(m.messageId)}  ${printable(m.reason)} (${m.kind})${m.group ? `  group ${printable(m.group)}` : ""}  sent ${ageOf(context, m.sentAt)} ago, ${m.receiveCount} receives\n` +
      `    ${m.reasonMessage ? `${printable(m.reasonMessage)}\n    ` : ""}${m.body.length > BODY_CHARACTERS ? `${printable(m.body.slice(0, BODY_CHARACTERS))}... (${m.body.length} characters)` : printable(m.body)}`,
  );
  print(
    context,
    [
      `${dlq.name}: ${messages.length} messages read${complete ? "" : " (a FIFO queue shows the first of each group)"}${reasons.size > 0 ? `: ${listed(reasons)}` : ""}; nothing taken`,
      ...lines,
      ...(matching.length > listedMessages.length
        ? [`... and ${matching.length - listedMessages.length} more (--max)`]
        : []),
      ...(unseen
        ? [
            `no message read has reason ${printable(reason)}; a FIFO queue shows the first messages of each group, and it may wait behind them`,
          ]
        : []),
    ].join("\n"),
    { queue: dlq.arn, complete, byReason: Object.fromEntries(reasons), messages: listedMessages },
  );
  return RecoverExit.Ok;
}

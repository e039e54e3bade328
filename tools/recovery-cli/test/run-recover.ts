import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { SetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { CURRENT_SPEC_VERSION, encodeToolCallJob } from "@mcp-pipeline/contracts";
import { type EmulatorStack, emulatorClientOptions, type StackQueue } from "@mcp-pipeline/emulators";
import { main } from "../src/index.js";

export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/**
 * `npm run recover -- <argv>` in this process, with the environment an operator's shell would have, and
 * stdout and stderr kept. No terminal: a command that would ask must be told --yes (as in a script); the
 * terminal's own path is run under a pseudo-terminal in terminal.test.ts.
 */
export async function recover(
  argv: readonly string[],
  env: Record<string, string>,
  /** What a Ctrl-C would abort (processIo's `interrupt`): the test aborts it itself. */
  interrupt?: AbortSignal,
): Promise<Run> {
  let out = "";
  let err = "";
  const code = await main(argv, env, {
    out: (text) => {
      out += `${text}\n`;
    },
    err: (text) => {
      err += text.startsWith("\r") ? text : `${text}\n`;
    },
    terminal: {
      interactive: false,
      ask: () => Promise.reject(new Error("no terminal")),
    },
    now: Date.now,
    ...(interrupt ? { interrupt } : {}),
  });
  return { code, out, err };
}

/** The variables that point the CLI at a stack: fauxqs answers SQS, S3 and STS (account 000000000000). */
export function stackEnvironment(
  stack: EmulatorStack,
  extra: Record<string, string> = {},
): Record<string, string> {
  const sqsS3 = stack.sqsS3.endpoint;
  return {
    // The stack creates its queues through us-east-1 (emulatorClientOptions); fauxqs names them by it.
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_SQS: sqsS3,
    AWS_ENDPOINT_URL_S3: sqsS3,
    AWS_ENDPOINT_URL_STS: sqsS3,
    ...extra,
  };
}

/** A valid text.stats job, as a DLQ holds one that SQS moved after its receives ran out (no reason attribute). */
export function statsJob(callId: string, sessionId: string): string {
  return encodeToolCallJob({
    specVersion: CURRENT_SPEC_VERSION,
    callId,
    sessionId,
    tool: "text.stats",
    arguments: { text: "back from the DLQ" },
    enqueuedAt: new Date().toISOString(),
  });
}

/**
 * A queue and its DLQ as terraform/modules/queue makes them: a redrive policy on the queue, and on the DLQ
 * a redrive allow policy naming the queue.
 */
export async function redrivablePair(stack: EmulatorStack, name: string): Promise<Required<StackQueue>> {
  const q = (await stack.createQueue({
    name,
    dlq: { name: `${name}-dlq`, maxReceiveCount: 3 },
  })) as Required<StackQueue>;
  const sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
  try {
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: q.dlqUrl,
        Attributes: {
          RedriveAllowPolicy: JSON.stringify({ redrivePermission: "byQueue", sourceQueueArns: [q.arn] }),
        },
      }),
    );
  } finally {
    sqs.destroy();
  }
  return q;
}

/**
 * An endpoint between the CLI and `upstream` (an emulator's): each request goes to `intercept` first,
 * which answers it itself (true) or lets it through (false). For what the emulator does not do: answer
 * as AWS would (a 403), or see the requests as they go (a Ctrl-C at the fifth).
 */
export async function interposed(
  upstream: string,
  intercept: (incoming: IncomingMessage, answer: ServerResponse) => boolean,
): Promise<{ readonly endpoint: string; close(): Promise<void> }> {
  const to = new URL(upstream);
  const proxy = createServer((incoming, answer) => {
    if (intercept(incoming, answer)) return;
    const forward = request(
      {
        host: to.hostname,
        port: to.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (reply) => {
        answer.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(answer);
      },
    );
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => proxy.close(() => resolve())),
  };
}

import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sendToDeadLetterQueue, sqsClient } from "@mcp-pipeline/aws/sqs-client";
import {
  EmulatorStack,
  emulatorClientOptions,
  type StackQueue,
  toSqsEventRecord,
} from "@mcp-pipeline/emulators";
import { countMessages, InterruptedError, peekMessages } from "@mcp-pipeline/recovery";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { triage } from "../../src/index.js";
import { recover, stackEnvironment } from "../run-recover.js";

/**
 * `npm run recover -- redrive` as an operator runs it (issue 26, items 1, 2, 3 and 6), against fauxqs, which
 * also answers STS: each queue is made as terraform/modules/queue makes it (a redrive policy on the source,
 * a redrive allow policy naming it on the DLQ), and every refusal leaves the DLQ as it was.
 */
let stack: EmulatorStack;
let sqs: SQSClient;
let env: Record<string, string>;
let n = 0;

async function pair(fifo: boolean): Promise<Required<StackQueue>> {
  n += 1;
  const end = fifo ? ".fifo" : "";
  const q = await stack.createQueue({
    name: `guard-${n}${end}`,
    sharedAttributes: fifo ? { FifoQueue: "true" } : {},
    dlq: { name: `guard-${n}-dlq${end}`, maxReceiveCount: 3 },
  });
  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: q.dlqUrl,
      Attributes: {
        RedriveAllowPolicy: JSON.stringify({ redrivePermission: "byQueue", sourceQueueArns: [q.arn] }),
      },
    }),
  );
  return q as Required<StackQueue>;
}

async function dead(q: Required<StackQueue>, bodies: readonly string[], fifo = false) {
  for (const [i, body] of bodies.entries())
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: q.dlqUrl,
        MessageBody: body,
        ...(fifo ? { MessageGroupId: "session-1", MessageDeduplicationId: `d-${n}-${i}` } : {}),
      }),
    );
}

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true });
  sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
  env = stackEnvironment(stack);
});
afterAll(async () => {
  sqs?.destroy();
  await stack?.stop();
});

describe("redrive goes back where the DLQ's messages came from (item 1)", () => {
  it.each([
    [
      "a FIFO DLQ into the standard queue",
      true,
      false,
      /queue type: .*\.fifo is a FIFO queue and .* a standard queue/,
    ],
    [
      "a standard DLQ into the FIFO queue",
      false,
      true,
      /queue type: .* is a standard queue and .*\.fifo a FIFO queue/,
    ],
  ])(
    "refuses %s with exit status 3, naming why, and moves nothing",
    async (_label, fromFifo, toFifo, reason) => {
      const from = await pair(fromFifo);
      const to = await pair(toFifo);
      await dead(from, ["job"], fromFifo);
      const run = await recover(["redrive", "--from", from.dlqUrl, "--to", to.url, "--yes"], env);
      expect(run.code).toBe(3);
      expect(run.out).toMatch(reason);
      expect(run.out).toContain("refused, nothing done");
      expect(run.out).toContain(`the DLQ's source is ${from.arn}`);
      if (!fromFifo) expect(await countMessages(sqs, from.dlqUrl)).toBe(1);
    },
  );

  it("refuses a DLQ into itself", async () => {
    const q = await pair(false);
    await dead(q, ["job"]);
    const run = await recover(["redrive", "--from", q.dlqUrl, "--to", q.dlqUrl, "--yes"], env);
    expect(run.code).toBe(3);
    expect(run.out).toContain(`target: --to is the DLQ itself (${q.dlqArn})`);
    expect(await countMessages(sqs, q.dlqUrl)).toBe(1);
  });

  it("goes to the DLQ's source when --to is not given, as StartMessageMoveTask does", async () => {
    const q = await pair(false);
    await dead(q, ["job-a", "job-b"]);
    const run = await recover(["redrive", "--from", q.dlqUrl, "--yes", "--watch", "0"], env);
    expect(run.code).toBe(0);
    expect(run.out).toContain(`     to ${q.arn}`);
    expect(run.out).toMatch(/^2 moved back to guard-\d+ \(mover\)/m);
    expect(await countMessages(sqs, q.url)).toBe(2);
  });
});

describe("queue ARNs and URLs alike (item 2)", () => {
  it("takes ARNs for --from and --to; the dry run names account, region, source, target and counts by reason", async () => {
    const q = await pair(false);
    await dead(q, ["a", "b"]);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: q.dlqUrl,
        MessageBody: "{",
        MessageAttributes: { "pipeline.reason.code": { DataType: "String", StringValue: "bad-json" } },
      }),
    );
    const run = await recover(["redrive", "--from", q.dlqArn, "--to", q.arn, "--dry-run"], env);
    expect(run.code).toBe(0);
    expect(run.out).toContain(`redrive ${q.dlqArn}\n     to ${q.arn}`);
    expect(run.out).toContain("as account 000000000000, region us-east-1");
    expect(run.out).toContain("3 messages read in the DLQ: bad-json (1), max-receives (2)");
    expect(run.out).toContain(
      "1 has a permanent reason (bad-json (1)): their worker dead-letters them again at once",
    );
    expect(run.out).toContain("dry run: 3 would be moved");
    expect(await countMessages(sqs, q.dlqUrl)).toBe(3);
  });

  it("says which flag named a queue that does not exist (exit 3), and refuses what is neither URL nor ARN (exit 2)", async () => {
    const q = await pair(false);
    const missing = q.dlqArn.replace(/guard-\d+-dlq$/, "no-such-dlq");
    const run = await recover(["redrive", "--from", missing, "--dry-run"], env);
    expect(run.code).toBe(3);
    expect(run.err).toContain(`the queue --from names (${missing}) does not exist`);
    const to = await recover(
      ["redrive", "--from", q.dlqUrl, "--to", q.url.replace(/guard-\d+$/, "nope"), "--dry-run"],
      env,
    );
    expect(to.code).toBe(3);
    expect(to.err).toMatch(/the queue --to names \(.*\/nope\) does not exist/);
    const bad = await recover(["redrive", "--from", "tool-jobs-dlq"], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--from must be an SQS queue URL or ARN, got "tool-jobs-dlq"');
  });

  it("a stale queue variable behind --queue is named, with its value (exit 3)", async () => {
    const q = await pair(false);
    const stale = q.dlqUrl.replace(/guard-\d+-dlq$/, "guard-old-dlq");
    const shell = { ...env, TOOL_JOBS_QUEUE_URL: q.url, TOOL_JOBS_DLQ_URL: stale };
    for (const command of ["peek", "redrive"]) {
      const run = await recover(
        [command, "--queue", "tool-jobs", "--dry-run"].slice(0, command === "peek" ? 3 : 4),
        shell,
      );
      expect(run.code, run.out + run.err).toBe(3);
      expect(run.err).toContain(
        `the queue --queue tool-jobs (TOOL_JOBS_DLQ_URL) names (${stale}) does not exist`,
      );
    }
  });

  it("refuses an ARN of another region than the one it acts in", async () => {
    const q = await pair(false);
    const elsewhere = q.dlqArn.replace(":us-east-1:", ":us-west-2:");
    const run = await recover(["redrive", "--from", elsewhere, "--dry-run"], env);
    expect(run.code).toBe(3);
    expect(run.err).toContain(`is not the queue the caller reaches by that name: that is ${q.dlqArn}`);
  });

  it("refuses a URL of another account, which the emulator answers with the caller's own queue of that name", async () => {
    const q = await pair(false);
    await dead(q, ["job"]);
    const elsewhere = q.dlqUrl.replace("/000000000000/", "/111111111111/");
    const run = await recover(["redrive", "--from", elsewhere, "--yes", "--watch", "0"], env);
    expect(await countMessages(sqs, q.dlqUrl)).toBe(1);
    expect(run.code, run.out + run.err).toBe(3);
    expect(run.err).toContain(
      `the queue --from names (${elsewhere}) is not the queue that answered for it: that is ${q.dlqArn}, not queue ${q.dlqArn.split(":").at(-1)} of account 111111111111`,
    );
    const to = await recover(
      ["redrive", "--from", q.dlqUrl, "--to", q.url.replace("/000000000000/", "/111111111111/"), "--dry-run"],
      env,
    );
    expect(to.code).toBe(3);
    expect(to.err).toContain("the queue --to names");
  });

  it("takes a URL pasted with a trailing slash as the queue it names", async () => {
    const q = await pair(false);
    await dead(q, ["job"]);
    const run = await recover(
      ["redrive", "--from", `${q.dlqUrl}/`, "--to", `${q.url}/`, "--yes", "--watch", "0"],
      env,
    );
    expect(run.code, run.out + run.err).toBe(0);
    expect(run.out).toContain(`redrive ${q.dlqArn}\n     to ${q.arn}`);
    expect(await countMessages(sqs, q.url)).toBe(1);
    expect(await countMessages(sqs, q.dlqUrl)).toBe(0);
  });
});

describe("two operators at once", () => {
  it("the same redrive run twice at the same time moves each message once: a message one holds, the other does not see", async () => {
    const q = await pair(false);
    const bodies = Array.from({ length: 25 }, (_, i) => `job-${i}`);
    await dead(q, bodies);
    const runs = await Promise.all([
      recover(["redrive", "--from", q.dlqUrl, "--yes", "--watch", "0"], env),
      recover(["redrive", "--from", q.dlqUrl, "--yes", "--watch", "0"], env),
    ]);
    for (const run of runs) expect(run.code, run.out + run.err).toBe(0);
    const moved = runs.map((r) => Number(/^(\d+) moved back to/m.exec(r.out)?.[1]));
    expect((moved[0] ?? 0) + (moved[1] ?? 0)).toBe(25);
    const { messages } = await peekMessages(sqs, q.url);
    expect(messages.map((m) => m.body).sort()).toEqual([...bodies].sort());
    expect(await countMessages(sqs, q.dlqUrl)).toBe(0);
  });
});

describe("a guard before acting (item 3)", () => {
  it("shows the plan and does nothing without --yes when no terminal can ask", async () => {
    const q = await pair(false);
    await dead(q, ["job"]);
    const run = await recover(["redrive", "--from", q.dlqUrl], env);
    expect(run.code).toBe(3);
    expect(run.out).toContain("1 to move");
    expect(run.err).toContain("nothing done: pass --yes to act");
    expect(await countMessages(sqs, q.dlqUrl)).toBe(1);
  });

  it("--max N moves N and leaves the rest", async () => {
    const q = await pair(false);
    await dead(q, ["a", "b", "c"]);
    const run = await recover(["redrive", "--from", q.dlqUrl, "--max", "1", "--yes", "--watch", "0"], env);
    expect(run.code).toBe(0);
    expect(run.out).toContain("1 to move (--max 1)");
    expect(run.out).toMatch(/^1 moved back to guard-\d+ \(mover\)/m);
    expect(await countMessages(sqs, q.dlqUrl)).toBe(2);
    expect(await countMessages(sqs, q.url)).toBe(1);
  });

  it("--reason max-receives moves only what SQS moved after its receives ran out; an unknown reason lists those there are", async () => {
    const q = await pair(false);
    await dead(q, ["retry-me"]);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: q.dlqUrl,
        MessageBody: "not a job",
        MessageAttributes: { "pipeline.reason.code": { DataType: "String", StringValue: "bad-json" } },
      }),
    );
    const unknown = await recover(["redrive", "--from", q.dlqUrl, "--reason", "bad-jsn", "--yes"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("--reason bad-jsn matches no message of");
    expect(unknown.err).toContain("the reasons there are: bad-json (1), max-receives (1)");
    const run = await recover(
      ["redrive", "--from", q.dlqUrl, "--reason", "max-receives", "--yes", "--watch", "0"],
      env,
    );
    expect(run.code).toBe(0);
    expect(await countMessages(sqs, q.url)).toBe(1);
    expect(await countMessages(sqs, q.dlqUrl)).toBe(1);
  });
});

describe("a redrive of messages that come straight back says so (item 6)", () => {
  it("exits 1 naming how many came back and why, when the worker dead-letters them again", async () => {
    const q = await pair(false);
    await dead(q, ['{"not":"a job"}', '{"nor":"this"}']);
    // The tool worker, as packages/worker dead-letters a body that is not a job: at once, with its reason.
    let done = false;
    const worker = (async () => {
      while (!done) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: q.url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            MessageAttributeNames: ["All"],
            MessageSystemAttributeNames: ["All"],
          }),
        );
        for (const m of Messages) {
          await sendToDeadLetterQueue(sqs, q.dlqUrl, toSqsEventRecord(m, q.arn), {
            code: "schema-violation",
            message: "not a job",
          });
          await sqs.send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: m.ReceiptHandle }));
        }
      }
    })();
    // --watch is a bound: the watch ends as soon as both are back.
    const run = await recover(["redrive", "--from", q.dlqUrl, "--yes", "--watch", "300"], env).finally(() => {
      done = true;
    });
    await worker;
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/^2 moved back to guard-\d+ \(mover\)/m);
    expect(run.out).toMatch(
      /2 of them came straight back to the DLQ within .* \(schema-violation \(2\)\): still failing/,
    );
    expect(await countMessages(sqs, q.dlqUrl)).toBe(2);
  });
});

describe("what a DLQ's message says is shown, never obeyed", () => {
  it("peek shows a body's line breaks and carriage returns escaped: a body cannot forge a message's line", async () => {
    const q = await pair(false);
    // SQS takes tab, line feed and carriage return in a body (and #x20 up); a job's text is anyone's.
    const forged = "00000000-0000-0000-0000-000000000000  max-receives (retryable)  sent 1 s ago, 1 receives";
    await dead(q, [`{"text":"a"}\n${forged}\r\u202eevil`]);
    const run = await recover(["peek", "--from", q.dlqUrl], env);
    expect(run.code, run.err).toBe(0);
    expect(run.out).not.toMatch(/[\r\u202e]/);
    expect(run.out).not.toMatch(/^00000000-0000/m);
    expect(run.out).toContain(`{"text":"a"}\\n${forged}\\r\\u202eevil`);
    // --json prints the body as it is: JSON escapes it.
    const json = await recover(["peek", "--from", q.dlqUrl, "--json"], env);
    expect(JSON.parse(json.out).messages[0].body).toBe(`{"text":"a"}\n${forged}\r\u202eevil`);
  });
});

describe("a FIFO DLQ shows the first message of each group (§3)", () => {
  it("peek --reason of a reason not read there says the rest may wait behind, not 'matches no message' (exit 0)", async () => {
    const q = await pair(true);
    await dead(q, ["job-1"], true);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: q.dlqUrl,
        MessageBody: "{oops",
        MessageGroupId: "session-1",
        MessageDeduplicationId: `d-${n}-behind`,
        MessageAttributes: { "pipeline.reason.code": { DataType: "String", StringValue: "bad-json" } },
      }),
    );
    const run = await recover(["peek", "--from", q.dlqUrl, "--reason", "bad-json"], env);
    expect(run.code, run.out + run.err).toBe(0);
    expect(run.out).toContain(
      "no message read has reason bad-json; a FIFO queue shows the first messages of each group, and it may wait behind them",
    );
    const redrive = await recover(["redrive", "--from", q.dlqUrl, "--reason", "bad-json", "--dry-run"], env);
    expect(redrive.code).toBe(2);
    expect(redrive.err).toContain("--reason bad-json matches no message read in guard-");
    expect(redrive.err).toContain(
      "(read: max-receives (1)); a FIFO queue shows the first messages of each group",
    );
  });
});

describe("what a redrive says it did, and what it left", () => {
  it("--reason on an empty DLQ says it holds none (exit 2)", async () => {
    const q = await pair(false);
    const run = await recover(["redrive", "--from", q.dlqUrl, "--reason", "bad-json", "--yes"], env);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/--reason bad-json matches no message of guard-\d+-dlq; it holds none/);
  });

  it("--watch 0 says the move was not watched, and --max says what it left", async () => {
    const q = await pair(false);
    await dead(q, ["a", "b"]);
    const run = await recover(["redrive", "--from", q.dlqUrl, "--max", "1", "--yes", "--watch", "0"], env);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^1 moved back to guard-\d+ \(mover\), .*, 1 left by --max or --reason$/m);
    expect(run.out).toContain("not watched for returns (--watch 0)");
  });

  it("a watch that sees nothing come back says so, and the progress goes to stderr without a terminal", async () => {
    const q = await pair(false);
    await dead(q, ["a"]);
    const run = await recover(["redrive", "--from", q.dlqUrl, "--yes", "--watch", "1"], env);
    expect(run.code, run.out + run.err).toBe(0);
    expect(run.out).toMatch(/^none came back to the DLQ in \d+ s of watching$/m);
    expect(run.err).toMatch(/^moved 1 \(about \d+ were waiting\)$/m);
  });

  it("a FIFO DLQ's plan counts what it read, and SQS's count, as 'or more'", async () => {
    const q = await pair(true);
    await dead(q, ["job-1", "job-2"], true);
    const run = await recover(["redrive", "--from", q.dlqUrl, "--dry-run"], env);
    expect(run.out).toMatch(
      /messages read in the DLQ \(a FIFO queue shows the first of each group; SQS counts about \d+\)/,
    );
    expect(run.out).toMatch(/^ {2}\d+ or more to move$/m);
  });
});

describe("triage of a DLQ, as the library reads it", () => {
  it("a FIFO DLQ's group is partial, with SQS's count beside what the read saw", async () => {
    const q = await pair(true);
    await dead(q, ["job-1", "job-2"], true);
    const s3 = s3Client(emulatorClientOptions(stack.sqsS3));
    try {
      const report = await triage(
        { s3, sqs },
        { dlqs: [{ name: { url: q.dlqUrl }, url: q.dlqUrl, fifo: true }] },
      );
      expect(report.groups).toMatchObject([
        { where: "dlq", source: q.dlqUrl, kind: "retryable", count: 1, partial: true, givenUpAgain: 0 },
      ]);
      expect(report.approximate).toEqual([{ source: q.dlqUrl, approximate: 2, seen: 1 }]);
      expect(report.unread).toEqual([]);
    } finally {
      s3.destroy();
    }
  });

  it("an interrupted read stops the triage (InterruptedError), never a DLQ counted as not read", async () => {
    const q = await pair(false);
    await dead(q, ["a"]);
    const s3 = s3Client(emulatorClientOptions(stack.sqsS3));
    try {
      await expect(
        triage(
          { s3, sqs },
          { dlqs: [{ name: { key: "guard" }, url: q.dlqUrl, fifo: false }], interrupt: AbortSignal.abort() },
        ),
      ).rejects.toBeInstanceOf(InterruptedError);
    } finally {
      s3.destroy();
    }
  });
});

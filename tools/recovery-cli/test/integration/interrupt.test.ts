import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { PutRecordCommand } from "@aws-sdk/client-kinesis";
import { GetObjectTaggingCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { EmulatorStack, emulatorClientOptions } from "@mcp-pipeline/emulators";
import { countMessages, InterruptedError } from "@mcp-pipeline/recovery";
import { QUARANTINE_FORMAT_VERSION, writeQuarantineRecord } from "@mcp-pipeline/recovery/quarantine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { interposed, recover, redrivablePair, stackEnvironment, statsJob } from "../run-recover.js";

/**
 * Ctrl-C in the middle of `npm run recover` (bin/recover.ts in a child process, as a person runs it): the
 * command stops at its next step, says what it did and how to go on, exits 130, and leaves nothing hidden.
 * Killed at once instead, a mover leaves the messages it holds invisible for 300 s: the same command run
 * again then finds nothing to move and exits 0, while the DLQ is not empty.
 */
const root = join(import.meta.dirname, "../../../..");
let stack: EmulatorStack;
let sqs: SQSClient;

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true, kinesis: true });
  sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
});
afterAll(async () => {
  sqs?.destroy();
  await stack?.stop();
});

/**
 * The command in a child process; `stopWhen` sees its stderr so far (on each write, and every 100 ms for
 * what the test watches itself) and says when to send SIGINT.
 */
function interrupted(
  args: readonly string[],
  env: Record<string, string>,
  stopWhen: (err: string) => boolean,
) {
  const child: ChildProcess = spawn(
    join(root, "node_modules/.bin/tsx"),
    [join(root, "tools/recovery-cli/bin/recover.ts"), ...args],
    { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env }, stdio: "pipe" },
  );
  let out = "";
  let err = "";
  let sent = false;
  child.stdout?.on("data", (c) => {
    out += c;
  });
  const check = () => {
    if (!sent && stopWhen(err)) {
      sent = true;
      child.kill("SIGINT");
    }
  };
  child.stderr?.on("data", (c) => {
    err += c;
    check();
  });
  const poll = setInterval(check, 100);
  return new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    out: string;
    err: string;
    sent: boolean;
  }>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal, out, err, sent });
    });
  });
}

async function hidden(url: string): Promise<number> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ["ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  return Number(Attributes.ApproximateNumberOfMessagesNotVisible);
}

describe("Ctrl-C during a redrive", () => {
  it("stops at the next step: exit 130, what moved and how to go on, nothing hidden; the same command again moves the rest once", async () => {
    const q = await redrivablePair(stack, "interrupted");
    // Poison the worker dead-lettered (left by --reason max-receives, so held while the mover runs), and
    // jobs SQS moved after their receives ran out.
    for (let i = 0; i < 3; i++)
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: q.dlqUrl,
          MessageBody: `not json ${i}`,
          MessageAttributes: {
            [DeadLetterAttribute.ReasonCode]: { DataType: "String", StringValue: "bad-json" },
          },
        }),
      );
    const jobs = 15;
    for (let i = 0; i < jobs; i++)
      await sqs.send(
        new SendMessageCommand({ QueueUrl: q.dlqUrl, MessageBody: statsJob(`call-${i}`, "s-1") }),
      );
    const env = stackEnvironment(stack);
    const args = [
      "redrive",
      "--from",
      q.dlqUrl,
      "--reason",
      "max-receives",
      "--rate",
      "1",
      "--yes",
      "--watch",
      "0",
    ];

    // --rate 1 waits a second per message moved between steps: Ctrl-C once the first step has moved some.
    const run = await interrupted(args, env, (err) => /^moved \d+/m.test(err));
    expect(run.sent).toBe(true);
    // Nothing the mover held stays hidden: the poison it left and the jobs it had not reached yet.
    expect(await hidden(q.dlqUrl)).toBe(0);
    expect(run.code, `${run.out}\n${run.err}`).toBe(130);
    expect(run.err).toContain("SIGINT: stopping after the current step");
    const moved = Number(/interrupted: (\d+) moved back to interrupted \(mover\)/.exec(run.out)?.[1]);
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(jobs);
    expect(run.out).toContain("run the same command again to move them");
    expect(await countMessages(sqs, q.dlqUrl)).toBe(3 + jobs - moved);

    // The advice works: the same command moves the rest, and every job is in the source queue once.
    const again = await recover(args, env);
    expect(again.code, again.out + again.err).toBe(0);
    expect(again.out).toContain(`${jobs - moved} moved back to interrupted (mover)`);
    expect(await countMessages(sqs, q.url)).toBe(jobs);
    expect(await countMessages(sqs, q.dlqUrl)).toBe(3);
  }, 120_000);
});

describe("Ctrl-C during a replay", () => {
  it("stops between records, each record written is marked: exit 130 and the advice; the same replay again puts back only the rest", async () => {
    const kinesis = kinesisClient(emulatorClientOptions(stack.kinesis));
    const s3 = s3Client(emulatorClientOptions(stack.sqsS3));
    try {
      const stream = "interrupted-events";
      const bucket = "interrupted-quarantine";
      await stack.createStream(stream);
      await stack.createBucket(bucket);
      const records = 6;
      for (let i = 0; i < records; i++) {
        const data = new TextEncoder().encode(`{"n":${i}}`);
        const put = await kinesis.send(
          new PutRecordCommand({ StreamName: stream, PartitionKey: `session-${i}`, Data: data }),
        );
        // What dlq-redrive stores for a record the processor's event source gave up on.
        await writeQuarantineRecord(s3, bucket, {
          formatVersion: QUARANTINE_FORMAT_VERSION,
          source: {
            kind: "kinesis",
            streamArn: `arn:aws:kinesis:us-east-1:000000000000:stream/${stream}`,
            shardId: put.ShardId ?? "",
            sequenceNumber: put.SequenceNumber ?? "",
            partitionKey: `session-${i}`,
            approximateArrivalTimestamp: Date.now() / 1000,
          },
          data: Buffer.from(data).toString("base64"),
          reason: { code: "RetryAttemptsExhausted", message: "retries exhausted" },
          failure: {
            condition: "RetryAttemptsExhausted",
            approximateInvokeCount: 3,
            functionError: "Unhandled",
            requestId: `request-${i}`,
            functionArn: "arn:aws:lambda:us-east-1:000000000000:function:processor",
            timestamp: new Date().toISOString(),
          },
          quarantinedAt: new Date().toISOString(),
          quarantinedBy: "dlq-redrive",
        });
      }
      const marked = async () => {
        const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map(
          (o) => o.Key as string,
        );
        let n = 0;
        for (const key of keys) {
          const { TagSet = [] } = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
          if (TagSet.some((t) => t.Key === "replayed" && t.Value === "true")) n += 1;
        }
        return n;
      };
      const env = stackEnvironment(stack, {
        AWS_ENDPOINT_URL_KINESIS: stack.kinesis.endpoint,
        QUARANTINE_BUCKET: bucket,
        STREAM_NAME: stream,
      });
      const args = ["replay", "--rate", "1", "--yes"];
      // --rate 1: one record a second. Ctrl-C once the first record is back and marked.
      let first = false;
      let ended = false;
      const watching = (async () => {
        while (!first && !ended) {
          if ((await marked()) > 0) first = true;
          else await new Promise((r) => setTimeout(r, 100));
        }
      })();
      const run = await interrupted(args, env, () => first);
      ended = true;
      await watching;
      expect(run.sent, `${run.out}\n${run.err}`).toBe(true);
      expect(run.code, `${run.out}\n${run.err}`).toBe(130);
      const replayed = Number(
        /records were not put back \(interrupted \(SIGINT\)\); (\d+) were, and are marked/.exec(run.out)?.[1],
      );
      expect(replayed).toBeGreaterThan(0);
      expect(replayed).toBeLessThan(records);
      expect(run.out).toContain("Run the same replay again to continue: what is marked is skipped.");
      // Every record written is marked: none was written without its mark, none marked without being written.
      expect(await marked()).toBe(replayed);
      const again = await recover(["replay", "--yes"], env);
      expect(again.code, again.out + again.err).toBe(0);
      expect(again.out).toContain(
        `${records - replayed} replayed into ${stream}, ${replayed} already replayed before`,
      );
      expect(await marked()).toBe(records);
    } finally {
      kinesis.destroy();
      s3.destroy();
    }
  }, 120_000);
});

describe("Ctrl-C during a long read of the quarantine", () => {
  it("stops the scan before its next GET (a scan holds nothing): exit 130, not the whole bucket read first", async () => {
    const s3 = s3Client(emulatorClientOptions(stack.sqsS3));
    const bucket = "big-quarantine";
    const objects = 80;
    await stack.createBucket(bucket);
    for (let i = 0; i < objects; i++)
      await writeQuarantineRecord(s3, bucket, {
        formatVersion: QUARANTINE_FORMAT_VERSION,
        source: {
          kind: "kinesis",
          streamArn: "arn:aws:kinesis:us-east-1:000000000000:stream/big-events",
          shardId: "shardId-000000000000",
          sequenceNumber: String(49_000_000_000_000_000_000_000_000_000_000_000_000_000_000n + BigInt(i)),
          partitionKey: `session-${i}`,
          approximateArrivalTimestamp: Date.now() / 1000,
        },
        data: Buffer.from("{oops").toString("base64"),
        reason: { code: "bad-json", message: "payload is not JSON" },
        quarantinedAt: new Date().toISOString(),
        quarantinedBy: "processor",
      });
    s3.destroy();
    // Between the CLI and S3: counts the objects' GETs (not their ?tagging reads: the scan's first proves
    // it may read tags, docs/aws-semantics.md §11 "Object tag count"), and "presses Ctrl-C" at the fifth.
    const ctrlC = new AbortController();
    let gets = 0;
    const proxy = await interposed(stack.sqsS3.endpoint, (incoming) => {
      if (
        incoming.method === "GET" &&
        incoming.url?.includes("/kinesis/") &&
        !incoming.url.includes("tagging")
      ) {
        gets += 1;
        if (gets === 5) ctrlC.abort(new InterruptedError("SIGINT"));
      }
      return false;
    });
    try {
      const env = stackEnvironment(stack, { AWS_ENDPOINT_URL_S3: proxy.endpoint, QUARANTINE_BUCKET: bucket });
      const run = await recover(["inspect"], env, ctrlC.signal);
      expect(run.code, run.out + run.err).toBe(130);
      expect(run.err).toContain("interrupted (SIGINT): nothing changed");
      expect(run.out).toBe("");
      // The GETs in flight when it stopped settle (16 at most), none starts after.
      expect(gets).toBeLessThan(5 + 16 + 1);
    } finally {
      await proxy.close();
    }
  }, 120_000);
});

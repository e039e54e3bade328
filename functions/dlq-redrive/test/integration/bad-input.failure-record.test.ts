import { PutRecordCommand } from "@aws-sdk/client-kinesis";
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { EmulatorStack, emulatorClientOptions } from "@mcp-pipeline/emulators";
import {
  assertNoPrototypePollution,
  asText,
  type BadInput,
  type BadInputExpectations,
  badDocuments,
  badInputTable,
  captureOutput,
  kinesisFailureRecord,
  lambdaContext,
  SQS_MESSAGE_MAX_BYTES,
  sqsRecord,
  TEST_ACCOUNT,
  TEST_REGION,
} from "@mcp-pipeline/emulators/testing";
import { decodeFailureRecord } from "@mcp-pipeline/recovery";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * Failure-queue records, dlq-redrive's boundary (issue 13 §4): the messages of the Kinesis ESM's
 * on-failure queue, documents of docs/aws-semantics.md §1.6. Every bad message of the corpus, in a batch
 * with a good failure record, goes to the failure queue's own DLQ with its body unchanged and its reason,
 * and is acknowledged; the good record's range is re-read from the stream into the quarantine.
 */

const STREAM = "events";
const BUCKET = "quarantine-bad-input";
let stack: EmulatorStack;
let sqs: SQSClient;
let s3: S3Client;
let dlqUrl: string;
/** The good failure record: the range of the one record put into the stream. */
let good: Record<string, unknown>;

const failureRecord = (sequence: string) =>
  kinesisFailureRecord({
    streamArn: `arn:aws:kinesis:${TEST_REGION}:${TEST_ACCOUNT}:stream/${STREAM}`,
    start: sequence,
  });

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true, kinesis: true });
  sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
  s3 = s3Client(emulatorClientOptions(stack.sqsS3));
  await stack.createStream(STREAM);
  await stack.createBucket(BUCKET);
  ({ url: dlqUrl } = await stack.createQueue({ name: "failures-dlq" }));
  const kinesis = kinesisClient(emulatorClientOptions(stack.kinesis));
  const { SequenceNumber = "" } = await kinesis.send(
    new PutRecordCommand({
      StreamName: STREAM,
      PartitionKey: "session-1",
      Data: new TextEncoder().encode("{}"),
    }),
  );
  kinesis.destroy();
  good = failureRecord(SequenceNumber);
});
afterAll(async () => {
  sqs?.destroy();
  s3?.destroy();
  await stack?.stop();
});
afterEach(() => vi.unstubAllEnvs());

/** dlq-redrive as a new sandbox loads it, configured for this stack. */
async function freshHandler() {
  vi.resetModules();
  const sqsS3 = stack.sqsS3.endpoint;
  const kinesis = stack.kinesis.endpoint;
  const env = {
    AWS_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL_SQS: sqsS3,
    AWS_ENDPOINT_URL_S3: sqsS3,
    AWS_ENDPOINT_URL_KINESIS: kinesis,
    QUARANTINE_BUCKET: BUCKET,
    STREAM_NAME: STREAM,
    DEAD_LETTER_QUEUE_URL: dlqUrl,
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return (await import("../../src/index.js")).handler;
}

async function drainDlq(): Promise<{ body: string; attributes: Record<string, string> }[]> {
  const out: { body: string; attributes: Record<string, string> }[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ["All"],
        VisibilityTimeout: 600,
      }),
    );
    if (Messages.length === 0) return out;
    for (const m of Messages)
      out.push({
        body: m.Body ?? "",
        attributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]),
        ),
      });
  }
}

/** The quarantine key of the good record's one record ends in its shard and sequence number. */
const goodKey = () =>
  new RegExp(
    `/shardId-000000000000/${String((good.KinesisBatchInfo as Record<string, unknown>).startSequenceNumber)}\\.json$`,
  );

const quarantineKeys = async () =>
  ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((o) => o.Key);

let serial = 0;

/** The bad message after a good failure record, through the handler: what became of each. */
async function run(input: BadInput<Uint8Array>) {
  const handler = await freshHandler();
  const n = ++serial;
  const bad = sqsRecord({ messageId: `bad-${n}`, body: asText(input.value) });
  const { result, lines } = await captureOutput(() =>
    handler(
      { Records: [sqsRecord({ messageId: `good-${n}`, body: JSON.stringify(good) }), bad] },
      lambdaContext({ functionName: "dlq-redrive" }),
    ),
  );
  assertNoPrototypePollution();
  // Acknowledged only because it is kept: in the DLQ, or (read as a failure record) its range accounted for.
  expect(result).toEqual({ batchItemFailures: [] });
  // The good record's range is in the quarantine, by this batch or an earlier row's (the key is the same):
  // what every row asserts, not only the first.
  const metrics = lines.find((l) => l._aws !== undefined);
  expect(Number(metrics?.RecordsQuarantined) + Number(metrics?.RecordsAlreadyQuarantined)).toBe(1);
  expect(await quarantineKeys()).toContainEqual(expect.stringMatching(goodKey()));
  return { bad, metrics, lines, dead: await drainDlq() };
}

async function expectDeadLettered(input: BadInput<Uint8Array>, code: string, path?: string) {
  const { bad, metrics, dead } = await run(input);
  expect(metrics).toMatchObject({ FailureRecords: 2, DeadLettered: 1, RecordsLost: 0 });
  expect(dead).toHaveLength(1);
  expect(dead[0]?.body === bad.body).toBe(true);
  const decoded = decodeFailureRecord(bad.body);
  expect(decoded.ok).toBe(false);
  if (decoded.ok) return;
  expect(dead[0]?.attributes).toMatchObject({
    [DeadLetterAttribute.ReasonCode]: code,
    [DeadLetterAttribute.ReasonMessage]: decoded.error.message.slice(0, 1024),
    [DeadLetterAttribute.SourceMessageId]: bad.messageId,
  });
  if (path !== undefined) expect(decoded.error.message).toContain(`${path}:`);
}

/** Read as a failure record: its range re-read and quarantined like the good one's, nothing dead-lettered. */
async function expectRead(input: BadInput<Uint8Array>) {
  const { metrics, lines, dead } = await run(input);
  expect(dead).toEqual([]);
  // Its range, which the stream never held, is counted lost and logged with the range: accounted for.
  expect(metrics).toMatchObject({ FailureRecords: 2, DeadLettered: 0, RecordsLost: 1 });
  expect(lines).toContainEqual(
    expect.objectContaining({
      message: "records lost: the stream no longer holds this failed range",
      range: expect.objectContaining({ start: CORPUS_SEQUENCE, end: CORPUS_SEQUENCE }),
    }),
  );
}

/**
 * The corpus's documents, from a failure record of a range the stream never held: one read as a failure
 * record is re-read (nothing found, counted lost) and acknowledged, which is what the accepted cases assert.
 */
/**
 * SQS refuses an empty body (§2.5), so none arrives; one given to dlq-redrive anyway cannot be sent to the
 * DLQ either and is reported for retry, never acknowledged.
 */
async function expectReportedForRetry(input: BadInput<Uint8Array>) {
  const handler = await freshHandler();
  const bad = sqsRecord({ messageId: `bad-${++serial}`, body: asText(input.value) });
  const { result } = await captureOutput(() =>
    handler({ Records: [bad] }, lambdaContext({ functionName: "dlq-redrive" })),
  );
  expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: bad.messageId }] });
  expect(await drainDlq()).toEqual([]);
}

/** The sequence number of the corpus's documents: a range the stream never held. */
const CORPUS_SEQUENCE = "49590338271490256608559692538361571095921575989136588898";
const corpus = badDocuments({
  valid: failureRecord(CORPUS_SEQUENCE),
  maxBytes: SQS_MESSAGE_MAX_BYTES,
  stringField: "KinesisBatchInfo.shardId",
  numberField: "requestContext.approximateInvokeCount",
  version: { field: "version", unsupported: ["2.0", 1, null] },
});

const SHARD = "KinesisBatchInfo.shardId";
const COUNT = "requestContext.approximateInvokeCount";

const expectations: BadInputExpectations<Uint8Array> = {
  empty: (input) => {
    if (input.name === "no bytes") return expectReportedForRetry(input);
    if (input.name === "{}") return expectDeadLettered(input, "schema-violation", "requestContext");
    return expectDeadLettered(input, "bad-json");
  },
  truncated: (input) => expectDeadLettered(input, "bad-json"),
  oversized: (input) => expectDeadLettered(input, "schema-violation", SHARD),
  "wrong type": (input) => {
    const path = input.name.startsWith(SHARD) ? SHARD : input.name.startsWith(COUNT) ? COUNT : "(root)";
    return expectDeadLettered(input, "schema-violation", path);
  },
  // AWS sends version "1.0" (§1.6); a record of another version is kept for a person, not acted on.
  "wrong version": (input) => expectDeadLettered(input, "schema-violation", "version"),
  "invalid UTF-8": (input) => expectDeadLettered(input, "schema-violation", SHARD),
  "deeply nested": (input) => {
    if (input.name.endsWith("a key the format does not have")) return expectRead(input);
    return expectDeadLettered(input, "schema-violation", input.name.includes("arrays") ? "(root)" : SHARD);
  },
  "hostile values": (input) => {
    if (input.name === "every field under __proto__")
      return expectDeadLettered(input, "schema-violation", "requestContext");
    if (input.name.startsWith("__proto__ and constructor") || input.name === `${COUNT} -0`)
      return expectRead(input);
    return expectDeadLettered(input, "schema-violation", input.name.startsWith(SHARD) ? SHARD : COUNT);
  },
};

describe("failure-queue records: every bad message is kept in the failure queue's DLQ with its reason", () => {
  it.each(badInputTable(corpus, expectations))("$label", ({ run }) => run());
});

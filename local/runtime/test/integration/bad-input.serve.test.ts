import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { KinesisClient, PutRecordCommand } from "@aws-sdk/client-kinesis";
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DeadLetterAttribute } from "@mcp-pipeline/aws";
import {
  assertNoPrototypePollution,
  asText,
  BAD_INPUT_CATEGORIES,
  type BadInput,
  type BadInputCategory,
  type BadInputCorpus,
  type BadInputExpectations,
  badDocuments,
  badInputTable,
  bundleAll,
  lifecycleEventShape,
  toolCallJobShape,
} from "@mcp-pipeline/emulators/testing";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * `npm start -- --serve` requests (issue 13 §4): what a person sends to the served stack with a plain AWS
 * SDK client, the records put into its stream and the messages sent to its tool queue, reaches the real
 * function bundles under the local event source mappings. Every bad record of the Kinesis corpus ends in
 * the quarantine bucket with its bytes, every bad body of the SQS corpus in the queue's DLQ with its reason
 * (or, where the format accepts it, is applied or run); none is lost.
 */

const root = join(import.meta.dirname, "../../../..");
/** A bound for a broken run, not a speed assertion: the stack waits for what it asserts. */
const SERVE_WAIT = { timeout: 240_000, interval: 500 };

const EVENT_CALL = "served-bad-event";
const JOB_CALL = "served-bad-job";

/** Cases the formats read (fields they do not know are dropped; a session id is any string): applied or run. */
const KINESIS_READ = new Set([
  "10000 nested objects in a key the format does not have",
  "__proto__ and constructor.prototype beside the fields",
]);
const SQS_READ = new Set([
  "10000 nested objects in a key the format does not have",
  "10000 nested objects in arguments",
  "__proto__ and constructor.prototype beside the fields",
  "__proto__ and constructor.prototype in arguments",
  "sessionId a string",
  'sessionId "NaN"',
  'sessionId "Infinity"',
]);

/** The call id of a case the format reads: one of its own, so that each such case is seen applied or run. */
const ownCallId = (base: string, read: ReadonlySet<string>, name: string) =>
  `${base}-${[...read].indexOf(name)}`;

/**
 * The corpus with each case the format reads under a call (and event) id of its own: with the one id of
 * the shape, a single case applied or run would stand for all of them.
 */
function readUnderOwnIds(
  corpus: BadInputCorpus<Uint8Array>,
  base: string,
  read: ReadonlySet<string>,
): BadInputCorpus<Uint8Array> {
  const own = (input: BadInput<Uint8Array>): BadInput<Uint8Array> =>
    read.has(input.name)
      ? {
          ...input,
          value: new TextEncoder().encode(
            new TextDecoder().decode(input.value).replaceAll(base, ownCallId(base, read, input.name)),
          ),
        }
      : input;
  const owned = {} as Record<BadInputCategory, readonly BadInput<Uint8Array>[]>;
  for (const category of BAD_INPUT_CATEGORIES) owned[category] = corpus[category].map(own);
  return owned;
}

const kinesisCorpus = readUnderOwnIds(
  badDocuments(
    lifecycleEventShape({ sessionId: "session-served-bad", callId: EVENT_CALL, tool: "text.stats" }),
  ),
  EVENT_CALL,
  KINESIS_READ,
);
const sqsCorpus = readUnderOwnIds(
  badDocuments(toolCallJobShape({ sessionId: "session-served-bad", callId: JOB_CALL })),
  JOB_CALL,
  SQS_READ,
);

let dist: string;
let childTmp: string;
let child: ChildProcess | undefined;
const env: Record<string, string> = {};
let kinesis: KinesisClient;
let sqs: SQSClient;
let s3: S3Client;
let dynamodb: DynamoDBClient;

/** What SendMessage refused, by the body's case name. */
const refusedSends = new Map<string, string>();

beforeAll(async () => {
  dist = await bundleAll();
  childTmp = await mkdtemp(join(tmpdir(), "npm-start-serve-bad-"));
  const serving = spawn(
    process.execPath,
    [
      "--disable-warning=ExperimentalWarning",
      "--import",
      "tsx",
      join(root, "local/runtime/bin/start.ts"),
      "--dist",
      dist,
      "--serve",
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        TMPDIR: childTmp,
        AWS_ENDPOINT_URL: "",
        AWS_ENDPOINT_URL_KINESIS: "",
        AWS_ENDPOINT_URL_SQS: "",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  child = serving;
  await new Promise<void>((resolve, reject) => {
    serving.once("exit", (code) =>
      reject(new Error(`npm start -- --serve exited with ${code} before # ready`)),
    );
    createInterface({ input: serving.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const match = /^([A-Z0-9_]+)=(.*)$/.exec(line);
      if (match) env[match[1] as string] = match[2] as string;
      if (line === "# ready") resolve();
    });
  });
  const options = {
    region: env.AWS_REGION ?? "",
    credentials: {
      accessKeyId: env.AWS_ACCESS_KEY_ID ?? "",
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? "",
    },
    requestHandler: new NodeHttpHandler(),
  };
  kinesis = new KinesisClient({ ...options, endpoint: String(env.AWS_ENDPOINT_URL_KINESIS) });
  sqs = new SQSClient({ ...options, endpoint: String(env.AWS_ENDPOINT_URL_SQS) });
  s3 = new S3Client({ ...options, endpoint: String(env.AWS_ENDPOINT_URL_S3), forcePathStyle: true });
  dynamodb = new DynamoDBClient({ ...options, endpoint: String(env.AWS_ENDPOINT_URL_DYNAMODB) });

  // Everything is sent first, as a person would; each test then waits for its own input's outcome.
  for (const input of Object.values(kinesisCorpus).flat()) {
    await kinesis.send(
      new PutRecordCommand({
        StreamName: env.STREAM_NAME,
        PartitionKey: "session-served-bad",
        Data: input.value,
      }),
    );
  }
  for (const input of Object.values(sqsCorpus).flat()) {
    await sqs
      .send(new SendMessageCommand({ QueueUrl: env.TOOL_JOBS_QUEUE_URL, MessageBody: asText(input.value) }))
      .catch((error: Error) => refusedSends.set(input.name, error.name));
  }
}, 600_000);

afterAll(async () => {
  for (const client of [kinesis, sqs, s3, dynamodb]) client?.destroy();
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once("exit", resolve));
    child.kill("SIGINT");
    await exited;
  }
  await rm(dist, { recursive: true, force: true });
  await rm(childTmp, { recursive: true, force: true });
});

/** The quarantine's records read so far, by key: each object is read once. */
const quarantined = new Map<string, { data: string; reason: { code: string } }>();
async function quarantinedData(): Promise<Set<string>> {
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: env.QUARANTINE_BUCKET,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const { Key } of page.Contents ?? []) {
      if (!Key || quarantined.has(Key)) continue;
      const object = await s3.send(new GetObjectCommand({ Bucket: env.QUARANTINE_BUCKET, Key }));
      quarantined.set(Key, JSON.parse((await object.Body?.transformToString()) ?? "{}"));
    }
    token = page.NextContinuationToken;
  } while (token);
  return new Set([...quarantined.values()].map((q) => q.data));
}

/** The DLQ's messages received so far (kept invisible, so each is received once), by body. */
const deadLettered = new Map<string, Record<string, string>>();
async function deadLetteredBodies(): Promise<Map<string, Record<string, string>>> {
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: env.TOOL_JOBS_DLQ_URL,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ["All"],
        VisibilityTimeout: 3_600,
      }),
    );
    if (Messages.length === 0) return deadLettered;
    for (const m of Messages)
      deadLettered.set(
        m.Body ?? "",
        Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]),
        ),
      );
  }
}

async function callStatus(callId: string): Promise<string | undefined> {
  const { Item } = await dynamodb.send(
    new GetItemCommand({
      TableName: env.TOOL_CALLS_TABLE,
      Key: { callId: { S: callId } },
      ConsistentRead: true,
    }),
  );
  return Item?.status?.S;
}

/** A record put into the served stream: quarantined with its bytes, or applied. */
async function expectRecordKept(input: BadInput<Uint8Array>) {
  const data = Buffer.from(input.value).toString("base64");
  if (KINESIS_READ.has(input.name)) {
    const callId = ownCallId(EVENT_CALL, KINESIS_READ, input.name);
    await vi.waitFor(async () => expect(await callStatus(callId)).toBeDefined(), SERVE_WAIT);
    expect((await quarantinedData()).has(data)).toBe(false);
  } else {
    await vi.waitFor(async () => expect((await quarantinedData()).has(data)).toBe(true), SERVE_WAIT);
    expect([...quarantined.values()].find((q) => q.data === data)?.reason.code).toMatch(
      /^(bad-encoding|bad-json|schema-violation|unsupported-version)$/,
    );
  }
  assertNoPrototypePollution();
}

/** A body sent to the served tool queue: in its DLQ with the reason, or run; or refused by SQS at the send. */
async function expectMessageKept(input: BadInput<Uint8Array>) {
  const body = asText(input.value);
  if (input.value.length === 0) {
    // SQS takes no empty body (§2.5): the sender is told, nothing is in flight.
    expect(refusedSends.get(input.name)).toMatch(/MissingParameter$/);
  } else if (SQS_READ.has(input.name)) {
    await vi.waitFor(
      async () =>
        expect(["completed", "failed"]).toContain(
          await callStatus(ownCallId(JOB_CALL, SQS_READ, input.name)),
        ),
      SERVE_WAIT,
    );
    expect((await deadLetteredBodies()).has(body)).toBe(false);
  } else {
    await vi.waitFor(async () => expect((await deadLetteredBodies()).has(body)).toBe(true), SERVE_WAIT);
    expect(deadLettered.get(body)?.[DeadLetterAttribute.ReasonCode]).toMatch(
      /^(bad-json|schema-violation|unsupported-version)$/,
    );
  }
  assertNoPrototypePollution();
}

const every = <T>(expect: (input: BadInput<T>) => Promise<void>) =>
  Object.fromEntries(
    Object.keys(kinesisCorpus).map((category) => [category, expect]),
  ) as unknown as BadInputExpectations<T>;

describe("npm start -- --serve: what a person sends to the served stack is kept", () => {
  describe("records put into its stream", () => {
    it.each(badInputTable(kinesisCorpus, every(expectRecordKept)))("$label", ({ run }) => run());
  });
  describe("messages sent to its tool queue", () => {
    it.each(badInputTable(sqsCorpus, every(expectMessageKept)))("$label", ({ run }) => run());
  });
});

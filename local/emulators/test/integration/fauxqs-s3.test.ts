import {
  DeleteObjectCommand,
  DeleteObjectTaggingCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createBucketWhenReady,
  emulatorClientOptions,
  type RunningEmulator,
  startMoto,
  startSqsS3,
} from "../../src/index.js";

// fauxqs lacks S3's object tags (their count on a GET or HEAD included) and its `If-None-Match: *` on
// PutObject; fauxqs-s3.mjs adds both. The same calls against moto (which answers as S3 does) and against
// startSqsS3 must give the same answers, so that the quarantine's conditional writes, replay tags and scans
// behave locally as on AWS.

type Step = () => Promise<unknown>;

/** What a call answered, reduced to what S3 specifies: a value, or the error's name and status. */
const answer = (step: Step) =>
  step().then(
    (value) => ({ ok: value }),
    (error: { name?: string; $metadata?: { httpStatusCode?: number } }) => ({
      error: error.name,
      status: error.$metadata?.httpStatusCode,
    }),
  );

async function scenario(emulator: RunningEmulator): Promise<unknown[]> {
  const s3 = new S3Client({ ...emulatorClientOptions(emulator), forcePathStyle: true });
  const sqs = new SQSClient(emulatorClientOptions(emulator));
  const Bucket = "fidelity-check";
  await createBucketWhenReady(s3, { Bucket });
  const Key = "kinesis/events/2026/12/03/shardId-000000000000/4959.json";
  const put = (Body: string, conditional: boolean) => () =>
    s3
      .send(new PutObjectCommand({ Bucket, Key, Body, ...(conditional ? { IfNoneMatch: "*" } : {}) }))
      .then(() => "stored");
  const body = () => () =>
    s3.send(new GetObjectCommand({ Bucket, Key })).then((r) => r.Body?.transformToString());
  const tagsOf =
    (key = Key) =>
    () =>
      s3.send(new GetObjectTaggingCommand({ Bucket, Key: key })).then((r) => r.TagSet ?? []);
  const tag = (TagSet: { Key: string; Value: string }[]) => () =>
    s3.send(new PutObjectTaggingCommand({ Bucket, Key, Tagging: { TagSet } })).then(() => "tagged");
  // x-amz-tagging-count of a GET and of a HEAD, "none" where the header is absent.
  const tagCounts = () => async () => [
    (await s3.send(new GetObjectCommand({ Bucket, Key }))).TagCount ?? "none",
    (await s3.send(new HeadObjectCommand({ Bucket, Key }))).TagCount ?? "none",
  ];
  const replayMark = [
    { Key: "replayed", Value: "true" },
    { Key: "replayed-at", Value: "2026-12-03T10:00:00.000Z" },
    { Key: "replay-sequence-number", Value: "49590338271490256608559692538361571095921575989136588898" },
  ];
  const steps: Step[] = [
    put("first", true),
    put("second", true),
    body(),
    tagsOf(),
    tagCounts(),
    tag([{ Key: "odd", Value: "a & b < c" }]),
    tag(replayMark),
    tagsOf(),
    body(),
    tagCounts(),
    // The tags replaced by fewer, then taken off.
    tag([{ Key: "replayed", Value: "true" }]),
    tagCounts(),
    () => s3.send(new DeleteObjectTaggingCommand({ Bucket, Key })).then(() => "untagged"),
    tagCounts(),
    tag(replayMark),
    tagsOf("kinesis/no-such-key.json"),
    put("third", false),
    body(),
    tagsOf(),
    tagCounts(),
    () => s3.send(new DeleteObjectCommand({ Bucket, Key })).then(() => "deleted"),
    tagsOf(),
    put("fourth", true),
    body(),
    // SQS on the same endpoint is untouched.
    async () => {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "fidelity-check" }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "hello" }));
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
      return Messages.map((m) => m.Body);
    },
  ];
  const out: unknown[] = [];
  for (const step of steps) out.push(await answer(step));
  s3.destroy();
  sqs.destroy();
  return out;
}

let moto: RunningEmulator;
let fauxqs: RunningEmulator;
beforeAll(async () => {
  [moto, fauxqs] = await Promise.all([startMoto(), startSqsS3()]);
}, 300_000);
afterAll(async () => {
  await Promise.all([moto?.stop(), fauxqs?.stop()]);
});

describe("startSqsS3's S3: tags and conditional writes as moto (S3) answers them", () => {
  it("gives moto's answer to every call of the scenario", async () => {
    const [expected, actual] = await Promise.all([scenario(moto), scenario(fauxqs)]);
    // moto's own answers, as S3 documents them: a second conditional write is refused and changes
    // nothing, tags leave the bytes alone, an overwrite or a delete takes the tags with it.
    expect(expected).toEqual([
      { ok: "stored" },
      { error: "PreconditionFailed", status: 412 },
      { ok: "first" },
      { ok: [] },
      // S3 sends x-amz-tagging-count only for an object that has tags (docs/aws-semantics.md §11).
      { ok: ["none", "none"] },
      { error: "InvalidTag", status: 400 },
      { ok: "tagged" },
      {
        ok: [
          { Key: "replayed", Value: "true" },
          { Key: "replayed-at", Value: "2026-12-03T10:00:00.000Z" },
          {
            Key: "replay-sequence-number",
            Value: "49590338271490256608559692538361571095921575989136588898",
          },
        ],
      },
      { ok: "first" },
      { ok: [3, 3] },
      { ok: "tagged" },
      { ok: [1, 1] },
      { ok: "untagged" },
      { ok: ["none", "none"] },
      { ok: "tagged" },
      { error: "NoSuchKey", status: 404 },
      { ok: "stored" },
      { ok: "third" },
      { ok: [] },
      { ok: ["none", "none"] },
      { ok: "deleted" },
      { error: "NoSuchKey", status: 404 },
      { ok: "stored" },
      { ok: "fourth" },
      { ok: ["hello"] },
    ]);
    expect(actual).toEqual(expected);
  });
});

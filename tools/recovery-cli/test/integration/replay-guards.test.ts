import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  PutRecordCommand,
} from "@aws-sdk/client-kinesis";
import {
  GetObjectTaggingCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { kinesisClient } from "@mcp-pipeline/aws/kinesis-client";
import { s3Client } from "@mcp-pipeline/aws/s3-client";
import { EmulatorStack, emulatorClientOptions } from "@mcp-pipeline/emulators";
import { kinesisFailureRecord, lambdaContext, sqsRecord } from "@mcp-pipeline/emulators/testing";
import { rereadRange, storeFailureRecords } from "@mcp-pipeline/recovery";
import { QUARANTINE_FORMAT_VERSION, writeQuarantineRecord } from "@mcp-pipeline/recovery/quarantine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { interposed, recover, stackEnvironment } from "../run-recover.js";

/**
 * `npm run recover -- replay`, `inspect` and `show` as an operator runs them (issue 26, items 3 to 7),
 * against kinesalite and fauxqs (S3, and STS: account 000000000000). The quarantine holds what the
 * product writes: dlq-redrive's records of a range the event source gave up on (quarantineRecordOf over
 * the range re-read from the stream: retryable) and the processor's bad-json records (permanent).
 */
let stack: EmulatorStack;
let kinesis: KinesisClient;
let s3: S3Client;
let n = 0;

interface Position {
  readonly sequence: string;
  readonly shardId: string;
}

const ARN = (stream: string) => `arn:aws:kinesis:us-east-1:000000000000:stream/${stream}`;

async function streamWith(records: readonly { key: string; body: string }[]) {
  const name = `events-${++n}`;
  await stack.createStream(name);
  const positions: Position[] = [];
  for (const r of records) {
    const put = await kinesis.send(
      new PutRecordCommand({ StreamName: name, PartitionKey: r.key, Data: new TextEncoder().encode(r.body) }),
    );
    positions.push({ sequence: put.SequenceNumber ?? "", shardId: put.ShardId ?? "" });
  }
  return { name, arn: ARN(name), positions };
}

/** What dlq-redrive stores when the event source gives up on one record (§1.6): a retryable one. */
async function givenUp(bucket: string, stream: { arn: string }, position: Position) {
  const failure = kinesisFailureRecord({
    streamArn: stream.arn,
    shardId: position.shardId,
    start: position.sequence,
  });
  const summary = await storeFailureRecords(
    [sqsRecord({ messageId: `failure-${++n}`, body: JSON.stringify(failure) })],
    lambdaContext(),
    {
      reread: (range) => rereadRange(kinesis, range),
      quarantine: (record) => writeQuarantineRecord(s3, bucket, record),
      deadLetter: () => Promise.reject(new Error("a valid failure record is never dead-lettered")),
      onLost: () => undefined,
      functionName: "dlq-redrive",
      concurrency: 1,
      putConcurrency: 1,
      deadlineMarginMs: 1_000,
    },
  );
  expect(summary.summary).toMatchObject({ stored: 1, lost: 0 });
}

/** What the processor stores for bytes that are not JSON: a permanent one. */
async function badJson(bucket: string, stream: { arn: string }, position: Position, data: string) {
  await writeQuarantineRecord(s3, bucket, {
    formatVersion: QUARANTINE_FORMAT_VERSION,
    source: {
      kind: "kinesis",
      streamArn: stream.arn,
      shardId: position.shardId,
      sequenceNumber: position.sequence,
      partitionKey: "session-bad",
      approximateArrivalTimestamp: Date.now() / 1000,
    },
    data: Buffer.from(data).toString("base64"),
    reason: { code: "bad-json", message: "payload is not JSON" },
    quarantinedAt: new Date().toISOString(),
    quarantinedBy: "processor",
  });
}

async function streamBodies(name: string): Promise<string[]> {
  const { ShardIterator } = await kinesis.send(
    new GetShardIteratorCommand({
      StreamName: name,
      ShardId: "shardId-000000000000",
      ShardIteratorType: "TRIM_HORIZON",
    }),
  );
  const { Records = [] } = await kinesis.send(new GetRecordsCommand({ ShardIterator }));
  return Records.map((r) => new TextDecoder().decode(r.Data));
}

/** A bucket holding two retryable records and one permanent, all from one stream; and the env to reach them. */
async function scene(bucketName?: string) {
  const source = await streamWith([
    { key: "session-1", body: '{"n":1}' },
    { key: "session-2", body: '{"n":2}' },
    { key: "session-bad", body: "{oops" },
  ]);
  const bucket = bucketName ?? `quarantine-${++n}`;
  await stack.createBucket(bucket);
  const [one, two, bad] = source.positions as [Position, Position, Position];
  await givenUp(bucket, source, one);
  await givenUp(bucket, source, two);
  await badJson(bucket, source, bad, "{oops");
  const env = stackEnvironment(stack, {
    AWS_ENDPOINT_URL_KINESIS: stack.kinesis.endpoint,
    QUARANTINE_BUCKET: bucket,
    STREAM_NAME: source.name,
  });
  return { source, bucket, env };
}

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true, kinesis: true });
  kinesis = kinesisClient(emulatorClientOptions(stack.kinesis));
  s3 = s3Client(emulatorClientOptions(stack.sqsS3));
});
afterAll(async () => {
  kinesis?.destroy();
  s3?.destroy();
  await stack?.stop();
});

describe("replay: a plan, checks and a guard before acting (items 3, 4, 5)", () => {
  it("shows account, region, bucket, stream and counts by reason; without --yes and no terminal it does nothing", async () => {
    const { source, bucket, env } = await scene();
    const run = await recover(["replay"], env);
    expect(run.code).toBe(3);
    expect(run.out).toContain(`replay into ${source.name} (${source.arn}) from s3://${bucket}`);
    expect(run.out).toContain("as account 000000000000, region us-east-1");
    expect(run.out).toContain(
      "3 records matched; 0 already replayed; 2 to put back: RetryAttemptsExhausted (2)",
    );
    expect(run.err).toContain("nothing done: pass --yes to act");
    expect(await streamBodies(source.name)).toHaveLength(3);
  });

  it("--max 1 puts one back and says how many wait; --yes then takes the rest", async () => {
    const { source, env } = await scene();
    const first = await recover(["replay", "--max", "1", "--yes"], env);
    expect(first.code).toBe(0);
    expect(first.out).toContain("1 more wait beyond --max 1: the next run takes them");
    expect(first.out).toContain(`1 replayed into ${source.name}`);
    const rest = await recover(["replay", "--yes"], env);
    expect(rest.out).toContain(`1 replayed into ${source.name}, 1 already replayed before`);
    expect(await streamBodies(source.name)).toEqual(['{"n":1}', '{"n":2}', "{oops", '{"n":1}', '{"n":2}']);
  });

  it("a dry run checks what the real run needs: a stream that is not there is refused (exit 3), and so is the real run", async () => {
    const { env } = await scene();
    const dry = await recover(["replay", "--dry-run", "--stream", "evnets"], env);
    expect(dry.code).toBe(3);
    expect(dry.out).toContain(
      "REFUSED     stream: evnets does not exist in the region the caller reaches (us-east-1)",
    );
    expect(dry.out).toContain("dry run: a real run would be refused (stream)");
    expect(dry.out).not.toContain("would be replayed");
    const real = await recover(["replay", "--stream", "evnets", "--yes"], env);
    expect(real.code).toBe(3);
    expect(real.out).toContain("refused, nothing done: stream: evnets does not exist");
    expect(real.out).not.toContain("run the replay again");
  });

  it("refuses to put records into a stream they did not come from, naming both", async () => {
    const { source, env } = await scene();
    const other = await streamWith([]);
    const run = await recover(["replay", "--stream", other.name, "--yes"], env);
    expect(run.code).toBe(3);
    expect(run.out).toContain(
      `records' stream: 2 from ${source.arn}, not from the target ${other.arn}: a replay puts records back into the stream they came from`,
    );
    expect(await streamBodies(other.name)).toEqual([]);
  });

  it("--stream takes the stream's ARN, as the console shows it; an ARN the caller does not reach is refused", async () => {
    const { source, env } = await scene();
    const run = await recover(["replay", "--stream", source.arn, "--dry-run"], env);
    expect(run.code, run.out + run.err).toBe(0);
    expect(run.out).toContain(`replay into ${source.name} (${source.arn})`);
    expect(run.out).toContain("dry run: 2 would be replayed");
    const elsewhere = source.arn.replace(":us-east-1:", ":eu-west-1:");
    const refused = await recover(["replay", "--stream", elsewhere, "--yes"], env);
    expect(refused.code).toBe(3);
    expect(refused.out).toContain(
      `stream: --stream ${elsewhere} is not the stream the caller reaches by that name: that is ${source.arn}`,
    );
    expect((await streamBodies(source.name)).length).toBe(3);
  });

  it("a name pasted with white space is refused before any request (exit 2)", async () => {
    const { source, env } = await scene();
    const run = await recover(["replay", "--stream", ` ${source.name}`, "--dry-run"], env);
    expect(run.code).toBe(2);
    expect(run.err).toContain(`--stream " ${source.name}" has white space in it: a name has none`);
  });

  it("refuses a bucket named for another account than the credentials'", async () => {
    const { env } = await scene(`mcp-prod-quarantine-${++n}-111122223333`);
    const run = await recover(["replay", "--yes"], env);
    expect(run.code).toBe(3);
    expect(run.out).toMatch(
      /bucket: account: mcp-prod-quarantine-\d+-111122223333 is named for account 111122223333; the credentials act in account 000000000000/,
    );
  });

  it("without a way to learn the account (no STS endpoint beside emulated services), nothing changes", async () => {
    const { source, env } = await scene();
    const { AWS_ENDPOINT_URL_STS: _, ...noSts } = env;
    const run = await recover(["replay", "--yes"], noSts);
    expect(run.code).toBe(3);
    expect(run.out).toContain(
      "REFUSED     caller: cannot tell which account the credentials act in: no endpoint for STS",
    );
    expect(run.out).toContain("\n  as an unknown caller\n");
    expect(await streamBodies(source.name)).toHaveLength(3);
  });
});

describe("filters that match nothing, and permanent reasons (item 6)", () => {
  it("an unknown --reason lists the reasons there are (exit 2); a reversed --since/--until is refused", async () => {
    const { env } = await scene();
    const run = await recover(["replay", "--reason", "RetryAtemptsExhausted", "--dry-run"], env);
    expect(run.code).toBe(2);
    expect(run.err).toContain(
      "--reason RetryAtemptsExhausted matches no quarantined record; the reasons there are: bad-json (1), RetryAttemptsExhausted (2)",
    );
    const reversed = await recover(
      ["inspect", "--since", "2026-12-01T00:00:00Z", "--until", "2026-11-30T00:00:00Z"],
      env,
    );
    expect(reversed.code).toBe(2);
    expect(reversed.err).toContain(
      "--since (2026-12-01T00:00:00Z) is not before --until (2026-11-30T00:00:00Z): the range holds nothing",
    );
  });

  it("a permanent reason is not replayed unless asked; --include-permanent puts it back", async () => {
    const { source, env } = await scene();
    const run = await recover(["replay", "--yes"], env);
    expect(run.code).toBe(0);
    expect(run.out).toContain(
      "1 left, their reason is permanent (bad-json (1)): the processor refuses the same bytes again; --include-permanent puts them back once it accepts them",
    );
    expect(run.out).toContain(`2 replayed into ${source.name}`);
    const asked = await recover(["replay", "--reason", "bad-json", "--include-permanent", "--yes"], env);
    expect(asked.code).toBe(0);
    expect(asked.out).toContain(`1 replayed into ${source.name}`);
    expect((await streamBodies(source.name)).slice(3).sort()).toEqual(['{"n":1}', '{"n":2}', "{oops"].sort());
  });
});

describe("quarantine objects with tags from elsewhere", () => {
  const tagsOf = async (bucket: string, key: string) =>
    Object.fromEntries(
      ((await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }))).TagSet ?? []).map((t) => [
        t.Key,
        t.Value,
      ]),
    );
  const keysOf = async (bucket: string) =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map(
      (o) => o.Key as string,
    );

  it("a replay keeps an object's other tags (a legal hold) and adds its mark beside them", async () => {
    const { bucket, env } = await scene();
    const keys = await keysOf(bucket);
    for (const key of keys)
      await s3.send(
        new PutObjectTaggingCommand({
          Bucket: bucket,
          Key: key,
          Tagging: { TagSet: [{ Key: "legal-hold", Value: "case-7" }] },
        }),
      );
    const run = await recover(["replay", "--yes"], env);
    expect(run.code, run.out + run.err).toBe(0);
    expect(run.out).toContain("2 replayed into");
    const marked = [];
    for (const key of keys) {
      const tags = await tagsOf(bucket, key);
      // PutObjectTagging replaces the set: the hold was dropped from every object the replay marked.
      expect(tags["legal-hold"], key).toBe("case-7");
      if (tags.replayed === "true") marked.push(key);
    }
    expect(marked).toHaveLength(2);
  });

  it("a replayed-at tag without replayed=true is not a mark: the record waits, and a replay marks it", async () => {
    const { bucket, env, source } = await scene();
    const [key] = (await keysOf(bucket)).filter((k) => !k.includes("bad")).slice(0, 1) as [string];
    await s3.send(
      new PutObjectTaggingCommand({
        Bucket: bucket,
        Key: key,
        Tagging: { TagSet: [{ Key: "replayed-at", Value: "2026-01-01T00:00:00.000Z" }] },
      }),
    );
    const plan = await recover(["replay", "--dry-run"], env);
    expect(plan.code, plan.out + plan.err).toBe(0);
    expect(plan.out).toContain("3 records matched; 0 already replayed; 2 to put back");
    expect((await recover(["replay", "--yes"], env)).code).toBe(0);
    expect(await tagsOf(bucket, key)).toMatchObject({ replayed: "true" });
    expect((await streamBodies(source.name)).filter((b) => b !== "{oops")).toHaveLength(4);
  });
});

describe("two operators at once", () => {
  it("the same replay run twice at the same time: both end 0, every record is back and marked, the stream holds each at most twice", async () => {
    const { env, source } = await scene();
    const runs = await Promise.all([
      recover(["replay", "--yes", "--rate", "1"], env),
      recover(["replay", "--yes", "--rate", "1"], env),
    ]);
    for (const run of runs) expect(run.code, run.out + run.err).toBe(0);
    const bodies = (await streamBodies(source.name)).slice(3);
    // What was put back: the two retryable records, once or twice each (the processor skips an eventId it has
    // applied), never the permanent one.
    for (const body of ['{"n":1}', '{"n":2}']) {
      const n = bodies.filter((b) => b === body).length;
      expect(n, body).toBeGreaterThanOrEqual(1);
      expect(n, body).toBeLessThanOrEqual(2);
    }
    expect(bodies).not.toContain("{oops");
    const after = await recover(["replay", "--dry-run"], env);
    expect(after.out).toContain("3 records matched; 2 already replayed; 0 to put back");
  });
});

describe("finding a record (item 7)", () => {
  it("inspect --list names each key with its reason, kind, age and whether it was replayed; show takes the key", async () => {
    const { bucket, env } = await scene();
    await recover(["replay", "--max", "1", "--yes"], env);
    const list = await recover(["inspect", "--list"], env);
    expect(list.code).toBe(0);
    expect(list.out).toContain(`3 objects in ${bucket}:`);
    expect(list.out).toMatch(
      /RetryAttemptsExhausted \(retryable\), quarantined \d+ s ago, session session-1, replayed 20/,
    );
    expect(list.out).toMatch(
      /RetryAttemptsExhausted \(retryable\), quarantined \d+ s ago, session session-2, waiting/,
    );
    expect(list.out).toMatch(/bad-json \(permanent\), quarantined \d+ s ago, session session-bad, waiting/);
    const key = /^(kinesis\/\S+\.json)\n\s+bad-json/m.exec(list.out)?.[1] ?? "";
    const show = await recover(["show", key], env);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.out)).toMatchObject({
      data: "{oops",
      reason: { code: "bad-json" },
      kind: "permanent",
    });
  });

  it("show says a replayed record was replayed, as inspect --list does (the mark is a tag)", async () => {
    const { env } = await scene();
    expect((await recover(["replay", "--yes"], env)).code).toBe(0);
    const listed = JSON.parse((await recover(["inspect", "--list", "--json"], env)).out) as {
      objects: { key: string; replayedAt?: string }[];
    };
    const replayed = listed.objects.find((o) => o.replayedAt !== undefined);
    expect(replayed).toBeDefined();
    const run = await recover(["show", replayed?.key as string, "--json"], env);
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out).replayedAt).toBe(replayed?.replayedAt);
  });

  it("show holds the bucket to the caller's account, as inspect does (S3's ExpectedBucketOwner)", async () => {
    const { bucket, env } = await scene();
    const list = await recover(["inspect", "--list", "--json"], env);
    const key = JSON.parse(list.out).objects[0].key as string;
    // fauxqs does not check the header: the requests are watched on their way.
    const owners: (string | undefined)[] = [];
    const proxy = await interposed(stack.sqsS3.endpoint, (incoming) => {
      if (incoming.method === "GET" && incoming.url?.includes(encodeURI(key).split("/").at(-1) ?? key))
        owners.push(incoming.headers["x-amz-expected-bucket-owner"] as string | undefined);
      return false;
    });
    try {
      const run = await recover(["show", key, "--bucket", bucket], {
        ...env,
        AWS_ENDPOINT_URL_S3: proxy.endpoint,
      });
      expect(run.code, run.err).toBe(0);
      expect(owners.length).toBeGreaterThan(0);
      expect(
        owners.every((owner) => owner === "000000000000"),
        String(owners),
      ).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it("show of a missing key names the key and the bucket (exit 1)", async () => {
    const { bucket, env } = await scene();
    const run = await recover(["show", "kinesis/events/2026/11/30/shardId-000000000000/1.json"], env);
    expect(run.code).toBe(1);
    expect(run.err).toContain(
      `no object kinesis/events/2026/11/30/shardId-000000000000/1.json in bucket ${bucket}: inspect --list prints the keys there are`,
    );
  });

  it("an unreadable object is reported and skipped, never the end of the listing", async () => {
    const { bucket, env } = await scene();
    const broken = "kinesis/events/2026/11/30/shardId-000000000000/broken.json";
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: broken, Body: '{"formatVersion":1' }));
    const counts = await recover(["inspect"], env);
    expect(counts.code).toBe(0);
    expect(counts.out).toContain("3 quarantined records");
    expect(counts.out).toContain(
      `1 object under kinesis/ could not be read (skipped, left as they are; look with aws s3 cp):\n  ${broken}: QuarantineFormatError`,
    );
    const list = await recover(["inspect", "--list", "--json"], env);
    expect(JSON.parse(list.out)).toMatchObject({ unreadable: [{ key: broken }] });
    expect(JSON.parse(list.out).objects).toHaveLength(3);
    const replay = await recover(["replay", "--yes"], env);
    expect(replay.code).toBe(0);
    expect(replay.out).toContain("1 objects could not be read and are skipped");
    expect(replay.out).toContain("2 replayed");
  });
});

describe("a mark the bucket refuses", () => {
  it("the run stops naming the permission (s3:PutObjectTagging), and says what it put back without a mark (exit 1)", async () => {
    const { source, bucket, env } = await scene();
    // Between the CLI and S3: a bucket policy that denies s3:PutObjectTagging, as S3 answers it.
    const proxy = await interposed(stack.sqsS3.endpoint, (incoming, answer) => {
      if (incoming.method !== "PUT" || !incoming.url?.includes("tagging")) return false;
      incoming.resume();
      answer.writeHead(403, { "content-type": "application/xml" });
      answer.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>',
      );
      return true;
    });
    try {
      const run = await recover(["replay", "--yes"], { ...env, AWS_ENDPOINT_URL_S3: proxy.endpoint });
      expect(run.code, run.out + run.err).toBe(1);
      expect(run.err).toBe("");
      expect(run.out).toContain(
        `0 records were not put back (AccessDenied: Access Denied); 0 were, and are marked; 2 were put back into ${source.name} but not marked`,
      );
      expect(run.out).toContain(`(s3:GetObjectTagging, s3:PutObjectTagging on ${bucket})`);
      // Put back, unmarked: they still wait, and the same replay again puts them back once more.
      expect(await streamBodies(source.name)).toEqual(['{"n":1}', '{"n":2}', "{oops", '{"n":1}', '{"n":2}']);
      const again = await recover(["replay", "--dry-run"], env);
      expect(again.out).toContain("2 to put back");
    } finally {
      await proxy.close();
    }
  });
});

describe("triage's next command (item 8)", () => {
  it("carries the --bucket and --stream triage was told: pasted in the same shell, it acts on what triage showed", async () => {
    const { source, bucket, env } = await scene();
    // A shell without the stack's variables: the operator names the bucket and the stream by their flags.
    const { QUARANTINE_BUCKET: _b, STREAM_NAME: _s, ...shell } = env;
    const where = ["--bucket", bucket, "--stream", source.name];
    const view = await recover(["triage", ...where, "--json"], shell);
    const groups = JSON.parse(view.out).groups as { reason: string; next: string }[];
    const retry = groups.find((g) => g.reason === "RetryAttemptsExhausted");
    expect(retry?.next).toBe(
      `npm run recover -- replay --reason RetryAttemptsExhausted --bucket ${bucket} --stream ${source.name}`,
    );
    const next = (retry?.next ?? "").split(" ").slice(4);
    const dry = await recover([...next, "--dry-run"], shell);
    expect(dry.code, dry.out + dry.err).toBe(0);
    expect(dry.out).toContain(`2 would be replayed into ${source.name}`);
    const look = groups.find((g) => g.reason === "bad-json");
    expect(look?.next).toBe(`npm run recover -- inspect --list --reason bad-json --bucket ${bucket}`);
    const list = await recover((look?.next ?? "").split(" ").slice(4), shell);
    expect(list.code, list.out + list.err).toBe(0);
    expect(list.out).toContain("bad-json");
  });
});

describe("after a replay, a record that failed again", () => {
  /** scene(), replayed; then the event source gives up again on session-1's record where the replay put it. */
  async function failedAgain() {
    const { source, env } = await scene();
    expect((await recover(["replay", "--yes"], env)).code).toBe(0);
    const { ShardIterator } = await kinesis.send(
      new GetShardIteratorCommand({
        StreamName: source.name,
        ShardId: "shardId-000000000000",
        ShardIteratorType: "TRIM_HORIZON",
      }),
    );
    const { Records = [] } = await kinesis.send(new GetRecordsCommand({ ShardIterator }));
    const again = Records[3];
    expect(new TextDecoder().decode(again?.Data)).toBe('{"n":1}');
    await givenUp(env.QUARANTINE_BUCKET as string, source, {
      sequence: again?.SequenceNumber ?? "",
      shardId: "shardId-000000000000",
    });
    return { source, env };
  }

  it("triage counts what a replay put back, and names the record that failed again after it", async () => {
    const { env } = await failedAgain();
    const run = await recover(["triage"], env);
    expect(run.code).toBe(4);
    expect(run.out).toMatch(
      /RetryAttemptsExhausted\s+retryable\s+1 {2}oldest \d+ s ago, 1 failed again after a replay\n/,
    );
    expect(run.out).toContain("1 quarantined records were replayed and have not failed again");
  });

  it("replay's plan counts it to put back and says it failed again after an earlier replay", async () => {
    const { env } = await failedAgain();
    const dry = await recover(["replay", "--dry-run"], env);
    expect(dry.out).toContain(
      "3 records matched; 1 already replayed; 1 to put back: RetryAttemptsExhausted (1)",
    );
    expect(dry.out).toContain(
      "  1 of them failed again after an earlier replay: fix the cause first, or they come back again",
    );
    const json = await recover(["replay", "--dry-run", "--json"], env);
    expect(JSON.parse(json.out)).toMatchObject({
      matched: 3,
      alreadyReplayed: 1,
      toReplay: 1,
      givenUpAgain: 1,
    });
  });
});
